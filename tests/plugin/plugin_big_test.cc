// A 2 GiB output through the plugin worker (nightly: about 6 GiB of memory with the
// reference's copy) under the default deadline (10 s + 1 s per 64 MiB, 42 s here): the deadline
// must grow with the output, and the output travel through shared memory intact. How fast it
// goes is the persistent-worker benchmark's business (docs/vendor.md), not this test's.
#include <gtest/gtest.h>

#include "backends/plugin_backend.h"
#include "compare/compare.h"
#include "reference/reference.h"

namespace gscheck {
namespace {

TEST(BigOutput, TwoGibibytesPassUnderTheDefaultDeadline) {
  auto plugin = make_plugin_backend(GSCHECK_EXAMPLE_PLUGIN);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  // gather_nd with depth 0: each of the 2048 rows copies all of params (1 MiB).
  Case c;
  c.name = "plugin/two_gib_output";
  c.op = Op::kGatherNd;
  c.semantics = Semantics::kTfGpu;
  std::vector<float> params(262144);
  for (std::size_t i = 0; i < params.size(); ++i) params[i] = static_cast<float>(i);
  c.params = Tensor::from_values<float>(Shape{262144}, params);
  c.indices = Tensor::from_values<int32_t>(Shape{2048, 0}, {});
  Outcome got = (*plugin)->run(c);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->byte_size(), std::size_t{2} << 30);
  Outcome want = reference::run(c);
  auto v = compare::compare_outcomes(c, want, got);
  EXPECT_TRUE(v.pass) << v.summary;
}

}  // namespace
}  // namespace gscheck
