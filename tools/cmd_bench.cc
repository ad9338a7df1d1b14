// `gscheck bench`: the speed of a backend, on problems that are data, timed so that a kernel
// cannot fake it. Google Benchmark drives the repetitions and the statistics; gscheck's clock
// around each call is the measurement (UseManualTime). Every timed call gets indices (and
// updates) drawn afresh and its output is checked against the reference's in full.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "compare/compare.h"
#include "reports/atomic_file.h"
#include "reports/bench_diff.h"
#include "reports/report.h"
#include "tools/bench_problems.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugin_flags.h"

namespace gscheck::tools {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: gscheck bench [--backend NAME] [--against NAME[,NAME...]] [--problems FILE]\n"
    "                     [--filter REGEX] [--seed S] [--sets K] [--min-time S] "
    "[--repetitions N]\n"
    "                     [--report FILE] [--benchmark-out FILE] [--max-bytes N] [plugin options]\n"
    "  Times a backend on each problem of the problems file (default: bench/problems/\n"
    "  default.json of the source tree), against a copy of the same bytes and each --against\n"
    "  backend on the same inputs. A problem is checked against the reference on every input\n"
    "  set before it is timed, and every timed call's output is checked in full: a wrong answer\n"
    "  is FAILED, with no speed. Each timed call gets indices (and updates) drawn afresh, on the\n"
    "  table of another input set than the call before: an output kept from an earlier call is\n"
    "  wrong. The clock is gscheck's, around the call (a plugin's: from sending the call to its\n"
    "  result frame; its tables are laid out and sealed once per set, its fresh indices written\n"
    "  in before the clock starts). A plugin call after which its worker runs more\n"
    "  processes or threads than before is FAILED (work left running past the call).\n"
    "  --backend NAME   the backend timed (default: cuda-emu when built, else reference)\n"
    "  --against LIST   backends timed on the same inputs for a ratio, comma-separated\n"
    "                   (default: reference; 'none' for none)\n"
    "  --problems FILE  problems file (JSON: docs/performance.md \"Problems files\")\n"
    "  --filter REGEX   only the problems whose name matches (ECMAScript regex, searched)\n"
    "  --seed S         input seed (default 1: the same inputs on every run)\n"
    "  --sets K         input sets (tables) per problem, used in turn (default 3, at least 2)\n"
    "  --min-time S     timed seconds per repetition (default 0.03)\n"
    "  --repetitions N  repetitions per problem and backend (default 9): the median, min, p90\n"
    "                   and relative MAD are over these\n"
    "  --report FILE    write the JSON bench report (reports/bench_report.schema.json); '-':\n"
    "                   on stdout (the table then goes to stderr)\n"
    "  --benchmark-out FILE  Google Benchmark's own JSON too (for its tools/compare.py)\n"
    "  --cold           caches cold: before every timed call (and copy) gscheck writes over a\n"
    "                   buffer twice the last-level cache (8 to 128 MiB), outside the clock, so\n"
    "                   tables and outputs come from memory (fresh indices are written just\n"
    "                   before); 10 calls per repetition instead of --min-time\n"
    "  --max-bytes N    memory budget for one call's tensors (default "
    "4294967296)\n" GSCHECK_PLUGIN_USAGE
    "  Exit status: 0 nothing FAILED, 1 a problem FAILED on a backend, 2 bad command line or\n"
    "  problems file, 3 a report could not be written.\n";

int usage_error(const std::string& message) { return value_error("gscheck bench", message); }

// One backend's result on one problem.
struct Result {
  std::string verdict = "PASSED";  // PASSED, FAILED, UNIMPLEMENTED
  std::string reason;
  std::vector<double> samples;          // seconds per call, one per repetition
  std::map<std::string, double> stats;  // Google Benchmark's aggregates: median, min, p90, rmad
  bool timed() const { return verdict == "PASSED" && stats.count("median"); }
};

struct ProblemRun {
  BenchProblem problem;
  std::string skipped;          // why nothing was timed (the reference refused the inputs)
  Result copy;                  // memcpy of bytes_moved()/2 bytes: the same bytes counted
  std::vector<Result> results;  // the backend, then each --against
};

// The backends of the run, the reference that grades them, and the inputs of one problem at a
// time (a problem's inputs are built when its first benchmark runs and freed at the next).
struct Bench {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::string> names;
  std::unique_ptr<Backend> reference;
  uint64_t seed = 1;
  int sets = 3;
  std::vector<ProblemRun> runs;

  int current = -1;
  uint64_t draws = 0;  // fresh draws of the current problem's indices, for the next seed
  std::vector<Case> cases;
  std::vector<Outcome> want;
  std::string refused;
  std::vector<std::byte> copy_from, copy_to;
  // Per backend: its calls of the sets, prepared and checked once per problem.
  std::vector<std::vector<std::function<TimedOutcome()>>> calls;
  // --cold: written over before every timed call and copy, outside the clock.
  std::vector<unsigned char> flush;

  // Evicts the problem's tables and outputs from the last-level cache (shared by gscheck and
  // the worker): one write per 64-byte line of a buffer twice its size.
  void evict() {
    for (std::size_t i = 0; i < flush.size(); i += 64)
      flush[i] = static_cast<unsigned char>(flush[i] + 1);
    benchmark::DoNotOptimize(flush.data());
    benchmark::ClobberMemory();
  }

  // Builds problem k's input sets and the reference's outcomes; "" or why it cannot be timed.
  const std::string& load(int k) {
    if (current == k) return refused;
    cases.clear();
    want.clear();
    copy_from.clear();
    copy_from.shrink_to_fit();
    copy_to.clear();
    copy_to.shrink_to_fit();
    calls.assign(backends.size(), {});
    refused.clear();
    current = k;
    draws = 0;
    const BenchProblem& p = runs[k].problem;
    for (int s = 0; s < sets && refused.empty(); ++s) {
      auto c = make_problem_case(p, seed, s);
      if (!c.ok()) {
        refused = "cannot make the inputs: " + c.error().message;
        break;
      }
      cases.push_back(std::move(*c));
      want.push_back(reference->run(cases.back()));
      if (!want.back().ok())
        refused = "the reference raises on these inputs: " + want.back().error().message;
    }
    return refused;
  }

  // Draws set s's indices (and updates) afresh for a timed call and the reference's outcome on
  // them; "" or why the reference refused them.
  std::string redraw(int s) {
    redraw_problem_case(runs[current].problem, seed, s, draws++, cases[s]);
    want[s] = reference->run(cases[s]);
    return want[s].ok() ? "" : "the reference raises on fresh inputs: " + want[s].error().message;
  }
};

Bench* g_bench = nullptr;  // Google Benchmark's callbacks are plain functions

// --cold's buffer: twice the last-level cache (sysconf's L3, else L2; 32 MiB when neither is
// known), from 8 to 128 MiB. The cap: sysconf gives a whole socket's L3 on AMD EPYC (260 MiB on
// this project's VM, eight 32 MiB slices of which one core uses one), and a 520 MiB write
// before each call made a 1,000-row problem take minutes.
std::size_t cold_flush_bytes() {
  long llc = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (llc <= 0) llc = 32l << 20;
  return std::clamp<std::size_t>(2 * static_cast<std::size_t>(llc), 8u << 20, 128u << 20);
}

// --cold: calls per repetition, a fixed count (a minimum time would mean thousands of flushes
// for a problem of a few microseconds).
constexpr int kColdCalls = 10;

// Statistics Google Benchmark computes over the repetitions besides mean, median, stddev, cv.
double stat_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double stat_p90(const std::vector<double>& v) {
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  const double at = 0.9 * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(at);
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (at - static_cast<double>(lo));
}
double median_of(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
// Median absolute deviation over the median: the spread a slower outlier does not inflate.
double stat_rmad(const std::vector<double>& v) {
  const double m = median_of(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - m));
  return m > 0 ? median_of(dev) / m : 0;
}

// The copy baseline: memcpy of half the counted bytes (a copy reads and writes each byte).
void copy_benchmark(benchmark::State& st, int k) {
  Bench& b = *g_bench;
  if (!b.load(k).empty()) {
    st.SkipWithError(b.refused.c_str());
    return;
  }
  const auto half = static_cast<std::size_t>(b.runs[k].problem.bytes_moved() / 2);
  if (b.copy_from.size() != half) {
    b.copy_from.assign(half, std::byte{1});
    b.copy_to.assign(half, std::byte{0});
  }
  for (auto _ : st) {
    b.evict();
    const auto start = Clock::now();
    std::memcpy(b.copy_to.data(), b.copy_from.data(), half);
    benchmark::ClobberMemory();
    st.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
  st.SetBytesProcessed(st.iterations() * b.runs[k].problem.bytes_moved());
}

// Checks an outcome against the reference's for set s; "" when right.
std::string wrong(const Bench& b, const Backend& backend, int s, const Outcome& got) {
  const compare::Comparison cmp = compare::compare_outcomes(
      b.cases[s], b.want[s], got, compare::options_for(backend.capabilities()));
  if (cmp.pass) return "";
  return "input set " + std::to_string(s) + ": " + cmp.summary;
}

void backend_benchmark(benchmark::State& st, int k, int which) {
  Bench& b = *g_bench;
  Result& r = b.runs[k].results[which];
  if (!b.load(k).empty()) {
    st.SkipWithError(b.refused.c_str());
    return;
  }
  if (r.verdict != "PASSED") {  // failed in an earlier repetition: no more calls
    st.SkipWithError(r.reason.c_str());
    return;
  }
  Backend& backend = *b.backends[which];
  if (Status admitted = admit(backend.capabilities(), b.cases[0]); !admitted.ok()) {
    r.verdict = "UNIMPLEMENTED";
    r.reason = admitted.error().message;
    st.SkipWithError(r.reason.c_str());
    return;
  }
  const auto fail = [&](std::string why) {
    r.verdict = "FAILED";
    r.reason = std::move(why);
    st.SkipWithError(r.reason.c_str());
  };
  auto& calls = b.calls[which];
  if (calls.empty()) {
    for (const Case& c : b.cases) calls.push_back(backend.prepare(c));
    // Correct first: every set once, before any call is timed.
    for (int s = 0; s < b.sets; ++s) {
      const TimedOutcome t = calls[s]();
      if (std::string w = wrong(b, backend, s, t.outcome); !w.empty())
        return fail("before timing, " + w);
    }
  }
  int s = 0;
  for (auto _ : st) {
    s = (s + 1) % b.sets;  // never the table of the call before
    if (std::string why = b.redraw(s); !why.empty()) {
      r.verdict = "SKIPPED";
      r.reason = why;
      st.SkipWithError(r.reason.c_str());
      break;
    }
    b.evict();
    const TimedOutcome t = calls[s]();
    st.SetIterationTime(t.seconds);
    if (std::string w = wrong(b, backend, s, t.outcome); !w.empty()) {
      fail("timed call " + std::to_string(st.iterations() + 1) + ", " + w);
      break;
    }
  }
  st.SetBytesProcessed(st.iterations() * b.runs[k].problem.bytes_moved());
}

// Collects Google Benchmark's runs into the ProblemRuns (display_reporter; prints nothing).
class Collector : public benchmark::BenchmarkReporter {
 public:
  explicit Collector(std::map<std::string, Result*> by_name) : by_name_(std::move(by_name)) {}
  bool ReportContext(const Context& context) override {
    cpus = context.cpu_info.num_cpus;
    for (const auto& c : context.cpu_info.caches)
      caches.push_back(json{
          {"level", c.level}, {"type", c.type}, {"bytes", c.size}, {"shared_by", c.num_sharing}});
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      auto it = by_name_.find(run.run_name.function_name);
      if (it == by_name_.end()) continue;
      Result& r = *it->second;
      if (run.error_occurred) {
        if (r.verdict == "PASSED") {  // the copy, or a problem the reference refused
          r.verdict = "SKIPPED";
          r.reason = run.error_message;
        }
        continue;
      }
      const double per_call = run.real_accumulated_time / static_cast<double>(run.iterations);
      if (run.run_type == Run::RT_Iteration) {
        r.samples.push_back(per_call);
      } else if (run.aggregate_unit == benchmark::kPercentage) {
        r.stats[run.aggregate_name] = run.real_accumulated_time;
      } else {
        r.stats[run.aggregate_name] =
            run.real_accumulated_time / static_cast<double>(run.iterations);
      }
    }
  }
  int cpus = 0;
  json caches = json::array();

 private:
  std::map<std::string, Result*> by_name_;
};

using reports::fixed;

double gbps(const ProblemRun& pr, const Result& r) {
  return static_cast<double>(pr.problem.bytes_moved()) / r.stats.at("median") / 1e9;
}

json result_json(const ProblemRun& pr, const Result& r, const std::string& name) {
  json j{{"backend", name}, {"verdict", r.verdict}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.timed()) return j;
  j["median_s"] = r.stats.at("median");
  for (const char* s : {"min", "p90"})
    if (r.stats.count(s)) j[std::string(s) + "_s"] = r.stats.at(s);
  if (r.stats.count("rmad")) j["rel_mad"] = r.stats.at("rmad");
  j["samples_s"] = r.samples;
  j["gbps"] = gbps(pr, r);
  return j;
}

// A backend's name in the table: a plugin or a Python module by its file name.
std::string short_name(const std::string& name) {
  for (const char* kind : {"plugin:", "python:"})
    if (name.rfind(kind, 0) == 0)
      return kind + std::filesystem::path(name.substr(7)).filename().string();
  return name;
}

std::string machine_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "";
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = {
      {"--backend", true},       {"--against", true},     {"--problems", true},
      {"--filter", true},        {"--seed", true},        {"--sets", true},
      {"--min-time", true},      {"--repetitions", true}, {"--report", true},
      {"--benchmark-out", true}, {"--max-bytes", true},   {"--cold", false}};
  for (const auto& s : plugin_option_specs()) specs.push_back(s);
  const CommandLine line = parse_command_line(args, specs, "gscheck bench", kUsage);
  if (!line.args) return line.exit_status;
  const ParsedArgs& parsed = *line.args;
  if (!parsed.positional.empty())
    return usage_error("unexpected argument '" + parsed.positional[0] + "'");

  Bench bench;
  // 9 repetitions: with 5, one outlier repetition in either of two runs keeps `report diff`'s
  // U test above p = 0.01 on a kernel made 20% slower (seen on a 2-core EPYC, 2026-12-05).
  int64_t max_bytes = kDefaultMaxCaseBytes, repetitions = 9;
  double min_time = 0.03;
  for (const auto& [name, target, lo, hi] : {std::tuple<const char*, int64_t*, int64_t, int64_t>{
                                                 "--max-bytes", &max_bytes, 1, INT64_MAX},
                                             {"--repetitions", &repetitions, 1, 1000}}) {
    if (auto v = parsed.value(name)) {
      auto n = parse_int_option(name, *v, lo, hi);
      if (!n.ok()) return usage_error(n.error().message);
      *target = *n;
    }
  }
  if (auto v = parsed.value("--seed")) {
    auto n = parse_int_option("--seed", *v, 0, INT64_MAX);
    if (!n.ok()) return usage_error(n.error().message);
    bench.seed = static_cast<uint64_t>(*n);
  }
  if (auto v = parsed.value("--sets")) {
    auto n = parse_int_option("--sets", *v, 2, 64);
    if (!n.ok()) return usage_error(n.error().message);
    bench.sets = static_cast<int>(*n);
  }
  if (auto v = parsed.value("--min-time")) {
    char* end = nullptr;
    min_time = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || *end || !(min_time > 0 && min_time <= 3600))
      return usage_error("--min-time: expected seconds in (0, 3600], got '" + *v + "'");
  }
  if (parsed.has("--cold")) bench.flush.assign(cold_flush_bytes(), 0);
  const std::string problems_path =
      parsed.value("--problems")
          .value_or(
              data_path("bench/problems/default.json").value_or("bench/problems/default.json"));
  auto problems = read_problems(problems_path);
  if (!problems.ok()) return usage_error(problems.error().message);
  if (auto f = parsed.value("--filter")) {
    try {
      const std::regex re(*f);
      std::erase_if(*problems,
                    [&](const BenchProblem& p) { return !std::regex_search(p.name(), re); });
    } catch (const std::regex_error& e) {
      return usage_error("--filter: not a regular expression: '" + *f + "' (" + e.what() + ")");
    }
    if (problems->empty()) return usage_error("--filter '" + *f + "' matches no problem");
  }
  const std::string report_path = parsed.value("--report").value_or("");
  for (const char* flag : {"--report", "--benchmark-out"})
    if (auto p = parsed.value(flag); p && *p != "-")
      if (Status s = reports::check_output_path(*p); !s.ok())
        return usage_error(std::string(flag) + ": " + s.error().message);
  if (report_path == "-") reports::reserve_stdout_for_reports();
  std::FILE* text = report_path == "-" ? stderr : stdout;

  // The backends: the timed one first, then the --against ones.
  const auto names = backend_names();
  const bool have_emu = std::find(names.begin(), names.end(), "cuda-emu") != names.end();
  bench.names.push_back(parsed.value("--backend").value_or(have_emu ? "cuda-emu" : "reference"));
  const std::string against = parsed.value("--against").value_or("reference");
  if (against != "none") {
    std::stringstream list(against);
    for (std::string n; std::getline(list, n, ',');) {
      if (n.empty()) return usage_error("--against: an empty name in '" + against + "'");
      if (std::find(bench.names.begin(), bench.names.end(), n) == bench.names.end())
        bench.names.push_back(n);
    }
  }
  auto plugin = plugin_options(parsed, max_bytes);
  if (!plugin.ok()) return usage_error(plugin.error().message);
  plugin->jobs = 1;  // one call at a time: a timed call has the machine to itself
  plugin->no_work_past_call = true;
  std::vector<std::string> read_files = {problems_path};
  if (Status hidden = hide_run_inputs(*plugin, parsed, read_files, ""); !hidden.ok())
    return usage_error(hidden.error().message);
  for (const std::string& n : bench.names) {
    auto b = make_named_backend(n, max_bytes, *plugin);
    if (!b.ok()) {
      std::fprintf(stderr, "gscheck bench: %s\n", b.error().message.c_str());
      return 2;
    }
    bench.backends.push_back(std::move(*b));
  }
  auto ref = make_named_backend("reference", max_bytes);
  if (!ref.ok()) {
    std::fprintf(stderr, "gscheck bench: %s\n", ref.error().message.c_str());
    return 2;
  }
  bench.reference = std::move(*ref);

  // One Google Benchmark family per problem and backend, the copy first.
  std::map<std::string, Result*> by_name;
  bench.runs.reserve(problems->size());
  for (const BenchProblem& p : *problems) {
    ProblemRun pr;
    pr.problem = p;
    pr.problem.semantics = resolve_semantics(p, bench.backends[0]->capabilities().semantics);
    pr.results.resize(bench.names.size());
    bench.runs.push_back(std::move(pr));
  }
  g_bench = &bench;
  for (int k = 0; k < static_cast<int>(bench.runs.size()); ++k) {
    ProblemRun& pr = bench.runs[k];
    const std::string base = pr.problem.name();
    const auto setup = [&](benchmark::internal::Benchmark* b) {
      b->UseManualTime();
      if (bench.flush.empty())
        b->MinTime(min_time);
      else
        b->Iterations(kColdCalls);
      b->Repetitions(static_cast<int>(repetitions))
          ->ComputeStatistics("min", stat_min)
          ->ComputeStatistics("p90", stat_p90)
          ->ComputeStatistics("rmad", stat_rmad, benchmark::kPercentage)
          ->Unit(benchmark::kMicrosecond);
    };
    const std::string copy_name = base + "/copy";
    setup(benchmark::RegisterBenchmark(copy_name.c_str(),
                                       [k](benchmark::State& st) { copy_benchmark(st, k); }));
    by_name[copy_name] = &pr.copy;
    for (int w = 0; w < static_cast<int>(bench.names.size()); ++w) {
      const std::string n = base + "/" + bench.names[w];
      setup(benchmark::RegisterBenchmark(
          n.c_str(), [k, w](benchmark::State& st) { backend_benchmark(st, k, w); }));
      by_name[n] = &pr.results[w];
    }
  }
  // Google Benchmark's own flags: its JSON file, and no output of its own on the terminal.
  std::vector<std::string> gb_args = {"gscheck-bench"};
  if (auto out = parsed.value("--benchmark-out")) {
    gb_args.push_back("--benchmark_out=" + *out);
    gb_args.push_back("--benchmark_out_format=json");
  }
  std::vector<char*> gb_argv;
  for (auto& a : gb_args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());

  const std::string started_at = reports::utc_now();
  const auto started = Clock::now();
  std::fprintf(text, "gscheck bench: %zu problems, %s, %d input sets, %lld repetitions of %.3g s\n",
               bench.runs.size(), problems_path.c_str(), bench.sets,
               static_cast<long long>(repetitions), min_time);
  std::fflush(text);
  Collector collector(by_name);
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  benchmark::Shutdown();
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();

  // The table, one line per problem and backend, and the report.
  int failed = 0;
  json problems_json = json::array();
  std::fprintf(text, "\n%-58s %-22s %10s %9s %7s %7s", "problem", "backend", "verdict", "GB/s",
               "/copy", "rMAD%");
  for (std::size_t w = 1; w < bench.names.size(); ++w)
    std::fprintf(text, " %9s", ("x" + short_name(bench.names[w]).substr(0, 8)).c_str());
  std::fprintf(text, "\n");
  for (const ProblemRun& pr : bench.runs) {
    const BenchProblem& p = pr.problem;
    json pj{{"name", p.name()},
            {"op", op_name(p.op)},
            {"dtype", dtype_name(p.dtype)},
            {"index_dtype", dtype_name(p.index_dtype)},
            {"slice_bytes", p.slice_bytes},
            {"indices", pattern_name(p.pattern)},
            {"table_bytes", p.table_bytes},
            {"index_count", p.index_count},
            {"semantics", semantics_name(p.semantics)},
            {"bytes_moved", p.bytes_moved()}};
    const bool copy_ok = pr.copy.timed();
    if (copy_ok) {
      pj["copy"] = {{"median_s", pr.copy.stats.at("median")},
                    {"gbps", gbps(pr, pr.copy)},
                    {"samples_s", pr.copy.samples}};
    } else {
      pj["skipped"] = pr.copy.reason;
    }
    json rs = json::array();
    for (std::size_t w = 0; w < bench.names.size(); ++w) {
      const Result& r = pr.results[w];
      json rj = result_json(pr, r, bench.backends[w]->capabilities().name);
      if (!copy_ok && r.verdict == "PASSED")
        rj = {{"backend", bench.names[w]}, {"verdict", "SKIPPED"}, {"reason", pr.copy.reason}};
      if (r.verdict == "FAILED") ++failed;
      std::fprintf(text, "%-58s %-22s %10s", w == 0 ? p.name().c_str() : "",
                   short_name(bench.names[w]).substr(0, 22).c_str(),
                   rj["verdict"].get<std::string>().c_str());
      if (r.timed() && copy_ok) {
        const double ratio_copy = pr.copy.stats.at("median") / r.stats.at("median");
        rj["ratio_to_copy"] = ratio_copy;
        std::fprintf(text, " %9s %7s %7s", fixed(gbps(pr, r), 2).c_str(),
                     fixed(ratio_copy, 3).c_str(),
                     fixed(r.stats.count("rmad") ? 100 * r.stats.at("rmad") : 0, 1).c_str());
        json ratios = json::object();
        for (std::size_t a = 1; a < bench.names.size(); ++a) {
          if (a == w) continue;
          const Result& other = pr.results[a];
          if (!other.timed()) continue;
          ratios[bench.backends[a]->capabilities().name] =
              other.stats.at("median") / r.stats.at("median");
          if (w == 0)
            std::fprintf(text, " %9s",
                         fixed(other.stats.at("median") / r.stats.at("median"), 2).c_str());
        }
        if (!ratios.empty()) rj["speedup_over"] = ratios;
      }
      std::fprintf(text, "\n");
      if (r.verdict == "FAILED" || r.verdict == "UNIMPLEMENTED")
        std::fprintf(text, "    %s: %s\n", r.verdict.c_str(), r.reason.c_str());
      rs.push_back(std::move(rj));
    }
    pj["results"] = std::move(rs);
    problems_json.push_back(std::move(pj));
  }
  std::fprintf(text,
               "\nGB/s: bytes moved (DESIGN.md's count) / median seconds per call; /copy: speed "
               "over a memcpy of the same bytes; x<backend>: its median time / %s's\n",
               short_name(bench.names[0]).c_str());
  std::fprintf(text, "%d FAILED; %.1f s\n", failed, elapsed);

  if (!report_path.empty()) {
    json backends_json = json::array();
    for (const auto& b : bench.backends)
      backends_json.push_back(
          {{"name", b->capabilities().name}, {"containment", b->capabilities().containment}});
    json report{{"gscheck_bench_report", 1},
                {"tool", reports::tool_version()},
                {"commit", reports::git_commit()},
                {"command", "bench"},
                {"argv", args},
                {"started_at", started_at},
                {"elapsed_s", elapsed},
                {"seed", bench.seed},
                {"problems_file", problems_path},
                {"settings",
                 {{"sets", bench.sets},
                  {"min_time_s", min_time},
                  {"repetitions", repetitions},
                  {"cold_flush_bytes", bench.flush.size()}}},
                {"machine",
                 {{"cpu", machine_cpu()}, {"cpus", collector.cpus}, {"caches", collector.caches}}},
                {"backends", backends_json},
                {"failed", failed},
                {"problems", problems_json}};
    const std::string out = report.dump(1) + "\n";
    if (report_path == "-") {
      std::fwrite(out.data(), 1, out.size(), stdout);
    } else if (Status s = reports::write_file_atomically(report_path, out); !s.ok()) {
      std::fprintf(stderr, "gscheck bench: %s\n", s.error().message.c_str());
      return 3;
    }
  }
  return failed ? 1 : 0;
}

}  // namespace gscheck::tools
