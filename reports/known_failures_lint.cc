#include "reports/known_failures_lint.h"

#include <algorithm>
#include <cstdio>

namespace gscheck::reports {

KnownFailuresLint::KnownFailuresLint(const KnownFailures& known)
    : known_(known), use_(known.entries.size()) {
  for (std::size_t i = 0; i < use_.size(); ++i)
    if (known.entries[i].host_dependent)
      use_[i].shown.resize(known.entries[i].host_dependent->shown_by.size());
}

void KnownFailuresLint::add(const CaseResult& r) {
  // Before the lint check: a shown_by file's verdict counts whether or not the case was graded
  // with lint data (a file that did not parse is FAILED here, not "not run").
  if (!r.file.empty()) {
    for (std::size_t i = 0; i < use_.size(); ++i) {
      const auto& h = known_.entries[i].host_dependent;
      if (!h) continue;
      for (std::size_t j = 0; j < h->shown_by.size(); ++j)
        if (names_case_file(h->shown_by[j], r.file)) use_[i].shown[j] = r.verdict;
    }
  }
  if (!r.lint) return;
  const std::optional<DType> dt = data_dtype(r);
  for (std::size_t i : r.lint->selected) {
    if (i >= use_.size()) continue;
    ++use_[i].selected;
    if (r.verdict == Verdict::kXpass && r.known &&
        (", " + r.known->entry + ", ").find(", " + known_.entries[i].id + ", ") !=
            std::string::npos) {
      if (use_[i].xpass++ == 0) use_[i].xpass_example = r.name;
    }
  }
  for (const auto& [i, n] : r.lint->used) {
    if (i >= use_.size()) continue;
    use_[i].differences += n;
    ++use_[i].cases;
    if (dt) use_[i].dtypes.insert(*dt);
  }
  for (const auto& pair : r.lint->overlaps) ++overlaps_[pair];
  for (const auto& [i, kind] : r.lint->absorbed) {
    if (i >= use_.size()) continue;
    if (use_[i].absorbed[kind]++ == 0 && use_[i].absorbed_example.empty())
      use_[i].absorbed_example = r.name;
  }
}

std::vector<std::string> KnownFailuresLint::findings() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < use_.size(); ++i) {
    const KnownFailure& e = known_.entries[i];
    const Use& u = use_[i];
    const std::string who = "entry " + e.id + ": ";
    if (u.differences == 0 && u.xpass == 0 && !not_shown_here(i)) {
      std::string line = who + "explains nothing in this run (its predicate selected " +
                         std::to_string(u.selected) + " cases)";
      // Host-dependent: unused is fine only where its case files show the host agreeing.
      for (std::size_t j = 0; j < u.shown.size(); ++j)
        if (u.shown[j] != Verdict::kPassed)
          line += "; its case file " + e.host_dependent->shown_by[j] +
                  (u.shown[j] ? " was " + std::string(verdict_name(*u.shown[j])) : " was not run");
      out.push_back(line);
    }
    if (!e.dtypes.empty() && u.differences > 0) {
      std::string unused;
      for (DType d : e.dtypes)
        if (!u.dtypes.count(d)) unused += (unused.empty() ? "" : ", ") + std::string(dtype_name(d));
      if (!unused.empty()) out.push_back(who + "lists dtypes no case needed: " + unused);
    }
    if (u.xpass > 0)
      out.push_back(who + std::to_string(u.xpass) + " cases it declares failing passed (XPASS), " +
                    "e.g. " + u.xpass_example);
    for (const auto& [kind, n] : u.absorbed)
      out.push_back(who + "would forgive an injected " + kind + " on " + std::to_string(n) +
                    " case(s), e.g. " + u.absorbed_example);
  }
  for (const auto& [pair, n] : overlaps_)
    out.push_back("entries " + known_.entries[pair.first].id + " and " +
                  known_.entries[pair.second].id + " both explain " + std::to_string(n) +
                  " differences");
  return out;
}

std::string KnownFailuresLint::table() const {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-44s %9s %11s %7s %6s %9s\n", "entry", "selected",
                "differences", "cases", "xpass", "absorbed");
  out += line;
  for (std::size_t i = 0; i < use_.size(); ++i) {
    const Use& u = use_[i];
    int64_t absorbed = 0;
    for (const auto& [kind, n] : u.absorbed) absorbed += n;
    std::snprintf(line, sizeof line, "%-44s %9lld %11lld %7lld %6lld %9lld\n",
                  known_.entries[i].id.c_str(), static_cast<long long>(u.selected),
                  static_cast<long long>(u.differences), static_cast<long long>(u.cases),
                  static_cast<long long>(u.xpass), static_cast<long long>(absorbed));
    out += line;
  }
  for (std::size_t i = 0; i < use_.size(); ++i) {
    if (!not_shown_here(i)) continue;
    const auto& h = *known_.entries[i].host_dependent;
    std::string files;
    for (const std::string& f : h.shown_by) files += (files.empty() ? "" : ", ") + f;
    out += "entry " + known_.entries[i].id + ": host-dependent, not shown on this host (" + files +
           " PASSED): " + h.reason + "\n";
  }
  return out;
}

bool KnownFailuresLint::not_shown_here(std::size_t i) const {
  const Use& u = use_[i];
  return known_.entries[i].host_dependent && u.differences == 0 && u.xpass == 0 &&
         std::all_of(u.shown.begin(), u.shown.end(),
                     [](const std::optional<Verdict>& v) { return v == Verdict::kPassed; });
}

}  // namespace gscheck::reports
