#include "reports/combine.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

namespace gscheck::reports {
namespace {

using nlohmann::json;

// The sweep position in a generated case's name, "sweep/<seed>/<i>/<op>".
std::optional<int64_t> sweep_position(const std::string& name) {
  if (!name.starts_with("sweep/")) return std::nullopt;
  const auto a = name.find('/', 6);
  if (a == std::string::npos) return std::nullopt;
  const auto b = name.find('/', a + 1);
  int64_t i = 0;
  const char* first = name.data() + a + 1;
  const char* last = name.data() + (b == std::string::npos ? name.size() : b);
  auto [p, ec] = std::from_chars(first, last, i);
  if (ec != std::errc() || p != last) return std::nullopt;
  return i;
}

std::string shard_text(const std::optional<Shard>& s) {
  return s ? std::to_string(s->index) + "/" + std::to_string(s->count) : std::string("none");
}

// Why two parts are not shards of one run ("" when they are compatible).
std::string mismatch(const MergeInput& a, const MergeInput& b) {
  const RunInfo &x = a.report.run, &y = b.report.run;
  auto differ = [&](const std::string& what, const std::string& u, const std::string& v) {
    return a.path + " and " + b.path + " differ in " + what + " (" + u + " vs " + v + ")";
  };
  auto seed = [](const RunInfo& r) { return r.seed ? std::to_string(*r.seed) : "none"; };
  if (x.command != y.command) return differ("command", x.command, y.command);
  if (x.backend.name != y.backend.name) return differ("backend", x.backend.name, y.backend.name);
  if (seed(x) != seed(y)) return differ("seed", seed(x), seed(y));
  if (x.sweep_size != y.sweep_size)
    return differ("sweep size", std::to_string(x.sweep_size), std::to_string(y.sweep_size));
  if (x.sweep_boundary_fraction != y.sweep_boundary_fraction)
    return differ("sweep boundary fraction", std::to_string(x.sweep_boundary_fraction),
                  std::to_string(y.sweep_boundary_fraction));
  if (x.shard.has_value() != y.shard.has_value() || (x.shard && x.shard->count != y.shard->count))
    return differ("shard count", shard_text(x.shard), shard_text(y.shard));
  // XFAIL/XPASS verdicts depend on the known-failures file, and whether XPASS fails on --strict.
  auto file = [](const std::string& f) { return f.empty() ? std::string("none") : f; };
  if (x.known_failures != y.known_failures)
    return differ("known failures", file(x.known_failures), file(y.known_failures));
  if (x.strict != y.strict)
    return differ("--strict", x.strict ? "yes" : "no", y.strict ? "yes" : "no");
  return "";
}

}  // namespace

Expected<Report> merge_reports(std::vector<MergeInput> inputs, bool force) {
  if (inputs.empty()) return invalid_argument("report merge: no reports to merge");
  bool shards = !force || std::all_of(inputs.begin(), inputs.end(), [&](const MergeInput& in) {
    return mismatch(inputs.front(), in).empty() && in.report.run.shard;
  });
  if (!force) {
    for (const MergeInput& in : inputs) {
      const std::string why = mismatch(inputs.front(), in);
      if (!why.empty())
        return invalid_argument("report merge: " + why + "; these are not shards of one run " +
                                "(--force merges them anyway, in argument order)");
    }
    if (const auto& s = inputs.front().report.run.shard) {
      std::map<int64_t, std::string> seen;
      for (const MergeInput& in : inputs) {
        auto [pos, fresh] = seen.emplace(in.report.run.shard->index, in.path);
        if (!fresh)
          return invalid_argument("report merge: " + pos->second + " and " + in.path +
                                  " are both shard " + shard_text(in.report.run.shard));
      }
      std::string missing;
      for (int64_t k = 1; k <= s->count; ++k)
        if (!seen.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
      if (!missing.empty())
        return invalid_argument("report merge: shard(s) " + missing + " of " +
                                std::to_string(s->count) +
                                " missing (--force merges what is there)");
    } else if (inputs.size() > 1) {
      return invalid_argument("report merge: " + inputs.front().path +
                              " is not a shard (--shard K/N): merging whole runs of the same "
                              "seed would count each case twice (--force merges them anyway)");
    }
  }

  Report out;
  RunInfo& run = out.run;
  run = inputs.front().report.run;
  run.shard.reset();
  run.merged_from.clear();
  run.elapsed_s = 0;
  run.sweep_elapsed_s = 0;
  run.sweep = 0;
  run.interrupted.clear();
  for (const MergeInput& in : inputs) {
    run.merged_from.push_back(in.path);
    // A part that did not finish leaves the merged run unfinished too (its JUnit says so).
    if (!in.report.run.interrupted.empty())
      run.interrupted +=
          (run.interrupted.empty() ? "" : "; ") + in.path + ": " + in.report.run.interrupted;
    // Shards run side by side: the merged run took as long as the slowest.
    run.elapsed_s = std::max(run.elapsed_s, in.report.run.elapsed_s);
    run.sweep_elapsed_s = std::max(run.sweep_elapsed_s, in.report.run.sweep_elapsed_s);
    run.sweep = std::max(run.sweep, in.report.run.sweep);
    run.started_at = std::min(run.started_at, in.report.run.started_at);
  }
  if (!shards) {
    for (MergeInput& in : inputs)
      for (CaseResult& c : in.report.cases) out.cases.push_back(std::move(c));
    return out;
  }
  // The unsharded run's order: case files by their position in the whole list, then the sweep
  // by position. Shard k of n got file positions m*n + k-1 (m-th file it ran) and sweep
  // positions p with p % n == k-1.
  using Key = std::tuple<int, int64_t>;
  std::vector<std::pair<Key, CaseResult>> keyed;
  for (MergeInput& in : inputs) {
    const Shard s = *in.report.run.shard;
    int64_t m_file = 0, m_sweep = 0;
    for (CaseResult& c : in.report.cases) {
      const bool generated = c.file.empty();
      int64_t& m = generated ? m_sweep : m_file;
      int64_t pos = m * s.count + (s.index - 1);
      ++m;
      if (generated)
        if (auto p = sweep_position(c.name)) pos = *p;
      keyed.emplace_back(Key{generated ? 1 : 0, pos}, std::move(c));
    }
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [key, c] : keyed) out.cases.push_back(std::move(c));
  return out;
}

std::string_view change_name(Change c) {
  switch (c) {
    case Change::kNewFailure:
      return "new failure";
    case Change::kLost:
      return "lost";
    case Change::kFixed:
      return "fixed";
    case Change::kGained:
      return "gained";
    case Change::kChanged:
      return "changed";
    case Change::kAdded:
      return "added";
    case Change::kRemoved:
      return "removed";
  }
  return "?";
}

bool is_regression(Change c) { return c == Change::kNewFailure || c == Change::kLost; }

bool ReportDiff::regression() const {
  return std::any_of(cases.begin(), cases.end(),
                     [](const CaseChange& c) { return is_regression(c.change); });
}

namespace {

// Cases by name; a repeated name gets "#2", "#3", ... in order.
// The cases by name, in report order. Names are how two runs' cases are matched: a name given
// twice is an error naming it (a silent "#2" suffix could collide with a real name).
Expected<std::map<std::string, const CaseResult*>> by_name(const Report& r,
                                                           const std::string& which,
                                                           std::vector<std::string>* order) {
  std::map<std::string, const CaseResult*> out;
  for (const CaseResult& c : r.cases) {
    if (!out.emplace(c.name, &c).second)
      return invalid_argument("report diff: the " + which + " report has two cases named \"" +
                              c.name + "\"; cases are matched by name, so names must be unique");
    if (order) order->push_back(c.name);
  }
  return out;
}

// What makes two results the same case: op, semantics, policy, input dtypes and shapes. A
// sweep of a backend claiming other dtypes draws other cases under the same names.
std::string identity(const CaseResult& c) {
  std::string s = c.op ? std::string(op_name(*c.op)) : "?";
  s += "|" + std::string(semantics_name(c.semantics)) + "|" + c.bad_indices_policy;
  for (const InputInfo& in : c.inputs)
    s += "|" + in.name + ":" + std::string(dtype_name(in.dtype)) + in.shape.to_string();
  return s;
}

std::optional<Change> classify(const CaseResult* o, const CaseResult* n) {
  if (!o) return is_failure(n->verdict) ? Change::kNewFailure : Change::kAdded;
  if (!n) return Change::kRemoved;
  if (o->verdict == n->verdict) return std::nullopt;
  const bool of = is_failure(o->verdict), nf = is_failure(n->verdict);
  if (!of && nf) return Change::kNewFailure;
  if (of && !nf) return Change::kFixed;
  const auto absent = [](Verdict v) {
    return v == Verdict::kUnimplemented || v == Verdict::kSkipped;
  };
  if (o->verdict == Verdict::kPassed && absent(n->verdict)) return Change::kLost;
  if (absent(o->verdict) && n->verdict == Verdict::kPassed) return Change::kGained;
  return Change::kChanged;
}

std::string label(const Report& r) {
  return r.run.backend.name + " (" + r.run.started_at +
         (r.run.seed ? ", seed " + std::to_string(*r.run.seed) : std::string()) + ")";
}

int64_t count(const std::map<Verdict, int64_t>& m, Verdict v) {
  auto it = m.find(v);
  return it == m.end() ? 0 : it->second;
}

int64_t failures(const std::map<Verdict, int64_t>& m) {
  int64_t n = 0;
  for (const auto& [v, k] : m)
    if (is_failure(v)) n += k;
  return n;
}

std::string verdict_text(const std::optional<Verdict>& v) {
  return v ? std::string(verdict_name(*v)) : std::string("-");
}

std::string row_text(const MatrixRow& m) {
  auto dt = [](const std::optional<DType>& d) {
    return d ? std::string(dtype_name(*d)) : std::string("-");
  };
  return (m.op ? std::string(op_name(*m.op)) : std::string("(unparsed)")) + " " + dt(m.dtype) +
         " " + dt(m.index_dtype) + " " +
         (m.bad_indices_policy.empty() ? std::string("-") : m.bad_indices_policy);
}

std::string counts_text(const std::map<Verdict, int64_t>& m) {
  std::string s;
  for (Verdict v : kAllVerdicts)
    if (int64_t k = count(m, v)) {
      std::string name(verdict_name(v));
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      s += (s.empty() ? "" : " ") + std::to_string(k) + " " + name;
    }
  return s.empty() ? "none" : s;
}

json counts_json(const std::map<Verdict, int64_t>& m) {
  json j = json::object();
  for (Verdict v : kAllVerdicts) j[std::string(verdict_name(v))] = count(m, v);
  return j;
}

}  // namespace

Expected<ReportDiff> diff_reports(const Report& old_report, const Report& new_report) {
  ReportDiff d;
  d.old_label = label(old_report);
  d.new_label = label(new_report);
  const RunInfo &o = old_report.run, &n = new_report.run;
  if (o.seed != n.seed)
    d.notes.push_back("the sweeps used different seeds: their generated cases do not match");
  else if (o.sweep != n.sweep || o.sweep_size != n.sweep_size)
    d.notes.push_back("the sweeps differ in count or size: only the common cases match");
  else if (o.sweep_boundary_fraction != n.sweep_boundary_fraction)
    d.notes.push_back(
        "the sweeps differ in boundary fraction: cases with boundary values in either differ");
  if (o.shard.has_value() || n.shard.has_value())
    d.notes.push_back("a report is one shard (" + shard_text(o.shard) + " vs " +
                      shard_text(n.shard) + "): merge the shards first to compare whole runs");

  std::vector<std::string> order_old, order_new;
  auto olds_or = by_name(old_report, "old", &order_old);
  if (!olds_or.ok()) return olds_or.error();
  auto news_or = by_name(new_report, "new", &order_new);
  if (!news_or.ok()) return news_or.error();
  const auto& olds = *olds_or;
  const auto& news = *news_or;
  auto add = [&](const std::string& key, const CaseResult* a, const CaseResult* b) {
    const auto change = classify(a, b);
    if (!change) {
      ++d.unchanged;
      return;
    }
    CaseChange c{key, *change, a ? std::optional(a->verdict) : std::nullopt,
                 b ? std::optional(b->verdict) : std::nullopt, ""};
    const CaseResult* why = (*change == Change::kRemoved || *change == Change::kFixed) ? a : b;
    c.reason = why->reason;
    d.cases.push_back(std::move(c));
  };
  int64_t redrawn = 0;
  for (const std::string& key : order_new) {
    auto it = olds.find(key);
    const CaseResult* o = it == olds.end() ? nullptr : it->second;
    const CaseResult* nw = news.at(key);
    if (o && identity(*o) != identity(*nw)) {  // same name, another case: removed + added
      ++redrawn;
      add(key + " (old case)", o, nullptr);
      add(key, nullptr, nw);
      continue;
    }
    add(key, o, nw);
  }
  for (const std::string& key : order_old)
    if (!news.count(key)) add(key, olds.at(key), nullptr);
  if (redrawn > 0)
    d.notes.push_back(std::to_string(redrawn) +
                      " cases have the same name but other inputs (the backends claim other "
                      "dtypes or ops, so the sweep drew other cases): each counts as removed "
                      "and added");
  std::stable_sort(d.cases.begin(), d.cases.end(), [](const CaseChange& a, const CaseChange& b) {
    return static_cast<int>(a.change) < static_cast<int>(b.change);
  });

  // Matrix rows, matched by (op, dtype, index dtype, policy).
  using Key = std::tuple<int, int, int, std::string>;
  auto key_of = [](const MatrixRow& m) {
    auto rank = [](auto v) { return v ? static_cast<int>(*v) : 1000; };
    return Key{rank(m.op), rank(m.dtype), rank(m.index_dtype), m.bad_indices_policy};
  };
  std::map<Key, RowChange> rows;
  for (const MatrixRow& m : capability_matrix(old_report)) {
    RowChange& rc = rows[key_of(m)];
    rc.old_row = m;
    rc.new_row = MatrixRow{m.op, m.dtype, m.index_dtype, m.bad_indices_policy, {}};
  }
  for (const MatrixRow& m : capability_matrix(new_report)) {
    auto [it, fresh] = rows.try_emplace(key_of(m));
    if (fresh)
      it->second.old_row = MatrixRow{m.op, m.dtype, m.index_dtype, m.bad_indices_policy, {}};
    it->second.new_row = m;
  }
  for (auto& entry : rows) {
    RowChange& rc = entry.second;  // a reference, not a binding: lambdas capture it (clang 14)
    auto same = [&] {
      for (Verdict v : kAllVerdicts)
        if (count(rc.old_row.counts, v) != count(rc.new_row.counts, v)) return false;
      return true;
    };
    if (same()) continue;
    rc.regression =
        failures(rc.new_row.counts) > failures(rc.old_row.counts) ||
        count(rc.new_row.counts, Verdict::kPassed) < count(rc.old_row.counts, Verdict::kPassed);
    d.rows.push_back(std::move(rc));
  }
  return d;
}

std::string diff_table(const ReportDiff& d, std::size_t max_cases) {
  std::string out = "old: " + d.old_label + "\nnew: " + d.new_label + "\n";
  for (const std::string& note : d.notes) out += "note: " + note + "\n";
  std::map<Change, int64_t> per;
  for (const CaseChange& c : d.cases) ++per[c.change];
  out += std::to_string(d.unchanged) + " cases unchanged";
  for (const auto& [change, k] : per)
    out += ", " + std::to_string(k) + " " + std::string(change_name(change));
  out += "\n";
  if (!d.cases.empty()) {
    char line[512];
    std::snprintf(line, sizeof line, "\n%-12s %-17s %-17s %s\n", "change", "old", "new", "case");
    out += line;
    std::size_t shown = 0;
    for (const CaseChange& c : d.cases) {
      if (shown++ == max_cases) {
        out += "... " + std::to_string(d.cases.size() - max_cases) + " more (see --json)\n";
        break;
      }
      std::snprintf(line, sizeof line, "%-12s %-17s %-17s %s\n",
                    std::string(change_name(c.change)).c_str(), verdict_text(c.old_verdict).c_str(),
                    verdict_text(c.new_verdict).c_str(), c.name.c_str());
      out += line;
      if (!c.reason.empty() && c.change != Change::kAdded && c.change != Change::kRemoved)
        out += "             " + c.reason + "\n";
    }
  }
  if (!d.rows.empty()) {
    out += "\nmatrix rows that changed (op dtype index policy: old -> new)\n";
    for (const RowChange& r : d.rows)
      out += std::string(r.regression ? "REGRESSED " : "          ") + row_text(r.new_row) + ": " +
             counts_text(r.old_row.counts) + " -> " + counts_text(r.new_row.counts) + "\n";
  }
  out += d.regression() ? "verdict: REGRESSION\n" : "verdict: no regression\n";
  return out;
}

json diff_to_json(const ReportDiff& d) {
  json cases = json::array();
  for (const CaseChange& c : d.cases)
    cases.push_back(
        {{"name", c.name},
         {"change", std::string(change_name(c.change))},
         {"regression", is_regression(c.change)},
         {"old", c.old_verdict ? json(std::string(verdict_name(*c.old_verdict))) : json(nullptr)},
         {"new", c.new_verdict ? json(std::string(verdict_name(*c.new_verdict))) : json(nullptr)},
         {"reason", c.reason}});
  json rows = json::array();
  for (const RowChange& r : d.rows) {
    auto dt = [](const std::optional<DType>& x) {
      return x ? json(std::string(dtype_name(*x))) : json(nullptr);
    };
    const MatrixRow& m = r.new_row;
    rows.push_back({{"op", m.op ? json(std::string(op_name(*m.op))) : json(nullptr)},
                    {"dtype", dt(m.dtype)},
                    {"index_dtype", dt(m.index_dtype)},
                    {"bad_indices_policy", m.bad_indices_policy},
                    {"old", counts_json(r.old_row.counts)},
                    {"new", counts_json(r.new_row.counts)},
                    {"regression", r.regression}});
  }
  json summary = json::object();
  summary["unchanged"] = d.unchanged;
  for (Change c : {Change::kNewFailure, Change::kLost, Change::kFixed, Change::kGained,
                   Change::kChanged, Change::kAdded, Change::kRemoved})
    summary[std::string(change_name(c))] = std::count_if(
        d.cases.begin(), d.cases.end(), [&](const CaseChange& x) { return x.change == c; });
  return {{"gscheck_report_diff", 1},
          {"old", d.old_label},
          {"new", d.new_label},
          {"notes", d.notes},
          {"regression", d.regression()},
          {"summary", summary},
          {"cases", cases},
          {"matrix", rows}};
}

}  // namespace gscheck::reports
