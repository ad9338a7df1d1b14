// Combining reports: `gscheck report merge` (shards of one run into one report) and
// `gscheck report diff` (what changed between two runs, e.g. a vendor's release N and N+1).
// See docs/report_format.md.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"
#include "reports/report_reader.h"

namespace gscheck::reports {

/// One input of a merge: a report and the file it came from (for messages and merged_from).
struct MergeInput {
  std::string path;
  Report report;
};

/// Merge reports into one. Shards of one run (same command, backend, seed and sweep size, shard
/// count N, each index 1..N exactly once) are interleaved back into the unsharded run's order, so
/// merging every shard of `run --shard K/N` gives the cases of the unsharded run. Anything else
/// is an error naming the mismatch unless force is set; forced merges of other reports keep the
/// cases in argument order. Two cases of one name are an error naming it, forced or not (cases
/// are matched by name). Totals, matrix and JUnit are derived from the merged cases.
Expected<Report> merge_reports(std::vector<MergeInput> inputs, bool force);

/// merge_reports for files, without holding their cases: each case is spooled as JSON text to an
/// unlinked temporary file as it is read. Once every file is read and the merge is known to be
/// valid, begin gets the merged run's head, then emit each case in the merged order. Memory: the
/// heads, the case names and a few words per case.
Status merge_report_files(const std::vector<std::string>& paths, bool force, int64_t max_bytes,
                          const std::function<Status(const RunInfo&)>& begin, const CaseSink& emit);

/// How a case's verdict changed between two reports.
enum class Change : unsigned char {
  kNewFailure,  ///< a failure now (FAILED, MISTRUSTED, NONDETERMINISTIC), not before: regression
  kLost,        ///< PASSED before, UNIMPLEMENTED or SKIPPED now: regression (capability lost)
  kFixed,       ///< a failure before, not now
  kGained,      ///< UNIMPLEMENTED or SKIPPED before, PASSED now
  kChanged,     ///< another verdict change (FAILED -> NONDETERMINISTIC, SKIPPED -> UNIMPLEMENTED)
  kAdded,       ///< only in the new report, not a failure
  kRemoved,     ///< only in the old report
};
/// "new failure", "lost", "fixed", "gained", "changed", "added", "removed".
std::string_view change_name(Change c);
bool is_regression(Change c);

struct CaseChange {
  std::string name;  ///< the case name (" (old case)" appended where another case took it)
  Change change;
  std::optional<Verdict> old_verdict, new_verdict;
  std::string reason;  ///< the new report's reason (the old one's for kRemoved / kFixed)
};

/// A capability-matrix row whose verdict counts differ.
struct RowChange {
  MatrixRow old_row, new_row;  ///< counts empty where the row is missing from that report
  bool regression = false;     ///< more failures, or fewer PASSED, than before
};

struct ReportDiff {
  std::string old_label, new_label;  ///< "backend@version (commit)" of each side
  std::vector<std::string> notes;    ///< what makes the reports hard to compare (seeds, shards)
  std::vector<CaseChange> cases;     ///< changed cases, regressions first
  std::vector<RowChange> rows;       ///< changed matrix rows, in matrix order
  int64_t unchanged = 0;             ///< cases in both with the same verdict
  bool regression() const;           ///< any case change that is a regression
};

/// Cases are matched by name (case files and sweep cases carry stable names); a name given twice
/// in one report is an error naming it.
Expected<ReportDiff> diff_reports(const Report& old_report, const Report& new_report);
/// The same for two files, read case by case (reports/report_reader.h): memory holds a few words
/// per case (hashes of the name and inputs, the verdict, where its name and reason wait in an
/// unlinked spool file) and the changed cases, never a whole report.
Expected<ReportDiff> diff_report_files(const std::string& old_path, const std::string& new_path,
                                       int64_t max_bytes);
/// The diff as text: notes, a summary line, the changed cases, the changed matrix rows.
std::string diff_table(const ReportDiff& d, std::size_t max_cases = 200);
nlohmann::json diff_to_json(const ReportDiff& d);

}  // namespace gscheck::reports
