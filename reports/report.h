// Run reports: what `gscheck run` / `gscheck eval` found, as JSON (reports/report.schema.json),
// JUnit XML and a text summary. See docs/report_format.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "compare/compare.h"
#include "core/backend.h"
#include "core/case.h"
#include "reports/verdict.h"

namespace gscheck::reports {

/// One comparison made for a case: against its expect block, or against the reference.
struct Check {
  std::string against;  ///< "expect" or "reference"
  compare::Comparison result;
};

/// An input's dtype and shape, for reports.
struct InputInfo {
  std::string name;  ///< "params", "indices", ...
  DType dtype = DType::kFloat32;
  Shape shape;
};

/// What happened to one case.
struct CaseResult {
  std::string name;
  std::string file;      ///< the case file; empty for generated cases
  std::optional<Op> op;  ///< nullopt when the file did not parse
  Semantics semantics = Semantics::kTfCpu;
  Api api = Api::kPython;
  std::vector<InputInfo> inputs;
  std::string bad_indices_policy;  ///< the case's policy attribute ("" when not given)
  std::string backend;
  Verdict verdict = Verdict::kFailed;
  std::string outcome;  ///< the backend's outcome in one line: "float32 [2,3]" or "error ...: ..."
  std::string reason;   ///< why this verdict, in one line
  std::vector<Check> checks;
  double elapsed_ms = 0;   ///< the first run's time
  std::string repro;       ///< a command that replays this case
  int runs = 0;            ///< times the backend ran the case (0 when it was not run)
  int differing_runs = 0;  ///< runs after the first whose outcome differs from it bitwise
  /// Set when --known-failures entries explain the case (XFAIL) or declare it failing (XPASS):
  /// the verdict before, and the entries.
  struct Known {
    Verdict verdict = Verdict::kFailed;  ///< the verdict the checks gave
    std::string entry;                   ///< the entries' ids, ", "-separated
    std::string reason;                  ///< why it is known to fail (the first entry's)
    std::string link;                    ///< where it is tracked (the first entry's)
    /// XFAIL through an entry that accepts values gscheck cannot predict (output where
    /// TensorFlow raises, input_element, any_value): counted and shown apart.
    bool values_unchecked = false;
    /// XFAIL because the backend follows another rule: that rule ("negative_indices=wrap, ..."),
    /// under which the reference agreed bit for bit; "" otherwise.
    std::string follows = {};
  };
  std::optional<Known> known;
  /// With --known-failures, for a case that did not pass: its differences from the expected
  /// outcome, grouped by the entry that explains them ("" for none), with a count and the first.
  struct Differences {
    std::string entry;    ///< the explaining entry's id; "" when unexplained
    int64_t count = 0;    ///< how many differences of the group
    std::string example;  ///< the first, in words
  };
  std::vector<Differences> explained, unexplained;
  /// For `gscheck known-failures check`: which entries selected the case, explained how many of
  /// its differences, explained one difference together, or would absorb an injected bug.
  struct KnownLint {
    std::vector<std::size_t> selected;
    std::vector<std::pair<std::size_t, int64_t>> used;
    std::vector<std::pair<std::size_t, std::size_t>> overlaps;
    std::vector<std::pair<std::size_t, std::string>> absorbed;  ///< (entry, injected bug)
  };
  std::optional<KnownLint> lint;
  /// A failure shrunk to the smallest case that fails the same way (harness/shrink.h).
  struct Shrunk {
    std::string file;               ///< the minimal case file (the original is file / repro)
    std::string repro;              ///< the command that replays it
    std::vector<InputInfo> inputs;  ///< the minimal case's inputs
    std::string reason;             ///< how the minimal case fails
    int64_t tried = 0, kept = 0;    ///< smaller cases graded; steps taken
    double seconds = 0;             ///< time spent shrinking
    bool limited = false;           ///< stopped by --shrink-time before every step was tried
  };
  std::optional<Shrunk> shrunk;
};

/// The element dtype of a case's data input (params, or tensor / updates for scatters) and its
/// index dtype, from the inputs of a result; nullopt when the case has no such input.
std::optional<DType> data_dtype(const CaseResult& r);
std::optional<DType> index_dtype(const CaseResult& r);

/// Fill name, op, semantics and inputs of r from a case.
void describe_case(const Case& c, CaseResult& r);
/// The one-line summary of an outcome used in CaseResult::outcome.
std::string outcome_summary(const Outcome& o);

/// One part of a sharded run (`gscheck run --shard K/N`): case files and sweep positions p with
/// p % count == index - 1.
/// The most shards a run may be split into (`gscheck run --shard K/N`).
inline constexpr int64_t kMaxShards = 1000000;

struct Shard {
  int64_t index = 1;  ///< K, 1-based
  int64_t count = 1;  ///< N
};

/// The run as a whole.
struct RunInfo {
  std::string command;            ///< "run" or "eval"
  std::vector<std::string> argv;  ///< the command line
  std::string started_at;         ///< UTC, ISO 8601 ("2026-11-30T02:50:00Z")
  std::optional<uint64_t> seed;   ///< the sweep seed, when a sweep ran
  /// Sweep positions run: the count requested, or with a time budget the count reached, so
  /// `--sweep <sweep>` (same seed, size and shard) replays the same cases.
  int64_t sweep = 0;
  int64_t sweep_size = 30;  ///< the sweep's RapidCheck size (--size)
  /// The sweep's --boundary-fraction; reports from before it had none (0).
  double sweep_boundary_fraction = 0;
  /// The sweep's --large-fraction; reports from before large cases had none (0).
  double sweep_large_fraction = 0;
  std::optional<Shard> shard;            ///< --shard K/N; nullopt for a whole run
  std::optional<double> time_budget_s;   ///< --time SECONDS: the sweep's budget
  double sweep_elapsed_s = 0;            ///< the sweep's part of elapsed_s
  std::vector<std::string> merged_from;  ///< `report merge`: the reports combined
  Capabilities backend;                  ///< the backend's declared contract
  double elapsed_s = 0;
  std::string known_failures;  ///< the --known-failures file ("" when none)
  /// What graded the run, as SHA-256, taken before any graded code ran (a plugin's init(), a
  /// Python module's import): the case files (harness/sealed_inputs.h: one digest over their
  /// list), the known-failures file, the gscheck and worker executables. nullopt in reports
  /// from before, and in merged reports (each shard's report keeps its own).
  struct Sealed {
    int64_t case_files = 0;
    int64_t case_bytes = 0;
    std::string case_files_sha256;
    std::string known_failures_sha256;  ///< "" without --known-failures
    std::string gscheck_sha256;
    std::string worker_sha256;  ///< "" when the backend runs in gscheck's process
  };
  std::optional<Sealed> sealed;
  bool strict = false;  ///< --strict: XPASS fails the run
  /// Why the run stopped before its end ("SIGINT", "SIGTERM", "the run has not finished", a case
  /// over its time limit); "" when it ran to the end. The report then holds what ran.
  std::string interrupted;
};

struct Report {
  RunInfo run;
  std::vector<CaseResult> cases;
};

/// Counts per verdict, overall and per op ("" for cases whose op is unknown).
struct Totals {
  std::map<Verdict, int64_t> all;
  std::map<std::string, std::map<Verdict, int64_t>> per_op;
  /// FAILED + MISTRUSTED + NONDETERMINISTIC + DECLINED + UNSAFE (+ XPASS when strict).
  int64_t failures(bool strict = false) const;
};
Totals totals(const Report& r);

/// One row of the capability matrix: the cases of one (op, dtype, index dtype, policy).
struct MatrixRow {
  std::optional<Op> op;  ///< nullopt for case files that did not parse
  std::optional<DType> dtype;
  std::optional<DType> index_dtype;
  std::string bad_indices_policy;  ///< matrix_policy() of the cases' policy
  std::map<Verdict, int64_t> counts;
};
/// The policy column of a case: "", "DEFAULT", "ERROR", "IGNORE" as given; any other text
/// (which TensorFlow registers no kernel for) is "other", so fuzzed values share one row.
std::string_view matrix_policy(std::string_view bad_indices_policy);
/// The capability matrix: one row per (op, dtype, index dtype, bad_indices_policy) seen, sorted
/// by op, dtype, index dtype and policy (declaration order; unparsed files last).
std::vector<MatrixRow> capability_matrix(const Report& r);
/// The matrix as a text table, one line per row.
std::string matrix_table(const Report& r);

/// What the totals, the summary table and the capability matrix need of a run, added case by
/// case: memory per distinct (op, verdict) and matrix row, not per case.
class RunTally {
 public:
  void add(const CaseResult& r);
  int64_t cases() const { return cases_; }
  /// XFAIL cases whose values no rule predicted (CaseResult::Known::values_unchecked).
  int64_t values_unchecked() const { return values_unchecked_; }
  /// UNSAFE cases a known-failures entry describes (CaseResult::known set): still failures.
  int64_t unsafe_described() const { return unsafe_described_; }
  const Totals& totals() const { return totals_; }
  std::vector<MatrixRow> matrix() const;

 private:
  using Key = std::tuple<bool, int, int, int, std::string>;
  int64_t cases_ = 0;
  int64_t values_unchecked_ = 0;
  int64_t unsafe_described_ = 0;
  Totals totals_;
  std::map<Key, MatrixRow> rows_;
};
RunTally tally(const Report& r);
std::string summary_table(const RunTally& t);
std::string matrix_table(const RunTally& t);

/// "0.1.0"; the git commit this build was configured from, or "" when unknown.
std::string_view tool_version();
std::string_view git_commit();
/// The current UTC time in ISO 8601.
std::string utc_now();

/// The JSON report (reports/report.schema.json).
nlohmann::json report_to_json(const Report& r);
/// Its parts: everything but the cases ("cases" is an empty array), and one case's object.
nlohmann::json report_head_json(const RunInfo& run, const RunTally& tally);
nlohmann::json case_result_to_json(const CaseResult& r);
/// Text escaped for XML 1.0 (text and attribute values): markup characters and CR as references;
/// anything XML 1.0 cannot carry (controls, U+FFFE, U+FFFF, surrogates, invalid or overlong UTF-8)
/// as the text \xNN per byte.
std::string xml_escape(std::string_view s);
/// xml_escape for an attribute value: line feeds and tabs too as references, which a parser would
/// otherwise read as spaces.
std::string xml_attribute(std::string_view s);
/// The pieces of JUnit XML, for writers that stream (ReportStream): a suite's counts, a
/// testcase element, the document head (totals over the suites), a suite's opening tag, the tail
/// (an error testcase when the run was interrupted).
struct JunitSuite {
  int64_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double ms = 0;
  void add(const CaseResult& c, bool strict);
};
std::string suite_name(const CaseResult& c);  ///< the op's name, "unparsed" without one
std::string junit_testcase(const CaseResult& c, const std::string& backend, bool strict);
std::string junit_head(const RunInfo& run, const std::map<std::string, JunitSuite>& suites);
std::string junit_suite_open(const RunInfo& run, const std::string& name, const JunitSuite& s);
std::string junit_tail(const RunInfo& run);
/// JUnit XML: one testsuite per op, one testcase per case.
std::string junit_xml(const Report& r);
/// The text summary: one row per op with counts per verdict, then the totals.
std::string summary_table(const Report& r);

/// A report read back from its JSON (the inverse of report_to_json for everything but the
/// derived totals, per_op and matrix, which are recomputed); an error names the bad field.
Expected<Report> report_from_json(const nlohmann::json& j);
/// Read and parse a JSON report file (a regular file of at most max_bytes; bounded parser).
Expected<Report> read_json_report(const std::string& path,
                                  int64_t max_bytes = kDefaultMaxCaseBytes);

/// Write a report to a file (kInternal when the file cannot be written; parent directories are
/// created). Written atomically (reports/atomic_file.h); errors name the errno.
Status write_json_report(const std::string& path, const Report& r);
Status write_junit(const std::string& path, const Report& r);

/// A run's reports written as the cases come: each case result goes to spool files next to the
/// report paths at once (memory stays flat however many cases run), and the JSON report and
/// JUnit XML are rewritten atomically from the spools at finish(). At open() both files are
/// written already, marked interrupted ("the run has not finished"): a run killed at any point
/// leaves its own report, never the previous run's as if current. Thread-safe: a signal or
/// time-limit thread may finish() while the run is adding cases.
class ReportStream {
 public:
  /// json_path / junit_path: "" for none. Errors name the path and the errno.
  static Expected<std::unique_ptr<ReportStream>> open(RunInfo run, std::string json_path,
                                                      std::string junit_path);
  ~ReportStream();
  ReportStream(const ReportStream&) = delete;
  ReportStream& operator=(const ReportStream&) = delete;

  /// Append a case result (after finish(), results are ignored).
  Status add(const CaseResult& r);
  /// A copy of the counts so far.
  RunTally tally() const;
  /// The sweep positions reached and the sweep's time so far (a time budget decides them); the
  /// reports finish() writes carry the latest values.
  void set_sweep_reached(int64_t positions, double sweep_elapsed_s);
  /// Write the final files: run.elapsed_s and run.interrupted ("" when the run completed) as
  /// given. Only the first call writes; later ones return its status.
  Status finish(double elapsed_s, const std::string& interrupted);

 private:
  struct State;
  explicit ReportStream(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace gscheck::reports
