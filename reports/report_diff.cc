// `gscheck report diff`: what changed between two runs, matched case by case by name; the diff
// as a table and as JSON.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "reports/combine.h"
#include "reports/spool.h"

namespace gscheck::reports {

using nlohmann::json;

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

// What makes two results the same case: op, semantics, policy, input dtypes and shapes. A
// sweep of a backend claiming other dtypes draws other cases under the same names.
std::string identity(const CaseResult& c) {
  std::string s = c.op ? std::string(op_name(*c.op)) : "?";
  s += "|" + std::string(semantics_name(c.semantics)) + "|" + c.bad_indices_policy;
  for (const InputInfo& in : c.inputs)
    s += "|" + in.name + ":" + std::string(dtype_name(in.dtype)) + in.shape.to_string();
  return s;
}

std::optional<Change> classify(std::optional<Verdict> o, std::optional<Verdict> n) {
  if (!o) return is_failure(*n) ? Change::kNewFailure : Change::kAdded;
  if (!n) return Change::kRemoved;
  if (*o == *n) return std::nullopt;
  const bool of = is_failure(*o), nf = is_failure(*n);
  if (!of && nf) return Change::kNewFailure;
  if (of && !nf) return Change::kFixed;
  const auto absent = [](Verdict v) {
    return v == Verdict::kUnimplemented || v == Verdict::kSkipped;
  };
  if (*o == Verdict::kPassed && absent(*n)) return Change::kLost;
  if (absent(*o) && *n == Verdict::kPassed) return Change::kGained;
  return Change::kChanged;
}

std::string label(const RunInfo& r) {
  return r.backend.name + " (" + r.started_at +
         (r.seed ? ", seed " + std::to_string(*r.seed) : std::string()) + ")";
}

std::string shard_text(const std::optional<Shard>& s) {
  return s ? std::to_string(s->index) + "/" + std::to_string(s->count) : std::string("none");
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

namespace {

// What diffing keeps of an old case until its new counterpart comes: a few words. Its name and
// reason wait in a spool, read back only to confirm a match whose hashes agree and to report a
// removed or fixed case, so `report diff` of two 1e6-case reports holds tens of MB, not GB.
struct OldCase {
  uint64_t name_hash = 0, identity_hash = 0;
  uint64_t seq = 0;  // its place in the old report: removed cases are listed in that order
  Spool::Where name, reason;
  Verdict verdict = Verdict::kPassed;
  bool matched = false;
};

// A new case whose name no old case has: only checked for a second case of the same name.
struct NewOnly {
  uint64_t name_hash = 0;
  Spool::Where name;
};

uint64_t hash_text(std::string_view s) { return std::hash<std::string_view>{}(s); }

// A diff built case by case: every old case first, then the new ones in their order. Names are
// matched exactly: equal hashes only say where to look.
class Differ {
 public:
  Status add_old(const CaseResult& c) {
    if (sealed_) return Error{ErrorClass::kInternal, "report diff: an old case after a new one"};
    auto name = spool_.append(c.name);
    if (!name.ok()) return name.error();
    auto reason = spool_.append(c.reason);
    if (!reason.ok()) return reason.error();
    olds_.push_back({hash_text(c.name), hash_text(identity(c)), olds_.size(), *name, *reason,
                     c.verdict, false});
    old_tally_.add(c);
    return {};
  }

  Status add_new(const CaseResult& c) {
    if (!sealed_) GSCHECK_RETURN_IF_ERROR(seal());
    new_tally_.add(c);
    auto found = find_old(c.name);
    if (!found.ok()) return found.error();
    OldCase* o = *found;
    if (!o) {
      auto name = spool_.append(c.name);
      if (!name.ok()) return name.error();
      new_only_.push_back({hash_text(c.name), *name});
      return add(c.name, nullptr, &c);
    }
    if (o->matched) return duplicate("new", c.name);
    o->matched = true;
    if (o->identity_hash != hash_text(identity(c))) {  // same name, another case: removed + added
      ++redrawn_;
      GSCHECK_RETURN_IF_ERROR(add(c.name + " (old case)", o, nullptr));
      return add(c.name, nullptr, &c);
    }
    return add(c.name, o, &c);
  }

  Expected<ReportDiff> finish(const RunInfo& o, const RunInfo& n);

 private:
  static Error duplicate(const std::string& which, const std::string& name) {
    return invalid_argument("report diff: the " + which + " report has two cases named \"" + name +
                            "\"; cases are matched by name, so names must be unique");
  }

  static bool by_hash(const OldCase& a, const OldCase& b) {
    return std::tie(a.name_hash, a.seq) < std::tie(b.name_hash, b.seq);
  }

  // Among entries sorted by name hash, a name given twice is an error naming it: only names
  // whose hashes agree are read back and compared.
  template <class Entry>
  Status refuse_twice(const std::vector<Entry>& sorted, const std::string& which) {
    for (std::size_t i = 0; i < sorted.size(); ++i)
      for (std::size_t j = i + 1; j < sorted.size() && sorted[j].name_hash == sorted[i].name_hash;
           ++j) {
        auto a = spool_.read(sorted[i].name), b = spool_.read(sorted[j].name);
        if (!a.ok()) return a.error();
        if (!b.ok()) return b.error();
        if (*a == *b) return duplicate(which, *a);
      }
    return {};
  }

  // The old cases are all read: sort them by name hash and refuse a name given twice.
  Status seal() {
    sealed_ = true;
    std::sort(olds_.begin(), olds_.end(), by_hash);
    return refuse_twice(olds_, "old");
  }

  // The old case of this name, or nullptr.
  Expected<OldCase*> find_old(const std::string& name) {
    OldCase key;
    key.name_hash = hash_text(name);
    for (auto it = std::lower_bound(olds_.begin(), olds_.end(), key, by_hash);
         it != olds_.end() && it->name_hash == key.name_hash; ++it) {
      auto text = spool_.read(it->name);
      if (!text.ok()) return text.error();
      if (*text == name) return &*it;
    }
    return static_cast<OldCase*>(nullptr);
  }

  Status add(const std::string& key, const OldCase* a, const CaseResult* b) {
    const auto change = classify(a ? std::optional(a->verdict) : std::nullopt,
                                 b ? std::optional(b->verdict) : std::nullopt);
    if (!change) {
      ++d_.unchanged;
      return {};
    }
    CaseChange c{key, *change, a ? std::optional(a->verdict) : std::nullopt,
                 b ? std::optional(b->verdict) : std::nullopt, ""};
    if (*change == Change::kRemoved || *change == Change::kFixed) {
      auto reason = spool_.read(a->reason);
      if (!reason.ok()) return reason.error();
      c.reason = std::move(*reason);
    } else {
      c.reason = b->reason;
    }
    d_.cases.push_back(std::move(c));
    return {};
  }

  Spool spool_{"report diff"};
  std::vector<OldCase> olds_;
  std::vector<NewOnly> new_only_;
  bool sealed_ = false;
  RunTally old_tally_, new_tally_;
  int64_t redrawn_ = 0;
  ReportDiff d_;
};

Expected<ReportDiff> Differ::finish(const RunInfo& o, const RunInfo& n) {
  if (!sealed_) GSCHECK_RETURN_IF_ERROR(seal());
  // A name twice among the new cases no old case has (twice among matched ones is caught as
  // the second comes).
  std::sort(new_only_.begin(), new_only_.end(),
            [](const NewOnly& a, const NewOnly& b) { return a.name_hash < b.name_hash; });
  GSCHECK_RETURN_IF_ERROR(refuse_twice(new_only_, "new"));
  ReportDiff& d = d_;
  d.old_label = label(o);
  d.new_label = label(n);
  if (o.seed != n.seed)
    d.notes.push_back("the sweeps used different seeds: their generated cases do not match");
  else if (o.sweep != n.sweep || o.sweep_size != n.sweep_size)
    d.notes.push_back("the sweeps differ in count or size: only the common cases match");
  else if (o.sweep_boundary_fraction != n.sweep_boundary_fraction)
    d.notes.push_back(
        "the sweeps differ in boundary fraction: cases with boundary values in either differ");
  else if (o.sweep_large_fraction != n.sweep_large_fraction)
    d.notes.push_back("the sweeps differ in large fraction: large cases in either differ");
  if (o.shard.has_value() || n.shard.has_value())
    d.notes.push_back("a report is one shard (" + shard_text(o.shard) + " vs " +
                      shard_text(n.shard) + "): merge the shards first to compare whole runs");
  std::sort(olds_.begin(), olds_.end(),
            [](const OldCase& a, const OldCase& b) { return a.seq < b.seq; });
  for (const OldCase& c : olds_) {
    if (c.matched) continue;
    auto name = spool_.read(c.name);
    if (!name.ok()) return name.error();
    GSCHECK_RETURN_IF_ERROR(add(*name, &c, nullptr));
  }
  if (redrawn_ > 0)
    d.notes.push_back(std::to_string(redrawn_) +
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
  for (const MatrixRow& m : old_tally_.matrix()) {
    RowChange& rc = rows[key_of(m)];
    rc.old_row = m;
    rc.new_row = MatrixRow{m.op, m.dtype, m.index_dtype, m.bad_indices_policy, {}};
  }
  for (const MatrixRow& m : new_tally_.matrix()) {
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
  return std::move(d_);
}

}  // namespace

Expected<ReportDiff> diff_reports(const Report& old_report, const Report& new_report) {
  Differ differ;
  for (const CaseResult& c : old_report.cases) GSCHECK_RETURN_IF_ERROR(differ.add_old(c));
  for (const CaseResult& c : new_report.cases) GSCHECK_RETURN_IF_ERROR(differ.add_new(c));
  return differ.finish(old_report.run, new_report.run);
}

Expected<ReportDiff> diff_report_files(const std::string& old_path, const std::string& new_path,
                                       int64_t max_bytes) {
  Differ differ;
  RunInfo o, n;
  GSCHECK_RETURN_IF_ERROR(read_report_file(
      old_path, max_bytes, o, [&](CaseResult&& c) -> Status { return differ.add_old(c); }));
  GSCHECK_RETURN_IF_ERROR(read_report_file(
      new_path, max_bytes, n, [&](CaseResult&& c) -> Status { return differ.add_new(c); }));
  return differ.finish(o, n);
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
