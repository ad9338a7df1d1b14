#include <gtest/gtest.h>

#include <algorithm>

#include "backends/registry.h"
#include "compare/compare.h"

namespace gscheck {
namespace {

Case small_gather() {
  Case c;
  c.name = "gather/small";
  c.op = Op::kGather;
  c.params = Tensor::from_values<float>(Shape{3}, {1, 2, 3});
  c.indices = Tensor::from_values<int32_t>(Shape{2}, {2, 0});
  return c;
}

TEST(Registry, NamesAndFactories) {
  const auto names = backend_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "reference");
  for (const auto& name : names) {
    auto b = make_backend(name);
    if (!b.ok()) {
      // Only the GPU backends may be unavailable at run time (no device on this machine).
      EXPECT_TRUE(name == "cuda" || name == "cuda-det") << name << ": " << b.error().message;
      continue;
    }
    EXPECT_EQ((*b)->capabilities().name, name);
  }
  auto unknown = make_backend("tpu");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown backend 'tpu' (available: reference"),
            std::string::npos)
      << unknown.error().message;
}

TEST(Registry, ReferenceClaimsEverything) {
  auto b = make_backend("reference");
  ASSERT_TRUE(b.ok());
  const Capabilities& caps = (*b)->capabilities();
  EXPECT_TRUE(caps.tf_messages);
  EXPECT_TRUE(caps.deterministic);
  EXPECT_EQ(caps.ops.size(), std::size(kAllOps));
  EXPECT_EQ(caps.dtypes.size(), std::size(kAllDTypes));
  EXPECT_EQ(caps.semantics.size(), std::size(kAllSemantics));  // tf-cpu, tf-gpu, xla, jax
  Case c = small_gather();
  for (DType dt : kAllDTypes) {
    if (!is_integer(dt)) continue;
    c.indices = Tensor::zeros(dt, Shape{1}).value();
    EXPECT_TRUE(admit(caps, c).ok()) << dtype_name(dt);
  }
}

TEST(Registry, ReferenceRuns) {
  auto b = make_backend("reference");
  ASSERT_TRUE(b.ok());
  Outcome out = (*b)->run(small_gather());
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->bit_equal(Tensor::from_values<float>(Shape{2}, {3, 1})));
  Case bad = small_gather();
  bad.indices = Tensor::from_values<int32_t>(Shape{1}, {3});
  Outcome err = (*b)->run(bad);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().cls, ErrorClass::kBadIndex);
}

TEST(Capabilities, SupportsChecksEveryAxis) {
  Capabilities caps;
  caps.ops = {Op::kGather, Op::kTensorScatterAdd};
  caps.dtypes = {DType::kFloat32};
  caps.index_dtypes = {DType::kInt32};
  caps.semantics = {Semantics::kTfGpu};
  Case c = small_gather();
  c.semantics = Semantics::kTfGpu;
  EXPECT_TRUE(admit(caps, c).ok());
  Case other = c;
  other.semantics = Semantics::kTfCpu;
  EXPECT_FALSE(admit(caps, other).ok());
  other = c;
  other.op = Op::kGatherNd;
  EXPECT_FALSE(admit(caps, other).ok());
  other = c;
  other.params = Tensor::from_values<double>(Shape{1}, {1});
  EXPECT_FALSE(admit(caps, other).ok());
  other = c;
  other.indices = Tensor::from_values<int64_t>(Shape{1}, {0});
  EXPECT_FALSE(admit(caps, other).ok());
  // A budget of its own: params 12 bytes, indices 8, output 8.
  caps.max_case_bytes = 28;
  EXPECT_TRUE(admit(caps, c).ok());
  caps.max_case_bytes = 27;
  const Status over = admit(caps, c);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message,
            "outside the backend's capabilities: its inputs and output (20 + 8 bytes) are over "
            "the backend's own budget of 27 bytes");
  caps.max_case_bytes = 0;
  // Scatter: the element dtype is the starting tensor's.
  Case s;
  s.op = Op::kTensorScatterAdd;
  s.semantics = Semantics::kTfGpu;
  s.tensor = Tensor::from_values<float>(Shape{2}, {0, 0});
  s.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {0});
  s.updates = Tensor::from_values<float>(Shape{1}, {1});
  EXPECT_TRUE(admit(caps, s).ok());
  s.tensor = Tensor::from_values<int32_t>(Shape{2}, {0, 0});
  EXPECT_FALSE(admit(caps, s).ok());
  Case missing = c;
  missing.params.reset();
  EXPECT_FALSE(admit(caps, missing).ok());
}

// Every registered backend agrees with the reference on a small valid case it supports.
TEST(Registry, BackendsAgreeWithReferenceOnASmallCase) {
  auto ref = make_backend("reference");
  ASSERT_TRUE(ref.ok());
  const Case c = small_gather();
  const Outcome want = (*ref)->run(c);
  for (const auto& name : backend_names()) {
    auto b = make_backend(name);
    if (!b.ok()) continue;
    if (!admit((*b)->capabilities(), c).ok()) continue;
    const auto v = compare::compare_outcomes(c, want, (*b)->run(c),
                                             compare::options_for((*b)->capabilities()));
    EXPECT_TRUE(v.pass) << name << ": " << v.summary;
  }
}

}  // namespace
}  // namespace gscheck
