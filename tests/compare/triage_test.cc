#include "compare/triage.h"

#include <gtest/gtest.h>

#include <numeric>

#include "compare/compare.h"

namespace gscheck::compare {
namespace {

// params[4,3] holding 1 + flat index (self-describing), the indices [[1],[7],[-1]].
Case gather_nd_case() {
  Case c;
  c.name = "gather_nd/triage";
  c.op = Op::kGatherNd;
  c.semantics = Semantics::kTfGpu;
  std::vector<float> p(12);
  std::iota(p.begin(), p.end(), 1.0f);
  c.params = Tensor::from_values<float>(Shape{4, 3}, p);
  c.indices = Tensor::from_values<int32_t>(Shape{3, 1}, {1, 7, -1});
  return c;
}

Tensor rows(std::vector<float> v) { return Tensor::from_values<float>(Shape{3, 3}, v); }

TEST(Triage, GatherNdNamesTheIndexRowAndTheClampedOrWrappedSource) {
  const Case c = gather_nd_case();
  // A backend that clamps 7 to row 3 and wraps -1 to row 3 (ONNX's rule for negatives).
  const Tensor got = rows({4, 5, 6, 10, 11, 12, 10, 11, 12});
  EXPECT_EQ(triage_element(c, got, {0, 1}),
            "from indices[0] = [1]: TensorFlow reads params[1,1]; got 5 = params[1,1] (what "
            "TensorFlow reads)");
  EXPECT_EQ(triage_element(c, got, {1, 2}),
            "from indices[1] = [7]: 7 is out of range for params dim 0 (size 4); got 12 = "
            "params[3,2] (the clamped coordinate)");
  EXPECT_EQ(triage_element(c, got, {2, 0}),
            "from indices[2] = [-1]: -1 is out of range for params dim 0 (size 4); got 10 = "
            "params[3,0] (the wrapped coordinate)");
}

TEST(Triage, ZerosAndValuesInNoInputAreSaidSo) {
  const Case c = gather_nd_case();
  const Tensor got = rows({4, 5, 6, 0, 0, 0, -3, 1e30f, 7});
  EXPECT_EQ(triage_element(c, got, {1, 0}),
            "from indices[1] = [7]: 7 is out of range for params dim 0 (size 4); got 0: zero, in "
            "no input");
  EXPECT_EQ(triage_element(c, got, {2, 1}),
            "from indices[2] = [-1]: -1 is out of range for params dim 0 (size 4); got 1e+30: in "
            "no input (memory the backend never wrote?)");
}

TEST(Triage, GatherDecodesAxisAndBatchDims) {
  Case c;
  c.op = Op::kGather;
  std::vector<float> p(24);
  std::iota(p.begin(), p.end(), 1.0f);
  c.params = Tensor::from_values<float>(Shape{2, 3, 4}, p);
  c.indices = Tensor::from_values<int64_t>(Shape{2, 2}, {1, 9, 0, 2});
  c.axis = Tensor::from_values<int32_t>(Shape{}, {2});
  c.batch_dims = 1;
  // out[b, j, k] = params[b, j, indices[b, k]]: out shape [2, 3, 2]. out[0, 2, 1] reads through
  // indices[0, 1] = 9 (out of range for dim 2 of size 4); got params[0,2,3] is the clamped read.
  std::vector<float> g(12, 0.0f);
  g[0 * 6 + 2 * 2 + 1] = 12.0f;
  const Tensor got = Tensor::from_values<float>(Shape{2, 3, 2}, g);
  EXPECT_EQ(triage_element(c, got, {0, 2, 1}),
            "from indices[0,1] = 9: 9 is out of range for params dim 2 (size 4); got 12 = "
            "params[0,2,3] (the clamped coordinate)");
  // A got tensor of another shape does not decode.
  EXPECT_EQ(triage_element(c, Tensor::from_values<float>(Shape{12}, g), {3}), "");
}

TEST(Triage, ScatterNamesTheRowsThatWriteTheSliceAndTheSourceOfTheValue) {
  Case c;
  c.op = Op::kTensorScatterAdd;
  c.tensor = Tensor::from_values<float>(Shape{4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  c.indices = Tensor::from_values<int32_t>(Shape{3, 1}, {1, 7, -1});
  c.updates = Tensor::from_values<float>(Shape{3, 2}, {10, 20, 30, 40, 50, 60});
  // A backend that wrote update row 2 into slice 3 (the wrapped -1) and left slice 1 alone.
  const Tensor got = Tensor::from_values<float>(Shape{4, 2}, {1, 2, 3, 4, 5, 6, 57, 68});
  EXPECT_EQ(triage_element(c, got, {1, 0}),
            "slice [1] is written by index row 0; got 3 = tensor[1,0]");
  EXPECT_EQ(triage_element(c, got, {3, 1}),
            "slice [3] is written by no index row; out-of-range row(s) 1 land here clamped; "
            "negative row(s) 2 land here wrapped; got 68: in no input as a single element");
}

TEST(Triage, ComparisonsCarryTheTriageIntoTheirMismatches) {
  const Case c = gather_nd_case();
  const Outcome expected = rows({4, 5, 6, 0, 0, 0, 0, 0, 0});  // tf-gpu: bad rows zeroed
  const Outcome got = rows({4, 5, 6, 10, 11, 12, 0, 0, 0});
  const Comparison v = compare_outcomes(c, expected, got);
  ASSERT_FALSE(v.pass);
  ASSERT_EQ(v.mismatches.size(), 3u);
  EXPECT_EQ(v.mismatches[0].triage,
            "from indices[1] = [7]: 7 is out of range for params dim 0 (size 4); got 10 = "
            "params[3,0] (the clamped coordinate)");
}

}  // namespace
}  // namespace gscheck::compare
