#include "reports/report.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <tuple>
#include <type_traits>

#include "core/case_json.h"
#include "core/message_regex.h"
#include "reports/atomic_file.h"

#ifndef GSCHECK_VERSION
#define GSCHECK_VERSION "unknown"
#endif
#ifndef GSCHECK_GIT_COMMIT
#define GSCHECK_GIT_COMMIT ""
#endif

namespace gscheck::reports {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 9> kVerdictNames = {
    "PASSED",  "FAILED", "MISTRUSTED", "UNIMPLEMENTED", "NONDETERMINISTIC",
    "SKIPPED", "XFAIL",  "XPASS",      "DECLINED"};
static_assert(kVerdictNames.size() == std::size(kAllVerdicts));

template <class T, class Name>
json names(const std::vector<T>& values, Name name) {
  json out = json::array();
  for (const T& v : values) out.push_back(std::string(name(v)));
  return out;
}

json verdict_counts(const std::map<Verdict, int64_t>& counts) {
  json j = json::object();
  for (Verdict v : kAllVerdicts) {
    auto it = counts.find(v);
    j[std::string(verdict_name(v))] = it == counts.end() ? 0 : it->second;
  }
  return j;
}

json check_to_json(const Check& c) {
  json mismatches = json::array();
  for (const auto& m : c.result.mismatches)
    mismatches.push_back({{"index", m.index}, {"expected", m.expected}, {"got", m.got}});
  return {{"against", c.against},
          {"pass", c.result.pass},
          {"summary", c.result.summary},
          {"mismatch_count", c.result.mismatch_count},
          {"mismatches", std::move(mismatches)}};
}

json case_to_json(const CaseResult& r) {
  json inputs = json::object();
  for (const auto& in : r.inputs)
    inputs[in.name] = {{"dtype", std::string(dtype_name(in.dtype))}, {"shape", in.shape.dims()}};
  json checks = json::array();
  for (const auto& c : r.checks) checks.push_back(check_to_json(c));
  json j = {{"name", r.name},
            {"file", r.file.empty() ? json(nullptr) : json(r.file)},
            {"op", r.op ? json(std::string(op_name(*r.op))) : json(nullptr)},
            {"semantics", std::string(semantics_name(r.semantics))},
            {"api", std::string(api_name(r.api))},
            {"inputs", std::move(inputs)},
            {"bad_indices_policy", r.bad_indices_policy},
            {"backend", r.backend},
            {"verdict", std::string(verdict_name(r.verdict))},
            {"outcome", r.outcome},
            {"reason", r.reason},
            {"checks", std::move(checks)},
            {"elapsed_ms", r.elapsed_ms},
            {"repro", r.repro},
            {"runs", r.runs},
            {"differing_runs", r.differing_runs}};
  auto groups = [](const std::vector<CaseResult::Differences>& list) {
    json out = json::array();
    for (const auto& d : list) {
      json g = {{"count", d.count}, {"example", d.example}};
      if (!d.entry.empty()) g["entry"] = d.entry;
      out.push_back(std::move(g));
    }
    return out;
  };
  if (!r.explained.empty() || !r.unexplained.empty())
    j["differences"] = {{"explained", groups(r.explained)}, {"unexplained", groups(r.unexplained)}};
  if (r.known)
    j["known_failure"] = {{"verdict", std::string(verdict_name(r.known->verdict))},
                          {"entry", r.known->entry},
                          {"reason", r.known->reason},
                          {"link", r.known->link}};
  return j;
}

json matrix_to_json(const RunTally& t) {
  json rows = json::array();
  for (const MatrixRow& m : t.matrix()) {
    auto dt = [](const std::optional<DType>& d) {
      return d ? json(std::string(dtype_name(*d))) : json(nullptr);
    };
    rows.push_back({{"op", m.op ? json(std::string(op_name(*m.op))) : json(nullptr)},
                    {"dtype", dt(m.dtype)},
                    {"index_dtype", dt(m.index_dtype)},
                    {"bad_indices_policy", m.bad_indices_policy},
                    {"counts", verdict_counts(m.counts)}});
  }
  return rows;
}

const InputInfo* find_input(const CaseResult& r, std::string_view name) {
  for (const auto& in : r.inputs)
    if (in.name == name) return &in;
  return nullptr;
}

int64_t count_of(const std::map<Verdict, int64_t>& counts, Verdict v) {
  auto it = counts.find(v);
  return it == counts.end() ? 0 : it->second;
}

Status write_text(const std::string& path, const std::string& text) {
  return write_file_atomically(path, text);
}
}  // namespace

json case_result_to_json(const CaseResult& r) { return case_to_json(r); }

std::string_view verdict_name(Verdict v) { return kVerdictNames[static_cast<std::size_t>(v)]; }

std::optional<Verdict> verdict_from_name(std::string_view name) {
  for (Verdict v : kAllVerdicts)
    if (verdict_name(v) == name) return v;
  return std::nullopt;
}

bool is_failure(Verdict v, bool strict) {
  return v == Verdict::kFailed || v == Verdict::kMistrusted || v == Verdict::kNondeterministic ||
         v == Verdict::kDeclined || (strict && v == Verdict::kXpass);
}

std::optional<DType> data_dtype(const CaseResult& r) {
  for (const char* name : {"params", "tensor", "updates"})
    if (const InputInfo* in = find_input(r, name)) return in->dtype;
  return std::nullopt;
}

std::optional<DType> index_dtype(const CaseResult& r) {
  if (const InputInfo* in = find_input(r, "indices")) return in->dtype;
  return std::nullopt;
}

void describe_case(const Case& c, CaseResult& r) {
  r.name = c.name;
  r.op = c.op;
  r.semantics = c.semantics;
  r.api = c.api;
  r.inputs.clear();
  r.bad_indices_policy = c.bad_indices_policy;
  const std::pair<const char*, const std::optional<Tensor>*> inputs[] = {
      {"params", &c.params},   {"tensor", &c.tensor}, {"indices", &c.indices},
      {"updates", &c.updates}, {"shape", &c.shape},   {"axis", &c.axis}};
  for (const auto& [name, t] : inputs)
    if (*t) r.inputs.push_back({name, (*t)->dtype(), (*t)->shape()});
}

std::string outcome_summary(const Outcome& o) {
  if (o.ok()) return std::string(dtype_name(o->dtype())) + " " + o->shape().to_string();
  // A message can quote a whole input (a 100 KB policy): one line of a report stays readable.
  return "error " + std::string(error_class_name(o.error().cls)) + ": " +
         excerpt(o.error().message, 2000);
}

int64_t Totals::failures(bool strict) const {
  int64_t n = 0;
  for (const auto& [v, count] : all)
    if (is_failure(v, strict)) n += count;
  return n;
}

void RunTally::add(const CaseResult& c) {
  ++cases_;
  ++totals_.all[c.verdict];
  ++totals_.per_op[c.op ? std::string(op_name(*c.op)) : std::string()][c.verdict];
  // Sort key: parsed before unparsed, then the enums' declaration order, then the policy text.
  auto rank = [](auto v) { return v ? static_cast<int>(*v) : -1; };
  const std::optional<DType> dt = data_dtype(c), it = index_dtype(c);
  const std::string policy(matrix_policy(c.bad_indices_policy));
  const Key key{!c.op.has_value(), rank(c.op), rank(dt), rank(it), policy};
  auto [pos, inserted] = rows_.try_emplace(key);
  if (inserted) pos->second = MatrixRow{c.op, dt, it, policy, {}};
  ++pos->second.counts[c.verdict];
}

std::vector<MatrixRow> RunTally::matrix() const {
  std::vector<MatrixRow> out;
  out.reserve(rows_.size());
  for (const auto& [key, row] : rows_) out.push_back(row);
  return out;
}

RunTally tally(const Report& r) {
  RunTally t;
  for (const auto& c : r.cases) t.add(c);
  return t;
}

Totals totals(const Report& r) { return tally(r).totals(); }

std::string_view matrix_policy(std::string_view bad_indices_policy) {
  // As given ("" and "DEFAULT" stay apart: the matrix shows what the cases said).
  return bad_indices_policy_from_name(bad_indices_policy) ? bad_indices_policy : "other";
}

std::vector<MatrixRow> capability_matrix(const Report& r) { return tally(r).matrix(); }

std::string matrix_table(const Report& r) { return matrix_table(tally(r)); }

std::string matrix_table(const RunTally& t) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-26s %-10s %-6s %-8s %7s %7s %10s %13s %8s %16s %7s %5s %5s\n",
                "op", "dtype", "index", "policy", "passed", "failed", "mistrusted", "unimplemented",
                "declined", "nondeterministic", "skipped", "xfail", "xpass");
  out += line;
  for (const MatrixRow& m : t.matrix()) {
    auto dt = [](const std::optional<DType>& d) {
      return d ? std::string(dtype_name(*d)) : std::string("-");
    };
    auto n = [&](Verdict v) { return static_cast<long long>(count_of(m.counts, v)); };
    std::snprintf(
        line, sizeof line,
        "%-26s %-10s %-6s %-8s %7lld %7lld %10lld %13lld %8lld %16lld %7lld %5lld %5lld\n",
        m.op ? std::string(op_name(*m.op)).c_str() : "(unparsed)", dt(m.dtype).c_str(),
        dt(m.index_dtype).c_str(),
        m.bad_indices_policy.empty() ? "-" : m.bad_indices_policy.c_str(), n(Verdict::kPassed),
        n(Verdict::kFailed), n(Verdict::kMistrusted), n(Verdict::kUnimplemented),
        n(Verdict::kDeclined), n(Verdict::kNondeterministic), n(Verdict::kSkipped),
        n(Verdict::kXfail), n(Verdict::kXpass));
    out += line;
  }
  return out;
}

std::string_view tool_version() { return GSCHECK_VERSION; }
std::string_view git_commit() { return GSCHECK_GIT_COMMIT; }

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json report_head_json(const RunInfo& run, const RunTally& tally) {
  const Capabilities& caps = run.backend;
  const Totals& t = tally.totals();
  json per_op = json::object();
  for (const auto& [op, counts] : t.per_op)
    per_op[op.empty() ? "unparsed" : op] = verdict_counts(counts);
  json totals_json = verdict_counts(t.all);
  totals_json["cases"] = tally.cases();
  return {
      {"gscheck_report", 1},
      {"tool",
       {{"name", "gscheck"},
        {"version", std::string(tool_version())},
        {"git_commit", git_commit().empty() ? json(nullptr) : json(std::string(git_commit()))}}},
      {"command", run.command},
      {"argv", run.argv},
      {"started_at", run.started_at},
      {"elapsed_s", run.elapsed_s},
      {"known_failures", run.known_failures.empty() ? json(nullptr) : json(run.known_failures)},
      {"strict", run.strict},
      {"seed", run.seed ? json(*run.seed) : json(nullptr)},
      {"sweep", run.sweep},
      {"sweep_size", run.sweep_size},
      {"sweep_boundary_fraction", run.sweep_boundary_fraction},
      {"shard",
       run.shard ? json{{"index", run.shard->index}, {"count", run.shard->count}} : json(nullptr)},
      {"time_budget_s", run.time_budget_s ? json(*run.time_budget_s) : json(nullptr)},
      {"sweep_elapsed_s", run.sweep_elapsed_s},
      {"merged_from", run.merged_from},
      {"backend",
       {{"name", caps.name},
        {"ops", names(caps.ops, op_name)},
        {"dtypes", names(caps.dtypes, dtype_name)},
        {"index_dtypes", names(caps.index_dtypes, dtype_name)},
        {"semantics", names(caps.semantics, semantics_name)},
        {"apis", names(caps.apis, api_name)},
        {"deterministic", caps.deterministic},
        {"tf_messages", caps.tf_messages},
        {"tf_bad_index_messages", caps.tf_bad_index_messages},
        {"accumulates_half_in_float", caps.accumulates_half_in_float},
        {"containment", caps.containment.empty() ? json(nullptr) : json(caps.containment)}}},
      {"totals", std::move(totals_json)},
      {"per_op", std::move(per_op)},
      {"matrix", matrix_to_json(tally)},
      {"interrupted", run.interrupted.empty() ? json(nullptr) : json(run.interrupted)},
      {"cases", json::array()},
  };
}

json report_to_json(const Report& r) {
  json j = report_head_json(r.run, tally(r));
  json cases = json::array();
  for (const auto& c : r.cases) cases.push_back(case_to_json(c));
  j["cases"] = std::move(cases);
  return j;
}

std::string summary_table(const Report& r) { return summary_table(tally(r)); }

std::string summary_table(const RunTally& tally) {
  const Totals& t = tally.totals();
  std::string out;
  char line[192];
  std::snprintf(line, sizeof line, "%-26s %8s %8s %10s %13s %8s %16s %8s %6s %6s\n", "op", "passed",
                "failed", "mistrusted", "unimplemented", "declined", "nondeterministic", "skipped",
                "xfail", "xpass");
  out += line;
  auto row = [&](const std::string& label, const std::map<Verdict, int64_t>& counts) {
    auto n = [&](Verdict v) { return static_cast<long long>(count_of(counts, v)); };
    std::snprintf(line, sizeof line,
                  "%-26s %8lld %8lld %10lld %13lld %8lld %16lld %8lld %6lld %6lld\n", label.c_str(),
                  n(Verdict::kPassed), n(Verdict::kFailed), n(Verdict::kMistrusted),
                  n(Verdict::kUnimplemented), n(Verdict::kDeclined), n(Verdict::kNondeterministic),
                  n(Verdict::kSkipped), n(Verdict::kXfail), n(Verdict::kXpass));
    out += line;
  };
  for (const auto& [op, counts] : t.per_op) row(op.empty() ? "(unparsed)" : op, counts);
  row("total", t.all);
  return out;
}

namespace {

// Reading a report back: each accessor names the field it could not read.
struct Reader {
  std::string where;

  Error bad(const std::string& what) const { return parse_error(where + ": " + what); }

  template <class T>
  Expected<T> get(const json& j, const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) return bad(std::string("missing \"") + key + "\"");
    // nlohmann converts any number to any arithmetic type with a plain cast: 1e30 or 2^64-1 as
    // int64_t is undefined behaviour. Integers must be integers that fit.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!it->is_number_integer()) return bad(std::string("\"") + key + "\" is not an integer");
      if (it->is_number_unsigned() &&
          it->template get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return bad(std::string("\"") + key + "\" is out of range");
      if (!it->is_number_unsigned() && std::is_unsigned_v<T> && it->template get<int64_t>() < 0)
        return bad(std::string("\"") + key + "\" is negative");
    }
    try {
      return it->template get<T>();
    } catch (const json::exception&) {
      return bad(std::string("\"") + key + "\" has the wrong type");
    }
  }
  template <class T, class Parse>
  Expected<T> named(const json& j, const char* key, Parse parse) const {
    auto text = get<std::string>(j, key);
    if (!text.ok()) return text.error();
    auto v = parse(*text);
    if (!v) return bad(std::string("\"") + key + "\": unknown value \"" + *text + "\"");
    return *v;
  }
  template <class T, class Parse>
  Expected<std::vector<T>> named_list(const json& j, const char* key, Parse parse) const {
    auto texts = get<std::vector<std::string>>(j, key);
    if (!texts.ok()) return texts.error();
    std::vector<T> out;
    for (const auto& t : *texts) {
      auto v = parse(t);
      if (!v) return bad(std::string("\"") + key + "\": unknown value \"" + t + "\"");
      out.push_back(*v);
    }
    return out;
  }
};

#define GSCHECK_ASSIGN(lhs, expr)    \
  do {                               \
    auto v_ = (expr);                \
    if (!v_.ok()) return v_.error(); \
    lhs = std::move(v_).value();     \
  } while (0)

Expected<CaseResult> case_from_json(const json& j, const std::string& where) {
  const Reader rd{where};
  if (!j.is_object()) return rd.bad("not an object");
  CaseResult r;
  GSCHECK_ASSIGN(r.name, rd.get<std::string>(j, "name"));
  if (j.contains("file") && !j["file"].is_null())
    GSCHECK_ASSIGN(r.file, rd.get<std::string>(j, "file"));
  if (j.contains("op") && !j["op"].is_null())
    GSCHECK_ASSIGN(r.op, rd.named<Op>(j, "op", op_from_name));
  GSCHECK_ASSIGN(r.semantics, rd.named<Semantics>(j, "semantics", semantics_from_name));
  if (j.contains("api")) GSCHECK_ASSIGN(r.api, rd.named<Api>(j, "api", api_from_name));
  auto inputs = j.find("inputs");
  if (inputs == j.end() || !inputs->is_object()) return rd.bad("\"inputs\" is not an object");
  for (const auto& [name, in] : inputs->items()) {
    const Reader ird{where + ".inputs." + name};
    InputInfo info;
    info.name = name;
    GSCHECK_ASSIGN(info.dtype, ird.named<DType>(in, "dtype", dtype_from_name));
    std::vector<int64_t> dims;
    GSCHECK_ASSIGN(dims, ird.get<std::vector<int64_t>>(in, "shape"));
    info.shape = Shape(std::move(dims));
    r.inputs.push_back(std::move(info));
  }
  GSCHECK_ASSIGN(r.bad_indices_policy, rd.get<std::string>(j, "bad_indices_policy"));
  GSCHECK_ASSIGN(r.backend, rd.get<std::string>(j, "backend"));
  GSCHECK_ASSIGN(r.verdict, rd.named<Verdict>(j, "verdict", verdict_from_name));
  GSCHECK_ASSIGN(r.outcome, rd.get<std::string>(j, "outcome"));
  GSCHECK_ASSIGN(r.reason, rd.get<std::string>(j, "reason"));
  auto checks = j.find("checks");
  if (checks == j.end() || !checks->is_array()) return rd.bad("\"checks\" is not an array");
  for (std::size_t i = 0; i < checks->size(); ++i) {
    const json& c = (*checks)[i];
    const Reader crd{where + ".checks[" + std::to_string(i) + "]"};
    Check check;
    GSCHECK_ASSIGN(check.against, crd.get<std::string>(c, "against"));
    GSCHECK_ASSIGN(check.result.pass, crd.get<bool>(c, "pass"));
    GSCHECK_ASSIGN(check.result.summary, crd.get<std::string>(c, "summary"));
    GSCHECK_ASSIGN(check.result.mismatch_count, crd.get<int64_t>(c, "mismatch_count"));
    auto ms = c.find("mismatches");
    if (ms == c.end() || !ms->is_array()) return crd.bad("\"mismatches\" is not an array");
    for (const json& m : *ms) {
      compare::Mismatch mm;
      GSCHECK_ASSIGN(mm.index, crd.get<std::vector<int64_t>>(m, "index"));
      GSCHECK_ASSIGN(mm.expected, crd.get<std::string>(m, "expected"));
      GSCHECK_ASSIGN(mm.got, crd.get<std::string>(m, "got"));
      check.result.mismatches.push_back(std::move(mm));
    }
    r.checks.push_back(std::move(check));
  }
  GSCHECK_ASSIGN(r.elapsed_ms, rd.get<double>(j, "elapsed_ms"));
  GSCHECK_ASSIGN(r.repro, rd.get<std::string>(j, "repro"));
  GSCHECK_ASSIGN(r.runs, rd.get<int>(j, "runs"));
  GSCHECK_ASSIGN(r.differing_runs, rd.get<int>(j, "differing_runs"));
  if (auto d = j.find("differences"); d != j.end()) {
    if (!d->is_object()) return rd.bad("\"differences\" is not an object");
    for (const auto& [key, list] :
         {std::pair<const char*, std::vector<CaseResult::Differences>*>{"explained", &r.explained},
          {"unexplained", &r.unexplained}}) {
      auto l = d->find(key);
      if (l == d->end() || !l->is_array())
        return rd.bad("\"differences." + std::string(key) + "\" is not an array");
      for (const json& g : *l) {
        if (!g.is_object() || !g.contains("count") || !g["count"].is_number_integer() ||
            !g.contains("example") || !g["example"].is_string() ||
            (g.contains("entry") && !g["entry"].is_string()))
          return rd.bad("\"differences." + std::string(key) +
                        "\" holds an entry without count and example");
        auto count = rd.get<int64_t>(g, "count");
        if (!count.ok()) return count.error();
        list->push_back({g.value("entry", std::string()), *count, g["example"].get<std::string>()});
      }
    }
  }
  if (auto k = j.find("known_failure"); k != j.end() && !k->is_null()) {
    const Reader krd{where + ".known_failure"};
    CaseResult::Known known;
    GSCHECK_ASSIGN(known.verdict, krd.named<Verdict>(*k, "verdict", verdict_from_name));
    GSCHECK_ASSIGN(known.entry, krd.get<std::string>(*k, "entry"));
    GSCHECK_ASSIGN(known.reason, krd.get<std::string>(*k, "reason"));
    GSCHECK_ASSIGN(known.link, krd.get<std::string>(*k, "link"));
    r.known = std::move(known);
  }
  return r;
}

}  // namespace

Expected<Report> report_from_json(const json& j) {
  const Reader rd{"report"};
  if (!j.is_object()) return rd.bad("not a JSON object");
  auto version = rd.get<int>(j, "gscheck_report");
  if (!version.ok()) return version.error();
  if (*version != 1) return rd.bad("gscheck_report " + std::to_string(*version) + " is not 1");
  Report r;
  GSCHECK_ASSIGN(r.run.command, rd.get<std::string>(j, "command"));
  GSCHECK_ASSIGN(r.run.argv, rd.get<std::vector<std::string>>(j, "argv"));
  GSCHECK_ASSIGN(r.run.started_at, rd.get<std::string>(j, "started_at"));
  GSCHECK_ASSIGN(r.run.elapsed_s, rd.get<double>(j, "elapsed_s"));
  if (j.contains("seed") && !j["seed"].is_null())
    GSCHECK_ASSIGN(r.run.seed, rd.get<uint64_t>(j, "seed"));
  GSCHECK_ASSIGN(r.run.sweep, rd.get<int64_t>(j, "sweep"));
  // Fields added after the first reports: absent means their default.
  if (j.contains("sweep_size")) GSCHECK_ASSIGN(r.run.sweep_size, rd.get<int64_t>(j, "sweep_size"));
  if (j.contains("sweep_boundary_fraction"))
    GSCHECK_ASSIGN(r.run.sweep_boundary_fraction, rd.get<double>(j, "sweep_boundary_fraction"));
  if (j.contains("shard") && !j["shard"].is_null()) {
    const Reader srd{"report.shard"};
    Shard s;
    GSCHECK_ASSIGN(s.index, srd.get<int64_t>(j["shard"], "index"));
    GSCHECK_ASSIGN(s.count, srd.get<int64_t>(j["shard"], "count"));
    // As many shards as `gscheck run --shard` takes: merging loops over every shard.
    if (s.count < 1 || s.count > kMaxShards || s.index < 1 || s.index > s.count)
      return srd.bad("index " + std::to_string(s.index) + " of " + std::to_string(s.count) +
                     " (shards are 1 <= K <= N <= " + std::to_string(kMaxShards) + ")");
    r.run.shard = s;
  }
  if (j.contains("time_budget_s") && !j["time_budget_s"].is_null())
    GSCHECK_ASSIGN(r.run.time_budget_s, rd.get<double>(j, "time_budget_s"));
  if (j.contains("sweep_elapsed_s"))
    GSCHECK_ASSIGN(r.run.sweep_elapsed_s, rd.get<double>(j, "sweep_elapsed_s"));
  if (j.contains("merged_from"))
    GSCHECK_ASSIGN(r.run.merged_from, rd.get<std::vector<std::string>>(j, "merged_from"));
  if (j.contains("known_failures") && !j["known_failures"].is_null())
    GSCHECK_ASSIGN(r.run.known_failures, rd.get<std::string>(j, "known_failures"));
  if (j.contains("strict")) GSCHECK_ASSIGN(r.run.strict, rd.get<bool>(j, "strict"));
  if (j.contains("interrupted") && !j["interrupted"].is_null())
    GSCHECK_ASSIGN(r.run.interrupted, rd.get<std::string>(j, "interrupted"));
  auto b = j.find("backend");
  if (b == j.end() || !b->is_object()) return rd.bad("\"backend\" is not an object");
  const Reader brd{"report.backend"};
  Capabilities& caps = r.run.backend;
  GSCHECK_ASSIGN(caps.name, brd.get<std::string>(*b, "name"));
  GSCHECK_ASSIGN(caps.ops, brd.named_list<Op>(*b, "ops", op_from_name));
  GSCHECK_ASSIGN(caps.dtypes, brd.named_list<DType>(*b, "dtypes", dtype_from_name));
  GSCHECK_ASSIGN(caps.index_dtypes, brd.named_list<DType>(*b, "index_dtypes", dtype_from_name));
  GSCHECK_ASSIGN(caps.semantics, brd.named_list<Semantics>(*b, "semantics", semantics_from_name));
  GSCHECK_ASSIGN(caps.deterministic, brd.get<bool>(*b, "deterministic"));
  GSCHECK_ASSIGN(caps.tf_messages, brd.get<bool>(*b, "tf_messages"));
  GSCHECK_ASSIGN(caps.accumulates_half_in_float, brd.get<bool>(*b, "accumulates_half_in_float"));
  if (b->contains("containment") && !(*b)["containment"].is_null())
    GSCHECK_ASSIGN(caps.containment, brd.get<std::string>(*b, "containment"));
  if (b->contains("apis"))
    GSCHECK_ASSIGN(caps.apis, brd.named_list<Api>(*b, "apis", api_from_name));
  if (b->contains("tf_bad_index_messages"))
    GSCHECK_ASSIGN(caps.tf_bad_index_messages, brd.get<bool>(*b, "tf_bad_index_messages"));
  auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array()) return rd.bad("\"cases\" is not an array");
  for (std::size_t i = 0; i < cases->size(); ++i) {
    auto c = case_from_json((*cases)[i], "report.cases[" + std::to_string(i) + "]");
    if (!c.ok()) return c.error();
    r.cases.push_back(std::move(*c));
  }
  return r;
}

#undef GSCHECK_ASSIGN

Expected<Report> read_json_report(const std::string& path, int64_t max_bytes) {
  // The hardened reader and parser of case files: regular files only, bounded, no recursion.
  auto text = read_bounded(path, max_bytes);
  if (!text.ok()) return Error{text.error().cls, path + ": " + text.error().message};
  auto parsed = parse_json_bounded(*text, std::max<int64_t>(max_bytes, 1 << 16) * 3);
  if (!parsed.ok()) return Error{parsed.error().cls, path + ": " + parsed.error().message};
  const json& j = *parsed;
  auto r = report_from_json(j);
  if (!r.ok()) return Error{r.error().cls, path + ": " + r.error().message};
  return r;
}

Status write_json_report(const std::string& path, const Report& r) {
  // Messages may quote bytes that are not UTF-8: replace them rather than fail.
  return write_text(path,
                    report_to_json(r).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

Status write_junit(const std::string& path, const Report& r) {
  return write_text(path, junit_xml(r));
}

}  // namespace gscheck::reports
