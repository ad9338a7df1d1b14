// Reference tests with TensorFlow's own test values (python/kernel_tests/array_ops/
// scatter_nd_ops_test.py, v1_compat_tests/scatter_nd_ops_test.py, compiler/tests/
// scatter_nd_op_test.py, gather_op_test.py, gather_nd_op_test.py) and the boundary values where
// an oracle bug hides (unsigned order above 2^63 / 2^31, signed-zero ties). Independent of the
// CUDA kernels: they guard the oracle itself.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "tests/reference/test_util.h"

namespace gscheck {
namespace {

using namespace gscheck::testing;  // NOLINT

template <class T>
Tensor vec(std::vector<T> v) {
  return tensor<T>(Shape{static_cast<int64_t>(v.size())}, v);
}

// compiler/tests/scatter_nd_op_test.py testSimple.
TEST(ReferenceTfValues, ScatterNdSimple) {
  expect_output(scatter_nd(i32({4, 1}, {4, 3, 1, 7}), f32({4}, {9, 10, 11, 12}), i32({1}, {8})),
                f32({8}, {0, 11, 0, 10, 9, 0, 0, 12}));
}

// v1_compat scatter_nd_ops_test.py testScatterOutOfRangeCpu: params 1..6, updates -3, -4, -5.
TEST(ReferenceTfValues, MinMaxOutOfRangeQuoteTheBadRow) {
  for (Op op : {Op::kTensorScatterMin, Op::kTensorScatterMax}) {
    const Tensor params = f32({6}, {1, 2, 3, 4, 5, 6});
    const Tensor updates = f32({3}, {-3, -4, -5});
    expect_bad_index(tensor_scatter(op, params, i32({3, 1}, {-1, 0, 5}), updates),
                     "indices[0] = [-1] does not index into shape [6]");
    expect_bad_index(tensor_scatter(op, params, i32({3, 1}, {2, 0, 6}), updates),
                     "indices[2] = [6] does not index into shape [6]");
    // Two bad rows: TensorFlow's CPU kernel applies rows in order and reports the last one.
    expect_bad_index(tensor_scatter(op, params, i32({3, 1}, {-1, 0, 6}), updates),
                     "indices[2] = [6] does not index into shape [6]");
  }
}

// gather_op_test.py testBadIndicesCPU: the first bad index is reported.
TEST(ReferenceTfValues, GatherReportsTheFirstBadIndex) {
  const Tensor params = i32({2, 3}, {0, 1, 2, 3, 4, 5});
  expect_bad_index(gather(params, i32({1, 1}, {7}), 0), "indices[0,0] = 7 is not in [0, 2)");
  expect_bad_index(gather(params, i32({1, 3}, {0, 7, 9}), 0), "indices[0,1] = 7 is not in [0, 2)");
}

// gather_nd_op_test.py testBadIndicesCPU: the last bad row is reported.
TEST(ReferenceTfValues, GatherNdReportsTheLastBadRow) {
  const Tensor params = i32({3}, {0, 1, 2});
  expect_bad_index(gather_nd(params, i32({1, 2, 1}, {0, 7})),
                   "indices[0,1] = [7] does not index into param shape [3]");
  expect_bad_index(gather_nd(params, i32({1, 3, 1}, {9, 0, 7})),
                   "indices[0,2] = [7] does not index into param shape [3]");
}

// Unsigned min/max order as unsigned: 2^63 and above are the largest uint64 values (TensorFlow's
// CPU kernel uses the element type's own comparison).
TEST(ReferenceTfValues, Uint64MinMaxAboveTwoToThe63) {
  const uint64_t big = uint64_t{1} << 63, top = std::numeric_limits<uint64_t>::max();
  const Tensor t = vec<uint64_t>({big, top, 5});
  const Tensor ix = i32({3, 1}, {0, 1, 2});
  const Tensor u = vec<uint64_t>({1, big, big + 7});
  expect_output(tensor_scatter(Op::kTensorScatterMin, t, ix, u), vec<uint64_t>({1, big, 5}));
  expect_output(tensor_scatter(Op::kTensorScatterMax, t, ix, u),
                vec<uint64_t>({big, top, big + 7}));
}

TEST(ReferenceTfValues, Uint32MinMaxAboveTwoToThe31) {
  const uint32_t big = uint32_t{1} << 31, top = std::numeric_limits<uint32_t>::max();
  const Tensor t = vec<uint32_t>({big, top, 5});
  const Tensor ix = i32({3, 1}, {0, 1, 2});
  const Tensor u = vec<uint32_t>({1, big, big + 7});
  expect_output(tensor_scatter(Op::kTensorScatterMin, t, ix, u), vec<uint32_t>({1, big, 5}));
  expect_output(tensor_scatter(Op::kTensorScatterMax, t, ix, u),
                vec<uint32_t>({big, top, big + 7}));
}

// Signed integers keep their signed order at the extremes.
TEST(ReferenceTfValues, Int64MinMaxAtTheExtremes) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const Tensor t = i64({2}, {hi, lo});
  const Tensor ix = i32({2, 1}, {0, 1});
  const Tensor u = i64({2}, {lo, hi});
  expect_output(tensor_scatter(Op::kTensorScatterMin, t, ix, u), i64({2}, {lo, lo}));
  expect_output(tensor_scatter(Op::kTensorScatterMax, t, ix, u), i64({2}, {hi, hi}));
}

// A tie keeps the current element (+0 vs -0), and a NaN update never replaces it.
TEST(ReferenceTfValues, MinMaxTiesAndNanUpdatesKeepTheElement) {
  const float nan = std::bit_cast<float>(0x7fc00123u);
  for (Op op : {Op::kTensorScatterMin, Op::kTensorScatterMax}) {
    Outcome o = reference::run(tensor_scatter(
        op, f32({3}, {0.0f, -0.0f, 2}), i32({3, 1}, {0, 1, 2}), f32({3}, {-0.0f, 0.0f, nan})));
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[0]), 0x00000000u) << op_name(op);
    EXPECT_EQ(std::bit_cast<uint32_t>(o->data_as<float>()[1]), 0x80000000u) << op_name(op);
    EXPECT_EQ(o->data_as<float>()[2], 2.0f) << op_name(op);
  }
}

// The half types subtract as o - u (rounded once).
TEST(ReferenceTfValues, HalfSubtractsTheUpdate) {
  const Tensor t = tensor<Float16>(Shape{1}, {float16_from_float(1.0f)});
  const Tensor u = tensor<Float16>(Shape{1}, {float16_from_float(0.25f)});
  expect_output(tensor_scatter(Op::kTensorScatterSub, t, i32({1, 1}, {0}), u),
                tensor<Float16>(Shape{1}, {float16_from_float(0.75f)}));
}

// Row order: the last of two rows for one slice wins (update) and sums run in row order.
TEST(ReferenceTfValues, UpdateRowOrderLastWins) {
  expect_output(tensor_scatter(Op::kTensorScatterUpdate, f32({2}, {0, 0}), i32({3, 1}, {0, 1, 0}),
                               f32({3}, {1, 2, 3})),
                f32({2}, {3, 2}));
}

}  // namespace
}  // namespace gscheck
