#include "tools/plugin_flags.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

namespace gscheck::tools {
namespace {

ParsedArgs parsed(std::vector<std::string> args) {
  auto p = parse_args(args, plugin_option_specs());
  EXPECT_TRUE(p.ok());
  return p.ok() ? *p : ParsedArgs{};
}

TEST(PluginOptions, ParsesJobsTimeoutAndIsolation) {
  auto o = plugin_options(parsed({"--jobs", "3", "--timeout", "2.5", "--isolate", "call"}), 99);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->jobs, 3);
  EXPECT_EQ(o->timeout_seconds, 2.5);
  EXPECT_EQ(o->isolate, Isolation::kCall);
  EXPECT_EQ(o->max_output_bytes, 99);
  auto d = plugin_options(parsed({}), 1);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->jobs, default_jobs());
  EXPECT_EQ(d->timeout_seconds, 0);  // scaled to the case
  EXPECT_EQ(d->isolate, Isolation::kWorker);
}

TEST(PluginOptions, BadValuesAreClearErrors) {
  for (auto [args, text] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--jobs", "0"}, "--jobs: expected an integer in [1, 256]"},
           {{"--timeout", "-1"}, "--timeout: expected seconds"},
           {{"--timeout", "soon"}, "--timeout: expected seconds"},
           {{"--isolate", "process"}, "--isolate: expected 'worker' or 'call', got 'process'"}}) {
    auto o = plugin_options(parsed(args), 1);
    ASSERT_FALSE(o.ok());
    EXPECT_NE(o.error().message.find(text), std::string::npos) << o.error().message;
  }
}

}  // namespace
}  // namespace gscheck::tools
