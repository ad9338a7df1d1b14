// One run: case files, then generated cases, checked on a backend and handed to a sink in case
// order, with --jobs, --shard, a time budget for the sweep and a per-case time limit (RunGuard:
// a case past it, or SIGINT/SIGTERM/SIGHUP, ends the run with its reports finished).
// `gscheck run`, `gscheck eval` and `known-failures check` run through it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/checker.h"
#include "harness/run_guard.h"
#include "reports/report.h"

namespace gscheck::harness {

/// Where the results go.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  /// Every result, in case order.
  virtual void add(const reports::CaseResult& r) = 0;
  /// The sweep positions that have results so far, and the sweep's time.
  virtual void sweep_reached(int64_t /*positions*/, double /*sweep_elapsed_s*/) {}
  /// The run is stopped (a signal, or a case past its time limit, whose FAILED result has been
  /// added): finish the reports, marked interrupted by `reason`. Runs on the guard's thread;
  /// returns the exit status the process ends with (`status`, or 3 when a report failed).
  virtual int stop(const std::string& reason, double elapsed_s, int status) = 0;
};

/// Generated cases, one position after another (the sweep).
class CaseSource {
 public:
  virtual ~CaseSource() = default;
  virtual int64_t position() const = 0;
  /// The case at position(), which then advances; nullopt when that position yields none.
  virtual std::optional<Case> next() = 0;
  /// Advance past position() without drawing its case.
  virtual void skip() = 0;
};

struct RunnerOptions {
  std::string backend_name;   ///< for the replay lines and the results of stopped cases
  int jobs = 1;               ///< cases checked at once (plugin workers)
  double case_timeout_s = 0;  ///< 0: no limit
  std::optional<reports::Shard> shard;
};

class Runner {
 public:
  Runner(CaseChecker& checker, ResultSink& sink, RunnerOptions opts);
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// Shard K/N's case files: every N-th, so each shard gets a spread of ops.
  static std::vector<std::string> shard_files(std::vector<std::string> files,
                                              const std::optional<reports::Shard>& shard);
  /// Whether case file or sweep position `position` (from 0) is the shard's: p % N == K-1.
  static bool in_shard(int64_t position, const std::optional<reports::Shard>& shard);
  /// The number of sweep positions of `count` that belong to the shard.
  static int64_t shard_positions(int64_t count, const std::optional<reports::Shard>& shard);

  /// Check the files (already sharded) in order.
  void run_files(const std::vector<std::string>& files);

  struct SweepEnd {
    int64_t reached = 0;  ///< positions run (a time budget may stop short of count)
    double elapsed_s = 0;
  };
  /// Check source's cases at positions [0, count) that belong to the shard, until
  /// time_budget_s has passed (checked before each batch of `jobs` cases). repro_of(p) is the
  /// command that replays the case at position p.
  SweepEnd run_sweep(CaseSource& source, int64_t count, std::optional<double> time_budget_s,
                     const std::function<std::string(int64_t)>& repro_of);

  /// Seconds since the runner was made.
  double elapsed_s() const;

 private:
  // Checks n items, `jobs` at a time, recording results in order; the item the run waits on
  // (named when it is stopped) is always the next index.
  void check_in_order(std::size_t n, const std::function<reports::CaseResult(std::size_t)>& check,
                      const std::function<InFlightCase(std::size_t)>& in_flight,
                      const std::function<void(std::size_t)>& recorded);
  int on_stop(const std::string& reason, const InFlightCase* in_flight, int status);

  CaseChecker& checker_;
  ResultSink& sink_;
  RunnerOptions opts_;
  std::chrono::steady_clock::time_point t0_;
  RunGuard guard_;  // last: its thread stops before the rest goes
};

}  // namespace gscheck::harness
