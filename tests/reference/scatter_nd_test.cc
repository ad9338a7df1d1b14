// The reference's tf.scatter_nd and tf.tensor_scatter_nd_*: every ScatterNd / TensorScatter*
// check with TensorFlow's text, policies, both semantics, duplicates in row order, min/max,
// half-type rounding and the known traps.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <limits>

#include "tests/reference/test_util.h"

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

constexpr Op kUpdate = Op::kTensorScatterUpdate;
constexpr Op kAdd = Op::kTensorScatterAdd;
constexpr Op kSub = Op::kTensorScatterSub;
constexpr Op kMin = Op::kTensorScatterMin;
constexpr Op kMax = Op::kTensorScatterMax;

TEST(ReferenceScatterNd, ScattersSlicesIntoZeros) {
  expect_output(scatter_nd(i32({2, 1}, {3, 1}), f32({2, 2}, {1, 2, 3, 4}), i32({2}, {4, 2})),
                f32({4, 2}, {0, 0, 3, 4, 0, 0, 1, 2}));
}

TEST(ReferenceScatterNd, FullDepthScattersElements) {
  expect_output(scatter_nd(i64({2, 2}, {1, 0, 0, 1}), f32({2}, {5, 6}), i64({2}, {2, 2})),
                f32({2, 2}, {0, 6, 5, 0}));
}

TEST(ReferenceScatterNd, DuplicateFloatAddsInRowOrder) {
  // Row order: ((0 + 1e8) + 1) - 1e8 = 0 in float; another order would give 1.
  expect_output(scatter_nd(i32({3, 1}, {0, 0, 0}), f32({3}, {1e8f, 1.0f, -1e8f}), i32({1}, {1})),
                f32({1}, {0.0f}));
}

TEST(ReferenceScatterNd, DuplicateBoolAddIsOr) {
  expect_output(
      scatter_nd(i32({3, 1}, {0, 0, 1}), tensor<bool>({3}, {true, true, false}), i32({1}, {2})),
      tensor<bool>({2}, {true, false}));
}

TEST(ReferenceScatterNd, DuplicateStringAddConcatenatesInRowOrder) {
  expect_output(
      scatter_nd(i32({3, 1}, {1, 1, 1}), tensor<std::string>({3}, {"a", "b", "c"}), i32({1}, {2})),
      tensor<std::string>({2}, {"", "abc"}));
}

TEST(ReferenceScatterNd, IntegerAddWraps) {
  expect_output(scatter_nd(i32({2, 1}, {0, 0}), tensor<int8_t>({2}, {100, 100}), i32({1}, {1})),
                tensor<int8_t>({1}, {-56}));
}

TEST(ReferenceScatterNd, IndicesRankAtLeastOne) {
  expect_invalid(scatter_nd(i32({}, {0}), f32({1}, {1}), i32({1}, {2})),
                 "Indices shape must have rank at least one. Found:[]");
}

TEST(ReferenceScatterNd, UpdatesRankAtLeastOne) {
  expect_invalid(scatter_nd(i32({1, 1}, {0}), f32({}, {1}), i32({1}, {2})),
                 "Updates shape must have rank at least one. Found:[]");
}

TEST(ReferenceScatterNd, ShapeEntriesAreValidated) {
  expect_invalid(scatter_nd(i32({1, 1}, {0}), f32({1}, {1}), i64({2}, {2, -1})),
                 "Dimension -1 must be >= 0");
  expect_invalid(scatter_nd(i32({1, 1}, {0}), f32({1}, {1}), i64({3}, {int64_t{1} << 62, 4, -1})),
                 "Shape [4611686018427387904,4,?] would have more than 2**63 - 1 elements");
  expect_invalid(
      scatter_nd(i32({1, 1}, {0}), f32({1}, {1}), i64({255}, std::vector<int64_t>(255, 1))),
      "Too many dimensions");
}

TEST(ReferenceScatterNd, EmptyShapeVectorWithUpdates) {
  expect_invalid(scatter_nd(i32({1, 1}, {0}), f32({1}, {1}), i32({0}, {})),
                 "Indices and updates specified for empty output shape");
}

TEST(ReferenceScatterNd, OuterDimsMustMatch) {
  expect_invalid(scatter_nd(i32({2, 1}, {0, 1}), f32({3}, {1, 2, 3}), i32({1}, {4})),
                 "Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of "
                 "updates[shape=[3]]");
}

TEST(ReferenceScatterNd, UpdatesRankBelowIndicesRankMinusOneIsAnErrorNotACrash) {
  expect_invalid(scatter_nd(i32({2, 2, 1}, {0, 1, 2, 3}), f32({2}, {1, 2}), i32({1}, {4})),
                 "Dimensions [0,2) of indices[shape=[2,2,1]] must match dimensions [0,2) of "
                 "updates[shape=[2]]");
}

TEST(ReferenceScatterNd, InnerDimsMustMatch) {
  expect_invalid(scatter_nd(i32({2, 1}, {0, 1}), zeros(DType::kFloat32, {2, 5}), i32({2}, {4, 3})),
                 "Dimensions [1,2) of input[shape=[4,3]] must match dimensions [1,2) of "
                 "updates[shape=[2,5]]");
  expect_invalid(scatter_nd(i32({2, 1}, {0, 1}), f32({2}, {1, 2}), i32({2}, {4, 3})),
                 "Dimensions [1,2) of input[shape=[4,3]] must match dimensions [1,1) of "
                 "updates[shape=[2]]");
}

TEST(ReferenceScatterNd, ShapeMustBeAVectorIsCheckedLast) {
  expect_invalid(
      scatter_nd(i32({2, 1}, {0, 1}), zeros(DType::kFloat32, {2, 3}), i32({1, 2}, {4, 3})),
      "Shape must be a vector");
}

TEST(ReferenceScatterNd, EmptyOutputWithUpdates) {
  expect_invalid(scatter_nd(i32({1, 1}, {0}), f32({1}, {1}), i32({1}, {0})),
                 "Indices and updates specified for empty output.  indices shape: [1,1]");
}

TEST(ReferenceScatterNd, IndexSpaceLimits) {
  expect_invalid(scatter_nd(zeros(DType::kInt32, {0, 1}), zeros(DType::kFloat32, {0, 0}),
                            i64({2}, {int64_t{1} << 31, 0})),
                 "params_shape[0] too large for int32 indexing: 2147483648 > 2147483647");
  expect_invalid(
      scatter_nd(zeros(DType::kInt32, {0, 1}), zeros(DType::kFloat32, {0, int64_t{1} << 31}),
                 i64({2}, {0, int64_t{1} << 31})),
      "slice size is too large for indexing: 2147483648 > 2147483647");
}

TEST(ReferenceScatterNd, EmptyOutputSucceeds) {
  Outcome o = reference::run(
      scatter_nd(zeros(DType::kInt32, {0, 1}), zeros(DType::kFloat32, {0, 3}), i32({2}, {0, 3})));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->shape(), (Shape{0, 3}));
}

TEST(ReferenceScatterNd, ZeroRowsLeaveZeros) {
  expect_output(
      scatter_nd(zeros(DType::kInt32, {0, 1}), zeros(DType::kFloat32, {0, 2}), i32({2}, {2, 2})),
      f32({2, 2}, {0, 0, 0, 0}));
}

TEST(ReferenceScatterNd, DepthAboveSevenFailsWithTheKernelsText) {
  expect_invalid(
      scatter_nd(zeros(DType::kInt32, {1, 8}), f32({1}, {1}), i32({8}, {1, 1, 1, 1, 1, 1, 1, 1})),
      "Only indices.shape[-1] values between 1 and 5 are currently supported.  "
      "Requested rank: 8");
}

TEST(ReferenceScatterNd, DepthZeroWithUpdatesFails) {
  expect_invalid(scatter_nd(zeros(DType::kInt32, {2, 0}), f32({2, 1}, {1, 2}), i32({1}, {1})),
                 "Indices and updates specified for empty output shape");
}

TEST(ReferenceScatterNd, BadIndexNamesTheLastBadRowOnCpu) {
  expect_bad_index(scatter_nd(i32({3, 1}, {5, 1, -1}), f32({3}, {1, 2, 3}), i32({1}, {4})),
                   "indices[2] = [-1] does not index into shape [4]");
  expect_bad_index(scatter_nd(i64({2, 2, 2}, {0, 0, 0, 1, 2, 0, 0, 0}), f32({2, 2}, {1, 2, 3, 4}),
                              i64({2}, {2, 2})),
                   "indices[1,0] = [2, 0] does not index into shape [2,2]");
}

TEST(ReferenceScatterNd, PoliciesOnCpu) {
  for (const char* p : {"", "DEFAULT", "ERROR"}) {
    expect_bad_index(scatter_nd(i32({2, 1}, {0, 4}), f32({2}, {1, 2}), i32({1}, {4}), p),
                     "indices[1] = [4] does not index into shape [4]");
  }
  expect_output(scatter_nd(i32({2, 1}, {0, 4}), f32({2}, {1, 2}), i32({1}, {4}), "IGNORE"),
                f32({4}, {1, 0, 0, 0}));
  expect_invalid(scatter_nd(i32({2, 1}, {0, 4}), f32({2}, {1, 2}), i32({1}, {4}), "SKIP"),
                 "Unknown bad indices handling attribute: SKIP");
}

TEST(ReferenceScatterNd, GpuSemanticsSkipsBadRows) {
  const Tensor want = f32({4}, {1, 0, 0, 0});
  expect_output(on_gpu(scatter_nd(i32({3, 1}, {0, 4, -1}), f32({3}, {1, 2, 3}), i32({1}, {4}))),
                want);
  expect_output(
      on_gpu(scatter_nd(i32({3, 1}, {0, 4, -1}), f32({3}, {1, 2, 3}), i32({1}, {4}), "IGNORE")),
      want);
  expect_bad_index(
      on_gpu(scatter_nd(i32({3, 1}, {0, 4, -1}), f32({3}, {1, 2, 3}), i32({1}, {4}), "ERROR")),
      "indices[2] = [-1] does not index into shape [4]");
}

TEST(ReferenceScatterNd, IndexDtypesAndBudget) {
  expect_class(scatter_nd(tensor<int16_t>({1, 1}, {0}), f32({1}, {1}), tensor<int16_t>({1}, {2})),
               ErrorClass::kUnsupported);
  reference::Options opts;
  opts.max_output_bytes = 1024;
  Outcome o = reference::run(
      scatter_nd(i64({1, 1}, {0}), f32({1}, {1}), i64({1}, {int64_t{1} << 40})), opts);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kResourceExhausted);
}

TEST(ReferenceTensorScatter, UpdateLastRowWins) {
  expect_output(
      tensor_scatter(kUpdate, f32({3}, {9, 9, 9}), i32({3, 1}, {1, 1, 2}), f32({3}, {1, 2, 3})),
      f32({3}, {9, 2, 3}));
}

TEST(ReferenceTensorScatter, AddAndSubStartFromTheTensor) {
  expect_output(tensor_scatter(kAdd, f32({3}, {1, 1, 1}), i32({2, 1}, {0, 0}), f32({2}, {2, 3})),
                f32({3}, {6, 1, 1}));
  expect_output(tensor_scatter(kSub, i64({3}, {1, 1, 1}), i32({2, 1}, {2, 0}), i64({2}, {5, 1})),
                i64({3}, {0, 1, -4}));
}

TEST(ReferenceTensorScatter, MinAndMax) {
  expect_output(tensor_scatter(kMin, i32({2}, {5, 5}), i32({3, 1}, {0, 0, 1}), i32({3}, {3, 7, 9})),
                i32({2}, {3, 5}));
  expect_output(tensor_scatter(kMax, i32({2}, {5, 5}), i32({3, 1}, {0, 0, 1}), i32({3}, {3, 7, 9})),
                i32({2}, {7, 9}));
}

TEST(ReferenceTensorScatter, MinMaxWithNaNKeepOneOperand) {
  const float nan = std::nanf("");
  Outcome o = reference::run(
      tensor_scatter(kMin, f32({2}, {1, nan}), i32({2, 1}, {0, 1}), f32({2}, {nan, 0})));
  ASSERT_TRUE(o.ok());
  // std::min semantics: a NaN update never replaces; a NaN output is never replaced.
  EXPECT_EQ(o->data_as<float>()[0], 1.0f);
  EXPECT_TRUE(std::isnan(o->data_as<float>()[1]));
}

TEST(ReferenceTensorScatter, UpdateMovesBitsExactly) {
  const float nan = std::bit_cast<float>(0x7f800001u);
  Outcome o = reference::run(
      tensor_scatter(kUpdate, f32({2}, {1, 1}), i32({2, 1}, {0, 1}), f32({2}, {-0.0f, nan})));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[0]), 0x80000000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[1]), 0x7f800001u);
}

TEST(ReferenceTensorScatter, HalfTypesRoundAfterEveryAdd) {
  // 1 + 2^-11 ties to even (1) in float16; twice stays 1, while a float sum would give 1 + 2^-10.
  const Float16 one = float16_from_float(1.0f);
  const Float16 tiny = float16_from_float(0x1p-11f);
  Outcome h = reference::run(tensor_scatter(kAdd, tensor<Float16>({1}, {one}), i32({2, 1}, {0, 0}),
                                            tensor<Float16>({2}, {tiny, tiny})));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->data_as<Float16>()[0].bits, 0x3c00);
  // bfloat16: 1 + 2^-8 ties to 1; a float sum would give 1 + 2^-7.
  const BFloat16 bone = bfloat16_from_float(1.0f);
  const BFloat16 btiny = bfloat16_from_float(0x1p-8f);
  Outcome b =
      reference::run(tensor_scatter(kAdd, tensor<BFloat16>({1}, {bone}), i32({2, 1}, {0, 0}),
                                    tensor<BFloat16>({2}, {btiny, btiny})));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data_as<BFloat16>()[0].bits, 0x3f80);
}

TEST(ReferenceTensorScatter, OuterDimsMustMatch) {
  expect_invalid(
      tensor_scatter(kAdd, f32({4}, {0, 0, 0, 0}), i32({2, 1}, {0, 1}), f32({3}, {1, 2, 3})),
      "Outer dimensions of indices and update must match. Indices shape: [2,1], "
      "updates shape:[3]");
  // rank(updates) < rank(indices) - 1: a clean error.
  expect_invalid(
      tensor_scatter(kAdd, f32({4}, {0, 0, 0, 0}), i32({2, 2, 1}, {0, 1, 2, 3}), f32({2}, {1, 2})),
      "Outer dimensions of indices and update must match. Indices shape: [2,2,1], "
      "updates shape:[2]");
}

TEST(ReferenceTensorScatter, InnerDimsMustMatch) {
  expect_invalid(tensor_scatter(kUpdate, zeros(DType::kFloat32, {4, 3}), i32({2, 1}, {0, 1}),
                                f32({2}, {1, 2})),
                 "Inner dimensions of output shape must match inner dimensions of updates shape. "
                 "Output: [4,3] updates: [2]");
  expect_invalid(tensor_scatter(kUpdate, zeros(DType::kFloat32, {4, 3}), i32({2, 1}, {0, 1}),
                                zeros(DType::kFloat32, {2, 5})),
                 "The inner 1 dimensions of output.shape=[4,3] must match the inner 1 dimensions "
                 "of updates.shape=[2,5]");
}

TEST(ReferenceTensorScatter, OutputMustBeAtLeast1D) {
  expect_invalid(
      tensor_scatter(kAdd, f32({}, {1}), zeros(DType::kInt32, {0, 0}), zeros(DType::kFloat32, {0})),
      "Output must be at least 1-D, got shape: []");
}

TEST(ReferenceTensorScatter, RankOneIndicesFail) {
  expect_invalid(
      tensor_scatter(kAdd, zeros(DType::kFloat32, {4, 3}), i32({1}, {2}), f32({3}, {1, 2, 3})),
      "Dimensions [0,1) of indices[shape=[1]] = 1 must match dimensions [0,1) of "
      "updates[shape=[3]] = 3");
  expect_invalid(tensor_scatter(kAdd, zeros(DType::kFloat32, {4, 1}), i32({1}, {2}), f32({1}, {1})),
                 "Dimensions [1,2) of input[shape=[4,1]] must match dimensions [1,1) of "
                 "updates[shape=[1]]");
}

TEST(ReferenceTensorScatter, IndicesOfShapeZeroAreANoOpOrACleanError) {
  Outcome o =
      reference::run(tensor_scatter(kAdd, zeros(DType::kFloat32, {0, 3}), zeros(DType::kInt32, {0}),
                                    zeros(DType::kFloat32, {0, 3})));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->shape(), (Shape{0, 3}));
  expect_invalid(tensor_scatter(kAdd, f32({3}, {1, 2, 3}), zeros(DType::kInt32, {0}),
                                zeros(DType::kFloat32, {0})),
                 "The inner 1 dimensions of output.shape=[3] must match the inner 1 dimensions of "
                 "updates.shape=[0]");
}

TEST(ReferenceTensorScatter, ZeroRowsLeaveTheTensorUntouched) {
  expect_output(tensor_scatter(kMax, f32({2}, {-0.0f, 3}), zeros(DType::kInt32, {0, 1}),
                               zeros(DType::kFloat32, {0})),
                f32({2}, {-0.0f, 3}));
}

TEST(ReferenceTensorScatter, BadIndicesPerSemantics) {
  const Case c = tensor_scatter(kAdd, f32({2}, {1, 1}), i32({2, 1}, {2, 1}), f32({2}, {5, 5}));
  expect_bad_index(c, "indices[0] = [2] does not index into shape [2]");
  expect_output(on_gpu(c), f32({2}, {1, 6}));
  Case ignore = c;
  ignore.bad_indices_policy = "IGNORE";
  expect_output(ignore, f32({2}, {1, 6}));
}

TEST(ReferenceTensorScatter, StringAndBoolUpdate) {
  expect_output(tensor_scatter(kUpdate, tensor<std::string>({2}, {"x", "y"}), i32({1, 1}, {1}),
                               tensor<std::string>({1}, {"z"})),
                tensor<std::string>({2}, {"x", "z"}));
  expect_output(tensor_scatter(kUpdate, tensor<bool>({2}, {true, true}), i32({1, 1}, {0}),
                               tensor<bool>({1}, {false})),
                tensor<bool>({2}, {false, true}));
}

TEST(ReferenceTensorScatter, UnregisteredDtypesAreUnsupported) {
  using C = std::complex<float>;
  expect_class(tensor_scatter(kMin, tensor<C>({1}, {C()}), i32({1, 1}, {0}), tensor<C>({1}, {C()})),
               ErrorClass::kUnsupported);
  expect_class(
      tensor_scatter(kAdd, tensor<bool>({1}, {false}), i32({1, 1}, {0}), tensor<bool>({1}, {true})),
      ErrorClass::kUnsupported);
  expect_class(tensor_scatter(kSub, tensor<std::string>({1}, {""}), i32({1, 1}, {0}),
                              tensor<std::string>({1}, {"a"})),
               ErrorClass::kUnsupported);
  expect_class(
      tensor_scatter(kMax, tensor<bool>({1}, {false}), i32({1, 1}, {0}), tensor<bool>({1}, {true})),
      ErrorClass::kUnsupported);
}

TEST(ReferenceTensorScatter, MismatchedTensorAndUpdatesDtypes) {
  expect_invalid(tensor_scatter(kAdd, f32({1}, {0}), i32({1, 1}, {0}), i32({1}, {1})),
                 "cannot compute TensorScatterAdd as input #2(zero-based) was expected to be a "
                 "float32 tensor but is a int32 tensor");
}

}  // namespace
}  // namespace gscheck

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

TEST(ReferenceScatterNd, RowsAcrossPrefetchBlocksKeepRowOrder) {
  // 40 rows onto 3 slots: duplicates span the blocks of the row loop; update keeps the last.
  std::vector<int32_t> idx(40);
  std::vector<std::string> upd(40);
  std::vector<float> ones(40, 1.0f);
  std::string concat[3];
  for (int i = 0; i < 40; ++i) {
    idx[static_cast<size_t>(i)] = i % 3;
    upd[static_cast<size_t>(i)] = std::to_string(i);
    concat[i % 3] += std::to_string(i);
  }
  expect_output(scatter_nd(i32({40, 1}, idx), tensor<std::string>({40}, upd), i32({1}, {3})),
                tensor<std::string>({3}, {concat[0], concat[1], concat[2]}));
  expect_output(scatter_nd(i32({40, 1}, idx), f32({40}, ones), i32({1}, {3})),
                f32({3}, {14, 13, 13}));
  std::vector<float> rows(40);
  for (int i = 0; i < 40; ++i) rows[static_cast<size_t>(i)] = static_cast<float>(i);
  expect_output(tensor_scatter(Op::kTensorScatterUpdate, f32({3}, {0, 0, 0}), i32({40, 1}, idx),
                               f32({40}, rows)),
                f32({3}, {39, 37, 38}));
}

}  // namespace
}  // namespace gscheck

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

TEST(ReferenceScatterNd, HugeIndexValuesAreBadRowsWithoutOverflow) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  expect_bad_index(scatter_nd(i64({1, 2}, {big, big}), f32({1}, {1}), i64({2}, {3, 3})),
                   "indices[0] = [9223372036854775807, 9223372036854775807] does not index into "
                   "shape [3,3]");
  expect_bad_index(gather_nd(iota_f32({3, 3}), i64({1, 2}, {big, -big})),
                   "indices[0] = [9223372036854775807, -9223372036854775807] does not index into "
                   "param shape [3,3]");
}

}  // namespace
}  // namespace gscheck

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT
using reference::Departure;
using reference::Options;
using reference::run;

// Departure::flush_denormals, checked against TensorFlow 2.21's CPU kernels (2026-12-05, this
// machine's TF venv: tf.tensor_scatter_nd_* on one element; bits as TF returned them).
TEST(ReferenceDeparture, FlushDenormalsAsTensorFlowsCpuKernels) {
  const float sub = 1e-40f;  // float32 subnormal
  Options ftz;
  ftz.departure.flush_denormals = true;
  struct Row {
    Op op;
    float tensor, update;
    uint32_t tf_bits;
  };
  const Row rows[] = {
      {kMin, sub, 1.0f, 0x00000000},         {kMin, 1.0f, sub, 0x00000000},
      {kMin, sub, -sub, 0x00000000},         {kMin, -sub, sub, 0x80000000},
      {kMin, 2e-38f, -1.5e-38f, 0x80a355e6}, {kMax, sub, 1.0f, 0x3f800000},
      {kMax, sub, -1.0f, 0x00000000},        {kMax, -sub, sub, 0x80000000},
      {kAdd, sub, 1.0f, 0x3f800000},         {kAdd, 0.0f, sub, 0x00000000},
      {kAdd, 2e-38f, -1.5e-38f, 0x00000000}, {kSub, -sub, sub, 0x80000000},
      {kSub, 2e-38f, -1.5e-38f, 0x013e8ee2},
  };
  for (const Row& r : rows) {
    Outcome o = run(
        tensor_scatter(r.op, f32({1}, {r.tensor}), i32({1, 1}, {0}), f32({1}, {r.update})), ftz);
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[0]), r.tf_bits)
        << op_name(r.op) << "(" << r.tensor << ", " << r.update << ")";
  }
  // Untouched elements and copies keep their bits; scatter_nd adds into zeros.
  Outcome o = run(tensor_scatter(kAdd, f32({2}, {sub, 1}), i32({1, 1}, {1}), f32({1}, {1})), ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[0]), 0x000116c2u);
  o = run(tensor_scatter(kUpdate, f32({2}, {1, 1}), i32({1, 1}, {1}), f32({1}, {sub})), ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[1]), 0x000116c2u);
  o = run(scatter_nd(i32({1, 1}, {0}), f32({1}, {sub}), i32({1}, {2})), ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[0]), 0u);
  // bfloat16 adds through float32 (0x007f + 0x007f = 0, 2.33e-38 without the flush); min keeps
  // the chosen operand's bits (scalar path); float64 flushes too.
  const BFloat16 bsub{0x007f};
  o = run(tensor_scatter(kAdd, tensor<BFloat16>({1}, {bsub}), i32({1, 1}, {0}),
                         tensor<BFloat16>({1}, {bsub})),
          ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->data_as<BFloat16>()[0].bits, 0);
  o = run(tensor_scatter(kAdd, tensor<BFloat16>({1}, {bsub}), i32({1, 1}, {0}),
                         tensor<BFloat16>({1}, {bsub})));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->data_as<BFloat16>()[0].bits, 0x00fe);
  o = run(tensor_scatter(kMin, tensor<BFloat16>({1}, {bsub}), i32({1, 1}, {0}),
                         tensor<BFloat16>({1}, {bfloat16_from_float(1.0f)})),
          ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->data_as<BFloat16>()[0].bits, 0x007f);
  o = run(tensor_scatter(kMin, tensor<double>({1}, {1e-310}), i32({1, 1}, {0}),
                         tensor<double>({1}, {1.0})),
          ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint64_t>(o->data_as<double>()[0]), 0u);
  // complex64: each part flushed (TF: (1e-40 + 1i) + 0 is (0 + 1i)).
  o = run(tensor_scatter(kAdd, tensor<std::complex<float>>({1}, {{sub, 1.0f}}), i32({1, 1}, {0}),
                         tensor<std::complex<float>>({1}, {{0.0f, 0.0f}})),
          ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<std::complex<float>>()[0].real()), 0u);
  EXPECT_EQ(o->data_as<std::complex<float>>()[0].imag(), 1.0f);
  // float16's subnormals are normal floats: nothing flushes.
  o = run(tensor_scatter(kAdd, tensor<Float16>({1}, {Float16{0x0002}}), i32({1, 1}, {0}),
                         tensor<Float16>({1}, {Float16{0}})),
          ftz);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->data_as<Float16>()[0].bits, 0x0002);
}

// The bad-index departures: one rule each, orthogonal to the semantics.
TEST(ReferenceDeparture, BadIndexRules) {
  Options wrap;
  wrap.departure.wrap_negative = true;
  // Wrap once, then TensorFlow's raise: -1 reads the last row, -4 of 3 still raises.
  expect_tensor(run(gather(f32({3}, {1, 2, 3}), i32({2}, {-1, 0})), wrap), f32({2}, {3, 1}));
  const Outcome still_bad = run(gather(f32({3}, {1, 2, 3}), i32({1}, {-4})), wrap);
  ASSERT_FALSE(still_bad.ok());
  EXPECT_EQ(still_bad.error().cls, ErrorClass::kBadIndex);
  expect_tensor(run(gather_nd(f32({3}, {1, 2, 3}), i32({1, 1}, {-3})), wrap), f32({1}, {1}));
  expect_tensor(
      run(tensor_scatter(kAdd, f32({3}, {0, 0, 0}), i32({1, 1}, {-1}), f32({1}, {5})), wrap),
      f32({3}, {0, 0, 5}));
  Options zero;
  zero.departure.bad_index = Departure::BadIndex::kZeroFill;
  expect_tensor(run(gather(f32({3}, {1, 2, 3}), i32({2}, {7, 1})), zero), f32({2}, {0, 2}));
  expect_tensor(
      run(tensor_scatter(kAdd, f32({2}, {1, 1}), i32({2, 1}, {5, 0}), f32({2}, {7, 2})), zero),
      f32({2}, {3, 1}));
  Options clamp;
  clamp.departure.bad_index = Departure::BadIndex::kClamp;
  expect_tensor(run(gather(f32({3}, {1, 2, 3}), i32({2}, {7, -9})), clamp), f32({2}, {3, 1}));
  expect_tensor(
      run(tensor_scatter(kUpdate, f32({2}, {1, 1}), i32({1, 1}, {5}), f32({1}, {7})), clamp),
      f32({2}, {1, 1}));
  // A departure overrides the semantics: raise under tf-gpu.
  Options raise;
  raise.departure.bad_index = Departure::BadIndex::kRaise;
  const Outcome raised = run(on_gpu(gather(f32({3}, {1, 2, 3}), i32({1}, {7}))), raise);
  ASSERT_FALSE(raised.ok());
  EXPECT_EQ(raised.error().cls, ErrorClass::kBadIndex);
  // int64 indices cut to their low 32 bits first: 2^32 + 1 reads row 1, 2^32 - 1 is -1.
  Options low32;
  low32.departure.int64_cut = Departure::Int64Cut::kLow32Bits;
  expect_tensor(run(gather(f32({3}, {1, 2, 3}), i64({1}, {(int64_t{1} << 32) + 1})), low32),
                f32({1}, {2}));
  low32.departure.wrap_negative = true;
  expect_tensor(run(gather(f32({3}, {1, 2, 3}), i64({1}, {(int64_t{1} << 32) - 1})), low32),
                f32({1}, {3}));
  // After the wrap (jax.numpy): INT64_MIN + 3 is cut to 3, a bad row; before it, to 0.
  const Case min_row = gather(f32({3}, {1, 2, 3}), i64({1}, {INT64_MIN}));
  expect_tensor(run(min_row, low32), f32({1}, {1}));
  low32.departure.int64_cut = Departure::Int64Cut::kLow32BitsAfterWrap;
  EXPECT_EQ(run(min_row, low32).error().cls, ErrorClass::kBadIndex);
  EXPECT_EQ(Departure{}.describe(), "");
  EXPECT_EQ(wrap.departure.describe(), "negative_indices=wrap");
}

// nan=canonical, as TF-XLA and jax return a bfloat16 scatter (the probe of the known-failures
// entries *-bfloat16-scatter-canonical-nan): every NaN of the output, untouched or written, is the
// quiet NaN of its sign; everything else keeps its bits.
TEST(ReferenceDeparture, CanonicalNanEverywhereInTheOutput) {
  Options o;
  o.departure.canonical_nan = true;
  const auto bf = [](std::vector<uint16_t> bits) {
    std::vector<BFloat16> v;
    for (uint16_t b : bits) v.push_back(BFloat16{b});
    return tensor<BFloat16>({static_cast<int64_t>(v.size())}, v);
  };
  // Row 5 writes 0x7f85 (a signalling NaN with a payload); rows 0, 1, 3 hold NaNs no row touches.
  const Outcome h =
      run(tensor_scatter(kUpdate, bf({0x7fc3, 0xffc5, 0x3f80, 0x7f81, 0x0001, 0x4000}),
                         i32({1, 1}, {5}), bf({0x7f85})),
          o);
  ASSERT_TRUE(h.ok());
  const uint16_t want[] = {0x7fc0, 0xffc0, 0x3f80, 0x7fc0, 0x0001, 0x7fc0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(h->data_as<BFloat16>()[i].bits, want[i]) << i;
  // float32 and complex: each part; a gather takes it too when an entry selects one.
  const Outcome f =
      run(gather(f32({2}, {std::bit_cast<float>(0xffa00001u), 1.5f}), i32({2}, {0, 1})), o);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(f->data_as<float>()[0]), 0xffc00000u);
  EXPECT_EQ(f->data_as<float>()[1], 1.5f);
  EXPECT_EQ(o.departure.describe(), "nan=canonical");
}

// int64_indices=jax_numpy (checked against jax 0.10.2 on 2026-12-07): index arrays are cut after
// the wrap; a lone scalar per example (lax.dynamic_slice) is not cut when the example's params
// are 1-d, and is cut before the wrap when they are 2-d or more.
TEST(ReferenceDeparture, Int64CutAsJaxNumpy) {
  Options jnp;
  jnp.departure.bad_index = Departure::BadIndex::kClamp;
  jnp.departure.wrap_negative = true;
  jnp.departure.int64_cut = Departure::Int64Cut::kJaxNumpy;
  const int64_t big = (int64_t{1} << 32) + 1;  // low 32 bits: 1
  // An index array, [3] rows of 1-d params: cut after the wrap (INT64_MIN + 3 reads 3: clamped).
  expect_tensor(run(gather(f32({3}, {1, 2, 3}), i64({2}, {big, INT64_MIN})), jnp),
                f32({2}, {2, 3}));
  // batch_dims 1, one scalar per example into 1-d rows: int64 kept, wrapped and clamped.
  expect_tensor(run(gather(f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {big, INT64_MIN}), 1, 1), jnp),
                f32({2}, {3, 4}));
  // One row into 2-d params: cut before the wrap (row 1; INT64_MIN reads row 0).
  const Tensor p43 = iota_f32({4, 3});
  expect_tensor(run(gather_nd(p43, i64({1}, {big})), jnp), f32({3}, {3, 4, 5}));
  expect_tensor(run(gather_nd(p43, i64({1}, {INT64_MIN})), jnp), f32({3}, {0, 1, 2}));
  // The same rows as an array ([1, 1]): cut after the wrap, INT64_MIN + 4 reads 4, clamped to 3.
  expect_tensor(run(gather_nd(p43, i64({1, 1}, {INT64_MIN})), jnp), f32({1, 3}, {9, 10, 11}));
  // low_32_bits_unsigned (TF-XLA's batched int64 gather, 2026-12-07): the low 32 bits as uint32,
  // so -1 and 2^31 are past the end (clamped to the last row), INT64_MIN is 0, 2^32 + 1 is 1.
  Options high;
  high.departure.bad_index = Departure::BadIndex::kClamp;
  high.departure.int64_cut = Departure::Int64Cut::kLow32BitsUnsigned;
  expect_tensor(run(gather(f32({3}, {1, 2, 3}), i64({5}, {-1, int64_t{1} << 31, INT64_MIN, big,
                                                          -(int64_t{1} << 32) + 1})),
                    high),
                f32({5}, {3, 3, 1, 2, 2}));
  EXPECT_EQ(high.departure.describe(), "bad_index=clamp, int64_indices=low_32_bits_unsigned");
  // Under IGNORE jnp gathers with mode fill: the array path for a lone row too.
  expect_tensor(run(gather_nd(p43, i64({1}, {INT64_MIN}), 0, "IGNORE"), jnp),
                f32({3}, {9, 10, 11}));
  EXPECT_EQ(jnp.departure.describe(),
            "bad_index=clamp, negative_indices=wrap, int64_indices=jax_numpy");
}

// Departure::MinMaxTie, checked on 2026-12-07 (this machine's venvs): tensor [t], update [u] at
// row 0, float32. ONNX Runtime returns the update on every tie; XLA (jax) orders the zeros.
TEST(ReferenceDeparture, MinMaxTiesAsOnnxRuntimeAndXla) {
  struct Row {
    Op op;
    float t, u;
    uint32_t keep, update, ordered;  // TensorFlow, ONNX Runtime, XLA
  };
  const Row rows[] = {
      {kMin, 0.0f, -0.0f, 0x00000000, 0x80000000, 0x80000000},
      {kMin, -0.0f, 0.0f, 0x80000000, 0x00000000, 0x80000000},
      {kMax, 0.0f, -0.0f, 0x00000000, 0x80000000, 0x00000000},
      {kMax, -0.0f, 0.0f, 0x80000000, 0x00000000, 0x00000000},
      {kMin, 1.0f, 2.0f, 0x3f800000, 0x3f800000, 0x3f800000},
  };
  using Tie = Departure::MinMaxTie;
  for (const Row& r : rows) {
    const Case c = tensor_scatter(r.op, f32({1}, {r.t}), i32({1, 1}, {0}), f32({1}, {r.u}));
    for (auto [tie, want] : {std::pair{Tie::kKeep, r.keep}, std::pair{Tie::kUpdate, r.update},
                             std::pair{Tie::kXla, r.ordered}}) {
      Options o;
      o.departure.min_max_tie = tie;
      const Outcome out = run(c, o);
      ASSERT_TRUE(out.ok());
      EXPECT_EQ(std::bit_cast<uint32_t>(out->data_as<float>()[0]), want)
          << op_name(r.op) << "(" << r.t << ", " << r.u << ") tie " << static_cast<int>(tie);
    }
  }
  // The half types and the flush path take the rule too.
  Options o;
  o.departure.min_max_tie = Tie::kXla;
  Outcome h = run(tensor_scatter(kMin, tensor<BFloat16>({1}, {BFloat16{0x0000}}), i32({1, 1}, {0}),
                                 tensor<BFloat16>({1}, {BFloat16{0x8000}})),
                  o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->data_as<BFloat16>()[0].bits, 0x8000);
  o.departure.flush_denormals = true;
  h = run(tensor_scatter(kMax, f32({1}, {-0.0f}), i32({1, 1}, {0}), f32({1}, {1e-40f})), o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(h->data_as<float>()[0]), 0u);  // +0 (1e-40 read as +0)
  EXPECT_EQ(o.departure.describe(), "arithmetic=flush_denormals, min_max_ties=xla");
  // flush_denormals_in_float (XLA): a bfloat16 min stores the flushed float, not the bits chosen.
  const Case bf_min = tensor_scatter(kMin, tensor<BFloat16>({1}, {BFloat16{0x0001}}),
                                     i32({1, 1}, {0}), tensor<BFloat16>({1}, {BFloat16{0x3f80}}));
  h = run(bf_min, o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->data_as<BFloat16>()[0].bits, 0x0001);  // TensorFlow's scalar path
  o.departure.min_max_store = Departure::MinMaxStore::kFlushed;
  h = run(bf_min, o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->data_as<BFloat16>()[0].bits, 0x0000);
  EXPECT_EQ(o.departure.describe(), "arithmetic=flush_denormals_in_float, min_max_ties=xla");
  o.departure.min_max_store = Departure::MinMaxStore::kTensorFlow;
  // kKept (half of TF-XLA's either rule): DAZ comparisons, the chosen operand's bits stored, any
  // dtype; float32 min(2, 1e-45) keeps 1e-45 where TensorFlow's flush stores 0.
  const Case f_min = tensor_scatter(kMin, f32({2}, {2.0f, 0.0f}), i32({2, 1}, {0, 1}),
                                    f32({2}, {1e-45f, -1e-45f}));
  h = run(f_min, o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(h->data_as<float>()[0]), 0u);
  o.departure.min_max_store = Departure::MinMaxStore::kKept;
  h = run(f_min, o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(h->data_as<float>()[0]), 1u);  // 1e-45 kept
  // -1e-45 compares as -0, which ties the tensor's +0 under min_max_ties=xla: -0 is below.
  EXPECT_EQ(std::bit_cast<uint32_t>(h->data_as<float>()[1]), 0x80000001u);
  o.departure.min_max_store = Departure::MinMaxStore::kTensorFlow;
  // XLA's NaNs (jnp, 2026-12-07): a NaN in the tensor stays; a NaN update takes the signs or'd
  // (min) or and'd (max).
  o.departure.flush_denormals = false;
  const auto f64bits = [&](Op op, double t, uint64_t u) {
    const Outcome r = run(tensor_scatter(op, tensor<double>({1}, {t}), i32({1, 1}, {0}),
                                         tensor<double>({1}, {std::bit_cast<double>(u)})),
                          o);
    return r.ok() ? std::bit_cast<uint64_t>(r->data_as<double>()[0]) : 0;
  };
  EXPECT_EQ(f64bits(kMin, -2.0, 0x7ff8000000000aaaull), 0xfff8000000000aaaull);
  EXPECT_EQ(f64bits(kMax, -2.0, 0x7ff8000000000aaaull), 0x7ff8000000000aaaull);
  EXPECT_EQ(f64bits(kMin, 2.0, 0xfff8000000000bbbull), 0xfff8000000000bbbull);
  EXPECT_EQ(f64bits(kMax, 2.0, 0xfff8000000000bbbull), 0x7ff8000000000bbbull);
  EXPECT_EQ(f64bits(kMin, std::bit_cast<double>(0xfff8000000000bbbull), 0x7ff8000000000aaaull),
            0xfff8000000000bbbull);
}

// Departure::one_row_copied, checked against TF-XLA 2.21 (2026-12-07, this machine's TF venv:
// tf.function(lambda i, u: tf.scatter_nd(i, u, [3]), jit_compile=True)).
TEST(ReferenceDeparture, ScatterNdOneRowCopiedAsTfXla) {
  Options one;
  one.departure.one_row_copied = true;
  const auto bits = [](const Outcome& o, int64_t i) {
    return std::bit_cast<uint32_t>(o->data_as<float>()[i]);
  };
  // One row [-0]: XLA gives [-0, 0, 0]; TensorFlow (and the reference without the rule) adds it
  // to +0.
  const Case lone = scatter_nd(i32({1, 1}, {0}), f32({1}, {-0.0f}), i32({1}, {3}));
  Outcome o = run(lone, one);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(bits(o, 0), 0x80000000u);
  EXPECT_EQ(bits(o, 1), 0u);
  EXPECT_EQ(bits(run(lone), 0), 0u);
  // Two rows, even on different elements ([[0],[1]], [-0, -0]): both add to zeros, +0 and +0.
  o = run(scatter_nd(i32({2, 1}, {0, 1}), f32({2}, {-0.0f, -0.0f}), i32({1}, {3})), one);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(bits(o, 0), 0u);
  EXPECT_EQ(bits(o, 1), 0u);
  // With the flush rule the one row is still written as it is: XLA keeps 1e-40.
  one.departure.flush_denormals = true;
  o = run(scatter_nd(i32({1, 1}, {0}), f32({1}, {1e-40f}), i32({1}, {3})), one);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(bits(o, 0), std::bit_cast<uint32_t>(1e-40f));
  // An out-of-range row is dropped under clamp ([[7]], [5]: zeros), and other ops are untouched.
  one.departure.bad_index = Departure::BadIndex::kClamp;
  expect_tensor(run(scatter_nd(i32({1, 1}, {7}), f32({1}, {5}), i32({1}, {3})), one),
                f32({3}, {0, 0, 0}));
  o = run(tensor_scatter(kAdd, f32({1}, {0}), i32({1, 1}, {0}), f32({1}, {-0.0f})), one);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(bits(o, 0), 0u);
  EXPECT_EQ(one.departure.describe(),
            "bad_index=clamp, arithmetic=flush_denormals, scatter_nd=one_row_copied");
}

}  // namespace
}  // namespace gscheck
