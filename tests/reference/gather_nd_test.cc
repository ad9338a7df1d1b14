// The reference's tf.gather_nd: every GatherNd check with TensorFlow's text, policies, both
// semantics, depth 0 and Python's batch_dims lowering.
#include <gtest/gtest.h>

#include "tests/reference/test_util.h"

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

TEST(ReferenceGatherNd, FullDepthGathersElements) {
  expect_output(gather_nd(iota_f32({2, 3}), i32({2, 2}, {1, 2, 0, 1})), f32({2}, {5, 1}));
}

TEST(ReferenceGatherNd, PartialDepthGathersSlices) {
  expect_output(gather_nd(iota_f32({2, 3}), i64({2, 1}, {1, 0})), f32({2, 3}, {3, 4, 5, 0, 1, 2}));
}

TEST(ReferenceGatherNd, RankOneIndicesIsOneRow) {
  expect_output(gather_nd(iota_f32({2, 3}), i32({2}, {1, 1})), f32({}, {4}));
}

TEST(ReferenceGatherNd, DepthZeroCopiesAllOfParamsPerRow) {
  expect_output(gather_nd(iota_f32({2}), zeros(DType::kInt32, {3, 0})),
                f32({3, 2}, {0, 1, 0, 1, 0, 1}));
}

TEST(ReferenceGatherNd, ParamsMustBeAtLeastAVector) {
  expect_invalid(gather_nd(f32({}, {1}), i32({1}, {0})), "params must be at least a vector");
}

TEST(ReferenceGatherNd, IndicesMustBeAtLeastAVector) {
  expect_invalid(gather_nd(iota_f32({3}), i32({}, {0})), "indices must be at least a vector");
}

TEST(ReferenceGatherNd, DepthAtMostParamsRank) {
  expect_invalid(gather_nd(iota_f32({2, 3}), i32({1, 3}, {0, 0, 0})),
                 "index innermost dimension length must be <= params rank; saw: 3 vs. 2");
}

TEST(ReferenceGatherNd, TooManyRowsForIntIndexing) {
  // 2^31 rows of depth 0: an empty indices tensor, so the test stays tiny.
  expect_invalid(gather_nd(iota_f32({3}), zeros(DType::kInt64, {int64_t{1} << 31, 0})),
                 "indices has too many elements for int indexing: 2147483648 > 2147483647");
}

TEST(ReferenceGatherNd, ParamsTooLargeForIndexType) {
  expect_invalid(gather_nd(zeros(DType::kUInt8, {40000}), tensor<int16_t>({1, 1}, {0})),
                 "params.NumElements() too large for int16 indexing: 40000 > 32767");
}

TEST(ReferenceGatherNd, SliceTooLargeForIndexType) {
  expect_invalid(gather_nd(zeros(DType::kUInt8, {0, 40000}), tensor<int16_t>({1, 1}, {0})),
                 "slice size is too large for indexing: 40000 > 32767");
}

TEST(ReferenceGatherNd, EmptyParamsWithRows) {
  expect_invalid(gather_nd(zeros(DType::kFloat32, {0, 3}), i32({1, 1}, {0})),
                 "Requested more than 0 entries, but params is empty.  Params shape: [0,3]");
  // Slices of 0 elements still count as requested entries.
  expect_invalid(gather_nd(zeros(DType::kFloat32, {5, 0}), i32({1, 1}, {9})),
                 "Requested more than 0 entries, but params is empty.  Params shape: [5,0]");
}

TEST(ReferenceGatherNd, NoRowsMeansNoChecksOnValues) {
  Outcome o =
      reference::run(gather_nd(zeros(DType::kFloat32, {0, 3}), zeros(DType::kInt32, {0, 1})));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->shape(), (Shape{0, 3}));
}

TEST(ReferenceGatherNd, DepthAboveSevenIsUnsupportedByTheKernel) {
  expect_invalid(gather_nd(zeros(DType::kFloat32, Shape(std::vector<int64_t>(8, 1))),
                           zeros(DType::kInt32, {1, 8})),
                 "Only indices.shape[-1] values between 1 and 7 are currently supported.  "
                 "Requested rank: 8");
}

TEST(ReferenceGatherNd, BadIndexQuotesTheRowOnCpu) {
  expect_bad_index(gather_nd(iota_f32({2, 3}), i32({2, 2}, {0, 0, 0, 5})),
                   "indices[1] = [0, 5] does not index into param shape [2,3]");
  expect_bad_index(gather_nd(iota_f32({3}), i32({1, 2, 1}, {0, 7})),
                   "indices[0,1] = [7] does not index into param shape [3]");
  expect_bad_index(gather_nd(iota_f32({3}), i32({1}, {-1})),
                   "indices = [-1] does not index into param shape [3]");
}

TEST(ReferenceGatherNd, LastBadRowIsReported) {
  expect_bad_index(gather_nd(iota_f32({3}), i32({3, 1}, {5, 0, 4})),
                   "indices[2] = [4] does not index into param shape [3]");
}

TEST(ReferenceGatherNd, PolicyDefaultAndErrorRaiseOnCpu) {
  for (const char* p : {"", "DEFAULT", "ERROR"}) {
    expect_bad_index(gather_nd(iota_f32({3}), i32({1, 1}, {3}), 0, p),
                     "indices[0] = [3] does not index into param shape [3]");
  }
}

TEST(ReferenceGatherNd, PolicyIgnoreZeroesBadRows) {
  expect_output(gather_nd(iota_f32({3, 2}), i32({3, 1}, {2, 3, -1}), 0, "IGNORE"),
                f32({3, 2}, {4, 5, 0, 0, 0, 0}));
}

TEST(ReferenceGatherNd, UnknownPolicyFindsNoKernel) {
  // GatherNd's registrations allow only "", DEFAULT, ERROR, IGNORE (TensorFlow 2.21).
  expect_error(reference::run(gather_nd(iota_f32({3}), i32({1, 1}, {0}), 0, "ignore")),
               ErrorClass::kUnsupported,
               "gather_nd: TensorFlow has no GatherNd kernel for bad_indices_policy \"ignore\" "
               "(it registers \"\", DEFAULT, ERROR, IGNORE)");
}

TEST(ReferenceGatherNd, GpuSemanticsZeroesBadRows) {
  const Tensor want = f32({2, 2}, {0, 0, 2, 3});
  expect_output(on_gpu(gather_nd(iota_f32({2, 2}), i32({2, 1}, {2, 1}))), want);
  expect_output(on_gpu(gather_nd(iota_f32({2, 2}), i32({2, 1}, {2, 1}), 0, "IGNORE")), want);
}

TEST(ReferenceGatherNd, GpuWithErrorPolicyRaises) {
  // GatherNd's GPU kernel is not registered for ERROR; TensorFlow runs the CPU kernel.
  expect_bad_index(on_gpu(gather_nd(iota_f32({2, 2}), i32({2, 1}, {2, 1}), 0, "ERROR")),
                   "indices[0] = [2] does not index into param shape [2,2]");
}

TEST(ReferenceGatherNd, BatchDimsGathersWithinEachBatch) {
  // params [2,3], indices [2,2,1], batch_dims 1: out[b,i] = params[b, idx[b,i,0]]
  expect_output(gather_nd(iota_f32({2, 3}), i32({2, 2, 1}, {2, 0, 1, 1}), 1),
                f32({2, 2}, {2, 0, 4, 4}));
}

TEST(ReferenceGatherNd, BatchDimsTwoWithSlices) {
  // params [2,2,2,2], batch_dims 2, depth 1: out[b0,b1,:] = params[b0,b1,idx,:]
  expect_output(gather_nd(iota_f32({2, 2, 2, 2}), i32({2, 2, 1}, {1, 0, 0, 1}), 2),
                f32({2, 2, 2}, {2, 3, 4, 5, 8, 9, 14, 15}));
}

TEST(ReferenceGatherNd, BatchDimsPythonChecks) {
  expect_invalid(gather_nd(iota_f32({2, 3}), i32({2, 1}, {0, 0}), -1),
                 "tf.gather_nd does not allow negative batch_dims.");
  expect_invalid(gather_nd(iota_f32({2, 3, 4}), i32({2, 1}, {0, 0}), 2),
                 "Argument `batch_dims` = 2 must be less than rank(`indices`) = 2");
  expect_invalid(gather_nd(iota_f32({2, 3}), zeros(DType::kInt32, {2, 3, 1}), 2),
                 "Argument `batch_dims` = 2 must be less than rank(`params`) = 2");
  expect_invalid(gather_nd(iota_f32({2, 3}), zeros(DType::kInt32, {3, 1}), 1),
                 "Input to reshape is a tensor with 3 values, but the requested shape has 2");
}

TEST(ReferenceGatherNd, BatchDimsErrorsQuoteTheAugmentedRow) {
  expect_bad_index(gather_nd(iota_f32({2, 3}), i32({2, 2, 1}, {0, 1, 2, 7}), 1),
                   "indices[1,1] = [1, 7] does not index into param shape [2,3]");
  expect_invalid(gather_nd(iota_f32({2, 3}), i32({2, 1, 2}, {0, 0, 0, 0}), 1),
                 "index innermost dimension length must be <= params rank; saw: 3 vs. 2");
}

TEST(ReferenceGatherNd, BatchDimsPlusDepthAboveSevenFails) {
  expect_invalid(gather_nd(zeros(DType::kFloat32, Shape(std::vector<int64_t>(8, 1))),
                           zeros(DType::kInt32, {1, 1, 7}), 1),
                 "Only indices.shape[-1] values between 1 and 7 are currently supported.  "
                 "Requested rank: 8");
}

TEST(ReferenceGatherNd, DataMovementIsBitExact) {
  const float nan = std::bit_cast<float>(0xffc00042u);
  Outcome o = reference::run(gather_nd(f32({2}, {-0.0f, nan}), i32({2, 1}, {1, 0})));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[0]), 0xffc00042u);
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[1]), 0x80000000u);
}

TEST(ReferenceGatherNd, StringsAndInt16Indices) {
  expect_output(
      gather_nd(tensor<std::string>({2, 2}, {"a", "b", "c", "d"}), i32({2, 2}, {0, 0, 1, 1})),
      tensor<std::string>({2}, {"a", "d"}));
  expect_output(gather_nd(iota_f32({4}), tensor<int16_t>({1, 1}, {3})), f32({1}, {3}));
}

TEST(ReferenceGatherNd, UnsupportedIndexDtypeAndBudget) {
  expect_class(gather_nd(iota_f32({3}), tensor<uint32_t>({1, 1}, {0})), ErrorClass::kUnsupported);
  reference::Options opts;
  opts.max_output_bytes = 8;
  Outcome o = reference::run(gather_nd(iota_f32({4}), i32({3, 1}, {0, 1, 2})), opts);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kResourceExhausted);
}

}  // namespace
}  // namespace gscheck

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

TEST(ReferenceGatherNd, RowsAcrossPrefetchBlocks) {
  // 40 rows span three blocks of the row loop; rows 17 and 33 are bad.
  std::vector<int32_t> idx(40);
  std::vector<float> want(40);
  for (int i = 0; i < 40; ++i) {
    idx[static_cast<size_t>(i)] = (i * 7) % 10;
    want[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 10);
  }
  idx[17] = 10;
  idx[33] = -3;
  want[17] = 0;
  want[33] = 0;
  expect_output(gather_nd(iota_f32({10}), i32({40, 1}, idx), 0, "IGNORE"), f32({40}, want));
  expect_bad_index(gather_nd(iota_f32({10}), i32({40, 1}, idx)),
                   "indices[33] = [-3] does not index into param shape [10]");
}

TEST(ReferenceGatherNd, SmallWorkNamesOnlyTheLastBadRow) {
  const Outcome o = reference::run(gather_nd(iota_f32({3}), i32({5, 1}, {5, 7, 1, 9, 0})));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "indices[3] = [9] does not index into param shape [3]");
  EXPECT_TRUE(o.error().alternatives.empty());
}

TEST(ReferenceGatherNd, ShardsMayNameAnEarlierBadRow) {
  // 16 rows of a 9999-float slice: Eigen cost 23750 per row, shards of at least one row, each
  // storing its last bad row. TF 2.21 with 2 threads named rows 15, 7, 11; with 4 also 1, 3.
  const Outcome o = reference::run(
      gather_nd(zeros(DType::kFloat32, {2, 9999}), i32({16, 1}, std::vector(16, 5))));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "indices[15] = [5] does not index into param shape [2,9999]");
  ASSERT_EQ(o.error().alternatives.size(), 15u);
  EXPECT_EQ(o.error().alternatives.front(),
            "indices[0] = [5] does not index into param shape [2,9999]");
}

TEST(ReferenceGatherNd, ShardsEndNoEarlierThanTheSmallestBlock) {
  // 128 rows of a 999-float slice: cost 2*11/64*4*1000 + 1000 = 2375 per row, blocks of at
  // least (Index)(40000 / 2375) = 16 rows, so a bad row is nameable from row 15 on.
  std::vector<int32_t> idx(128, 0);
  idx[3] = 2, idx[14] = 3, idx[15] = 4, idx[40] = 5, idx[127] = 6;
  const Outcome o = reference::run(gather_nd(zeros(DType::kFloat32, {2, 999}), i32({128, 1}, idx)));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "indices[127] = [6] does not index into param shape [2,999]");
  EXPECT_EQ(
      o.error().alternatives,
      (std::vector<std::string>{"indices[15] = [4] does not index into param shape [2,999]",
                                "indices[40] = [5] does not index into param shape [2,999]"}));
}

}  // namespace
}  // namespace gscheck
