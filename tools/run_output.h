// What `gscheck run` and `eval` show and write: each result's text, progress, the streamed
// reports, the known-failures lint, and the totals that give the exit status.
#pragma once

#include <optional>
#include <string>

#include "harness/runner.h"
#include "reports/known_failures_lint.h"
#include "reports/report.h"
#include "tools/cli_args.h"
#include "tools/progress.h"

namespace gscheck::tools {

/// The CLI's result sink: prints failures (every result when verbose), redraws the progress,
/// spools the reports and feeds the lint.
class CliSink : public harness::ResultSink {
 public:
  CliSink(reports::ReportStream& stream, Progress* progress, reports::KnownFailuresLint* lint,
          bool verbose, bool strict)
      : stream_(stream), progress_(progress), lint_(lint), verbose_(verbose), strict_(strict) {}

  void add(const reports::CaseResult& r) override;
  void sweep_reached(int64_t positions, double sweep_elapsed_s) override;
  int stop(const std::string& reason, double elapsed_s, int status) override;

  int64_t done() const { return done_; }
  int64_t failures() const { return failures_; }
  /// The first error spooling a result, if any (the run's exit status is then 3).
  const std::optional<Error>& spool_error() const { return spool_error_; }

 private:
  reports::ReportStream& stream_;
  Progress* progress_;
  reports::KnownFailuresLint* lint_;
  bool verbose_, strict_;
  int64_t done_ = 0, failures_ = 0;
  std::optional<Error> spool_error_;
};

/// The usage lines of --shrink-time and --shrink-total (gscheck run, eval).
#define GSCHECK_SHRINK_USAGE                                                                       \
  "  --shrink-time S  shrink each failing case for up to S seconds (default 5; 0: never) to the\n" \
  "                   smallest case that fails the same way, saved in failed_cases/ beside the\n"  \
  "                   original (needs --report FILE); each step is one more call of the backend\n" \
  "  --shrink-total S stop shrinking for the rest of the run after S seconds of it (default\n"     \
  "                   120); later failures are saved as drawn\n"

/// The option specs of GSCHECK_SHRINK_USAGE.
std::vector<OptionSpec> shrink_option_specs();
/// Where failures go and how long they are shrunk: opts.failed_cases_dir is failed_cases/ beside
/// report_path ("" for none or "-": no folder was named, nothing is saved); --shrink-time and
/// --shrink-total (defaults 5 and 120 s), a case's share capped at half of case_timeout_s
/// (shrinking is part of a case's time). "" or the usage error.
std::string shrink_options(const ParsedArgs& parsed, const std::string& report_path,
                           double case_timeout_s, harness::CheckOptions& opts);

/// --known-failures FILE and --lint-known-failures: load the file into `known`, point opts at
/// it and make the lint. Returns "" or the usage error's message.
std::string known_failures_options(const ParsedArgs& parsed, harness::CheckOptions& opts,
                                   std::optional<reports::KnownFailures>& known,
                                   std::optional<reports::KnownFailuresLint>& lint);

/// The report's record of what graded the run (RunInfo::Sealed): the sealed case files' digest,
/// the known-failures file's, and with a JSON report (report) gscheck's and (worker: a plugin or
/// Python backend) the worker's.
reports::RunInfo::Sealed sealed_run_info(const harness::SealedInputs& sealed,
                                         const reports::KnownFailures* known, bool worker,
                                         bool report);

/// Finish a streamed run: print the totals (and the per-op table when table is set, the capability
/// matrix with matrix), write the reports from the stream's spools (complete unless interrupted
/// names why not: a merged part that did not finish). Returns the exit status: 0 no failures, 1 a
/// case FAILED, was MISTRUSTED, NONDETERMINISTIC, DECLINED or UNSAFE with no entry describing it
/// (or XPASS when strict), 4 the only failures are UNSAFE cases known-failures entries describe,
/// 3 a report was not written.
int finish_stream(reports::ReportStream& stream, double elapsed_s, bool strict, bool table,
                  bool matrix, const std::string& interrupted = "");

/// Print the known-failures lint (its per-entry table and findings); true when it found one.
bool print_lint(const reports::KnownFailuresLint& lint, const std::string& path);

}  // namespace gscheck::tools
