// A crash inside gscheck's process (an in-process backend, or the oracle itself) fails the case
// it happened on, and the next case still runs.
#include "harness/crash_guard.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "core/case_json.h"
#include "harness/checker.h"

namespace gscheck::harness {
namespace {

using reports::Verdict;

volatile int g_zero = 0;
volatile int g_sink = 0;
volatile int g_one = 1;  // 1 / x is folded to a compare, so both sides are volatile

// A real integer division by zero, the SIGFPE a buggy oracle raises: planted on purpose, so
// outside UBSan's checks (the sanitizer pass would stop at it before the signal).
__attribute__((no_sanitize("undefined"))) int divide(int a, int b) { return a / b; }

// Crashes with `sig` on the calls listed in crash_on, answers `answer` on the others.
class Crashing final : public Backend {
 public:
  Crashing(std::string name, int sig, std::vector<int> crash_on, Outcome answer)
      : sig_(sig), crash_on_(std::move(crash_on)), answer_(std::move(answer)) {
    caps_.name = std::move(name);
    caps_.ops = {Op::kGather};
    caps_.dtypes = {DType::kFloat32};
    caps_.index_dtypes = {DType::kInt32};
    caps_.semantics = {Semantics::kTfCpu};
  }
  const Capabilities& capabilities() const override { return caps_; }
  Outcome run(const Case&) override {
    const int call = calls_++;
    if (std::find(crash_on_.begin(), crash_on_.end(), call) != crash_on_.end()) {
      if (sig_ == SIGFPE)
        return Error{ErrorClass::kInternal, std::to_string(divide(g_one, g_zero))};
      if (sig_ == SIGSEGV) return Error{ErrorClass::kInternal, std::to_string(*bad_)};
      raise(sig_);
    }
    return answer_;
  }

 private:
  Capabilities caps_;
  int sig_;
  std::vector<int> crash_on_;
  Outcome answer_;
  int calls_ = 0;
  volatile int* volatile bad_ = nullptr;
};

CaseFile gather_case() {
  CaseFile f;
  f.c.name = "gather/crash";
  f.c.op = Op::kGather;
  f.c.params = Tensor::from_values<float>(Shape{3}, {1, 2, 3});
  f.c.indices = Tensor::from_values<int32_t>(Shape{2}, {2, 0});
  f.c.axis = Tensor::from_values<int32_t>(Shape{}, {0});
  return f;
}
const Outcome kOut = Tensor::from_values<float>(Shape{2}, {3, 1});

TEST(CrashGuard, ReturnsTheSignalAndRunsAgain) {
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(run_crash_guarded([] { g_sink = divide(g_one, g_zero); }), SIGFPE);
    EXPECT_EQ(run_crash_guarded([] { raise(SIGBUS); }), SIGBUS);
    EXPECT_EQ(run_crash_guarded([] {}), std::nullopt);
  }
  EXPECT_EQ(signal_text(SIGFPE), "SIGFPE (Floating point exception)");
}

TEST(CrashGuard, ABackendCrashFailsItsCaseAndTheRunGoesOn) {
  for (int sig : {SIGFPE, SIGSEGV, SIGILL}) {
    Crashing backend("cuda-emu", sig, {0}, kOut);
    Crashing reference("reference", 0, {}, kOut);
    CaseChecker checker(backend, &reference, {});
    const reports::CaseResult crashed = checker.check_case(gather_case(), "");
    EXPECT_EQ(crashed.verdict, Verdict::kUnsafe) << signal_text(sig);
    EXPECT_NE(crashed.reason.find("crashed with " + signal_text(sig)), std::string::npos)
        << crashed.reason;
    EXPECT_EQ(checker.check_case(gather_case(), "").verdict, Verdict::kPassed);
  }
}

TEST(CrashGuard, AnOracleCrashIsSavedWithoutExpect) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gscheck_crash_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Crashing backend("cuda-emu", 0, {}, kOut);
  Crashing reference("reference", SIGFPE, {0}, kOut);
  CheckOptions opts;
  opts.failed_cases_dir = dir.string();
  CaseChecker checker(backend, &reference, opts);
  const reports::CaseResult r = checker.check_case(gather_case(), "");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_NE(r.reason.find("a bug in the reference"), std::string::npos) << r.reason;
  ASSERT_NE(r.repro.find(dir.string()), std::string::npos) << r.repro;
  const std::string path = r.repro.substr(r.repro.find(dir.string()));
  auto saved = load_case_file(path);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_FALSE(saved->expect.has_value());
  EXPECT_EQ(checker.check_case(gather_case(), "").verdict, Verdict::kPassed);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gscheck::harness
