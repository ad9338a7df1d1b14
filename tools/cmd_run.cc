// `gscheck run`: the CI job. Golden cases and regressions checked against their expect blocks and
// against the reference, plus a seeded random sweep checked against the reference.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>

#include "core/case_json.h"
#include "tools/case_check.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugin_flags.h"
#include "tools/progress.h"

#if defined(GSCHECK_HAVE_GENERATORS)
#include "properties/sample.h"
#endif

#ifndef GSCHECK_SOURCE_DIR
#define GSCHECK_SOURCE_DIR "."
#endif

namespace gscheck::tools {
namespace {

constexpr int64_t kDefaultSweep = 5000;  // small cases: about a second on one core

constexpr const char* kUsage =
    "usage: gscheck run [--backend NAME] [--sweep N] [--time SECONDS] [--seed S] [--size K]\n"
    "                   [--shard K/N] [--report FILE] [--junit FILE] [--max-bytes N]\n"
    "                   [--repeat K] [--matrix] [--verbose] [--quiet] [--jobs N] [--timeout S]\n"
    "                   [--isolate worker|call] [PATHS...]\n"
    "  Checks a backend: every case file in PATHS (default: corpus/golden and corpus/regressions\n"
    "  of the source tree) against its expect block and against the reference's outcome, then N\n"
    "  seeded random cases against the reference. Cases outside the backend's declared\n"
    "  capabilities are UNIMPLEMENTED, not failures. Prints the failures, a table per op and the\n"
    "  seed.\n"
    "  --backend NAME   backend to check (default: cuda-emu when built, else reference)\n"
    "  --sweep N        number of random cases (default 5000; 0 for none)\n"
    "  --time SECONDS   run the sweep (after the case files, which always run in full) until\n"
    "                   it has taken SECONDS; with --sweep N, stop at whichever comes first.\n"
    "                   The report's sweep is the count reached: --sweep with it replays the run\n"
    "  --shard K/N      run part K of N: the case files and sweep positions p with\n"
    "                   p % N == K-1 (same seed for all parts; `gscheck report merge` of all N\n"
    "                   reports equals the unsharded run)\n"
    "  --seed S         sweep seed (default: drawn at random and printed)\n"
    "  --size K         RapidCheck size of the sweep: larger means bigger cases (default 30)\n"
    "  --report FILE    write the JSON report; failing random cases are saved as case files in\n"
    "                   failed_cases/ next to it\n"
    "  --junit FILE     write JUnit XML\n"
    "  --max-bytes N    memory budget for one case's tensors (default 4294967296)\n"
    "  --repeat K       run each case K times (default 2 for plugin:PATH backends, else 1): a\n"
    "                   backend declaring itself deterministic must give bit-identical outcomes\n"
    "                   (else NONDETERMINISTIC), any other must pass on every run (else FAILED)\n"
    "  --matrix         also print the capability matrix: verdict counts per op x dtype x index\n"
    "                   dtype x bad_indices_policy (always printed for plugin:PATH backends)\n"
    "  --verbose        print a line for every case (default: only the failures)\n"
    "  --quiet          no progress on stderr (default: a line redrawn in place on a terminal,\n"
    "                   else a line every 10 s, or every $GSCHECK_PROGRESS_INTERVAL "
    "seconds)\n" GSCHECK_PLUGIN_USAGE
    "  Exit status: 0 no case failed, 1 a case FAILED, was MISTRUSTED or NONDETERMINISTIC,\n"
    "  2 bad command line, 3 a report could not be written.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "gscheck run: %s\n%s", message.c_str(), kUsage);
  return 2;
}

// corpus/<name> relative to the working directory when it is there, else in the source tree.
std::vector<std::string> default_paths() {
  std::vector<std::string> paths;
  for (const char* name : {"corpus/golden", "corpus/regressions"}) {
    std::error_code ec;
    if (std::filesystem::is_directory(name, ec)) {
      paths.emplace_back(name);
    } else if (const std::string src = std::string(GSCHECK_SOURCE_DIR) + "/" + name;
               std::filesystem::is_directory(src, ec)) {
      paths.push_back(src);
    }
  }
  return paths;
}

// "K/N" with 1 <= K <= N.
Expected<reports::Shard> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto bad = [&] {
    return parse_error("--shard: expected K/N with 1 <= K <= N (e.g. 2/4), got '" + text + "'");
  };
  if (slash == std::string::npos) return bad();
  auto k = parse_int_option("--shard", text.substr(0, slash), 1, 1000000);
  auto n = parse_int_option("--shard", text.substr(slash + 1), 1, 1000000);
  if (!k.ok() || !n.ok() || *k > *n) return bad();
  return reports::Shard{*k, *n};
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = {{"--backend", true},   {"--sweep", true},  {"--seed", true},
                                   {"--size", true},      {"--report", true}, {"--junit", true},
                                   {"--max-bytes", true}, {"--repeat", true}, {"--matrix", false},
                                   {"--verbose", false},  {"--quiet", false}, {"--time", true},
                                   {"--shard", true}};
  for (auto& spec : plugin_option_specs()) specs.push_back(spec);
  auto line = parse_command_line(args, specs, "gscheck run", kUsage);
  if (!line.args) return line.exit_status;
  const ParsedArgs& parsed = *line.args;
  int64_t max_bytes = kDefaultMaxCaseBytes, sweep = kDefaultSweep, size = 30;
  uint64_t seed = std::random_device{}();
  for (const auto& [name, target, lo, hi] : {std::tuple<const char*, int64_t*, int64_t, int64_t>{
                                                 "--max-bytes", &max_bytes, 1, INT64_MAX},
                                             {"--sweep", &sweep, 0, 100000000},
                                             {"--size", &size, 0, 1000}}) {
    if (auto v = parsed.value(name)) {
      auto n = parse_int_option(name, *v, lo, hi);
      if (!n.ok()) return usage_error(n.error().message);
      *target = *n;
    }
  }
  if (auto v = parsed.value("--seed")) {
    auto n = parse_int_option("--seed", *v, 0, INT64_MAX);
    if (!n.ok()) return usage_error(n.error().message);
    seed = static_cast<uint64_t>(*n);
  }
  std::optional<double> time_budget;
  if (auto v = parsed.value("--time")) {
    auto n = parse_int_option("--time", *v, 1, 100000000);
    if (!n.ok()) return usage_error(n.error().message);
    time_budget = static_cast<double>(*n);
    if (!parsed.has("--sweep")) sweep = 100000000;  // the budget decides
  }
  std::optional<reports::Shard> shard;
  if (auto v = parsed.value("--shard")) {
    auto s = parse_shard(*v);
    if (!s.ok()) return usage_error(s.error().message);
    shard = *s;
  }
#if !defined(GSCHECK_HAVE_GENERATORS)
  if (parsed.has("--time"))
    return usage_error(
        "this gscheck was built without the case generators (GSCHECK_TESTS=OFF): no --time");
  if (parsed.has("--sweep") && sweep > 0)
    return usage_error(
        "this gscheck was built without the case generators (GSCHECK_TESTS=OFF): "
        "no --sweep");
  sweep = 0;
#endif

  const auto names = backend_names();
  const bool have_emu = std::find(names.begin(), names.end(), "cuda-emu") != names.end();
  const std::string backend_name =
      parsed.value("--backend").value_or(have_emu ? "cuda-emu" : "reference");
  int64_t repeat = default_repeat(backend_name);
  if (auto v = parsed.value("--repeat")) {
    auto n = parse_int_option("--repeat", *v, 1, 1000);
    if (!n.ok()) return usage_error(n.error().message);
    repeat = *n;
  }
  auto plugin = plugin_options(parsed, max_bytes);
  if (!plugin.ok()) return usage_error(plugin.error().message);
  // Concurrent checking is for plugin workers; the in-tree backends run on this thread.
  const int jobs = backend_name.starts_with("plugin:") ? plugin->jobs : 1;
  auto backend = make_named_backend(backend_name, max_bytes, *plugin);
  if (!backend.ok()) return usage_error(backend.error().message);
  auto reference = make_named_backend("reference", max_bytes);
  if (!reference.ok()) return usage_error(reference.error().message);
  Backend* ref = backend_name == "reference" ? backend->get() : reference->get();

  std::vector<std::string> paths = parsed.positional;
  if (paths.empty()) paths = default_paths();
  std::vector<std::string> files;
  if (!paths.empty()) {
    auto listed = list_case_files(paths);
    if (!listed.ok()) return usage_error(listed.error().message);
    files = std::move(listed).value();
  }
  if (shard) {  // every N-th file, so each shard gets a spread of ops
    std::vector<std::string> mine;
    for (std::size_t i = 0; i < files.size(); ++i)
      if (static_cast<int64_t>(i % shard->count) == shard->index - 1) mine.push_back(files[i]);
    files = std::move(mine);
  }

  const std::string report_path = parsed.value("--report").value_or("");
  CheckOptions opts;
  opts.max_bytes = max_bytes;
  opts.repeat = static_cast<int>(repeat);
  if (!report_path.empty())
    opts.failed_cases_dir =
        (std::filesystem::path(report_path).parent_path() / "failed_cases").string();
  // The replay of the sweep; with a time budget the count is only known at the end, and
  // failing cases' repros (when no report saves them) carry the requested bound.
  auto sweep_repro = [&](int64_t count) {
    return "gscheck run --backend " + shell_quote(backend_name) + " --seed " +
           std::to_string(seed) + " --sweep " + std::to_string(count) + " --size " +
           std::to_string(size) +
           (shard ? " --shard " + std::to_string(shard->index) + "/" + std::to_string(shard->count)
                  : std::string()) +
           (repeat > 1 ? " --repeat " + std::to_string(repeat) : std::string());
  };
  opts.sweep_repro = sweep_repro(sweep);
  CaseChecker checker(**backend, ref, opts);

  reports::Report report;
  report.run.command = "run";
  report.run.argv = {"gscheck", "run"};
  report.run.argv.insert(report.run.argv.end(), args.begin(), args.end());
  report.run.started_at = reports::utc_now();
  report.run.backend = (*backend)->capabilities();
  report.run.sweep = sweep;
  report.run.sweep_size = size;
  report.run.shard = shard;
  report.run.time_budget_s = time_budget;
  if (sweep > 0) report.run.seed = seed;
  const bool verbose = parsed.has("--verbose");

  // Progress: the total is known unless a time budget decides it.
  int64_t sweep_cases = sweep;
  if (shard) sweep_cases = sweep / shard->count + (sweep % shard->count >= shard->index ? 1 : 0);
  double interval = 10;
  if (const char* e = std::getenv("GSCHECK_PROGRESS_INTERVAL")) {
    auto n = parse_int_option("GSCHECK_PROGRESS_INTERVAL", e, 1, 86400);
    if (!n.ok()) return usage_error(n.error().message);
    interval = static_cast<double>(*n);
  }
  Progress progress(Progress::mode_for(parsed.has("--quiet"), stderr), stderr,
                    time_budget
                        ? std::nullopt
                        : std::optional<int64_t>(static_cast<int64_t>(files.size()) + sweep_cases),
                    time_budget, interval);
  int64_t failures = 0;
  auto record = [&](reports::CaseResult r) {
    if (reports::is_failure(r.verdict)) ++failures;
    if (verbose || reports::is_failure(r.verdict)) {
      progress.clear();
      std::fputs(result_text(r).c_str(), stdout);
      std::fflush(stdout);
    }
    report.cases.push_back(std::move(r));
    progress.update(static_cast<int64_t>(report.cases.size()), failures);
  };

  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Case files first, then the sweep; with --jobs N they are checked N at a time and reported
  // in this order.
  for_each_ordered<reports::CaseResult>(
      files.size(), jobs, [&](std::size_t i) { return checker.check_file(files[i]); },
      [&](reports::CaseResult&& r) { record(std::move(r)); });
#if defined(GSCHECK_HAVE_GENERATORS)
  if (sweep > 0) {
    const Capabilities& caps = (*backend)->capabilities();
    gen::SampleOptions so;
    so.seed = seed;
    so.count = static_cast<int>(sweep);
    so.size = static_cast<int>(size);
    // Draw what the backend claims, so the sweep is spent on cases it is graded on.
    so.ops = caps.ops;
    so.dtypes = caps.dtypes;
    so.semantics = caps.semantics;
    for (DType dt : caps.index_dtypes)
      if (dt == DType::kInt32 || dt == DType::kInt64) so.index_dtypes.push_back(dt);
    // Drawn in batches of `jobs` cases under a time budget (checked before each batch, so a run
    // overshoots it by at most one case per job: the sweep's cases take milliseconds), else of
    // 1024 (the memory of a long sweep stays bounded).
    gen::Sampler sampler(so);
    const double sweep_start = elapsed();  // the budget is the sweep's: case files run in full
    progress.start_budget();
    const std::size_t batch_cases = time_budget ? static_cast<std::size_t>(jobs) : 1024;
    std::vector<CaseFile> batch;
    auto check_batch = [&] {
      for_each_ordered<reports::CaseResult>(
          batch.size(), jobs, [&](std::size_t i) { return checker.check_case(batch[i], ""); },
          [&](reports::CaseResult&& r) { record(std::move(r)); });
      batch.clear();
    };
    while (sampler.position() < sweep &&
           !(time_budget && elapsed() - sweep_start >= *time_budget)) {
      if (shard && sampler.position() % shard->count != shard->index - 1) {
        sampler.skip();
        continue;
      }
      std::optional<Case> c = sampler.next();
      if (!c) continue;
      CaseFile f;
      f.c = std::move(*c);
      batch.push_back(std::move(f));
      if (batch.size() < batch_cases) continue;
      check_batch();
    }
    check_batch();
    report.run.sweep = sampler.position();
    report.run.sweep_elapsed_s = elapsed() - sweep_start;
    if (report.run.sweep != sweep) {  // the budget ended it: repros name the count reached
      for (auto& r : report.cases)
        if (r.file.empty() && r.repro == opts.sweep_repro) r.repro = sweep_repro(report.run.sweep);
    }
  }
#endif
  progress.finish(static_cast<int64_t>(report.cases.size()), failures);
  report.run.elapsed_s = elapsed();
  const bool matrix = parsed.has("--matrix") || backend_name.starts_with("plugin:");
  const int status = finish_run(report, report_path, parsed.value("--junit").value_or(""),
                                /*table=*/true, matrix);
  std::printf("backend %s, %zu case files, sweep %lld, repeat %lld", backend_name.c_str(),
              files.size(), static_cast<long long>(report.run.sweep),
              static_cast<long long>(repeat));
  if (shard)
    std::printf(", shard %lld/%lld", static_cast<long long>(shard->index),
                static_cast<long long>(shard->count));
  if (time_budget)
    std::printf(", time budget %.0f s (sweep %.2f s, run %.2f s)", *time_budget,
                report.run.sweep_elapsed_s, report.run.elapsed_s);
  if (sweep > 0) std::printf(", seed %llu", static_cast<unsigned long long>(seed));
  if (sweep > 0) std::printf(" (replay: %s)", sweep_repro(report.run.sweep).c_str());
  std::printf("\n");
  return status;
}

}  // namespace gscheck::tools
