// Properties of `report diff` and `report merge` (reports/combine.h) over random reports: a diff
// names exactly the cases whose verdict changed, with both verdicts, however alike the cases
// look otherwise; merging the shards of a run, in any order, gives the run back, and a missing
// or repeated shard is an error.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "reports/combine.h"
#include "reports/report.h"

namespace gscheck::reports {
namespace {

// Cases that agree on everything but name and verdict: only the name may tell them apart.
CaseResult plain_case(std::string name, Verdict v, std::string file = "") {
  CaseResult r;
  r.name = std::move(name);
  r.file = std::move(file);
  r.op = Op::kGather;
  r.inputs = {{"params", DType::kFloat32, Shape{3}}, {"indices", DType::kInt32, Shape{2}}};
  r.backend = "b";
  r.verdict = v;
  r.outcome = "float32 [2]";
  r.reason = std::string(verdict_name(v));
  r.repro = "gscheck eval " + r.name;
  r.runs = 1;
  return r;
}

Report report_of(std::vector<CaseResult> cases) {
  Report r;
  r.run.command = "run";
  r.run.backend.name = "b";
  r.cases = std::move(cases);
  return r;
}

// `report diff`'s category for a case, from docs/report_format.md: `new failure` (a failure
// now, not before, or a new case that fails), `lost` (PASSED before, UNIMPLEMENTED or SKIPPED
// now), `fixed` (a failure before, not now), `gained` (UNIMPLEMENTED or SKIPPED before, PASSED
// now), `changed` (another verdict change), `added` (new, not failing), `removed`.
Change documented_change(std::optional<Verdict> before, std::optional<Verdict> after) {
  if (!after) return Change::kRemoved;
  if (!before) return is_failure(*after) ? Change::kNewFailure : Change::kAdded;
  const auto not_run = [](Verdict v) {
    return v == Verdict::kUnimplemented || v == Verdict::kSkipped;
  };
  if (is_failure(*after) && !is_failure(*before)) return Change::kNewFailure;
  if (*before == Verdict::kPassed && not_run(*after)) return Change::kLost;
  if (is_failure(*before) && !is_failure(*after)) return Change::kFixed;
  if (not_run(*before) && *after == Verdict::kPassed) return Change::kGained;
  return Change::kChanged;
}

Verdict any_verdict() {
  return *rc::gen::elementOf(
      std::vector<Verdict>(std::begin(kAllVerdicts), std::end(kAllVerdicts)));
}

RC_GTEST_PROP(ReportDiffProps, NamesExactlyTheChangedCases, ()) {
  const int n = *rc::gen::inRange(0, 60);
  std::vector<CaseResult> old_cases, new_cases;
  // name -> (old verdict, new verdict); nullopt on the side where the case is missing.
  std::map<std::string, std::pair<std::optional<Verdict>, std::optional<Verdict>>> want;
  int64_t unchanged = 0;
  for (int i = 0; i < n; ++i) {
    const std::string name = "gather/c" + std::to_string(i);
    const Verdict before = any_verdict();
    old_cases.push_back(plain_case(name, before));
    const int fate = *rc::gen::inRange(0, 4);  // 0, 1: kept; 2: verdict drawn; 3: removed
    if (fate == 3) {
      want[name] = {before, std::nullopt};
      continue;
    }
    const Verdict after = fate == 2 ? any_verdict() : before;
    new_cases.push_back(plain_case(name, after));
    if (after == before) {
      ++unchanged;
    } else {
      want[name] = {before, after};
    }
  }
  const int added = *rc::gen::inRange(0, 5);
  for (int i = 0; i < added; ++i) {
    const std::string name = "gather/new" + std::to_string(i);
    const Verdict v = any_verdict();
    new_cases.push_back(plain_case(name, v));
    want[name] = {std::nullopt, v};
  }
  const auto d = diff_reports(report_of(old_cases), report_of(new_cases));
  RC_ASSERT(d.ok());
  std::map<std::string, std::pair<std::optional<Verdict>, std::optional<Verdict>>> got;
  for (const CaseChange& c : d->cases) {
    RC_ASSERT(got.count(c.name) == 0u);  // each case once
    got[c.name] = {c.old_verdict, c.new_verdict};
    RC_ASSERT(c.change == documented_change(c.old_verdict, c.new_verdict));
    RC_ASSERT(is_regression(c.change) ==
              (c.change == Change::kNewFailure || c.change == Change::kLost));
  }
  RC_ASSERT(got == want);
  RC_ASSERT(d->unchanged == unchanged);
  RC_ASSERT(d->regression() == std::any_of(d->cases.begin(), d->cases.end(), [](auto& c) {
              return c.change == Change::kNewFailure || c.change == Change::kLost;
            }));
}

// Every verdict transition, present on both sides or one, has the category docs/report_format.md
// gives it (`report diff`), whichever order the cases come in.
TEST(ReportDiff, EveryTransitionHasItsDocumentedCategory) {
  std::vector<CaseResult> old_cases, new_cases;
  std::map<std::string, Change> want;
  int i = 0;
  for (Verdict before : kAllVerdicts)
    for (Verdict after : kAllVerdicts) {
      if (before == after) continue;
      const std::string name = "gather/t" + std::to_string(i++);
      old_cases.push_back(plain_case(name, before));
      new_cases.push_back(plain_case(name, after));
      want[name] = documented_change(before, after);
    }
  for (Verdict v : kAllVerdicts) {
    const std::string added = "gather/added" + std::to_string(i),
                      gone = "gather/gone" + std::to_string(i);
    ++i;
    new_cases.push_back(plain_case(added, v));
    want[added] = documented_change(std::nullopt, v);
    old_cases.push_back(plain_case(gone, v));
    want[gone] = Change::kRemoved;
  }
  std::reverse(new_cases.begin(), new_cases.end());
  const auto d = diff_reports(report_of(old_cases), report_of(new_cases));
  ASSERT_TRUE(d.ok());
  std::map<std::string, Change> got;
  for (const CaseChange& c : d->cases) got[c.name] = c.change;
  for (const auto& [name, change] : want)
    EXPECT_EQ(change_name(got[name]), change_name(change)) << name;
  EXPECT_EQ(got.size(), want.size());
}

// JUnit's counts are the testcases it holds, suite by suite and in all, for every verdict mix,
// strict or not, finished or interrupted; its failures and errors are the run's failures.
RC_GTEST_PROP(JunitProps, CountsAreTheTestcasesItHolds, ()) {
  const int n = *rc::gen::inRange(0, 40);
  std::vector<CaseResult> cases;
  for (int i = 0; i < n; ++i) {
    CaseResult c = plain_case("c" + std::to_string(i), any_verdict());
    c.op = *rc::gen::element(Op::kGather, Op::kScatterNd);
    cases.push_back(std::move(c));
  }
  Report r = report_of(cases);
  r.run.strict = *rc::gen::arbitrary<bool>();
  if (*rc::gen::arbitrary<bool>()) r.run.interrupted = "SIGINT";
  const std::string x = junit_xml(r);
  auto attr = [](const std::string& tag, const std::string& name) {
    const auto at = tag.find(" " + name + "=\"");
    RC_ASSERT(at != std::string::npos);
    return std::stoll(tag.substr(at + name.size() + 3));
  };
  auto count = [](const std::string& text, const std::string& what) {
    int64_t k = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++k;
    return k;
  };
  int64_t suites_tests = 0, suites_bad = 0;
  for (auto at = x.find("<testsuite "); at != std::string::npos; at = x.find("<testsuite ", at)) {
    const auto end = x.find("</testsuite>", at);
    RC_ASSERT(end != std::string::npos);
    const std::string tag = x.substr(at, x.find('>', at) - at), body = x.substr(at, end - at);
    RC_ASSERT(attr(tag, "tests") == count(body, "<testcase "));
    RC_ASSERT(attr(tag, "failures") == count(body, "<failure "));
    RC_ASSERT(attr(tag, "errors") == count(body, "<error "));
    RC_ASSERT(attr(tag, "skipped") == count(body, "<skipped "));
    suites_tests += attr(tag, "tests");
    suites_bad += attr(tag, "failures") + attr(tag, "errors");
    at = end;
  }
  const std::string root = x.substr(x.find("<testsuites "),
                                    x.find('>', x.find("<testsuites ")) - x.find("<testsuites "));
  RC_ASSERT(attr(root, "tests") == count(x, "<testcase "));
  RC_ASSERT(attr(root, "tests") == suites_tests);
  RC_ASSERT(attr(root, "failures") == count(x, "<failure "));
  RC_ASSERT(attr(root, "errors") == count(x, "<error "));
  RC_ASSERT(attr(root, "skipped") == count(x, "<skipped "));
  const auto failing = std::count_if(cases.begin(), cases.end(), [&](const CaseResult& c) {
    return is_failure(c.verdict, r.run.strict);
  });
  RC_ASSERT(attr(root, "failures") + attr(root, "errors") ==
            failing + (r.run.interrupted.empty() ? 0 : 1));
  RC_ASSERT(suites_bad == attr(root, "failures") + attr(root, "errors"));
}

// A run of `files` case files and `sweep` sweep positions, and its shard k of count.
Report run_part(int files, int sweep, std::optional<Shard> shard) {
  Report r = report_of({});
  r.run.seed = 7;
  r.run.sweep = sweep;
  r.run.shard = shard;
  auto mine = [&](int64_t pos) { return !shard || pos % shard->count == shard->index - 1; };
  for (int i = 0; i < files; ++i)
    if (mine(i)) {
      const std::string name = "gather/f" + std::to_string(i);
      r.cases.push_back(plain_case(name, Verdict::kPassed, "corpus/" + name + ".json"));
    }
  for (int p = 0; p < sweep; ++p)
    if (mine(p))
      r.cases.push_back(plain_case("sweep/7/" + std::to_string(p) + "/gather", Verdict::kFailed));
  return r;
}

std::vector<std::string> names(const Report& r) {
  std::vector<std::string> v;
  for (const auto& c : r.cases) v.push_back(c.name);
  return v;
}

RC_GTEST_PROP(ReportMergeProps, ShardsInAnyOrderGiveTheRunBack, ()) {
  const int files = *rc::gen::inRange(0, 30), sweep = *rc::gen::inRange(0, 40);
  const int count = *rc::gen::inRange(1, 9);
  std::vector<MergeInput> inputs;
  for (int k = 1; k <= count; ++k)
    inputs.push_back(
        {"shard" + std::to_string(k) + ".json", run_part(files, sweep, Shard{k, count})});
  std::vector<MergeInput> shuffled = inputs;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(*rc::gen::arbitrary<uint32_t>()));
  const auto merged = merge_reports(shuffled, false);
  RC_ASSERT(merged.ok());
  RC_ASSERT(names(*merged) == names(run_part(files, sweep, std::nullopt)));
  RC_ASSERT(!merged->run.shard.has_value());
  if (count > 1) {
    // Any shard left out, or given twice, is an error rather than a smaller report.
    const auto drop = static_cast<std::size_t>(*rc::gen::inRange(0, count));
    std::vector<MergeInput> missing = shuffled;
    missing.erase(missing.begin() + static_cast<std::ptrdiff_t>(drop));
    RC_ASSERT(!merge_reports(missing, false).ok());
    std::vector<MergeInput> twice = shuffled;
    twice[drop] = shuffled[(drop + 1) % shuffled.size()];
    RC_ASSERT(!merge_reports(twice, false).ok());
  }
}

}  // namespace
}  // namespace gscheck::reports
