#include "compare/compare.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <limits>

#include "compare/elements.h"
#include "compare/scatter_rows.h"
#include "compare/summation.h"

namespace gscheck::compare {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Case gather_case() {
  Case c;
  c.name = "gather/t";
  c.op = Op::kGather;
  c.params = Tensor::from_values<float>(Shape{3}, {1, 2, 3});
  c.indices = Tensor::from_values<int32_t>(Shape{2}, {2, 0});
  return c;
}

// tensor_scatter_nd_<op> on a [4] float tensor with rows {1, 1, 3} (1 is a duplicate).
Case scatter_case(Op op, Semantics sem, std::vector<float> tensor, std::vector<float> updates,
                  std::vector<int32_t> rows = {1, 1, 3}) {
  Case c;
  c.name = "scatter/t";
  c.op = op;
  c.semantics = sem;
  c.tensor = Tensor::from_values<float>(Shape{static_cast<int64_t>(tensor.size())}, tensor);
  c.indices = Tensor::from_values<int32_t>(Shape{static_cast<int64_t>(rows.size()), 1}, rows);
  c.updates = Tensor::from_values<float>(Shape{static_cast<int64_t>(updates.size())}, updates);
  return c;
}

Outcome floats(std::vector<float> v) {
  return Tensor::from_values<float>(Shape{static_cast<int64_t>(v.size())}, v);
}

TEST(Compare, OnlyFlushedSubnormalsRecognisesFtzAndDazAndNothingElse) {
  const float sub = 1e-40f, tiny = 0x1p-126f;  // a float32 subnormal, the smallest normal
  auto f32 = [](std::vector<float> v) {
    return Tensor::from_values<float>(Shape{static_cast<int64_t>(v.size())}, v);
  };
  // Normal inputs only: a result flushed from a subnormal is FTZ, a normal one is not.
  Case c = scatter_case(Op::kTensorScatterAdd, Semantics::kTfCpu, {1, 2, 3, 4}, {1, 2, 3});
  EXPECT_TRUE(only_flushed_subnormals(c, f32({1, sub, 3, 4}), f32({1, 0, 3, 4})));
  EXPECT_FALSE(only_flushed_subnormals(c, f32({1, tiny, 3, 4}), f32({1, 0, 3, 4})));
  EXPECT_FALSE(only_flushed_subnormals(c, f32({1, 2, 3, 4}), f32({1, 2, 3, 4})));  // no difference
  EXPECT_FALSE(only_flushed_subnormals(c, f32({1, sub, 3, 4}), f32({1, 0, 3, 5})));
  EXPECT_FALSE(only_flushed_subnormals(c, f32({0, 2, 3, 4}), f32({-0.0f, 2, 3, 4})));  // a sign
  // A subnormal input (DAZ): a sum that kept it differs from one that read it as zero.
  c = scatter_case(Op::kTensorScatterAdd, Semantics::kTfCpu, {1, tiny, 3, 4}, {sub, 0, 3});
  EXPECT_TRUE(only_flushed_subnormals(c, f32({1, tiny + sub, 3, 7}), f32({1, tiny, 3, 7})));
  EXPECT_TRUE(only_flushed_subnormals(c, f32({0, 2, 3, 4}), f32({-0.0f, 2, 3, 4})));
  // NaN bits that differ are not a flush (known failures have a NaN rule for them).
  EXPECT_FALSE(only_flushed_subnormals(c, f32({kNaN, 2, 3, 4}), f32({-kNaN, 2, 3, 4})));
  EXPECT_FALSE(only_flushed_subnormals(c, f32({1, 2 * tiny, 3, 4}), f32({1, 0, 3, 4})));
  EXPECT_FALSE(only_flushed_subnormals(c, f32({kNaN, 2, 3, 4}), f32({0, 2, 3, 4})));
  // A quieted signalling NaN is not a flush either, in any width: widening to double quiets,
  // so the bits are compared as stored (float16 0x7c15 -> 0x7e15 was once "flushed").
  auto one = [](auto v) { return Tensor::from_values<decltype(v)>(Shape{1}, {v}); };
  EXPECT_FALSE(flush_explains(one(Float16{0x7c15}), one(Float16{0x7e15}), 0, true));
  EXPECT_FALSE(flush_explains(one(BFloat16{0x7f85}), one(BFloat16{0x7fc5}), 0, true));
  EXPECT_FALSE(flush_explains(one(std::bit_cast<float>(0x7f800015u)),
                              one(std::bit_cast<float>(0x7fc00015u)), 0, true));
  EXPECT_FALSE(flush_explains(one(std::complex<float>(std::bit_cast<float>(0x7f800015u), 0)),
                              one(std::complex<float>(std::bit_cast<float>(0x7fc00015u), 0)), 0,
                              true));
  EXPECT_TRUE(flush_explains(one(Float16{0x0001}), one(Float16{0x0000}), 0, false));
  // Integers never flush; another shape is another failure.
  Case ci = gather_case();
  ci.params = Tensor::from_values<int32_t>(Shape{3}, {1, 2, 3});
  EXPECT_FALSE(only_flushed_subnormals(ci, Tensor::from_values<int32_t>(Shape{2}, {3, 1}),
                                       Tensor::from_values<int32_t>(Shape{2}, {3, 0})));
  EXPECT_FALSE(only_flushed_subnormals(c, f32({1, sub}), f32({1, 0, 0})));
}

TEST(Compare, ErrorsByClassAndMessage) {
  const Case c = gather_case();
  const Outcome e = bad_index("indices[0] = 5 is not in [0, 3)");
  EXPECT_TRUE(compare_outcomes(c, e, bad_index("indices[0] = 5 is not in [0, 3)")).pass);
  Comparison v = compare_outcomes(c, e, bad_index("index 5 out of range"));
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.summary.find("message differs"), std::string::npos) << v.summary;
  Options lax;
  lax.compare_messages = false;
  EXPECT_TRUE(compare_outcomes(c, e, bad_index("index 5 out of range"), lax).pass);
  v = compare_outcomes(c, e, invalid_argument("indices[0] = 5 is not in [0, 3)"), lax);
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.summary.find("got error invalid_argument"), std::string::npos) << v.summary;
  v = compare_outcomes(c, e, floats({3, 1}));
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.summary.find("got a float32 [2] tensor"), std::string::npos) << v.summary;
  EXPECT_FALSE(compare_outcomes(c, floats({3, 1}), e).pass);
}

TEST(Compare, GatherIsBitExactIncludingSignedZeroAndNanPayloads) {
  const Case c = gather_case();
  EXPECT_TRUE(compare_outcomes(c, floats({3, 1}), floats({3, 1})).pass);
  Comparison v = compare_outcomes(c, floats({0.0f, 1}), floats({-0.0f, 1}));
  EXPECT_FALSE(v.pass);
  ASSERT_EQ(v.mismatches.size(), 1u);
  EXPECT_EQ(v.mismatches[0].index, (std::vector<int64_t>{0}));
  EXPECT_EQ(v.mismatches[0].expected, "0");
  EXPECT_EQ(v.mismatches[0].got, "-0");
  v = compare_outcomes(c, floats({kNaN, 1}), floats({std::bit_cast<float>(0x7fc00001u), 1}));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatches[0].got, "nan(0x7fc00001)");
  EXPECT_FALSE(compare_outcomes(c, floats({3, 1}), floats({3, 1, 0})).pass);
}

TEST(Compare, MismatchesCarryMultiIndexAndAreCapped) {
  Case c = gather_case();
  Tensor e = Tensor::from_values<int32_t>(Shape{2, 3, 2}, std::vector<int32_t>(12, 0));
  Tensor g = e;
  for (int i = 0; i < 12; ++i) g.data_as<int32_t>()[i] = i >= 5 ? 7 : 0;
  Options opts;
  opts.max_mismatches = 3;
  Comparison v = compare_outcomes(c, e, g, opts);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatch_count, 7);
  ASSERT_EQ(v.mismatches.size(), 3u);
  EXPECT_EQ(v.mismatches[0].index, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(v.mismatches[1].index, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(v.summary, "7 of 12 elements differ; first at [0,2,1]: expected 0, got 7");
}

TEST(Compare, UpdateDuplicatesAreSetValuedOnlyUnderGpuSemantics) {
  // rows 1, 1, 3 write 10, 20, 30 into [0, 0, 0, 0].
  const Case gpu =
      scatter_case(Op::kTensorScatterUpdate, Semantics::kTfGpu, {0, 0, 0, 0}, {10, 20, 30});
  const Outcome ref = floats({0, 20, 0, 30});  // last row wins in the reference
  EXPECT_TRUE(compare_outcomes(gpu, ref, floats({0, 10, 0, 30})).pass);
  Comparison v = compare_outcomes(gpu, ref, floats({0, 0, 0, 30}));  // the original is no winner
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatches[0].expected, "one of {10, 20}");
  EXPECT_FALSE(compare_outcomes(gpu, ref, floats({0, 30, 0, 30})).pass);  // another row's value
  EXPECT_FALSE(compare_outcomes(gpu, floats({0, 0, 0, 30}), floats({0, 0, 0, 30})).pass);
  const Case cpu =
      scatter_case(Op::kTensorScatterUpdate, Semantics::kTfCpu, {0, 0, 0, 0}, {10, 20, 30});
  EXPECT_FALSE(compare_outcomes(cpu, ref, floats({0, 10, 0, 30})).pass);
  EXPECT_TRUE(compare_outcomes(cpu, ref, floats({0, 20, 0, 30})).pass);
}

TEST(Compare, SetValuedPerElementOfASlice) {
  // [2,2] tensor, both rows address slice 0; element (0,0) from row 1, (0,1) from row 0.
  Case c;
  c.op = Op::kTensorScatterUpdate;
  c.semantics = Semantics::kTfGpu;
  c.tensor = Tensor::from_values<int32_t>(Shape{2, 2}, {0, 0, 5, 6});
  c.indices = Tensor::from_values<int64_t>(Shape{2, 1}, {0, 0});
  c.updates = Tensor::from_values<int32_t>(Shape{2, 2}, {1, 2, 3, 4});
  const Outcome ref = Tensor::from_values<int32_t>(Shape{2, 2}, {3, 4, 5, 6});
  Comparison v = compare_outcomes(c, ref, Tensor::from_values<int32_t>(Shape{2, 2}, {3, 2, 5, 6}));
  EXPECT_TRUE(v.pass) << v.summary;
  EXPECT_EQ(v.summary, "matches: 1 bit-exact, 2 untouched, 1 one of the colliding updates");
}

TEST(Compare, UntouchedElementsMustKeepTheStartingBits) {
  const Case gpu =
      scatter_case(Op::kTensorScatterAdd, Semantics::kTfGpu, {-0.0f, 1, 2, 3}, {1, 1, 1});
  const Outcome ref = floats({-0.0f, 3, 2, 4});
  EXPECT_TRUE(compare_outcomes(gpu, ref, floats({-0.0f, 3, 2, 4})).pass);
  Comparison v = compare_outcomes(gpu, ref, floats({0.0f, 3, 2, 4}));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatches[0].expected, "-0 (untouched)");
  // Checked against the case's own tensor, not the reference: a reference that wrote to an
  // unaddressed element does not make that value acceptable.
  EXPECT_FALSE(compare_outcomes(gpu, floats({7, 3, 2, 4}), floats({7, 3, 2, 4})).pass);
  // scatter_nd starts from zeros.
  Case nd;
  nd.op = Op::kScatterNd;
  nd.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {1});
  nd.updates = Tensor::from_values<int8_t>(Shape{1}, {9});
  nd.shape = Tensor::from_values<int32_t>(Shape{1}, {3});
  const Outcome nd_ref = Tensor::from_values<int8_t>(Shape{3}, {0, 9, 0});
  EXPECT_TRUE(compare_outcomes(nd, nd_ref, Tensor::from_values<int8_t>(Shape{3}, {0, 9, 0})).pass);
  EXPECT_FALSE(compare_outcomes(nd, nd_ref, Tensor::from_values<int8_t>(Shape{3}, {0, 9, 1})).pass);
}

TEST(Compare, FloatAddDuplicatesWithinTheSummationBound) {
  // Element 1: 1 + 1e8 + -1e8 (k = 3). Row order in float32 gives (1 + 1e8) - 1e8 = 0; another
  // order gives 1. Both are within 2u * (1 + 2e8) ~ 23.8; 30 is not.
  const Case gpu =
      scatter_case(Op::kTensorScatterAdd, Semantics::kTfGpu, {0, 1, 0, 0}, {1e8f, -1e8f, 5});
  const Outcome ref = floats({0, 0, 0, 5});
  EXPECT_TRUE(compare_outcomes(gpu, ref, floats({0, 1, 0, 5})).pass);
  Comparison v = compare_outcomes(gpu, ref, floats({0, 1, 0, 5}));
  EXPECT_EQ(v.summary, "matches: 1 bit-exact, 2 untouched, 1 within the summation-order bound");
  v = compare_outcomes(gpu, ref, floats({0, 30, 0, 5}));
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.mismatches[0].expected.find("(3 terms)"), std::string::npos)
      << v.mismatches[0].expected;
  // The expected value must itself be a possible result: a wrong golden file or reference is
  // caught even when the backend agrees with it.
  v = compare_outcomes(gpu, floats({0, 30, 0, 5}), floats({0, 30, 0, 5}));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatches[0].expected.rfind("a possible result; the expected 30 is not one", 0), 0u)
      << v.mismatches[0].expected;
  // A single row at element 3 is one rounding: bit-exact even on tf-gpu.
  EXPECT_FALSE(compare_outcomes(gpu, ref, floats({0, 1, 0, 5.0000005f})).pass);
  // tf-cpu promises row order: bit-exact.
  const Case cpu =
      scatter_case(Op::kTensorScatterAdd, Semantics::kTfCpu, {0, 1, 0, 0}, {1e8f, -1e8f, 5});
  EXPECT_FALSE(compare_outcomes(cpu, ref, floats({0, 1, 0, 5})).pass);
  // sub negates the updates: 1 - 1e8 - (-1e8).
  const Case sub =
      scatter_case(Op::kTensorScatterSub, Semantics::kTfGpu, {0, 1, 0, 0}, {1e8f, -1e8f, 5});
  EXPECT_TRUE(compare_outcomes(sub, floats({0, 0, 0, -5}), floats({0, 1, 0, -5})).pass);
  EXPECT_FALSE(compare_outcomes(sub, floats({0, 0, 0, -5}), floats({0, 2e8f, 0, -5})).pass);
}

TEST(Compare, NonFiniteSums) {
  const float inf = std::numeric_limits<float>::infinity();
  const Case nan_case =
      scatter_case(Op::kTensorScatterAdd, Semantics::kTfGpu, {0, 1, 0, 0}, {kNaN, 2, 0});
  EXPECT_TRUE(compare_outcomes(nan_case, floats({0, kNaN, 0, 0}),
                               floats({0, std::bit_cast<float>(0xffc00000u), 0, 0}))
                  .pass);
  EXPECT_FALSE(compare_outcomes(nan_case, floats({0, kNaN, 0, 0}), floats({0, 3, 0, 0})).pass);
  const Case inf_case =
      scatter_case(Op::kTensorScatterAdd, Semantics::kTfGpu, {0, 1, 0, 0}, {inf, 2, 0});
  EXPECT_TRUE(compare_outcomes(inf_case, floats({0, inf, 0, 0}), floats({0, inf, 0, 0})).pass);
  // max + max - max: overflow in some orders, max in others.
  const float m = std::numeric_limits<float>::max();
  const Case ovf = scatter_case(Op::kTensorScatterAdd, Semantics::kTfGpu, {0, m, 0, 0}, {m, -m, 0});
  EXPECT_TRUE(compare_outcomes(ovf, floats({0, inf, 0, 0}), floats({0, m, 0, 0})).pass);
  EXPECT_TRUE(compare_outcomes(ovf, floats({0, m, 0, 0}), floats({0, inf, 0, 0})).pass);
  EXPECT_FALSE(compare_outcomes(ovf, floats({0, m, 0, 0}), floats({0, -inf, 0, 0})).pass);
}

// Sums under row order are exact, except that a NaN sum may carry any payload (hardware
// canonicalises NaNs); an INT64_MAX index row is out of range, not an overflow.
TEST(Compare, RowOrderSumsIgnoreNanPayloadOnly) {
  const Case c = scatter_case(Op::kTensorScatterAdd, Semantics::kTfCpu, {0, 1, 0, 0}, {kNaN, 2, 0});
  EXPECT_TRUE(compare_outcomes(c, floats({0, kNaN, 0, 0}),
                               floats({0, std::bit_cast<float>(0x7fc00001u), 0, 0}))
                  .pass);
  EXPECT_FALSE(compare_outcomes(c, floats({0, kNaN, 0, 0}), floats({0, 3, 0, 0})).pass);
  EXPECT_FALSE(compare_outcomes(c, floats({0, 3, 0, 0}), floats({0, kNaN, 0, 0})).pass);
  Case far = c;
  far.indices = Tensor::from_values<int64_t>(Shape{3, 1}, {1, INT64_MAX, 3});
  EXPECT_TRUE(compare_outcomes(far, floats({0, kNaN, 0, 0}), floats({0, kNaN, 0, 0})).pass);
  // Gather stays bit-exact on payloads.
  Case g = gather_case();
  g.params = Tensor::from_values<float>(Shape{3}, {kNaN, 2, 3});
  EXPECT_FALSE(
      compare_outcomes(g, floats({3, kNaN}), floats({3, std::bit_cast<float>(0x7fc00001u)})).pass);
}

TEST(Compare, HalfBoundsAndFloatAccumulation) {
  // float16: 2048 + 1 + 1 (k = 3): row order gives 2048 (ties to even twice), exact is 2050.
  Case c;
  c.op = Op::kTensorScatterAdd;
  c.semantics = Semantics::kTfGpu;
  auto half = [](float f) { return float16_from_float(f); };
  c.tensor = Tensor::from_values<Float16>(Shape{1}, {half(2048)});
  c.indices = Tensor::from_values<int32_t>(Shape{2, 1}, {0, 0});
  c.updates = Tensor::from_values<Float16>(Shape{2}, {half(1), half(1)});
  const Outcome ref = Tensor::from_values<Float16>(Shape{1}, {half(2048)});
  const Tensor exact = Tensor::from_values<Float16>(Shape{1}, {half(2050)});
  EXPECT_TRUE(compare_outcomes(c, ref, exact).pass);
  // Bound with u = 2^-11: 2 * 2^-11 * 2050 ~ 2.0; 2052 is 2 away: within. 2056 is not.
  EXPECT_TRUE(compare_outcomes(c, ref, Tensor::from_values<Float16>(Shape{1}, {half(2052)})).pass);
  EXPECT_FALSE(compare_outcomes(c, ref, Tensor::from_values<Float16>(Shape{1}, {half(2056)})).pass);
  // Accumulating in float32 leaves only the final rounding: 2052 is 2 above the exact 2050,
  // more than float32's bound plus half an ulp of float16 at 2050 (about 1.0).
  Options widened;
  widened.half_accumulated_in_float = true;
  EXPECT_FALSE(
      compare_outcomes(c, ref, Tensor::from_values<Float16>(Shape{1}, {half(2052)}), widened).pass);
  EXPECT_TRUE(compare_outcomes(c, ref, exact, widened).pass);
}

TEST(Compare, IntegerAndBoolAddsAreExact) {
  Case c;
  c.op = Op::kTensorScatterAdd;
  c.semantics = Semantics::kTfGpu;
  c.tensor = Tensor::from_values<int32_t>(Shape{2}, {INT32_MAX, 0});
  c.indices = Tensor::from_values<int32_t>(Shape{2, 1}, {0, 0});
  c.updates = Tensor::from_values<int32_t>(Shape{2}, {1, 1});
  const Outcome ref = Tensor::from_values<int32_t>(Shape{2}, {INT32_MIN + 1, 0});
  EXPECT_TRUE(compare_outcomes(c, ref, *ref).pass);
  EXPECT_FALSE(
      compare_outcomes(c, ref, Tensor::from_values<int32_t>(Shape{2}, {INT32_MIN, 0})).pass);
  // Duplicate bool adds are OR, whatever the order.
  Case b;
  b.op = Op::kScatterNd;
  b.semantics = Semantics::kTfGpu;
  b.indices = Tensor::from_values<int32_t>(Shape{2, 1}, {0, 0});
  b.updates = Tensor::from_values<bool>(Shape{2}, {true, false});
  b.shape = Tensor::from_values<int32_t>(Shape{1}, {2});
  const Outcome bref = Tensor::from_values<bool>(Shape{2}, {true, false});
  EXPECT_TRUE(compare_outcomes(b, bref, *bref).pass);
  EXPECT_FALSE(compare_outcomes(b, bref, Tensor::from_values<bool>(Shape{2}, {false, false})).pass);
}

TEST(Compare, StringAddsConcatenateInSomeOrderOnGpu) {
  Case c;
  c.op = Op::kScatterNd;
  c.semantics = Semantics::kTfGpu;
  c.indices = Tensor::from_values<int32_t>(Shape{3, 1}, {0, 0, 0});
  c.updates = Tensor::from_values<std::string>(Shape{3}, {"ab", "a", "b"});
  c.shape = Tensor::from_values<int32_t>(Shape{1}, {1});
  const Outcome ref = Tensor::from_values<std::string>(Shape{1}, {"abab"});
  EXPECT_TRUE(compare_outcomes(c, ref, Tensor::from_values<std::string>(Shape{1}, {"baab"})).pass);
  EXPECT_TRUE(compare_outcomes(c, ref, Tensor::from_values<std::string>(Shape{1}, {"aabb"})).pass);
  EXPECT_FALSE(compare_outcomes(c, ref, Tensor::from_values<std::string>(Shape{1}, {"bbaa"})).pass);
  EXPECT_FALSE(compare_outcomes(c, ref, Tensor::from_values<std::string>(Shape{1}, {"aab"})).pass);
  // Every part used and bytes left over is no concatenation of the parts.
  EXPECT_FALSE(
      compare_outcomes(c, ref, Tensor::from_values<std::string>(Shape{1}, {"ababa"})).pass);
  EXPECT_FALSE(compare_outcomes(
                   c, ref, Tensor::from_values<std::string>(Shape{1}, {std::string("baab\0", 5)}))
                   .pass);
  c.semantics = Semantics::kTfCpu;
  EXPECT_FALSE(compare_outcomes(c, ref, Tensor::from_values<std::string>(Shape{1}, {"baab"})).pass);
}

TEST(Compare, MinMaxWithNanAcceptsWhatTheStepsReturnNeverAThird) {
  // min over element 1: operands 5 (tensor), nan, 3. In row order a NaN step keeps either
  // operand, so the results are 3 and the NaN; the starting 5 cannot survive the 3.
  const Case c = scatter_case(Op::kTensorScatterMin, Semantics::kTfCpu, {0, 5, 0, 0}, {kNaN, 3, 1});
  const Outcome ref = floats({0, 3, 0, 0});
  EXPECT_TRUE(compare_outcomes(c, ref, floats({0, kNaN, 0, 0})).pass);
  EXPECT_FALSE(compare_outcomes(c, ref, floats({0, 5, 0, 0})).pass);
  Comparison v = compare_outcomes(c, ref, floats({0, 4, 0, 0}));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatches[0].expected.rfind("one of {3, nan(", 0), 0u) << v.mismatches[0].expected;
  EXPECT_FALSE(compare_outcomes(c, ref, floats({0, std::bit_cast<float>(0x7fc00001u), 0, 0})).pass);
  // Without NaN: bit-exact on tf-cpu; tf-gpu may pick either zero of a tie.
  const Case zeros_cpu =
      scatter_case(Op::kTensorScatterMax, Semantics::kTfCpu, {0, 0.0f, 0, 0}, {-0.0f, -1, 1});
  const Outcome zref = floats({0, 0.0f, 0, 1});
  EXPECT_FALSE(compare_outcomes(zeros_cpu, zref, floats({0, -0.0f, 0, 1})).pass);
  const Case zeros_gpu =
      scatter_case(Op::kTensorScatterMax, Semantics::kTfGpu, {0, 0.0f, 0, 0}, {-0.0f, -1, 1});
  EXPECT_TRUE(compare_outcomes(zeros_gpu, zref, floats({0, -0.0f, 0, 1})).pass);
  EXPECT_FALSE(compare_outcomes(zeros_gpu, zref, floats({0, -1, 0, 1})).pass);
}

TEST(Compare, OutOfRangeRowsAreSkippedInTheDecode) {
  // Row 9 is out of range for a [4] output (tf-gpu skips it): element 1 has one row only.
  const Case c = scatter_case(Op::kTensorScatterUpdate, Semantics::kTfGpu, {0, 0, 0, 0},
                              {10, 20, 30}, {1, 9, -1});
  auto rows = decode_scatter_rows(c, Shape{4});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->by_slice.size(), 1u);
  EXPECT_EQ(rows->by_slice[0], (std::pair<int64_t, int64_t>{1, 0}));
  EXPECT_TRUE(compare_outcomes(c, floats({0, 10, 0, 0}), floats({0, 10, 0, 0})).pass);
  EXPECT_FALSE(compare_outcomes(c, floats({0, 10, 0, 0}), floats({0, 10, 0, 20})).pass);
  // Inconsistent updates: not decodable, compared bit for bit.
  Case bad = c;
  bad.updates = Tensor::from_values<float>(Shape{2}, {1, 2});
  EXPECT_FALSE(decode_scatter_rows(bad, Shape{4}));
}

TEST(Compare, CheckExpect) {
  const Case c = gather_case();
  Expect out;
  out.output = Tensor::from_values<float>(Shape{2}, {3, 1});
  EXPECT_TRUE(check_expect(c, out, floats({3, 1})).pass);
  EXPECT_FALSE(check_expect(c, out, floats({3, 2})).pass);
  EXPECT_FALSE(check_expect(c, out, bad_index("x")).pass);
  Expect err;
  err.error_class = ErrorClass::kBadIndex;
  err.error_regex = "is not in \\[0, 3\\)$";
  EXPECT_TRUE(check_expect(c, err, bad_index("indices[1] = 7 is not in [0, 3)")).pass);
  Comparison v = check_expect(c, err, bad_index("indices[1] = 7 is not in [0, 4)"));
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.summary.find("got message"), std::string::npos) << v.summary;
  EXPECT_FALSE(check_expect(c, err, invalid_argument("indices[1] = 7 is not in [0, 3)")).pass);
  EXPECT_FALSE(check_expect(c, err, floats({3, 1})).pass);
  err.error_regex.reset();
  EXPECT_TRUE(check_expect(c, err, bad_index("anything")).pass);
  err.error_regex = "([";
  EXPECT_FALSE(check_expect(c, err, bad_index("anything")).pass);
  EXPECT_FALSE(check_expect(c, Expect{}, floats({3, 1})).pass);
}

TEST(Compare, OptionsForCapabilities) {
  Capabilities caps;
  caps.tf_messages = false;
  caps.accumulates_half_in_float = true;
  Options o = options_for(caps);
  EXPECT_FALSE(o.compare_messages);
  EXPECT_TRUE(o.half_accumulated_in_float);
  caps.tf_messages = true;
  EXPECT_TRUE(options_for(caps).compare_messages);
}

TEST(Summation, ExactSumAndBound) {
  const double terms[] = {1e16, 1.0, -1e16};
  EXPECT_EQ(exact_sum(terms), 1.0);
  const double tiny[] = {0.1, 0.2, 0.3, -0.6};
  EXPECT_NEAR(exact_sum(tiny), 2.7755575615628914e-17, 1e-30);  // exact sum of the doubles
  std::string why;
  SumProblem p{terms, 0x1p-53, 0, 1.7976931348623157e308};
  EXPECT_TRUE(sum_allows(p, 0.0, &why));  // (1e16 + 1) - 1e16 in doubles
  EXPECT_TRUE(sum_allows(p, 1.0, &why));
  EXPECT_FALSE(sum_allows(p, 16.0, &why));  // bound is 2u * 2e16 ~ 4.4
  EXPECT_EQ(why.substr(0, 4), "1 +-");
  // sum |x_i| overflows a double though the sum does not (a fuzz find, scatter_nd complex128:
  // the bound was NaN and rejected every result): max + -max is 0 in any order.
  const double huge[] = {1.7976931348623157e308, -1.7976931348623157e308};
  SumProblem q{huge, 0x1p-53, 0, 1.7976931348623157e308};
  EXPECT_TRUE(sum_allows(q, 0.0, &why)) << why;
  EXPECT_EQ(why.substr(0, 5), "0 +- ") << why;
  EXPECT_NE(why.find("e+292 (2 terms)"), std::string::npos) << why;  // 2u * max
  EXPECT_FALSE(sum_allows(q, 1e300, &why));
}

// float16 summed through float32 (GPU kernels, accumulates_half_in_float): a partial sum may
// leave float16's range without overflowing, since it lives in float32; only the final rounding
// to float16 can overflow. Summed in float16 itself, the same partial sum is inf.
TEST(Summation, PartialSumsOverflowTheAccumulatorNotTheStoredType) {
  const double terms[] = {60000, 60000, -60000};
  std::string why;
  const SumProblem widened{terms, 0x1p-24, 0x1p-11, 65504, 3.4028234663852886e38};
  EXPECT_TRUE(sum_allows(widened, 60000, &why)) << why;
  EXPECT_FALSE(sum_allows(widened, INFINITY, &why)) << why;  // no float32 partial sum overflows
  EXPECT_EQ(why.find("inf"), std::string::npos) << why;
  const SumProblem in_half{terms, 0x1p-11, 0, 65504};
  EXPECT_TRUE(sum_allows(in_half, 60000, &why)) << why;
  EXPECT_TRUE(sum_allows(in_half, INFINITY, &why)) << why;  // 60000 + 60000 first
  // The final rounding does overflow float16 where the float32 sum is past its threshold.
  const double big[] = {40000, 40000};
  const SumProblem wide_big{big, 0x1p-24, 0x1p-11, 65504, 3.4028234663852886e38};
  EXPECT_TRUE(sum_allows(wide_big, INFINITY, &why)) << why;
  EXPECT_FALSE(sum_allows(wide_big, 65504, &why)) << why;
}

TEST(Elements, Formatting) {
  EXPECT_EQ(format_value(int8_t{-5}), "-5");
  EXPECT_EQ(format_value(uint64_t{18446744073709551615u}), "18446744073709551615");
  EXPECT_EQ(format_value(0.1f), "0.1");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_value(Float16{0x7e01}), "nan(0x7e01)");
  EXPECT_EQ(format_value(std::complex<float>(1, -0.0f)), "(1, -0)");
  EXPECT_EQ(format_value(std::string("a\"\x01")), "\"a\\\"\\x01\"");
  EXPECT_EQ(format_value(true), "true");
  EXPECT_EQ(unravel(Shape{2, 3, 4}, 23), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(format_index({1, 2}), "[1,2]");
}

}  // namespace
}  // namespace gscheck::compare
