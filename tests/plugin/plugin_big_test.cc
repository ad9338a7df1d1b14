// A 2 GiB output through the plugin worker (nightly: about 6 GiB of memory with the
// reference's copy). It travels through shared memory, never a pipe, so it takes seconds
// against a default timeout of 10 s + 1 s per 64 MiB (42 s here).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "backends/plugin_backend.h"
#include "compare/compare.h"
#include "reference/reference.h"

namespace gscheck {
namespace {

TEST(BigOutput, TwoGibibytesPassWellUnderTheTimeout) {
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
  const auto t0 = std::chrono::steady_clock::now();
  Outcome got = (*plugin)->run(c);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("2 GiB output through the worker: %.2f s\n", seconds);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->byte_size(), std::size_t{2} << 30);
  EXPECT_LT(seconds, 42.0 / 4);
  Outcome want = reference::run(c);
  auto v = compare::compare_outcomes(c, want, got);
  EXPECT_TRUE(v.pass) << v.summary;
}

}  // namespace
}  // namespace gscheck
