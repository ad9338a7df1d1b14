// Checking cases on a backend: the shared core of `gscheck eval` and `gscheck run`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/plugin_backend.h"
#include "core/case.h"
#include "reports/known_failures.h"
#include "reports/known_failures_lint.h"
#include "reports/report.h"

namespace gscheck::tools {

struct CheckOptions {
  int64_t max_bytes = kDefaultMaxCaseBytes;  ///< budget for loading one case file
  /// Where a failing generated case is saved as a case file (its repro); "" to not save.
  std::string failed_cases_dir;
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
};

/// The one contract check: nullopt when the backend's declared capabilities cover the case, else
/// the UNIMPLEMENTED reason (the first capability the case falls outside of).
std::optional<std::string> admit(const Capabilities& caps, const Case& c);

/// The default --repeat for a backend: 2 for vendor plugins (their determinism claim is what is
/// graded), 1 for the in-tree backends so the default CI run costs no extra time.
int default_repeat(const std::string& backend_name);

/// Where two outcomes differ bitwise, in words ("" when identical): dtype, shape, the first
/// differing element (flat index), or error class and message.
std::string bitwise_difference(const Outcome& a, const Outcome& b);

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

 private:
  reports::CaseResult check_file_unguarded(const std::string& path);
  reports::CaseResult check_case_unguarded(const CaseFile& f, const std::string& file);
  reports::CaseResult grade(const CaseFile& f, const std::string& file);

  Backend& backend_;
  Backend* reference_;
  CheckOptions opts_;
};

/// The verdict line of a case (and, for failures, the reason, first mismatches and repro).
std::string result_text(const reports::CaseResult& r);

/// Finish a run: print the totals (and the per-op table when table is set), write the JSON
/// report and JUnit XML when paths are given. Returns the exit status: 0 no failures, 1 a case
/// FAILED, was MISTRUSTED or NONDETERMINISTIC (or XPASS when report.run.strict), 3 a report
/// could not be written.
/// With matrix set, the capability matrix (reports::matrix_table) is printed too.
int finish_run(reports::Report& report, const std::string& report_path,
               const std::string& junit_path, bool table, bool matrix = false);

/// finish_run for a streamed run: the same output, the reports written from the stream's spools
/// (complete, not interrupted); strict as in report.run.strict.
int finish_stream(reports::ReportStream& stream, double elapsed_s, bool strict, bool table,
                  bool matrix);

/// Print the known-failures lint (its per-entry table and findings); true when it found one.
bool print_lint(const reports::KnownFailuresLint& lint, const std::string& path);

/// A word quoted for POSIX shells when it needs it.
std::string shell_quote(const std::string& s);

/// The command that replays one case file: "gscheck eval --backend B [--repeat K] FILE" (the
/// --repeat only when repeat > 1).
std::string eval_repro(const std::string& backend, const std::string& path, int repeat = 1);

/// The machine's own build: make the backend by name, the reference one with its budget, a
/// plugin:PATH one with the plugin options (whose byte budget is max_bytes).
Expected<std::unique_ptr<Backend>> make_named_backend(const std::string& name, int64_t max_bytes,
                                                      PluginOptions plugin = {});

}  // namespace gscheck::tools
