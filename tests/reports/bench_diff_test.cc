// reports/bench_diff: the U test's exact p-values, and when a change in speed or verdict is a
// regression, written from the rule (bench_diff.h) rather than from the code.
#include "reports/bench_diff.h"

#include <gtest/gtest.h>

namespace gscheck::reports {
namespace {

using nlohmann::json;

TEST(MannWhitney, ExactPValuesOfFiveAgainstFive) {
  // C(10, 5) = 252 splits; U of the second sample takes 25 only when every value is larger.
  EXPECT_DOUBLE_EQ(mann_whitney_p_greater({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 1.0 / 252);
  // One inversion: U = 24; the splits with U >= 24 are U = 25 (1) and U = 24 (1).
  EXPECT_DOUBLE_EQ(mann_whitney_p_greater({1, 2, 3, 4, 6}, {5, 7, 8, 9, 10}), 2.0 / 252);
  // Two inversions: U = 23 adds the two splits with U = 23.
  EXPECT_DOUBLE_EQ(mann_whitney_p_greater({1, 2, 3, 4, 7}, {5, 6, 8, 9, 10}), 4.0 / 252);
  // The other direction is no evidence at all.
  EXPECT_DOUBLE_EQ(mann_whitney_p_greater({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}), 1.0);
  // Identical values: every split ties, nothing is larger.
  EXPECT_DOUBLE_EQ(mann_whitney_p_greater({3, 3, 3}, {3, 3, 3}), 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_p_greater({}, {1, 2}), 1.0);
}

TEST(MannWhitney, NormalApproximationForLargeSamples) {
  std::vector<double> a, b, c;
  for (int i = 0; i < 30; ++i) {
    a.push_back(i);
    b.push_back(i + 100);
    c.push_back(i + 0.5);
  }
  EXPECT_LT(mann_whitney_p_greater(a, b), 1e-9);  // completely apart
  const double interleaved = mann_whitney_p_greater(a, c);
  EXPECT_GT(interleaved, 0.2);  // b a hair larger everywhere: U = 465 of 900, no evidence
  EXPECT_LT(interleaved, 0.5);
}

json result(const std::string& backend, const std::string& verdict,
            std::vector<double> samples = {}, double rel_mad = 0.01) {
  json r{{"backend", backend}, {"verdict", verdict}};
  if (!samples.empty()) {
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    r["median_s"] = s[s.size() / 2];
    r["samples_s"] = samples;
    r["rel_mad"] = rel_mad;
  }
  return r;
}

json report(std::vector<std::pair<std::string, std::vector<json>>> problems,
            const std::string& cpu = "X") {
  json ps = json::array();
  for (auto& [name, results] : problems) {
    json rs = json::array();
    for (auto& r : results) rs.push_back(r);
    ps.push_back({{"name", name}, {"results", rs}});
  }
  return {{"gscheck_bench_report", 1},
          {"seed", 1},
          {"machine", {{"cpu", cpu}, {"cpus", 2}}},
          {"settings", {{"sets", 3}, {"min_time_s", 0.05}, {"repetitions", 5}}},
          {"problems", ps}};
}

std::vector<double> times(double base, double factor) {
  std::vector<double> v;
  for (int i = 0; i < 5; ++i) v.push_back((base + i) * factor * 1e-6);
  return v;
}

const BenchChange* change(const BenchDiff& d, const std::string& backend) {
  for (const auto& c : d.changes)
    if (c.backend == backend) return &c;
  return nullptr;
}

TEST(BenchDiff, SlowerBeyondTheNoiseIsARegression) {
  const json old_r = report({{"p", {result("k", "PASSED", times(100, 1))}}});
  // 20% slower, every repetition: p = 1/252 and past 10%.
  auto d = diff_bench_reports(old_r, report({{"p", {result("k", "PASSED", times(100, 1.2))}}}));
  ASSERT_TRUE(d.ok());
  ASSERT_NE(change(*d, "k"), nullptr);
  EXPECT_EQ(change(*d, "k")->kind, "slower");
  EXPECT_NEAR(change(*d, "k")->ratio, 1.2, 1e-9);
  EXPECT_NEAR(change(*d, "k")->p, 1.0 / 252, 1e-12);
  EXPECT_TRUE(d->regression());
  // A timed change shows its times, not the unchanged verdicts.
  const std::string table = bench_diff_table(*d);
  EXPECT_NE(table.find("  slower  p  k  102.0 us -> 122.4 us (x1.200, p=0.0040)\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("PASSED -> PASSED"), std::string::npos) << table;
  // The same numbers faster: reported, not a regression.
  d = diff_bench_reports(report({{"p", {result("k", "PASSED", times(100, 1.2))}}}), old_r);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(change(*d, "k")->kind, "faster");
  EXPECT_FALSE(d->regression());
}

TEST(BenchDiff, ChangesWithinTheNoiseAreNot) {
  const json old_r = report({{"p", {result("k", "PASSED", times(100, 1))}}});
  // 5% slower on every repetition: significant, but under the 10% threshold.
  auto d = diff_bench_reports(old_r, report({{"p", {result("k", "PASSED", times(100, 1.05))}}}));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->unchanged, 1);
  EXPECT_FALSE(d->regression());
  // 20% slower in the median, but a run this spread (rMAD 10%) hides 30%: listed as unclear,
  // with the bound, not flagged.
  d = diff_bench_reports(old_r, report({{"p", {result("k", "PASSED", times(100, 1.2), 0.10)}}}));
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->regression());
  ASSERT_NE(change(*d, "k"), nullptr);
  EXPECT_EQ(change(*d, "k")->kind, "unclear");
  EXPECT_NEAR(change(*d, "k")->bound, 0.30, 1e-12);
  EXPECT_NE(bench_diff_table(*d).find("within 3 rMADs of a run this spread (30%): bench again"),
            std::string::npos);
  // 30% slower in the median, yet the repetitions overlap: the U test does not find it.
  d = diff_bench_reports(
      old_r, report({{"p", {result("k", "PASSED", {90e-6, 100e-6, 130e-6, 131e-6, 132e-6})}}}));
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->regression());
  // A smaller threshold, asked for, flags the 5%.
  d = diff_bench_reports(old_r, report({{"p", {result("k", "PASSED", times(100, 1.05))}}}),
                         BenchDiffOptions{0.01, 0.02});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->regression());
}

TEST(BenchDiff, VerdictChanges) {
  const json old_r =
      report({{"p",
               {result("a", "PASSED", times(100, 1)), result("b", "PASSED", times(100, 1)),
                result("c", "FAILED"), result("d", "PASSED", times(100, 1))}}});
  const json new_r = report({{"p",
                              {result("a", "FAILED"), result("b", "UNIMPLEMENTED"),
                               result("c", "PASSED", times(100, 1)), result("e", "FAILED")}},
                             {"q", {result("a", "PASSED", times(100, 1))}}});
  auto d = diff_bench_reports(old_r, new_r);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(change(*d, "a")->kind, "failed");
  EXPECT_EQ(change(*d, "b")->kind, "lost");
  EXPECT_EQ(change(*d, "c")->kind, "fixed");
  EXPECT_EQ(change(*d, "d")->kind, "removed");
  EXPECT_EQ(change(*d, "e")->kind, "failed");  // only in the new report, and FAILED
  int added = 0;
  for (const auto& c : d->changes) added += c.kind == "added";
  EXPECT_EQ(added, 1);  // q/a
  EXPECT_TRUE(d->regression());
  EXPECT_TRUE(d->changes.front().regression());  // regressions first
}

TEST(BenchDiff, WarnsWhereTheRunsAreNotComparable) {
  auto d = diff_bench_reports(report({{"p", {result("k", "PASSED", times(100, 1))}}}, "A"),
                              report({{"p", {result("k", "PASSED", times(100, 1))}}}, "B"));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->warnings.size(), 1u);
  EXPECT_NE(d->warnings[0].find("machine.cpu"), std::string::npos);
  // Three repetitions a side: the smallest p is 1/20, never under 0.01.
  json few = report({{"p", {result("k", "PASSED", {1e-4, 1.1e-4, 1.2e-4})}}});
  d = diff_bench_reports(few, few);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(bench_diff_table(*d).find("too few repetitions"), std::string::npos);
  // Cold caches (--cold) on one side only; a report without the setting was warm.
  json warm = report({{"p", {result("k", "PASSED", times(100, 1))}}});
  json cold = warm;
  cold["settings"]["cold_flush_bytes"] = 64 << 20;
  d = diff_bench_reports(warm, cold);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->warnings.size(), 1u);
  EXPECT_NE(d->warnings[0].find("new run had cold caches"), std::string::npos);
  warm["settings"]["cold_flush_bytes"] = 0;
  d = diff_bench_reports(warm, report({{"p", {result("k", "PASSED", times(100, 1))}}}));
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->warnings.empty());
}

TEST(BenchDiff, BadReportsNameWhatIsWrong) {
  const json good = report({{"p", {result("k", "PASSED", times(100, 1))}}});
  auto d = diff_bench_reports(json{{"cases", json::array()}}, good);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("old report is not a gscheck bench report"), std::string::npos);
  json twice = report({{"p", {result("k", "PASSED"), result("k", "FAILED")}}});
  d = diff_bench_reports(good, twice);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("lists backend 'k' twice"), std::string::npos);
  json bad_sample = good;
  bad_sample["problems"][0]["results"][0]["samples_s"][1] = "fast";
  d = diff_bench_reports(good, bad_sample);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("non-number"), std::string::npos);
}

}  // namespace
}  // namespace gscheck::reports
