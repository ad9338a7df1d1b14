// `gscheck report diff` on two bench reports (reports/bench_report.schema.json): which
// problem x backend got slower beyond the noise, faster, or changed verdict.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace gscheck::reports {

/// When a change in speed counts: both a Mann-Whitney U test on the per-repetition times
/// (one-sided, p < alpha) and a median change beyond `threshold` (a fraction, and beyond three
/// relative MADs of either run). The test alone flags drift a same-build rerun shows on a
/// loaded machine; the threshold alone flags one unlucky repetition.
struct BenchDiffOptions {
  double alpha = 0.01;
  double threshold = 0.10;
};

/// v with `digits` decimals ("%.*f"), as bench reports and `gscheck bench` print numbers.
std::string fixed(double v, int digits);

/// One-sided Mann-Whitney U: the probability of a U statistic this small or smaller were `b`
/// drawn from the same distribution as `a`, against "b's values tend to be larger". Exact (ties
/// counted half, over every split of the pooled values) up to 200,000 splits (10 and 10
/// values), else the normal approximation with a tie correction.
double mann_whitney_p_greater(const std::vector<double>& a, const std::vector<double>& b);

struct BenchChange {
  std::string problem, backend;
  std::string kind;  // "slower", "faster", "unclear" (past the threshold and the test, but
                     // within 3 rMADs of a run: not flagged), "failed", "lost", "fixed",
                     // "verdict", "added", "removed"
  std::string old_verdict, new_verdict;
  double old_median_s = 0, new_median_s = 0;
  double ratio = 0;  // new median / old median, where both were timed
  double p = 1;      // the U test's, where both were timed
  double bound = 0;  // "unclear": the noise bound the change stayed within
  bool timed() const { return kind == "slower" || kind == "faster" || kind == "unclear"; }
  bool regression() const { return kind == "slower" || kind == "failed" || kind == "lost"; }
};

struct BenchDiff {
  BenchDiffOptions options;
  std::vector<std::string> warnings;  // machine or settings that differ between the runs
  std::vector<BenchChange> changes;   // regressions first
  int64_t unchanged = 0;              // timed in both, no change beyond the noise
  bool regression() const;
};

/// True when the JSON is a bench report.
bool is_bench_report(const nlohmann::json& j);
/// Whether the file at `path` is a bench report, from its top-level keys alone (a run report may
/// be far too large to parse whole): true, false, or the error reading it.
Expected<bool> file_is_bench_report(const std::string& path);
Expected<BenchDiff> diff_bench_reports(const nlohmann::json& old_report,
                                       const nlohmann::json& new_report,
                                       const BenchDiffOptions& options = {});
std::string bench_diff_table(const BenchDiff& d);
nlohmann::json bench_diff_to_json(const BenchDiff& d);

}  // namespace gscheck::reports
