// The reference's tf.gather: every GatherV2 check with TensorFlow's text, both semantics,
// Python's axis/batch_dims handling and the lazy validation of empty tensors.
#include <gtest/gtest.h>

#include <bit>
#include <limits>

#include "reference/validate.h"
#include "tests/reference/test_util.h"

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

TEST(ReferenceGather, Axis0CopiesRows) {
  expect_output(gather(iota_f32({3, 2}), i32({3}, {2, 0, 2})), f32({3, 2}, {4, 5, 0, 1, 4, 5}));
}

TEST(ReferenceGather, Axis1AndNegativeAxisAgree) {
  const Tensor want = f32({2, 2}, {2, 0, 5, 3});
  expect_output(gather(iota_f32({2, 3}), i32({2}, {2, 0}), 1), want);
  expect_output(gather(iota_f32({2, 3}), i32({2}, {2, 0}), -1), want);
}

TEST(ReferenceGather, ScalarIndicesDropTheAxis) {
  expect_output(gather(iota_f32({3, 2}), i64({}, {1})), f32({2}, {2, 3}));
}

TEST(ReferenceGather, IndicesShapeIsSplicedIn) {
  Outcome o = reference::run(gather(iota_f32({2, 3, 2}), i32({2, 2}, {0, 2, 1, 1}), 1));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->shape(), (Shape{2, 2, 2, 2}));
  // out[1, 0, 1, :] (flat 10) = params[1, indices[0, 1] = 2, :] = {10, 11}
  EXPECT_EQ(o->data_as<float>()[10], 10.0f);
  EXPECT_EQ(o->data_as<float>()[11], 11.0f);
  // out[0, 1, 0, :] (flat 4) = params[0, indices[1, 0] = 1, :] = {2, 3}
  EXPECT_EQ(o->data_as<float>()[4], 2.0f);
}

TEST(ReferenceGather, BatchDimsWithAxisNoneUsesAxisEqualBatchDims) {
  // params [2,3], indices [2,2], batch_dims=1, axis=None -> axis=1: out[b,i] = params[b, idx[b,i]]
  expect_output(gather(iota_f32({2, 3}), i32({2, 2}, {2, 0, 1, 1}), std::nullopt, 1),
                f32({2, 2}, {2, 0, 4, 4}));
}

TEST(ReferenceGather, NegativeBatchDimsIsNormalisedAgainstIndicesRank) {
  expect_output(gather(iota_f32({2, 3}), i32({2, 2}, {2, 0, 1, 1}), 1, -1),
                f32({2, 2}, {2, 0, 4, 4}));
}

TEST(ReferenceGather, BatchDimsWithInnerDims) {
  // params [2,3,2], axis 1, batch_dims 1: out[b,i,:] = params[b, idx[b,i], :]
  expect_output(gather(iota_f32({2, 3, 2}), i32({2, 1}, {2, 0}), 1, 1),
                f32({2, 1, 2}, {4, 5, 6, 7}));
}

TEST(ReferenceGather, AxisZeroDropsBatchDimsAsPythonDoes) {
  // tf.gather calls GatherV2 without batch_dims when axis is 0: a plain axis-0 gather.
  Outcome o = reference::run(gather(iota_f32({2, 3}), i32({2, 2}, {1, 0, 0, 1}), 0, 1));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->shape(), (Shape{2, 2, 3}));
}

TEST(ReferenceGather, KernelLevelKeepsBatchDimsWithAxisZero) {
  // The raw GatherV2 kernel (api kernel) has no Python wrapper to drop batch_dims.
  Case c = gather(iota_f32({2, 3}), i32({2, 2}, {1, 0, 0, 1}), 0, 1);
  c.api = Api::kKernel;
  expect_invalid(c, "batch_dims (1) must be less than or equal to axis (0).");
  c.batch_dims = -1;  // normalised against rank(indices) to 1
  expect_invalid(c, "batch_dims (1) must be less than or equal to axis (0).");
  c.batch_dims = 0;
  Outcome o = reference::run(c);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->shape(), (Shape{2, 2, 3}));
  // Where no Python rule applies both levels agree.
  Case k = gather(iota_f32({2, 3}), i32({2, 2}, {2, 0, 1, 1}), 1, 1);
  k.api = Api::kKernel;
  expect_output(k, f32({2, 2}, {2, 0, 4, 4}));
  EXPECT_TRUE(same_at_both_apis(k));
  EXPECT_FALSE(same_at_both_apis(c = gather(iota_f32({2, 3}), i32({2}, {0, 1}), 0, 1)));
  EXPECT_FALSE(same_at_both_apis(gather(iota_f32({2, 3}), i32({2}, {0, 1}))));  // axis=None
}

TEST(ReferenceGather, KernelLevelCaseNeedsAxis) {
  Case c = gather(iota_f32({2, 3}), i32({2}, {0, 1}));
  c.api = Api::kKernel;
  const Status st = check_well_formed(c);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "the GatherV2 kernel takes axis as an input: a kernel-level gather needs attribute "
            "'axis' (axis=None is Python's)");
}

TEST(ReferenceGather, ParamsMustBeAtLeast1D) {
  expect_invalid(gather(f32({}, {1}), i32({1}, {0})), "params must be at least 1 dimensional");
}

TEST(ReferenceGather, AxisMustBeScalar) {
  Case c = gather(iota_f32({3}), i32({1}, {0}));
  c.axis = i64({1}, {0});
  expect_invalid(c, "axis must be scalar");
}

TEST(ReferenceGather, AxisMustBeInt32OrInt64) {
  Case c = gather(iota_f32({3}), i32({1}, {0}));
  c.axis = tensor<int16_t>({}, {0});
  expect_invalid(c, "axis must be int32 or int64.");
}

TEST(ReferenceGather, AxisInt64MaxIsRejected) {
  expect_invalid(gather(iota_f32({3}), i32({1}, {0}), std::numeric_limits<int64_t>::max()),
                 "axis must be less than std::numeric_limits<int64_t>::max()");
}

TEST(ReferenceGather, AxisOutOfRangeNamesTheMinimumRank) {
  expect_invalid(gather(iota_f32({2, 3}), i32({1}, {0}), 2),
                 "Shape must be at least rank 3 but is rank 2");
  expect_invalid(gather(iota_f32({2, 3}), i32({1}, {0}), -3),
                 "Shape must be at least rank 3 but is rank 2");
}

TEST(ReferenceGather, AxisInt64MinDoesNotOverflow) {
  expect_invalid(gather(iota_f32({2, 3}), i32({1}, {0}), std::numeric_limits<int64_t>::min()),
                 "axis must be greater than std::numeric_limits<int64_t>::min()");
}

TEST(ReferenceGather, BatchDimsRange) {
  expect_invalid(gather(iota_f32({2, 3}), i32({2, 1}, {0, 0}), 1, 3),
                 "Expected batch_dims in the range [-2, 2], but got 3");
  expect_invalid(gather(iota_f32({2, 3}), i32({2, 1}, {0, 0}), 1, -3),
                 "Expected batch_dims in the range [-2, 2], but got -3");
}

TEST(ReferenceGather, BatchDimsAttrIsAnInt32) {
  expect_invalid(gather(iota_f32({2, 3}), i32({2}, {0, 0}), 1, int64_t{1} << 40),
                 "Attr batch_dims has value 1099511627776 out of range for an int32");
}

TEST(ReferenceGather, BatchDimsLessThanParamsRank) {
  expect_invalid(gather(iota_f32({2, 3}), i32({2, 3}, {0, 0, 0, 0, 0, 0}), 1, 2),
                 "batch_dims (2) must be less than rank(params) (2).");
}

TEST(ReferenceGather, BatchDimsAtMostAxis) {
  expect_invalid(gather(iota_f32({2, 3, 4}), i32({2, 3}, {0, 0, 0, 0, 0, 0}), 1, 2),
                 "batch_dims (2) must be less than or equal to axis (1).");
}

TEST(ReferenceGather, BatchDimsMustMatch) {
  expect_invalid(gather(iota_f32({2, 3}), i32({3, 1}, {0, 0, 0}), 1, 1),
                 "params.shape[0]: 2 should be equal to indices.shape[0]: 3");
}

TEST(ReferenceGather, GatherDimTooLargeForIndexType) {
  expect_invalid(gather(zeros(DType::kUInt8, {40000}), tensor<int16_t>({1}, {0})),
                 "params.shape[0] too large for int16 indexing: 40000 > 32767");
}

TEST(ReferenceGather, Int16IndicesWork) {
  expect_output(gather(iota_f32({4}), tensor<int16_t>({2}, {3, 1})), f32({2}, {3, 1}));
}

TEST(ReferenceGather, BadIndexOnCpuNamesPositionValueAndRange) {
  expect_bad_index(gather(iota_f32({3}), i32({2}, {0, 5})), "indices[1] = 5 is not in [0, 3)");
  expect_bad_index(gather(iota_f32({3}), i64({2, 2}, {0, 1, -1, 0})),
                   "indices[1,0] = -1 is not in [0, 3)");
  expect_bad_index(gather(iota_f32({3}), i32({}, {7})), "indices = 7 is not in [0, 3)");
}

TEST(ReferenceGather, FirstBadIndexIsReported) {
  expect_bad_index(gather(iota_f32({3}), i32({4}, {0, 9, 1, -4})),
                   "indices[1] = 9 is not in [0, 3)");
}

TEST(ReferenceGather, NegativeIndicesNeverWrap) {
  expect_bad_index(gather(iota_f32({3, 2}), i32({1}, {-1})), "indices[0] = -1 is not in [0, 3)");
}

TEST(ReferenceGather, GpuSemanticsZeroesBadElements) {
  expect_output(on_gpu(gather(iota_f32({3, 2}), i32({3}, {2, -1, 3}))),
                f32({3, 2}, {4, 5, 0, 0, 0, 0}));
}

TEST(ReferenceGather, LazyValidationSkipsIndicesWhenNothingIsCopied) {
  // inner size 0: no index is read, even bad ones.
  Outcome o = reference::run(gather(zeros(DType::kFloat32, {5, 0}), i32({4}, {0, 9, -1, 2})));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->shape(), (Shape{4, 0}));
  // outer size 0 (axis 1 of [0,3]): no index is read either.
  Outcome outer = reference::run(gather(zeros(DType::kFloat32, {0, 3}), i32({1}, {7}), 1));
  ASSERT_TRUE(outer.ok()) << outer.error().message;
  EXPECT_EQ(outer->shape(), (Shape{0, 1}));
  // N = 0: nothing read.
  Outcome none = reference::run(gather(iota_f32({3}), i32({0}, {})));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->shape(), (Shape{0}));
}

TEST(ReferenceGather, EmptyGatherDimWithRowsToCopyFails) {
  expect_bad_index(gather(zeros(DType::kFloat32, {0, 3}), i32({1}, {0})),
                   "indices[0] = 0 is not in [0, 0)");
}

TEST(ReferenceGather, DataMovementIsBitExact) {
  const float nan = std::bit_cast<float>(0x7fc00123u);
  Tensor params = f32({3}, {-0.0f, nan, 1.0f});
  Outcome o = reference::run(gather(params, i32({3}, {1, 0, 1})));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[0]), 0x7fc00123u);
  EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[1]), 0x80000000u);
}

TEST(ReferenceGather, StringsBoolsAndComplex) {
  expect_output(gather(tensor<std::string>({3}, {"a", "bc", ""}), i32({2}, {1, 1})),
                tensor<std::string>({2}, {"bc", "bc"}));
  expect_output(gather(tensor<bool>({2}, {false, true}), i32({2}, {1, 0})),
                tensor<bool>({2}, {true, false}));
  using C = std::complex<double>;
  expect_output(gather(tensor<C>({2}, {C(1, 2), C(3, 4)}), i32({1}, {1})),
                tensor<C>({1}, {C(3, 4)}));
}

TEST(ReferenceGather, UnsupportedIndexDtype) {
  expect_class(gather(iota_f32({3}), tensor<uint8_t>({1}, {0})), ErrorClass::kUnsupported);
  expect_class(gather(iota_f32({3}), tensor<int8_t>({1}, {0})), ErrorClass::kUnsupported);
}

TEST(ReferenceGather, OutputBudgetIsEnforced) {
  reference::Options opts;
  opts.max_output_bytes = 64;
  Outcome o = reference::run(gather(iota_f32({4, 8}), i32({3}, {0, 1, 2})), opts);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kResourceExhausted);
}

TEST(ReferenceGather, OverflowingOutputShapeIsAnError) {
  // params [0, 2^40, 2^40] is a valid empty tensor; gathering 5 rows along axis 0 would make
  // [5, 2^40, 2^40], more than 2^63 elements.
  const int64_t big = int64_t{1} << 40;
  expect_class(gather(zeros(DType::kFloat32, {0, big, big}), i32({5}, {0, 0, 0, 0, 0})),
               ErrorClass::kInvalidArgument);
}

TEST(ReferenceGather, MalformedCaseIsAParseError) {
  Case c = gather(iota_f32({3}), i32({1}, {0}));
  c.params.reset();
  expect_class(c, ErrorClass::kParse);
  Case p = gather(iota_f32({3}), i32({1}, {0}));
  p.bad_indices_policy = "IGNORE";
  expect_class(p, ErrorClass::kParse);
}

TEST(ReferenceGather, RanksAboveTensorFlowsLimitAreRefused) {
  std::vector<int64_t> dims(255, 1);
  expect_class(gather(zeros(DType::kFloat32, Shape(dims)), i32({1}, {0})),
               ErrorClass::kInvalidArgument);
  // Each input fits, but the output rank would exceed 254.
  std::vector<int64_t> d200(200, 1);
  expect_class(gather(zeros(DType::kFloat32, Shape(d200)), zeros(DType::kInt32, Shape(d200))),
               ErrorClass::kInvalidArgument);
}

}  // namespace
}  // namespace gscheck

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

TEST(ReferenceGather, RowsAcrossPrefetchBlocks) {
  std::vector<int32_t> idx(40);
  std::vector<float> want(80);
  for (int i = 0; i < 40; ++i) {
    const int v = (i * 3) % 5;
    idx[static_cast<size_t>(i)] = v;
    want[static_cast<size_t>(2 * i)] = static_cast<float>(2 * v);
    want[static_cast<size_t>(2 * i + 1)] = static_cast<float>(2 * v + 1);
  }
  expect_output(gather(iota_f32({5, 2}), i32({40}, idx)), f32({40, 2}, want));
  idx[20] = 5;
  idx[30] = 7;
  expect_bad_index(gather(iota_f32({5, 2}), i32({40}, idx)), "indices[20] = 5 is not in [0, 5)");
}

// Python's tf.gather tests `axis != 0` with NumPy before any kernel check (TF 2.21, NumPy 2.4).
TEST(ReferenceGather, PythonAxisOfSeveralElementsIsNumpysValueError) {
  const std::string several =
      "The truth value of an array with more than one element is ambiguous. Use a.any() or "
      "a.all()";
  Case c = gather(iota_f32({3}), i32({1}, {0}));
  c.axis = i64({2}, {0, 0});
  expect_invalid(c, several);
  c.axis = i32({2, 1}, {1, 1});
  expect_invalid(c, several);
  c.params = f32({}, {1});  // before the params check
  expect_invalid(c, several);
  c.indices = tensor<uint8_t>({1}, {0});  // and before the index dtype's kernel lookup
  expect_invalid(c, several);
  c.axis = i32({0, 3}, {});
  expect_invalid(c,
                 "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                 "that an array is not empty.");
}

TEST(ReferenceGather, KernelAxisOfSeveralElementsIsNotScalar) {
  Case c = gather(iota_f32({3}), i32({1}, {0}));
  c.api = Api::kKernel;
  c.axis = i64({2}, {0, 0});
  expect_invalid(c, "axis must be scalar");
  c.axis = i64({0}, {});
  expect_invalid(c, "axis must be scalar");
}

TEST(ReferenceGather, PythonOneElementAxisReachesTheKernel) {
  // [1] or [1,1]: NumPy's truth value is the element's; 0 drops batch_dims like a scalar 0.
  Case c = gather(iota_f32({3}), i32({1}, {0}));
  c.batch_dims = int64_t{1} << 40;
  c.axis = i64({1, 1}, {0});
  expect_invalid(c, "axis must be scalar");
  c.axis = i64({1}, {1});
  expect_invalid(c, "Attr batch_dims has value 1099511627776 out of range for an int32");
  c.api = Api::kKernel;
  c.axis = i64({1}, {0});
  expect_invalid(c, "Attr batch_dims has value 1099511627776 out of range for an int32");
}

TEST(ReferenceGather, SmallWorkNamesOnlyTheFirstBadIndex) {
  // 3 units of 4 bytes: no thread count splits it, so TensorFlow always names the first.
  const Outcome o = reference::run(gather(iota_f32({3}), i32({3}, {5, 7, 9})));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "indices[0] = 5 is not in [0, 3)");
  EXPECT_TRUE(o.error().alternatives.empty());
}

TEST(ReferenceGather, ShardsMayNameALaterBadIndex) {
  // 64 units of 4000 bytes: shards of at least 3 units (Sharder::Do, 25 shards), so a bad index
  // at 1 or 2 is never first in a shard; 40 is. TF 2.21 with 2 and 4 threads named 0 and 40.
  std::vector<int32_t> idx(64, 0);
  idx[0] = 5, idx[1] = 6, idx[2] = 7, idx[40] = 8;
  const Outcome o = reference::run(gather(zeros(DType::kFloat32, {2, 1000}), i32({64}, idx)));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "indices[0] = 5 is not in [0, 2)");
  EXPECT_EQ(o.error().alternatives, std::vector<std::string>{"indices[40] = 8 is not in [0, 2)"});
  EXPECT_TRUE(o.error().accepts("indices[40] = 8 is not in [0, 2)"));
  EXPECT_FALSE(o.error().accepts("indices[1] = 6 is not in [0, 2)"));
}

TEST(ReferenceGather, EveryBadIndexOfExpensiveSlicesIsNameable) {
  // 8 units of 40000 bytes: shards of one unit; TF 2.21 named indices[3], [7], [0], [1], ...
  const Outcome o =
      reference::run(gather(zeros(DType::kFloat32, {2, 10000}), i32({8}, std::vector(8, 9))));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "indices[0] = 9 is not in [0, 2)");
  ASSERT_EQ(o.error().alternatives.size(), 7u);
  EXPECT_EQ(o.error().alternatives.back(), "indices[7] = 9 is not in [0, 2)");
}

TEST(ReferenceGather, OuterRowsGiveLaterShardStarts) {
  // params [8, 3, 625] at axis 1: 8 outer rows x 4 indices, 2500 bytes each; shards of 4 units
  // (Sharder::Do). indices[2] is the first bad one from unit 2 of every outer row.
  const Outcome o =
      reference::run(gather(zeros(DType::kFloat32, {8, 3, 625}), i32({4}, {0, 5, 6, 0}), 1));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "indices[1] = 5 is not in [0, 3)");
  EXPECT_EQ(o.error().alternatives, std::vector<std::string>{"indices[2] = 6 is not in [0, 3)"});
}

TEST(ReferenceGather, GpuSemanticsHaveNoBadIndexError) {
  EXPECT_TRUE(reference::run(
                  on_gpu(gather(zeros(DType::kFloat32, {2, 10000}), i32({8}, std::vector(8, 9)))))
                  .ok());
}

TEST(ReferenceShards, SmallestShardOfTensorFlowsPool) {
  using reference::detail::min_shard_units;
  EXPECT_EQ(min_shard_units(3, 4, true), 0);        // 12 cycles: one thread
  EXPECT_EQ(min_shard_units(1, 1e9, true), 0);      // one unit
  EXPECT_EQ(min_shard_units(8, 40000, true), 1);    // Eigen: kTaskSize / cost = 1
  EXPECT_EQ(min_shard_units(64, 4000, false), 10);  // Eigen alone: 40000 / 4000
  EXPECT_EQ(min_shard_units(64, 4000, true), 3);    // Sharder::Do: 25 shards of ceil(64/25)
  EXPECT_EQ(min_shard_units(4, 5000, true), 2);     // 20000 cycles: Sharder's 2 shards only
  EXPECT_EQ(min_shard_units(4, 4999, true), 0);
}

}  // namespace
}  // namespace gscheck

namespace gscheck {
namespace {

// jnp checks a 0-d index's dim when it builds the gather, from shapes alone, eagerly and
// jitted alike (jax 0.10.2, 2026-12-06: jax.jit(lambda p, i: p[i])(zeros((0, 0)), 0) raises),
// so an empty output does not spare it; a [1] index gives a [1, 0] array. An earlier test said
// the jitted call returns the empty output: the jax backend never called jnp for one.
// plugins/jax/cases/gather_scalar_index_into_empty_axis_jax.json.
TEST(ReferenceGather, JaxScalarIndexIntoEmptyAxisRaisesEvenForAnEmptyOutput) {
  using namespace gscheck::testing;  // NOLINT
  auto jax = [](Case c) {
    c.semantics = Semantics::kJax;
    return c;
  };
  const char* kJnp = "index is out of bounds for axis 0 with size 0";
  expect_error(reference::run(jax(gather(zeros(DType::kFloat32, {0, 0}), i32({}, {0})))),
               ErrorClass::kInvalidArgument, kJnp);
  expect_error(reference::run(jax(gather(zeros(DType::kFloat32, {0, 3}), i32({}, {0})))),
               ErrorClass::kInvalidArgument, kJnp);
  const Outcome vector = reference::run(jax(gather(zeros(DType::kFloat32, {0, 0}), i32({1}, {0}))));
  ASSERT_TRUE(vector.ok());
  EXPECT_EQ(vector->shape(), (Shape{1, 0}));
  // With batch_dims the dim's place is counted in one example's params (vmap).
  expect_error(
      reference::run(jax(gather(zeros(DType::kFloat32, {2, 0, 3}), i32({2}, {0, 0}), 1, 1))),
      ErrorClass::kInvalidArgument, kJnp);
  // gather_nd: one index row, whose coordinates are 0-d indices; the first empty dim is named.
  expect_error(reference::run(jax(gather_nd(zeros(DType::kFloat32, {3, 0, 2}), i32({2}, {1, 0})))),
               ErrorClass::kInvalidArgument, "index is out of bounds for axis 1 with size 0");
  // TensorFlow's profile reads no index for an empty output.
  EXPECT_TRUE(reference::run(gather(zeros(DType::kFloat32, {0, 0}), i32({}, {0}))).ok());
}

}  // namespace
}  // namespace gscheck
