#include <gtest/gtest.h>

#include "backends/plugin_backend.h"
#include "compare/compare.h"
#include "reference/reference.h"

namespace gscheck {
namespace {

std::unique_ptr<Backend> load(const char* path, PluginOptions opt = {}) {
  auto b = make_plugin_backend(path, opt);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
  return b.ok() ? std::move(b).value() : nullptr;
}

Case gather_nd_case(Tensor params, Tensor indices) {
  Case c;
  c.name = "plugin/gather_nd";
  c.op = Op::kGatherNd;
  c.semantics = Semantics::kTfGpu;
  c.params = std::move(params);
  c.indices = std::move(indices);
  return c;
}

// The example plugin agrees with the reference, element for element, including a bad row
// (zeroed under tf-gpu) and string params.
TEST(ExamplePlugin, AgreesWithTheReference) {
  auto plugin = load(GSCHECK_EXAMPLE_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  std::vector<Case> cases;
  cases.push_back(gather_nd_case(Tensor::from_values<float>(Shape{3, 2}, {0, 1, 2, 3, 4, 5}),
                                 Tensor::from_values<int32_t>(Shape{3, 1}, {2, 0, 7})));
  cases.push_back(
      gather_nd_case(Tensor::from_values<std::string>(Shape{2, 2}, {"a", "b", "c", "d"}),
                     Tensor::from_values<int64_t>(Shape{2, 2}, {0, 0, 1, 1})));
  cases.push_back(gather_nd_case(Tensor::from_values<double>(Shape{2}, {1.5, -0.0}),
                                 Tensor::from_values<int32_t>(Shape{2, 0}, {})));  // depth 0
  for (const Case& c : cases) {
    Outcome want = reference::run(c);
    Outcome got = plugin->run(c);
    auto v = compare::compare_outcomes(c, want, got, compare::options_for(plugin->capabilities()));
    EXPECT_TRUE(v.pass) << v.summary;
  }
}

TEST(ExamplePlugin, DeclaresItsContract) {
  auto plugin = load(GSCHECK_EXAMPLE_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  const Capabilities& caps = plugin->capabilities();
  EXPECT_EQ(caps.ops, std::vector<Op>{Op::kGatherNd});
  EXPECT_EQ(caps.semantics, std::vector<Semantics>{Semantics::kTfGpu});
  EXPECT_EQ(caps.dtypes.size(), std::size(kAllDTypes));
  EXPECT_FALSE(caps.tf_messages);
  // A case outside the contract is UNIMPLEMENTED, not a failure of the plugin.
  Case c = gather_nd_case(Tensor::from_values<float>(Shape{1}, {1}),
                          Tensor::from_values<int32_t>(Shape{1, 1}, {0}));
  c.semantics = Semantics::kTfCpu;
  Outcome o = plugin->run(c);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kUnimplemented);
}

TEST(ExamplePlugin, InProcessModeGivesTheSameOutcome) {
  PluginOptions opt;
  opt.isolate = false;
  auto plugin = load(GSCHECK_EXAMPLE_PLUGIN, opt);
  ASSERT_NE(plugin, nullptr);
  Case c = gather_nd_case(Tensor::from_values<int16_t>(Shape{2, 2}, {1, 2, 3, 4}),
                          Tensor::from_values<int32_t>(Shape{1, 1}, {1}));
  Outcome got = plugin->run(c);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->bit_equal(Tensor::from_values<int16_t>(Shape{1, 2}, {3, 4})));
}

Case float_gather() {
  Case c;
  c.name = "plugin/misbehaving";
  c.op = Op::kGather;
  c.semantics = Semantics::kTfGpu;
  c.params = Tensor::from_values<float>(Shape{4}, {1, 2, 3, 4});
  c.indices = Tensor::from_values<int32_t>(Shape{4}, {0, 1, 2, 3});
  return c;
}

void expect_internal(const char* path, const std::string& text, PluginOptions opt = {}) {
  auto plugin = load(path, opt);
  ASSERT_NE(plugin, nullptr);
  Outcome o = plugin->run(float_gather());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kInternal);
  EXPECT_NE(o.error().message.find(text), std::string::npos) << o.error().message;
}

TEST(MisbehavingPlugin, CrashFailsOnlyTheCase) {
  expect_internal(GSCHECK_CRASH_PLUGIN, "crashed with signal 11");
}

TEST(MisbehavingPlugin, HangIsKilledAfterTheTimeout) {
  PluginOptions opt;
  opt.timeout_seconds = 0.5;
  expect_internal(GSCHECK_HANG_PLUGIN, "timed out", opt);
}

TEST(MisbehavingPlugin, WritePastTheOutputIsCaughtByTheGuard) {
  expect_internal(GSCHECK_OVERRUN_PLUGIN, "past the end of its output buffer");
}

TEST(MisbehavingPlugin, OkWithoutAnOutputIsAnError) {
  expect_internal(GSCHECK_NO_OUTPUT_PLUGIN, "without allocating its output");
}

TEST(MisbehavingPlugin, UnwrittenElementsKeepThePoisonAndFailTheComparison) {
  auto plugin = load(GSCHECK_UNWRITTEN_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  Case c = float_gather();
  auto v = compare::compare_outcomes(c, reference::run(c), plugin->run(c));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatch_count, 3);
}

TEST(PluginLoading, BadLibrariesAreClearErrors) {
  auto missing = make_plugin_backend("/nonexistent/libvendor.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot load plugin /nonexistent/libvendor.so"),
            std::string::npos);
  auto abi = make_plugin_backend(GSCHECK_BAD_ABI_PLUGIN);
  ASSERT_FALSE(abi.ok());
  EXPECT_NE(abi.error().message.find("ABI version 99"), std::string::npos) << abi.error().message;
  auto registry = make_backend("plugin:");
  ASSERT_FALSE(registry.ok());
  EXPECT_EQ(registry.error().cls, ErrorClass::kParse);
}

TEST(PluginLoading, LibraryWithoutTheEntryPointIsRejected) {
  auto b = make_plugin_backend(GSCHECK_NOT_A_PLUGIN);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("no gscheck_plugin_v1 symbol"), std::string::npos)
      << b.error().message;
}

}  // namespace
}  // namespace gscheck
