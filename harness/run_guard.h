// What stops `gscheck run` early, and how it still leaves a report: SIGINT, SIGTERM and SIGHUP,
// and a case running past the per-case wall-clock limit (an in-process backend that hangs cannot
// be cancelled, so the run ends there). SIGPIPE is ignored: a closed stdout (`| head -1`) makes
// writes fail, it does not kill the run before its report.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gscheck::harness {

/// Block SIGINT, SIGTERM and SIGHUP in the calling thread, so threads created afterwards (the
/// backends' workers) inherit the mask and only RunGuard's thread takes them; ignore SIGPIPE.
/// Call first thing in the command, before any backend starts threads.
void block_run_signals();

/// The case in flight, for the stop callback.
struct InFlightCase {
  std::string name, file, repro;
};

class RunGuard {
 public:
  /// on_stop(reason, in_flight, exit_status) runs on the guard's thread when a signal arrives
  /// or a case exceeds case_limit_s (0: no limit); it should finish the reports. The process
  /// then ends with _exit(exit_status): 128 + the signal number, or 1 for a case over the limit
  /// (reported FAILED). in_flight is null when no case was running.
  using StopFn =
      std::function<int(const std::string& reason, const InFlightCase* in_flight, int status)>;
  RunGuard(double case_limit_s, StopFn on_stop);
  ~RunGuard();
  RunGuard(const RunGuard&) = delete;
  RunGuard& operator=(const RunGuard&) = delete;

  void case_started(InFlightCase c);
  void case_finished();

 private:
  void watch();

  double limit_s_;
  StopFn on_stop_;
  std::mutex mu_;
  bool running_case_ = false;
  InFlightCase in_flight_;
  std::chrono::steady_clock::time_point deadline_;
  std::atomic<bool> quit_{false};
  std::thread thread_;
};

}  // namespace gscheck::harness
