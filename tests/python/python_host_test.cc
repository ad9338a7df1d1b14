// gscheck's Python host (plugins/python): the example numpy backend agrees with the reference, and
// a module that raises, hangs, crashes, exits, forks, writes where it must not or returns the wrong
// thing fails only the case it does that in, with its reason, leaving no process behind.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/plugin_backend.h"
#include "backends/registry.h"
#include "compare/compare.h"
#include "harness/checker.h"
#include "reference/reference.h"
#include "tests/plugin/tagged_processes.h"

namespace gscheck {
namespace {

using test::none_left;
using test::tagged_processes;
void new_tag() { test::new_tag("py-"); }

// The numpy venv (scripts/numpy_venv.sh); empty when there is none.
std::string numpy_venv() {
  const char* env = std::getenv("GSCHECK_NUMPY_VENV");
  std::string v =
      env && *env ? env : std::string(std::getenv("HOME")) + "/.cache/gscheck/numpy-venv";
  return std::filesystem::exists(v + "/bin/python") ? v : "";
}

std::unique_ptr<Backend> host(const std::string& module, PluginOptions opt = {}) {
  ::setenv("GSCHECK_PYTHON_MODULE", module.c_str(), 1);
  ::setenv("GSCHECK_PYTHON_VENV", numpy_venv().c_str(), 1);
  auto b = make_plugin_backend(GSCHECK_PYTHON_PLUGIN, opt);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
  return b.ok() ? std::move(b).value() : nullptr;
}

#define REQUIRE_VENV()                                                            \
  do {                                                                            \
    if (numpy_venv().empty())                                                     \
      GTEST_SKIP() << "no numpy venv (scripts/numpy_venv.sh; PyPI unreachable?)"; \
  } while (0)

Case float_gather(float first) {
  Case c;
  c.name = "python/gather";
  c.op = Op::kGather;
  c.semantics = Semantics::kTfCpu;
  c.params = Tensor::from_values<float>(Shape{4}, {first, 1, 2, 3});
  c.indices = Tensor::from_values<int32_t>(Shape{4}, {3, 2, 1, 0});
  return c;
}

void expect_agrees(Backend& b, const Case& c) {
  Outcome want = reference::run(c);
  Outcome got = b.run(c);
  auto v = compare::compare_outcomes(c, want, got, compare::options_for(b.capabilities()));
  EXPECT_TRUE(v.pass) << c.name << ": " << v.summary;
}

TEST(PythonHost, NumpyBackendAgreesAndDeclaresItsContract) {
  REQUIRE_VENV();
  auto b = host(GSCHECK_NUMPY_BACKEND);
  ASSERT_NE(b, nullptr);
  const Capabilities& caps = b->capabilities();
  EXPECT_EQ(caps.ops.size(), 8u);
  EXPECT_EQ(caps.semantics, std::vector<Semantics>{Semantics::kTfCpu});
  EXPECT_FALSE(caps.tf_messages);
  expect_agrees(*b, float_gather(5));
  Case bad = float_gather(5);
  bad.indices = Tensor::from_values<int32_t>(Shape{2}, {0, 4});
  Outcome o = b->run(bad);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kBadIndex);
  Case nd;
  nd.name = "python/gather_nd";
  nd.op = Op::kGatherNd;
  nd.semantics = Semantics::kTfCpu;
  nd.params = Tensor::from_values<double>(Shape{2, 2}, {1, 2, 3, 4});
  nd.indices = Tensor::from_values<int64_t>(Shape{2, 2}, {1, 0, 0, 1});
  expect_agrees(*b, nd);
}

TEST(PythonHost, MissingModuleIsALoadErrorWithTheImportError) {
  REQUIRE_VENV();
  ::setenv("GSCHECK_PYTHON_MODULE", "no_such_module_for_gscheck", 1);
  ::setenv("GSCHECK_PYTHON_VENV", numpy_venv().c_str(), 1);
  auto b = make_plugin_backend(GSCHECK_PYTHON_PLUGIN, {});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("ModuleNotFoundError"), std::string::npos) << b.error().message;
}

// The bad case fails with `text` (and `tail`, from the worker's stderr), no process is left
// but the worker and its guard, and the next, good case passes.
void expect_contained(const std::string& mode, const std::string& text,
                      const std::string& tail = "", PluginOptions opt = {}) {
  new_tag();
  ::setenv("GSC_PY_HOSTILE", mode.c_str(), 1);
  auto b = host(GSCHECK_HOSTILE_BACKEND, opt);
  ASSERT_NE(b, nullptr);
  expect_agrees(*b, float_gather(5));
  Outcome o = b->run(float_gather(13));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().cls, ErrorClass::kInternal);
  EXPECT_NE(o.error().message.find(text), std::string::npos) << o.error().message;
  if (!tail.empty()) {
    EXPECT_NE(o.error().message.find(tail), std::string::npos) << o.error().message;
  }
  EXPECT_TRUE(none_left(2)) << tagged_processes() << " process(es) left";
  expect_agrees(*b, float_gather(5));
  b.reset();
  EXPECT_TRUE(none_left()) << tagged_processes() << " process(es) left";
}

TEST(PythonHost, ExceptionFailsOnlyThatCaseWithTypeMessageAndTraceback) {
  REQUIRE_VENV();
  expect_contained("raise", "KeyError: 'hostile: no such key'; traceback (last 2 frames): ");
  expect_contained("raise", "hostile_backend.py:");
}

// Only gscheck decides a case is over budget: a module answering MemoryError, or an output over
// the byte budget (a zero-stride view of 2^40 elements), for a 16-byte case fails it.
TEST(PythonHost, MemoryErrorAndHugeViewsFailTheCaseNotSkipIt) {
  REQUIRE_VENV();
  auto reference = make_backend("reference");
  ASSERT_TRUE(reference.ok());
  for (const char* mode : {"memory_error", "huge_view"}) {
    ::setenv("GSC_PY_HOSTILE", mode, 1);
    auto b = host(GSCHECK_HOSTILE_BACKEND);
    ASSERT_NE(b, nullptr);
    harness::CaseChecker checker(*b, reference->get(), {});
    CaseFile f;
    f.c = float_gather(5);
    EXPECT_EQ(checker.check_case(f, "").verdict, reports::Verdict::kPassed) << mode;
    f.c = float_gather(13);
    const reports::CaseResult r = checker.check_case(f, "");
    EXPECT_EQ(r.verdict, reports::Verdict::kFailed) << mode << ": " << r.reason;
    EXPECT_NE(r.reason.find("answered resource_exhausted for a case gscheck ran within "
                            "--max-bytes"),
              std::string::npos)
        << mode << ": " << r.reason;
  }
}

TEST(PythonHost, SysExitIsAnErrorNotAnExit) {
  REQUIRE_VENV();
  expect_contained("exit_call", "SystemExit: 4");
}

TEST(PythonHost, HangIsKilledAfterTheTimeout) {
  REQUIRE_VENV();
  PluginOptions opt;
  opt.timeout_seconds = 1;
  expect_contained("hang", "timed out after 1 s", "hostile: hanging", opt);
}

TEST(PythonHost, CtypesSegfaultFailsOnlyThatCase) {
  REQUIRE_VENV();
  expect_contained("segv", "crashed with signal 11", "hostile: reading address 0");
}

TEST(PythonHost, OsExitIsNamed) {
  REQUIRE_VENV();
  expect_contained("exit", "exited with status 3 during the call");
}

TEST(PythonHost, LingeringChildIsKilledAndFailsTheCase) {
  REQUIRE_VENV();
  // The worker writes only where it is told it may (host_sandbox.h): a folder for the marker.
  const std::string dir = ::testing::TempDir() + "gscheck_py_child_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string marker = dir + "/marker";
  ::setenv("GSC_PY_MARKER", marker.c_str(), 1);
  PluginOptions opt;
  opt.writable = {std::filesystem::canonical(dir).string()};
  expect_contained("fork", "child process(es) running after run() returned", "", opt);
  std::ifstream f(marker);
  int pid = 0;
  f >> pid;
  ASSERT_GT(pid, 0) << "the child never ran";
  // That pid is the worker's PID namespace's: look for the child by its environment instead
  // (gone, or a zombie not yet reaped by whoever inherited it).
  EXPECT_EQ(test::live_processes_with("GSC_PY_MARKER=" + marker), 0)
      << "the forked child is still running";
  std::filesystem::remove_all(dir);
}

TEST(PythonHost, WritePastTheOutputIsCaughtByTheGuardBytes) {
  REQUIRE_VENV();
  expect_contained("overrun", "wrote past the end of its output buffer");
}

TEST(PythonHost, WriteIntoAnInputFaults) {
  REQUIRE_VENV();
  expect_contained("write_input", "signal 11");
}

TEST(PythonHost, WrongDtypeIsNamed) {
  REQUIRE_VENV();
  expect_contained("wrong_dtype",
                   "returned an array of dtype float64; this op's output dtype is "
                   "float32");
}

TEST(PythonHost, KeptViewIsNamed) {
  REQUIRE_VENV();
  expect_contained("keep", "kept a reference to an input or output array past its return");
  // The host's release() replaced through gc: the check in C still sees the kept view (and
  // every later call's, which the broken host no longer lets go of).
  ::setenv("GSC_PY_HOSTILE", "keep_unreported", 1);
  auto b = host(GSCHECK_HOSTILE_BACKEND);
  ASSERT_NE(b, nullptr);
  expect_agrees(*b, float_gather(5));
  for (int call = 0; call < 2; ++call) {
    Outcome o = b->run(float_gather(13));
    ASSERT_FALSE(o.ok());
    EXPECT_NE(o.error().message.find("kept a reference to an input or output array past its "
                                     "return"),
              std::string::npos)
        << o.error().message;
  }
}

// A scalar index gives a rank-0 output; a numpy scalar returned for it stays rank 0 (the host
// once made it [1] with ascontiguousarray).
TEST(PythonHost, ScalarResultKeepsRankZero) {
  REQUIRE_VENV();
  ::setenv("GSC_PY_HOSTILE", "scalar_result", 1);
  auto b = host(GSCHECK_HOSTILE_BACKEND);
  ASSERT_NE(b, nullptr);
  Case c = float_gather(13);
  c.indices = Tensor::from_values<int32_t>(Shape{}, {2});
  ASSERT_EQ(c.params->rank(), 1) << "float_gather's params are a vector";
  Outcome got = b->run(c);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got.value().shape(), Shape{});
  expect_agrees(*b, c);
}

// A wrong shape reaches gscheck as the output: the comparison fails it, the call itself is OK.
TEST(PythonHost, WrongShapeFailsTheComparison) {
  REQUIRE_VENV();
  ::setenv("GSC_PY_HOSTILE", "wrong_shape", 1);
  auto b = host(GSCHECK_HOSTILE_BACKEND);
  ASSERT_NE(b, nullptr);
  const Case c = float_gather(13);
  Outcome got = b->run(c);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value().shape(), Shape{3});
  auto v =
      compare::compare_outcomes(c, reference::run(c), got, compare::options_for(b->capabilities()));
  EXPECT_FALSE(v.pass);
  expect_agrees(*b, float_gather(5));
}

// bfloat16 crosses the host as ml_dtypes' numpy type (the numpy venv pins ml_dtypes), in and out,
// bit for bit: a NaN payload and a subnormal included.
TEST(PythonHost, Bfloat16IsViewedAsMlDtypes) {
  REQUIRE_VENV();
  auto b = host(GSCHECK_BFLOAT16_BACKEND);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->capabilities().dtypes, std::vector<DType>{DType::kBFloat16});
  Case c;
  c.name = "python/bfloat16_gather";
  c.op = Op::kGather;
  c.semantics = Semantics::kTfCpu;
  c.params = Tensor::from_values<BFloat16>(
      Shape{4}, {BFloat16{0x3f80}, BFloat16{0x7fc5}, BFloat16{0x0001}, BFloat16{0x8000}});
  c.indices = Tensor::from_values<int32_t>(Shape{5}, {3, 1, 2, 0, 1});
  Outcome got = b->run(c);
  ASSERT_TRUE(got.ok()) << got.error().message;
  expect_agrees(*b, c);
  const uint16_t want[] = {0x8000, 0x7fc5, 0x0001, 0x3f80, 0x7fc5};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got.value().data_as<BFloat16>()[i].bits, want[i]) << i;
}

}  // namespace
}  // namespace gscheck
