// `gscheck report merge`: shards of one run back into the unsharded run's order, in memory or
// streamed from files through a spool.
#include "reports/combine.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "core/case_json.h"
#include "reports/spool.h"

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

struct Part {
  std::string path;
  RunInfo run;
};

// Why two parts are not shards of one run ("" when they are compatible).
std::string mismatch(const Part& a, const Part& b) {
  const RunInfo &x = a.run, &y = b.run;
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
  if (x.sweep_large_fraction != y.sweep_large_fraction)
    return differ("sweep large fraction", std::to_string(x.sweep_large_fraction),
                  std::to_string(y.sweep_large_fraction));
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

// What places a case in the unsharded order: whether it is generated, its sweep position.
struct Slot {
  int64_t sweep_position = 0;
  bool has_position = false, generated = false;
};

struct Plan {
  RunInfo run;
  std::vector<std::pair<uint32_t, uint64_t>> order;  // (part, case index in the part)
};

// The merge's bookkeeping, shared by the in-memory and the file merge: parts as they are read,
// one slot per case, every name seen (a second case of a name is an error at once).
class Merger {
 public:
  explicit Merger(bool force) : force_(force) {}

  void begin_part(const std::string& path) {
    parts_.push_back({path, {}});
    slots_.emplace_back();
  }
  Status add_case(const CaseResult& c) {
    const auto part = static_cast<uint32_t>(parts_.size() - 1);
    auto [it, fresh] = names_.try_emplace(c.name, part);
    if (!fresh && !duplicate_) {
      // Kept for plan(): a file given twice is better named by the shard check.
      const std::string& first = parts_[it->second].path;
      duplicate_ = invalid_argument(
          "report merge: two cases are named \"" + c.name + "\" (" +
          (it->second == part ? "both in " + first : "in " + first + " and " + parts_.back().path) +
          "); cases are matched by name, so names must be unique");
    }
    if (!fresh) return {};
    Slot s;
    s.generated = c.file.empty();
    if (s.generated)
      if (auto p = sweep_position(c.name)) s.sweep_position = *p, s.has_position = true;
    slots_.back().push_back(s);
    return {};
  }
  void end_part(RunInfo run) { parts_.back().run = std::move(run); }
  Expected<Plan> plan() const;

 private:
  Status check(bool* shards) const;

  bool force_;
  std::vector<Part> parts_;
  std::vector<std::vector<Slot>> slots_;
  std::unordered_map<std::string, uint32_t> names_;
  std::optional<Error> duplicate_;
};

// OK when the parts may be merged; *shards: whether they are the shards of one run.
Status Merger::check(bool* shards) const {
  if (parts_.empty()) return invalid_argument("report merge: no reports to merge");
  *shards = parts_.front().run.shard &&
            (!force_ || std::all_of(parts_.begin(), parts_.end(), [&](const Part& p) {
              return mismatch(parts_.front(), p).empty() && p.run.shard;
            }));
  if (force_) return {};
  for (const Part& p : parts_) {
    const std::string why = mismatch(parts_.front(), p);
    if (!why.empty())
      return invalid_argument("report merge: " + why + "; these are not shards of one run " +
                              "(--force merges them anyway, in argument order)");
  }
  const auto& s = parts_.front().run.shard;
  if (!s) {
    if (parts_.size() == 1) return {};
    return invalid_argument("report merge: " + parts_.front().path +
                            " is not a shard (--shard K/N): merging whole runs of the same "
                            "seed would count each case twice (--force merges them anyway)");
  }
  std::map<int64_t, std::string> seen;
  for (const Part& p : parts_) {
    auto [pos, fresh] = seen.emplace(p.run.shard->index, p.path);
    if (!fresh)
      return invalid_argument("report merge: " + pos->second + " and " + p.path +
                              " are both shard " + shard_text(p.run.shard));
  }
  std::string missing;
  for (int64_t k = 1; k <= s->count; ++k)
    if (!seen.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  if (!missing.empty())
    return invalid_argument("report merge: shard(s) " + missing + " of " +
                            std::to_string(s->count) + " missing (--force merges what is there)");
  return {};
}

Expected<Plan> Merger::plan() const {
  bool shards = false;
  GSCHECK_RETURN_IF_ERROR(check(&shards));
  if (duplicate_) return *duplicate_;
  Plan out;
  RunInfo& run = out.run;
  run = parts_.front().run;
  run.shard.reset();
  run.sealed.reset();  // each part names its own case files; the parts' reports keep them
  run.merged_from.clear();
  run.elapsed_s = 0;
  run.sweep_elapsed_s = 0;
  run.sweep = 0;
  run.interrupted.clear();
  for (const Part& p : parts_) {
    run.merged_from.push_back(p.path);
    // A part that did not finish leaves the merged run unfinished too (its JUnit says so).
    if (!p.run.interrupted.empty())
      run.interrupted += (run.interrupted.empty() ? "" : "; ") + p.path + ": " + p.run.interrupted;
    // Shards run side by side: the merged run took as long as the slowest.
    run.elapsed_s = std::max(run.elapsed_s, p.run.elapsed_s);
    run.sweep_elapsed_s = std::max(run.sweep_elapsed_s, p.run.sweep_elapsed_s);
    run.sweep = std::max(run.sweep, p.run.sweep);
    run.started_at = std::min(run.started_at, p.run.started_at);
  }
  // Without shards, argument order. With them, the unsharded run's order: case files by their
  // position in the whole list, then the sweep by position. Shard k of n got file positions
  // m*n + k-1 (m-th file it ran) and sweep positions p with p % n == k-1.
  using Key = std::tuple<bool, int64_t, uint32_t, uint64_t>;
  std::vector<Key> keyed;
  for (uint32_t part = 0; part < parts_.size(); ++part) {
    const Shard s = shards ? *parts_[part].run.shard : Shard{};
    int64_t m_file = 0, m_sweep = 0;
    const std::vector<Slot>& slots = slots_[part];
    for (uint64_t i = 0; i < slots.size(); ++i) {
      const Slot& c = slots[i];
      int64_t& m = c.generated ? m_sweep : m_file;
      int64_t pos = m * s.count + (s.index - 1);
      ++m;
      if (c.has_position) pos = c.sweep_position;
      keyed.emplace_back(shards && c.generated, shards ? pos : 0, part, i);
    }
  }
  // Ties (a forced merge, or a position given twice) keep argument and file order.
  std::sort(keyed.begin(), keyed.end());
  out.order.reserve(keyed.size());
  for (const auto& [generated, pos, part, i] : keyed) out.order.emplace_back(part, i);
  return out;
}

}  // namespace

Expected<Report> merge_reports(std::vector<MergeInput> inputs, bool force) {
  Merger m(force);
  for (const MergeInput& in : inputs) {
    m.begin_part(in.path);
    for (const CaseResult& c : in.report.cases) GSCHECK_RETURN_IF_ERROR(m.add_case(c));
    m.end_part(in.report.run);
  }
  auto plan = m.plan();
  if (!plan.ok()) return plan.error();
  Report out;
  out.run = std::move(plan->run);
  out.cases.reserve(plan->order.size());
  for (const auto& [part, i] : plan->order)
    out.cases.push_back(std::move(inputs[part].report.cases[i]));
  return out;
}

Status merge_report_files(const std::vector<std::string>& paths, bool force, int64_t max_bytes,
                          const std::function<Status(const RunInfo&)>& begin,
                          const CaseSink& emit) {
  Merger m(force);
  Spool spool("report merge");
  std::vector<std::vector<Spool::Where>> at(paths.size());
  for (std::size_t p = 0; p < paths.size(); ++p) {
    m.begin_part(paths[p]);
    RunInfo run;
    GSCHECK_RETURN_IF_ERROR(
        read_report_file(paths[p], max_bytes, run, [&](CaseResult&& c) -> Status {
          GSCHECK_RETURN_IF_ERROR(m.add_case(c));
          auto where = spool.append(
              case_result_to_json(c).dump(-1, ' ', false, json::error_handler_t::replace));
          if (!where.ok()) return where.error();
          at[p].push_back(*where);
          return {};
        }));
    m.end_part(std::move(run));
  }
  auto plan = m.plan();
  if (!plan.ok()) return plan.error();
  GSCHECK_RETURN_IF_ERROR(begin(plan->run));
  for (const auto& [part, i] : plan->order) {
    auto text = spool.read(at[part][i]);
    if (!text.ok()) return text.error();
    auto j = parse_json_bounded(*text, kMaxReportValueBytes);
    if (!j.ok()) return j.error();
    auto c = case_result_from_json(*j, paths[part] + ": case " + std::to_string(i));
    if (!c.ok()) return c.error();
    GSCHECK_RETURN_IF_ERROR(emit(std::move(*c)));
  }
  return {};
}

}  // namespace gscheck::reports
