// Checking one case on a backend: the contract check, the runs, the reference, the judgement,
// known failures, and the saved regression. `gscheck run` and `eval`, the fuzz replay and the
// properties all grade through CaseChecker.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/registry.h"
#include "core/case.h"
#include "harness/sealed_inputs.h"
#include "reports/known_failures.h"
#include "reports/report.h"

namespace gscheck::harness {

struct CheckOptions {
  int64_t max_bytes = kDefaultMaxCaseBytes;  ///< budget for loading one case file
  /// Where a failing generated case is saved as a regression (save_regression); "" to not save.
  std::string failed_cases_dir;
  /// Who finds the failures saved there, for the regression's description.
  std::string found_by = "gscheck run";
  /// The repro of a generated case that is not saved (e.g. "gscheck run --seed 7 --sweep 100").
  std::string sweep_repro;
  /// Times each case is run on the backend (--repeat). A backend declaring deterministic=true
  /// must give bit-identical outcomes (else NONDETERMINISTIC); one declaring false must pass
  /// the comparison on every run (else FAILED).
  int repeat = 1;
  /// --known-failures: failures whose every difference an entry explains are XFAIL, passing cases
  /// an outcome entry selects XPASS (not owned).
  const reports::KnownFailures* known_failures = nullptr;
  /// `known-failures check`: record per case which entries selected, explained and overlapped,
  /// and try injected bugs on cases the backend got right (CaseResult::lint).
  bool lint = false;
  /// Case files read before the backend started (sealed_inputs.h): check_file grades these
  /// texts and never opens the file. nullptr: check_file reads the file (tests, tools).
  const SealedInputs* sealed = nullptr;
  /// A failing case is shrunk (harness/shrink.h) for up to this many seconds, each step one
  /// grading of a smaller case, and the smallest that fails the same way (same verdict, same
  /// outcome kinds of backend and reference) is saved beside it in failed_cases_dir. 0: never;
  /// nothing is shrunk without failed_cases_dir.
  double shrink_seconds = 0;
  /// Shrinking stops for the rest of the run once its failures have taken this many seconds
  /// of it in all; later failures are saved as they are. <= 0: no limit.
  double shrink_total_seconds = 0;
};

/// The default --repeat for a backend: 2 for vendor plugins (their determinism claim is what is
/// graded), 1 for the in-tree backends so the default CI run costs no extra time.
int default_repeat(const std::string& backend_name);

/// Checks cases on a backend: against the case's expect block, and (when a reference is given
/// that is not the backend itself) against the reference's outcome.
class CaseChecker {
 public:
  CaseChecker(Backend& backend, Backend* reference, CheckOptions opts);

  /// Load and check one case file; a malformed file is FAILED, one over the budget SKIPPED (as
  /// is any case that runs out of memory: std::bad_alloc never ends the run).
  reports::CaseResult check_file(const std::string& path);
  /// Check a case; file is "" for generated cases. Known failures are applied.
  reports::CaseResult check_case(const CaseFile& f, const std::string& file);

  const Backend& backend() const { return backend_; }
  const CheckOptions& options() const { return opts_; }

 private:
  struct Graded;
  reports::CaseResult check_file_unguarded(const std::string& path);
  reports::CaseResult grade(const CaseFile& f, const std::string& file);
  // Everything but saving and shrinking; a shrink step grades with step = true (no lint).
  Graded grade_unsaved(const CaseFile& f, const std::string& file, bool step);
  void shrink(const CaseFile& f, const Graded& g, reports::CaseResult& r);

  Backend& backend_;
  Backend* reference_;
  CheckOptions opts_;
  std::unique_ptr<std::atomic<int64_t>> shrink_spent_ms_ =
      std::make_unique<std::atomic<int64_t>>(0);
};

/// The verdict line of a case (and, for failures, the reason, first mismatches and repro).
std::string result_text(const reports::CaseResult& r);

}  // namespace gscheck::harness
