// The plugin worker: the example plugins agree with the reference, and every way a plugin can
// misbehave fails only the call it happens in, with its reason and stderr tail, leaving no
// process behind (tests/plugin/misbehaving_plugin.c, cxx_plugin.cc).
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <thread>

#include "backends/plugin_backend.h"
#include "compare/compare.h"
#include "reference/reference.h"
#include "tests/plugin/tagged_processes.h"

namespace gscheck {
namespace {

using test::g_tag;
using test::new_tag;
using test::none_left;
using test::tagged_processes;

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

std::vector<Case> example_cases() {
  std::vector<Case> cases;
  cases.push_back(gather_nd_case(Tensor::from_values<float>(Shape{3, 2}, {0, 1, 2, 3, 4, 5}),
                                 Tensor::from_values<int32_t>(Shape{3, 1}, {2, 0, 7})));
  cases.push_back(gather_nd_case(Tensor::from_values<double>(Shape{2}, {1.5, -0.0}),
                                 Tensor::from_values<int32_t>(Shape{2, 0}, {})));  // depth 0
  cases.push_back(gather_nd_case(Tensor::from_values<int16_t>(Shape{2, 2}, {1, 2, 3, 4}),
                                 Tensor::from_values<int64_t>(Shape{1, 1}, {1})));
  cases.push_back(gather_nd_case(Tensor::from_values<float>(Shape{2, 2}, {1, 2, 3, 4}),
                                 Tensor::from_values<int32_t>(Shape{2}, {0, 5})));  // one bad row
  return cases;
}

void expect_agrees(Backend& plugin, const Case& c) {
  Outcome want = reference::run(c);
  Outcome got = plugin.run(c);
  auto v = compare::compare_outcomes(c, want, got, compare::options_for(plugin.capabilities()));
  EXPECT_TRUE(v.pass) << c.name << ": " << v.summary;
}

// The example plugin agrees with the reference, element for element, including a bad row
// (zeroed under tf-gpu) and string params.
TEST(ExamplePlugin, AgreesWithTheReference) {
  auto plugin = load(GSCHECK_EXAMPLE_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  auto cases = example_cases();
  cases.push_back(
      gather_nd_case(Tensor::from_values<std::string>(Shape{2, 2}, {"a", "b", "c", "d"}),
                     Tensor::from_values<int64_t>(Shape{2, 2}, {0, 0, 1, 1})));
  // An empty string output: nothing to copy back.
  cases.push_back(gather_nd_case(Tensor::from_values<std::string>(Shape{2, 0}, {}),
                                 Tensor::from_values<int32_t>(Shape{2, 1}, {0, 1})));
  for (const Case& c : cases) expect_agrees(*plugin, c);
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

TEST(ExamplePlugin, IsolateCallGivesTheSameOutcomes) {
  PluginOptions opt;
  opt.isolate = Isolation::kCall;
  auto plugin = load(GSCHECK_EXAMPLE_PLUGIN, opt);
  ASSERT_NE(plugin, nullptr);
  for (const Case& c : example_cases()) expect_agrees(*plugin, c);
}

// --jobs 3: calls from many threads are served by three workers at once, each answer right.
TEST(ExamplePlugin, ConcurrentCallsOnSeveralWorkers) {
  new_tag();
  PluginOptions opt;
  opt.jobs = 3;
  auto plugin = load(GSCHECK_EXAMPLE_PLUGIN, opt);
  ASSERT_NE(plugin, nullptr);
  const auto cases = example_cases();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const Case& c = cases[static_cast<std::size_t>((t + i) % cases.size())];
        auto v = compare::compare_outcomes(c, reference::run(c), plugin->run(c),
                                           compare::options_for(plugin->capabilities()));
        if (!v.pass) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(tagged_processes(), 6);  // three workers, each with its guard
  plugin.reset();
  EXPECT_TRUE(none_left());
}

// --- Device memory, on the host-memory CUDA stand-in.
TEST(DevicePlugin, GetsDevicePointersAndAgreesWithTheReference) {
  ::setenv("GSCHECK_CUDART", GSCHECK_FAKE_CUDART, 1);
  auto plugin = load(GSCHECK_DEVICE_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  const auto& dtypes = plugin->capabilities().dtypes;
  EXPECT_EQ(std::count(dtypes.begin(), dtypes.end(), DType::kString), 0);
  // The stand-in refuses copies from memory it did not allocate: these pass only when gscheck
  // hands the plugin device pointers. Many calls: one context, kept by the worker.
  for (int round = 0; round < 5; ++round)
    for (const Case& c : example_cases()) expect_agrees(*plugin, c);
  ::unsetenv("GSCHECK_CUDART");
}

TEST(DevicePlugin, CannotBeForkedPerCall) {
  ::setenv("GSCHECK_CUDART", GSCHECK_FAKE_CUDART, 1);
  PluginOptions opt;
  opt.isolate = Isolation::kCall;
  auto b = make_plugin_backend(GSCHECK_DEVICE_PLUGIN, opt);
  ::unsetenv("GSCHECK_CUDART");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("cannot cross fork()"), std::string::npos) << b.error().message;
}

TEST(DevicePlugin, NoCudaRuntimeIsAClearLoadError) {
  ::setenv("GSCHECK_CUDART", "/nonexistent/libcudart.so", 1);
  auto b = make_plugin_backend(GSCHECK_DEVICE_PLUGIN);
  ::unsetenv("GSCHECK_CUDART");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("no CUDA runtime loads"), std::string::npos)
      << b.error().message;
}

// --- Misbehaving plugins. Every one is a correct vector gather until params[0] == 13.
Case float_gather(float first = 13, int n = 4) {
  Case c;
  c.name = "plugin/misbehaving";
  c.op = Op::kGather;
  c.semantics = Semantics::kTfGpu;
  std::vector<float> params(static_cast<std::size_t>(n));
  std::vector<int32_t> indices(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    params[static_cast<std::size_t>(i)] = static_cast<float>(i);
    indices[static_cast<std::size_t>(i)] = n - 1 - i;
  }
  params[0] = first;
  c.params = Tensor::from_values<float>(Shape{n}, params);
  c.indices = Tensor::from_values<int32_t>(Shape{n}, indices);
  return c;
}

Case good_case() { return float_gather(1); }

Case string_gather(const std::string& first) {
  Case c;
  c.name = "plugin/strings";
  c.op = Op::kGather;
  c.semantics = Semantics::kTfGpu;
  c.params = Tensor::from_values<std::string>(Shape{3}, {first, "bb", std::string(5000, 'c')});
  c.indices = Tensor::from_values<int32_t>(Shape{4}, {2, 0, 1, 2});
  return c;
}

bool g_lost_worker = false;  // the last expect_contained's bad case cost its worker

// The bad case fails with `text` in its message (and `tail` from the worker's stderr), no
// process is left, and the next, good case passes on a fresh worker.
void expect_contained(const char* path, const std::string& text, const std::string& tail = "",
                      PluginOptions opt = {}, Case bad = float_gather(), Case good = good_case()) {
  new_tag();
  auto plugin = load(path, opt);
  ASSERT_NE(plugin, nullptr);
  expect_agrees(*plugin, good);
  Outcome o = plugin->run(bad);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kInternal);
  EXPECT_NE(o.error().message.find(text), std::string::npos) << o.error().message;
  // lost_worker says whether the call cost the worker (then the checker spares the repeats).
  g_lost_worker = o.error().lost_worker;
  if (g_lost_worker) {
    EXPECT_TRUE(none_left()) << tagged_processes() << " process(es) left of a lost worker";
  } else {
    EXPECT_GT(tagged_processes(), 0) << "lost_worker unset, but no worker is left";
  }
  if (!tail.empty()) {
    EXPECT_NE(o.error().message.find("worker stderr"), std::string::npos) << o.error().message;
    EXPECT_NE(o.error().message.find(tail), std::string::npos) << o.error().message;
  }
  // Nothing but the one worker and its guard (when the failure left it trustworthy) may be left.
  EXPECT_TRUE(none_left(2)) << tagged_processes() << " process(es) left";
  expect_agrees(*plugin, good);
  plugin.reset();
  EXPECT_TRUE(none_left());
}

TEST(MisbehavingPlugin, CrashFailsOnlyThatCaseWithItsStderrTail) {
  expect_contained(GSCHECK_CRASH_PLUGIN, "crashed with signal 11",
                   "hostile: Check failed: params[0] != 13");
  EXPECT_TRUE(g_lost_worker);
}

TEST(MisbehavingPlugin, CrashUnderIsolateCall) {
  PluginOptions opt;
  opt.isolate = Isolation::kCall;
  expect_contained(GSCHECK_CRASH_PLUGIN, "crashed with signal 11", "Check failed", opt);
  EXPECT_FALSE(g_lost_worker);  // only the call's fork died
}

TEST(MisbehavingPlugin, HangIsKilledAfterTheTimeout) {
  PluginOptions opt;
  opt.timeout_seconds = 0.5;
  expect_contained(GSCHECK_HANG_PLUGIN, "timed out after 0.5 s", "hostile: hanging", opt);
  EXPECT_TRUE(g_lost_worker);
}

TEST(MisbehavingPlugin, HangUnderIsolateCallIsKilledToo) {
  PluginOptions opt;
  opt.timeout_seconds = 0.5;
  opt.isolate = Isolation::kCall;
  expect_contained(GSCHECK_HANG_PLUGIN, "timed out", "hanging", opt);
}

// 4 floats: the 100 bytes land in the guard bytes (the tail is 256 + 48 bytes).
TEST(MisbehavingPlugin, WritePastTheEndIsCaughtByTheGuardBytes) {
  expect_contained(GSCHECK_OVERRUN_PLUGIN, "wrote past the end of its output buffer (guard byte 0");
}

// 16 floats: the tail is 256 bytes, so the 400 bytes past the end reach the guard page.
TEST(MisbehavingPlugin, WritePastTheEndIsCaughtByTheGuardPage) {
  expect_contained(GSCHECK_OVERRUN_PLUGIN,
                   "touched the guard page after the end of its output buffer", "", PluginOptions{},
                   float_gather(13, 16));
}

TEST(MisbehavingPlugin, WriteBeforeTheStartIsCaught) {
  // The 8 bytes before the output: the one nearest it is named.
  expect_contained(GSCHECK_UNDERRUN_PLUGIN,
                   "wrote before its output buffer (guard byte 1 before the start)");
}

// deadline_ns is an instant on CLOCK_MONOTONIC, 10 s plus 1 s per 64 MiB of inputs away (the
// plugin checks and fails the call otherwise): a small case and one of 32 MiB of inputs.
TEST(MisbehavingPlugin, DeadlineIsTheInstantTheAbiPromises) {
  auto plugin = load(GSCHECK_DEADLINE_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  for (int n : {4, 1 << 22}) {
    const Case c = float_gather(1, n);
    const Outcome o = plugin->run(c);
    ASSERT_TRUE(o.ok()) << n << " elements: " << o.error().message;
    expect_agrees(*plugin, c);
  }
}

TEST(MisbehavingPlugin, OkWithoutAnOutputIsAnError) {
  expect_contained(GSCHECK_NO_OUTPUT_PLUGIN, "without allocating its output");
}

TEST(MisbehavingPlugin, ChildrenThatNeverExitAreKilledAndFailTheCase) {
  expect_contained(GSCHECK_FORK_BOMB_PLUGIN, "child process(es) running after run() returned");
}

TEST(MisbehavingPlugin, ThirtyGigabytesHitTheAddressSpaceCap) {
  expect_contained(GSCHECK_ALLOC_30GB_PLUGIN, "crashed with signal 11",
                   "malloc(30 GB) returned (nil)");
}

TEST(MisbehavingPlugin, ClosedResultPipeAndPauseDoesNotHang) {
  expect_contained(GSCHECK_CLOSE_PIPE_PLUGIN, "closed gscheck's result pipe");
}

long max_rss_kib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// 1 GiB into the result pipe: refused at the first frame, gscheck does not grow.
TEST(MisbehavingPlugin, FloodingTheResultPipeDoesNotGrowGscheck) {
  const long before = max_rss_kib();
  expect_contained(GSCHECK_PIPE_FLOOD_PLUGIN, "malformed reply");
  EXPECT_LT(max_rss_kib() - before, 64 * 1024);
}

// Captures this process's stdout (fd 1) while f runs.
template <class F>
std::string captured_stdout(F f) {
  std::fflush(stdout);
  char path[] = "/tmp/gscheck_plugin_test_stdout_XXXXXX";
  const int fd = ::mkstemp(path);
  const int saved = ::dup(1);
  ::dup2(fd, 1);
  f();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(path);
  return s;
}

// 1 GiB to stdout and stderr: drained, only a bounded tail kept; the call itself passes, and
// nothing reaches gscheck's stdout.
TEST(MisbehavingPlugin, StdoutFloodIsDrainedAndBounded) {
  new_tag();
  auto plugin = load(GSCHECK_STDOUT_FLOOD_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  const long before = max_rss_kib();
  const std::string out = captured_stdout([&] { expect_agrees(*plugin, float_gather()); });
  EXPECT_EQ(out.find('y'), std::string::npos);
  EXPECT_LT(max_rss_kib() - before, 64 * 1024);
}

Outcome internal_error_placeholder() { return Error{ErrorClass::kInternal, "not run"}; }

// Terminal escapes, fake summary lines: never raw in gscheck's output or in the messages.
TEST(MisbehavingPlugin, EscapeSequencesAndFakeSummaryLinesAreSanitised) {
  new_tag();
  auto plugin = load(GSCHECK_SPAM_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  Outcome o = internal_error_placeholder();
  const std::string out = captured_stdout([&] { o = plugin->run(float_gather()); });
  EXPECT_EQ(out, "");
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kInvalidArgument);
  const std::string& m = o.error().message;
  EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find("bad\\x0a5000 cases"), std::string::npos) << m;
}

TEST(MisbehavingPlugin, StderrTailIsSanitised) {
  PluginOptions opt;
  opt.timeout_seconds = 0.5;
  new_tag();
  auto plugin = load(GSCHECK_HANG_PLUGIN, opt);
  ASSERT_NE(plugin, nullptr);
  Outcome o = plugin->run(float_gather());
  ASSERT_FALSE(o.ok());
  for (char ch : o.error().message)
    EXPECT_GE(static_cast<unsigned char>(ch), 0x20) << o.error().message;
}

TEST(MisbehavingPlugin, ExitInsideACallIsNamed) {
  expect_contained(GSCHECK_EXIT0_PLUGIN, "exited with status 0 during the call");
}

TEST(MisbehavingPlugin, ExitInsideACallUnderIsolateCall) {
  PluginOptions opt;
  opt.isolate = Isolation::kCall;
  expect_contained(GSCHECK_EXIT0_PLUGIN, "exited with status 0 during the call", "", opt);
}

TEST(MisbehavingPlugin, CppExceptionFailsOnlyThatCase) {
  expect_contained(GSCHECK_THROW_PLUGIN, "threw a C++ exception out of run(): std::bad_alloc",
                   "hostile: about to throw");
}

TEST(MisbehavingPlugin, SecondAllocOutputReturnsNull) {
  auto plugin = load(GSCHECK_SECOND_ALLOC_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  expect_agrees(*plugin, float_gather());
}

TEST(MisbehavingPlugin, UnwrittenElementsKeepThePoisonAndFailTheComparison) {
  auto plugin = load(GSCHECK_UNWRITTEN_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  Case c = float_gather();
  auto v = compare::compare_outcomes(c, reference::run(c), plugin->run(c));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.mismatch_count, 3);
}

// Zero-filled output memory would hide unwritten elements wherever the right answer is 0 (most
// of a scatter_nd's output); the poison does not.
TEST(MisbehavingPlugin, UnwrittenElementsFailWhereTheRightAnswerIsZero) {
  auto plugin = load(GSCHECK_UNWRITTEN_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  Case c = float_gather();  // params {13, 1, 2, 3}
  c.params = Tensor::from_values<float>(Shape{4}, {13, 0, 0, 0});
  c.indices = Tensor::from_values<int32_t>(Shape{4}, {0, 1, 2, 3});  // right answer {13, 0, 0, 0}
  auto v = compare::compare_outcomes(c, reference::run(c), plugin->run(c));
  EXPECT_FALSE(v.pass) << v.summary;  // only out[0] is written
  EXPECT_EQ(v.mismatch_count, 3);
}

// A plugin that declares TensorFlow's texts is held to them.
TEST(MisbehavingPlugin, DeclaredTfMessagesAreGraded) {
  auto plugin = load(GSCHECK_WRONG_MESSAGE_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  ASSERT_TRUE(plugin->capabilities().tf_messages);
  Case c = float_gather(1);
  c.axis = Tensor::from_values<int32_t>(Shape{}, {1});
  const Outcome ref = reference::run(c);
  const Outcome got = plugin->run(c);
  ASSERT_FALSE(ref.ok());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().cls, ErrorClass::kInvalidArgument);
  EXPECT_EQ(ref.error().cls, ErrorClass::kInvalidArgument);
  compare::Options opts;
  opts.compare_messages = plugin->capabilities().tf_messages;
  EXPECT_FALSE(compare::compare_outcomes(c, ref, got, opts).pass) << ref.error().message;
  opts.compare_messages = false;  // graded by class alone, the same outcome passes
  EXPECT_TRUE(compare::compare_outcomes(c, ref, got, opts).pass);
}

// --- Loading: gscheck survives whatever the library does while it loads.
TEST(PluginLoading, CrashingConstructorIsALoadError) {
  new_tag();
  auto b = make_plugin_backend(GSCHECK_CTOR_CRASH_PLUGIN);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("failed while loading: plugin crashed with signal 11"),
            std::string::npos)
      << b.error().message;
  EXPECT_NE(b.error().message.find("hostile constructor"), std::string::npos) << b.error().message;
  EXPECT_TRUE(none_left());
}

TEST(PluginLoading, EntryPointThatNeverReturnsTimesOut) {
  new_tag();
  PluginOptions opt;
  opt.load_timeout_seconds = 1;
  auto b = make_plugin_backend(GSCHECK_ENTRY_HANG_PLUGIN, opt);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("did not finish loading within 1 s"), std::string::npos)
      << b.error().message;
  EXPECT_NE(b.error().message.find("never returns"), std::string::npos) << b.error().message;
  EXPECT_TRUE(none_left());
}

TEST(PluginLoading, FailingInitIsALoadError) {
  auto b = make_plugin_backend(GSCHECK_INIT_FAIL_PLUGIN);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("init() failed with code 5: no license for this machine"),
            std::string::npos)
      << b.error().message;
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
  EXPECT_NE(b.error().message.find("no gscheck_plugin_v2 or gscheck_plugin_v1 symbol"),
            std::string::npos)
      << b.error().message;
}

// --- ABI v2: life cycle and strings.
TEST(PluginV2, ThreadPoolFromInitServesEveryCallAndFinalizeRunsOnce) {
  new_tag();
  // The worker writes nothing outside the folders it is given (host_sandbox.h).
  const std::string dir = "/tmp/gscheck_finalize_" + g_tag;
  std::filesystem::create_directories(dir);
  const std::string marker = dir + "/marker";
  ::setenv("GSC_TEST_FINALIZE_MARKER", marker.c_str(), 1);
  PluginOptions opt;
  opt.jobs = 2;
  opt.writable = {dir};
  auto plugin = load(GSCHECK_THREAD_POOL_PLUGIN, opt);
  ASSERT_NE(plugin, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) expect_agrees(*plugin, float_gather(1, 1 + i));
    });
  for (auto& t : threads) t.join();
  plugin.reset();
  ::unsetenv("GSC_TEST_FINALIZE_MARKER");
  std::ifstream in(marker);
  std::string line;
  int workers = 0;
  while (std::getline(in, line)) {
    EXPECT_EQ(line, "finalized after 1 init");
    ++workers;
  }
  EXPECT_GE(workers, 1);
  EXPECT_LE(workers, 2);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(none_left());
}

// set_string copies at once: the plugin's temporaries are gone when run() returns.
TEST(PluginV2, SetStringCopiesBeforeRunReturns) {
  auto plugin = load(GSCHECK_STRINGS_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  expect_agrees(*plugin, string_gather("a"));
  expect_agrees(*plugin, string_gather("13"));
}

TEST(PluginV2, StringDataFreedBeforeGscheckCopiesItIsNamed) {
  expect_contained(GSCHECK_STRINGS_UNMAPPED_PLUGIN, "not readable after run() returned", "", {},
                   string_gather("13"), string_gather("a"));
}

TEST(PluginV2, HugeStringIsRefusedByTheBudget) {
  auto plugin = load(GSCHECK_STRING_HUGE_PLUGIN);
  ASSERT_NE(plugin, nullptr);
  Outcome o = plugin->run(string_gather("13"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kResourceExhausted) << o.error().message;
  expect_agrees(*plugin, string_gather("a"));
}

TEST(PluginV2, OutputOverTheBudgetIsRefused) {
  PluginOptions opt;
  opt.max_output_bytes = 8;  // 2 floats
  auto plugin = load(GSCHECK_EXAMPLE_PLUGIN, opt);
  ASSERT_NE(plugin, nullptr);
  Outcome o = plugin->run(example_cases()[0]);  // 6 floats
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kResourceExhausted) << o.error().message;
}

// --- No process outlives gscheck: SIGTERM and SIGINT kill the worker groups; on SIGKILL each
// worker's guard process (PR_SET_PDEATHSIG) kills its group, the plugin's children included.
void expect_signal_kills_workers(int sig) {
  new_tag();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The signal must end this process however the test was started (a shell starts
    // background jobs with SIGINT ignored, and gscheck then rightly stays alive).
    ::signal(sig, SIG_DFL);
    PluginOptions opt;
    opt.timeout_seconds = 600;
    auto b = make_plugin_backend(GSCHECK_HANG_PLUGIN, opt);
    if (b.ok()) (void)(*b)->run(float_gather());  // hangs until the signal
    ::_exit(3);
  }
  // The worker carries the tag (it is exec'ed after setenv); the forked copy of this test does
  // not show it in /proc/PID/environ.
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    up = tagged_processes() >= 3;  // the worker's guard, the worker, the plugin's child
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!up) ::kill(child, SIGKILL);
  ASSERT_TRUE(up);  // the plugin's child exists: the call is inside run()
  ::kill(child, sig);
  int st = 0;
  ::waitpid(child, &st, 0);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << st;
  EXPECT_TRUE(none_left()) << tagged_processes() << " process(es) left";
}

TEST(NoProcessOutlivesGscheck, SigTerm) { expect_signal_kills_workers(SIGTERM); }
TEST(NoProcessOutlivesGscheck, SigInt) { expect_signal_kills_workers(SIGINT); }
TEST(NoProcessOutlivesGscheck, SigKill) { expect_signal_kills_workers(SIGKILL); }

#ifdef GSCHECK_COVERAGE_PLUGIN
// Coverage-guided fuzzing of a plugin: the counters of a plugin built with SanitizerCoverage reach
// gscheck after each call, reset between calls; an uninstrumented plugin has none, and no plugin
// publishes any unless asked.
TEST(PluginCoverage, InstrumentedCountersReachGscheckPerCall) {
  PluginOptions opt;
  opt.coverage = true;
  auto plugin = load(GSCHECK_COVERAGE_PLUGIN, opt);
  ASSERT_TRUE(plugin);
  EXPECT_TRUE(plugin->coverage().empty());  // nothing published before a call
  const Case floats = example_cases()[0];
  // int16, depth 2, 7 rows: three of the planted bug's five nested branches taken.
  std::vector<int16_t> p(12);
  for (int i = 0; i < 12; ++i) p[static_cast<std::size_t>(i)] = static_cast<int16_t>(i);
  const Case nested =
      gather_nd_case(Tensor::from_values<int16_t>(Shape{3, 4}, p),
                     Tensor::from_values<int32_t>(Shape{7, 2}, std::vector<int32_t>(14, 1)));
  auto counters = [&](const Case& c) {
    EXPECT_TRUE(plugin->run(c).ok());
    const std::span<const uint8_t> s = plugin->coverage();
    return std::vector<uint8_t>(s.begin(), s.end());
  };
  const std::vector<uint8_t> a = counters(floats);
  ASSERT_FALSE(a.empty());
  EXPECT_GT(std::count_if(a.begin(), a.end(), [](uint8_t v) { return v != 0; }), 3);
  const std::vector<uint8_t> b = counters(nested);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_NE(a, b);
  // Reset before each call: the same case gives the same counters again.
  EXPECT_EQ(counters(floats), a);
  expect_agrees(*plugin, nested);

  // trace-cmp: the fourth branch compares the first element (0) with its magic value (once per
  // row, or once if the compiler hoists it); the float case never gets there.
  ASSERT_TRUE(plugin->run(nested).ok());
  const std::span<const CoverageCompare> k = plugin->coverage_compares();
  const auto magic = std::count_if(k.begin(), k.end(), [](const CoverageCompare& x) {
    return (x.a == 0x2a17 && x.b == 0) || (x.a == 0 && x.b == 0x2a17);
  });
  EXPECT_GE(magic, 1);
  EXPECT_LE(magic, 7);
  for (const CoverageCompare& x : k) {
    EXPECT_NE(x.a, x.b);  // equal operands teach nothing and are not kept
    EXPECT_TRUE(x.size == 1 || x.size == 2 || x.size == 4 || x.size == 8) << x.size;
  }
  ASSERT_TRUE(plugin->run(floats).ok());
  EXPECT_EQ(std::count_if(plugin->coverage_compares().begin(), plugin->coverage_compares().end(),
                          [](const CoverageCompare& x) { return x.a == 0x2a17 || x.b == 0x2a17; }),
            0);

  auto plain = load(GSCHECK_EXAMPLE_PLUGIN, opt);
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->run(floats).ok());
  EXPECT_TRUE(plain->coverage().empty());
  EXPECT_TRUE(plain->coverage_compares().empty());
  auto unasked = load(GSCHECK_COVERAGE_PLUGIN);
  ASSERT_TRUE(unasked);
  EXPECT_TRUE(unasked->run(nested).ok());
  EXPECT_TRUE(unasked->coverage().empty());
  EXPECT_TRUE(unasked->coverage_compares().empty());
}
#endif

}  // namespace
}  // namespace gscheck
