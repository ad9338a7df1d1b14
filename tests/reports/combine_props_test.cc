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
    // The classes that matter most to a vendor's CI: a new failure is a regression.
    if (c.old_verdict == Verdict::kPassed && c.new_verdict == Verdict::kFailed)
      RC_ASSERT(c.change == Change::kNewFailure && is_regression(c.change));
    if (c.old_verdict == Verdict::kFailed && c.new_verdict == Verdict::kPassed)
      RC_ASSERT(c.change == Change::kFixed && !is_regression(c.change));
    if (!c.new_verdict) RC_ASSERT(c.change == Change::kRemoved);
  }
  RC_ASSERT(got == want);
  RC_ASSERT(d->unchanged == unchanged);
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
