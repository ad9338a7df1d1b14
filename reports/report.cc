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

constexpr std::array<std::string_view, 10> kVerdictNames = {
    "PASSED",  "FAILED", "MISTRUSTED", "UNIMPLEMENTED", "NONDETERMINISTIC",
    "SKIPPED", "XFAIL",  "XPASS",      "DECLINED",      "UNSAFE"};
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
  for (const auto& m : c.result.mismatches) {
    json jm = {{"index", m.index}, {"expected", m.expected}, {"got", m.got}};
    if (!m.triage.empty()) jm["triage"] = m.triage;
    mismatches.push_back(std::move(jm));
  }
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
  if (r.known && r.known->values_unchecked) j["known_failure"]["values_unchecked"] = true;
  if (r.known && !r.known->follows.empty()) j["known_failure"]["follows"] = r.known->follows;
  if (r.shrunk) {
    json in = json::object();
    for (const auto& i : r.shrunk->inputs)
      in[i.name] = {{"dtype", std::string(dtype_name(i.dtype))}, {"shape", i.shape.dims()}};
    j["shrunk"] = {{"file", r.shrunk->file},       {"repro", r.shrunk->repro},
                   {"inputs", std::move(in)},      {"reason", r.shrunk->reason},
                   {"tried", r.shrunk->tried},     {"kept", r.shrunk->kept},
                   {"seconds", r.shrunk->seconds}, {"limited", r.shrunk->limited}};
  }
  return j;
}

json sealed_to_json(const std::optional<RunInfo::Sealed>& s) {
  if (!s) return nullptr;
  auto hex = [](const std::string& h) { return h.empty() ? json(nullptr) : json(h); };
  return {{"case_files", s->case_files},
          {"case_bytes", s->case_bytes},
          {"case_files_sha256", hex(s->case_files_sha256)},
          {"known_failures_sha256", hex(s->known_failures_sha256)},
          {"gscheck_sha256", hex(s->gscheck_sha256)},
          {"worker_sha256", hex(s->worker_sha256)}};
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
         v == Verdict::kDeclined || v == Verdict::kUnsafe || (strict && v == Verdict::kXpass);
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
  if (c.verdict == Verdict::kXfail && c.known && c.known->values_unchecked) ++values_unchecked_;
  if (c.verdict == Verdict::kUnsafe && c.known) ++unsafe_described_;
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
  std::snprintf(line, sizeof line,
                "%-26s %-10s %-6s %-8s %7s %7s %6s %10s %13s %8s %16s %7s %5s %5s\n", "op", "dtype",
                "index", "policy", "passed", "failed", "unsafe", "mistrusted", "unimplemented",
                "declined", "nondeterministic", "skipped", "xfail", "xpass");
  out += line;
  for (const MatrixRow& m : t.matrix()) {
    auto dt = [](const std::optional<DType>& d) {
      return d ? std::string(dtype_name(*d)) : std::string("-");
    };
    auto n = [&](Verdict v) { return static_cast<long long>(count_of(m.counts, v)); };
    std::snprintf(
        line, sizeof line,
        "%-26s %-10s %-6s %-8s %7lld %7lld %6lld %10lld %13lld %8lld %16lld %7lld %5lld %5lld\n",
        m.op ? std::string(op_name(*m.op)).c_str() : "(unparsed)", dt(m.dtype).c_str(),
        dt(m.index_dtype).c_str(),
        m.bad_indices_policy.empty() ? "-" : m.bad_indices_policy.c_str(), n(Verdict::kPassed),
        n(Verdict::kFailed), n(Verdict::kUnsafe), n(Verdict::kMistrusted),
        n(Verdict::kUnimplemented), n(Verdict::kDeclined), n(Verdict::kNondeterministic),
        n(Verdict::kSkipped), n(Verdict::kXfail), n(Verdict::kXpass));
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
      {"sealed", sealed_to_json(run.sealed)},
      {"strict", run.strict},
      {"seed", run.seed ? json(*run.seed) : json(nullptr)},
      {"sweep", run.sweep},
      {"sweep_size", run.sweep_size},
      {"sweep_boundary_fraction", run.sweep_boundary_fraction},
      {"sweep_large_fraction", run.sweep_large_fraction},
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
  std::snprintf(line, sizeof line, "%-26s %8s %8s %6s %10s %13s %8s %16s %8s %6s %6s\n", "op",
                "passed", "failed", "unsafe", "mistrusted", "unimplemented", "declined",
                "nondeterministic", "skipped", "xfail", "xpass");
  out += line;
  auto row = [&](const std::string& label, const std::map<Verdict, int64_t>& counts) {
    auto n = [&](Verdict v) { return static_cast<long long>(count_of(counts, v)); };
    std::snprintf(line, sizeof line,
                  "%-26s %8lld %8lld %6lld %10lld %13lld %8lld %16lld %8lld %6lld %6lld\n",
                  label.c_str(), n(Verdict::kPassed), n(Verdict::kFailed), n(Verdict::kUnsafe),
                  n(Verdict::kMistrusted), n(Verdict::kUnimplemented), n(Verdict::kDeclined),
                  n(Verdict::kNondeterministic), n(Verdict::kSkipped), n(Verdict::kXfail),
                  n(Verdict::kXpass));
    out += line;
  };
  for (const auto& [op, counts] : t.per_op) row(op.empty() ? "(unparsed)" : op, counts);
  row("total", t.all);
  return out;
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
