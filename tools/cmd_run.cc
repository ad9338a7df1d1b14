// `gscheck run`: the CI job. Golden cases and regressions checked against their expect blocks and
// against the reference, plus a seeded random sweep checked against the reference.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>

#include "core/case_json.h"
#include "reports/known_failures_lint.h"
#include "tools/case_check.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugin_flags.h"
#include "tools/progress.h"
#include "tools/run_guard.h"

#if defined(GSCHECK_HAVE_GENERATORS)
#include "properties/sample.h"
#include "tools/sweep_options.h"
#endif

#ifndef GSCHECK_SOURCE_DIR
#define GSCHECK_SOURCE_DIR "."
#endif

namespace gscheck::tools {
namespace {

constexpr int64_t kDefaultSweep = 5000;  // small cases: about a second on one core
#if defined(GSCHECK_HAVE_GENERATORS)
constexpr double kDefaultBoundaryFraction = gen::kDefaultBoundaryFraction;
#else
constexpr double kDefaultBoundaryFraction = 0;  // no sweep
#endif

// The shortest text that reads back as f (a replay command must give the same fraction).
std::string fraction_text(double f) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(f);
}

constexpr const char* kUsage =
    "usage: gscheck run [--backend NAME] [--sweep N] [--time SECONDS] [--seed S] [--size K]\n"
    "                   [--boundary-fraction P] [--semantics S] [--shard K/N] [--report FILE] "
    "[--junit FILE] [--max-bytes N]\n"
    "                   [--repeat K] [--case-timeout S] [--matrix] [--verbose] [--quiet]\n"
    "                   [--jobs N] [--timeout S] [--isolate worker|call]\n"
    "                   [--known-failures FILE] [--strict] [--lint-known-failures] [PATHS...]\n"
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
    "  --boundary-fraction P  in that share of the sweep's min/max/add/sub/scatter_nd cases,\n"
    "                   about a third of the updates and tensor elements become the dtype's\n"
    "                   boundary values, as `gscheck export` draws them (default 0.5; 0 for none)\n"
    "  --semantics S    sweep only tf-cpu or tf-gpu cases (default: every semantics the backend\n"
    "                   claims). `--semantics tf-cpu` on the reference draws the cases of\n"
    "                   `gscheck export --include-invalid` with the same seed, size and fraction\n"
    "  --report FILE    write the JSON report; failing random cases are saved as case files in\n"
    "                   failed_cases/ next to it\n"
    "  --junit FILE     write JUnit XML\n"
    "  --max-bytes N    memory budget for one case's tensors, given to every backend (default\n"
    "                   4294967296); case files larger than it are SKIPPED unread\n"
    "  --repeat K       run each case K times (default 2 for plugin:PATH backends, else 1): a\n"
    "                   backend declaring itself deterministic must give bit-identical outcomes\n"
    "                   (else NONDETERMINISTIC), any other must pass on every run (else FAILED)\n"
    "  --case-timeout S wall-clock limit per case in seconds (default 600; 0 for none): a case\n"
    "                   past it is FAILED and the run ends there, its report marked interrupted\n"
    "  --matrix         also print the capability matrix: verdict counts per op x dtype x index\n"
    "                   dtype x bad_indices_policy (always printed for plugin:PATH backends)\n"
    "  --verbose        print a line for every case (default: only the failures)\n"
    "  --quiet          no progress on stderr (default: a line redrawn in place on a terminal,\n"
    "                   else a line every 10 s, or every $GSCHECK_PROGRESS_INTERVAL "
    "seconds)\n" GSCHECK_PLUGIN_USAGE
    "  --known-failures FILE  failures the backend is known to have (JSON,\n"
    "                   reports/known_failures.schema.json): a failure whose every difference\n"
    "                   an entry explains is XFAIL (not a failure of the run), a passing case an\n"
    "                   entry declares failing is XPASS; other differences stay FAILED\n"
    "  --strict         an XPASS fails the run too\n"
    "  --lint-known-failures  also check the known-failures file itself (gscheck known-failures\n"
    "                   check): exit 1 when an entry is unused, too wide or would forgive an\n"
    "                   injected bug\n"
    "  A case inside the backend's declared contract that it declines (unimplemented, or\n"
    "  unsupported where TensorFlow computes) is DECLINED, a failure.\n"
    "  Exit status: 0 no case failed, 1 a case FAILED, was MISTRUSTED, NONDETERMINISTIC or\n"
    "  DECLINED (or\n"
    "  XPASS with --strict), 2 bad command line, 3 a report could not be written, 128+N stopped\n"
    "  by signal N (SIGINT, SIGTERM, SIGHUP). The reports are written atomically; a stopped run\n"
    "  writes what ran, marked \"interrupted\"; a run that is killed leaves a report marked as\n"
    "  not finished.\n";

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
  block_run_signals();  // before any backend starts threads: only the RunGuard thread takes them
  std::vector<OptionSpec> specs = {{"--backend", true},
                                   {"--sweep", true},
                                   {"--seed", true},
                                   {"--size", true},
                                   {"--report", true},
                                   {"--junit", true},
                                   {"--max-bytes", true},
                                   {"--repeat", true},
                                   {"--case-timeout", true},
                                   {"--matrix", false},
                                   {"--verbose", false},
                                   {"--quiet", false},
                                   {"--time", true},
                                   {"--shard", true},
                                   {"--known-failures", true},
                                   {"--strict", false},
                                   {"--lint-known-failures", false},
                                   {"--boundary-fraction", true},
                                   {"--semantics", true}};
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
  double case_timeout = 600;
  if (auto v = parsed.value("--case-timeout")) {
    auto n = parse_int_option("--case-timeout", *v, 0, 86400 * 7);
    if (!n.ok()) return usage_error(n.error().message);
    case_timeout = static_cast<double>(*n);
  }
  if (auto v = parsed.value("--seed")) {
    auto n = parse_int_option("--seed", *v, 0, INT64_MAX);
    if (!n.ok()) return usage_error(n.error().message);
    seed = static_cast<uint64_t>(*n);
  }
  double boundary_fraction = kDefaultBoundaryFraction;
  if (auto v = parsed.value("--boundary-fraction")) {
    auto f = parse_fraction_option("--boundary-fraction", *v);
    if (!f.ok()) return usage_error(f.error().message);
    boundary_fraction = *f;
  }
  std::optional<Semantics> sweep_semantics;
  if (auto v = parsed.value("--semantics")) {
    sweep_semantics = semantics_from_name(*v);
    if (!sweep_semantics)
      return usage_error("--semantics: expected tf-cpu or tf-gpu, got '" + *v + "'");
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
  if (sweep_semantics) {
    const auto& claimed = (*backend)->capabilities().semantics;
    if (std::find(claimed.begin(), claimed.end(), *sweep_semantics) == claimed.end())
      return usage_error("--semantics: backend " + backend_name + " claims no " +
                         std::string(semantics_name(*sweep_semantics)) + " semantics");
  }
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
           (boundary_fraction != kDefaultBoundaryFraction
                ? " --boundary-fraction " + fraction_text(boundary_fraction)
                : std::string()) +
           (sweep_semantics ? " --semantics " + std::string(semantics_name(*sweep_semantics))
                            : std::string()) +
           (shard ? " --shard " + std::to_string(shard->index) + "/" + std::to_string(shard->count)
                  : std::string()) +
           (repeat > 1 ? " --repeat " + std::to_string(repeat) : std::string());
  };
  opts.sweep_repro = sweep_repro(sweep);
  std::optional<reports::KnownFailures> known;
  if (auto v = parsed.value("--known-failures")) {
    auto k = reports::load_known_failures(*v);
    if (!k.ok()) return usage_error(k.error().message);
    known = std::move(k).value();
    opts.known_failures = &*known;
  }
  opts.lint = parsed.has("--lint-known-failures");
  if (opts.lint && !known) return usage_error("--lint-known-failures needs --known-failures FILE");
  std::optional<reports::KnownFailuresLint> lint;
  if (opts.lint) lint.emplace(*known);
  CaseChecker checker(**backend, ref, opts);

  reports::RunInfo run;
  run.command = "run";
  run.argv = {"gscheck", "run"};
  run.argv.insert(run.argv.end(), args.begin(), args.end());
  run.started_at = reports::utc_now();
  run.backend = (*backend)->capabilities();
  run.sweep = sweep;
  run.known_failures = parsed.value("--known-failures").value_or("");
  run.strict = parsed.has("--strict");
  run.sweep_size = size;
  if (sweep > 0) run.sweep_boundary_fraction = boundary_fraction;
  run.shard = shard;
  run.time_budget_s = time_budget;
  if (sweep > 0) run.seed = seed;
  // Case results go to the report files' spools as they come: memory stays flat over the sweep.
  auto stream = reports::ReportStream::open(run, report_path, parsed.value("--junit").value_or(""));
  if (!stream.ok()) {
    std::fprintf(stderr, "gscheck run: %s\n", stream.error().message.c_str());
    return 3;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Declared after the stream: destroyed (its thread joined) before the stream it writes to.
  RunGuard guard(case_timeout,
                 [&](const std::string& reason, const InFlightCase* in_flight, int status) {
                   if (in_flight && status == 1) {  // the case over its time limit: FAILED
                     reports::CaseResult r;
                     r.name = in_flight->name;
                     r.file = in_flight->file;
                     r.backend = backend_name;
                     r.repro = in_flight->repro;
                     r.outcome = "not finished";
                     r.reason = reason;
                     r.verdict = reports::Verdict::kFailed;
                     (void)(*stream)->add(r);
                   }
                   if (Status st = (*stream)->finish(elapsed(), reason); !st.ok()) {
                     std::fprintf(stderr, "gscheck: %s\n", st.error().message.c_str());
                     return 3;
                   }
                   return status;
                 });
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
  int64_t done = 0, failures = 0;
  std::optional<Error> spool_error;
  auto record = [&](const reports::CaseResult& r) {
    guard.case_finished();
    const bool failed = reports::is_failure(r.verdict, run.strict);
    failures += failed;
    if (verbose || failed) {
      progress.clear();
      std::fputs(result_text(r).c_str(), stdout);
      std::fflush(stdout);
    }
    if (Status st = (*stream)->add(r); !st.ok() && !spool_error) spool_error = st.error();
    if (lint) lint->add(r);
    progress.update(++done, failures);
  };
  // Checks n items, N at a time with --jobs N, recording the results in order. Results come in
  // order, so the item the run waits on (named when --case-timeout or a signal stops it) is
  // always the next index.
  auto check_in_order = [&](std::size_t n, auto&& check, auto&& in_flight, auto&& recorded) {
    if (n == 0) return;
    std::size_t waiting = 0;
    guard.case_started(in_flight(0));
    for_each_ordered<reports::CaseResult>(n, jobs, check, [&](reports::CaseResult&& r) {
      record(r);
      recorded(waiting);
      if (++waiting < n) guard.case_started(in_flight(waiting));
    });
  };
  auto file_in_flight = [&](std::size_t i) {
    return InFlightCase{files[i], files[i], eval_repro(backend_name, files[i])};
  };
  // Case files first, then the sweep.
  int64_t sweep_reached = sweep;  // sweep positions run (a time budget may stop it earlier)
  double sweep_elapsed = 0;
  check_in_order(
      files.size(), [&](std::size_t i) { return checker.check_file(files[i]); }, file_in_flight,
      [](std::size_t) {});
#if defined(GSCHECK_HAVE_GENERATORS)
  if (sweep > 0) {
    const gen::SampleOptions so =
        run_sweep_options((*backend)->capabilities(), seed, sweep, static_cast<int>(size),
                          boundary_fraction, sweep_semantics);
    // Drawn in batches of `jobs` cases under a time budget (checked before each batch, so a run
    // overshoots it by at most one case per job: the sweep's cases take milliseconds), else of
    // 1024 (the memory of a long sweep stays bounded).
    gen::Sampler sampler(so);
    const double sweep_start = elapsed();  // the budget is the sweep's: case files run in full
    progress.start_budget();
    const std::size_t batch_cases = time_budget ? static_cast<std::size_t>(jobs) : 1024;
    std::vector<std::pair<int64_t, CaseFile>> batch;  // (sweep position, case)
    // Under a time budget the count is known only at the end: a case's replay runs the sweep
    // up to and including its own position.
    auto repro_of = [&](int64_t position) {
      return time_budget ? sweep_repro(position + 1) : opts.sweep_repro;
    };
    auto check_batch = [&] {
      check_in_order(
          batch.size(),
          [&](std::size_t i) {
            reports::CaseResult r = checker.check_case(batch[i].second, "");
            if (r.repro == opts.sweep_repro) r.repro = repro_of(batch[i].first);
            return r;
          },
          [&](std::size_t i) {
            return InFlightCase{batch[i].second.c.name, "", repro_of(batch[i].first)};
          },
          // A run stopped by a signal reports the positions it has results for.
          [&](std::size_t i) {
            (*stream)->set_sweep_reached(batch[i].first + 1, elapsed() - sweep_start);
          });
      batch.clear();
    };
    while (sampler.position() < sweep &&
           !(time_budget && elapsed() - sweep_start >= *time_budget)) {
      if (shard && sampler.position() % shard->count != shard->index - 1) {
        sampler.skip();
        continue;
      }
      const int64_t position = sampler.position();
      std::optional<Case> c = sampler.next();
      if (!c) continue;
      CaseFile f;
      f.c = std::move(*c);
      batch.emplace_back(position, std::move(f));
      if (batch.size() < batch_cases) continue;
      check_batch();
    }
    check_batch();
    sweep_reached = sampler.position();
    sweep_elapsed = elapsed() - sweep_start;
    (*stream)->set_sweep_reached(sweep_reached, sweep_elapsed);
  }
#endif
  progress.finish(done, failures);
  const bool matrix = parsed.has("--matrix") || backend_name.starts_with("plugin:");
  int status = finish_stream(**stream, elapsed(), run.strict, /*table=*/true, matrix);
  if (spool_error) {
    std::fprintf(stderr, "gscheck run: %s\n", spool_error->message.c_str());
    status = 3;
  }
  std::printf("backend %s, %zu case files, sweep %lld, repeat %lld", backend_name.c_str(),
              files.size(), static_cast<long long>(sweep_reached), static_cast<long long>(repeat));
  if (shard)
    std::printf(", shard %lld/%lld", static_cast<long long>(shard->index),
                static_cast<long long>(shard->count));
  if (time_budget)
    std::printf(", time budget %.0f s (sweep %.2f s, run %.2f s)", *time_budget, sweep_elapsed,
                elapsed());
  if (sweep > 0) std::printf(", seed %llu", static_cast<unsigned long long>(seed));
  if (sweep > 0) std::printf(" (replay: %s)", sweep_repro(sweep_reached).c_str());
  std::printf("\n");
  if (lint && print_lint(*lint, known->path) && status == 0) status = 1;
  return status;
}

}  // namespace gscheck::tools
