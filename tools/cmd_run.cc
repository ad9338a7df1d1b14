// `gscheck run`: the CI job. Golden cases and regressions checked against their expect blocks and
// against the reference, plus a seeded random sweep checked against the reference.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>

#include "core/case_json.h"
#include "harness/checker.h"
#include "harness/regression.h"
#include "harness/runner.h"
#include "properties/sample.h"
#include "reports/atomic_file.h"
#include "reports/known_failures_lint.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugin_flags.h"
#include "tools/progress.h"
#include "tools/run_output.h"
#include "tools/sweep_options.h"

namespace gscheck::tools {
namespace {

constexpr int64_t kDefaultSweep = 5000;  // small cases: about a second on one core

// The shortest text that reads back as f (a replay command must give the same fraction).
std::string fraction_text(double f) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(f);
}

constexpr const char* kUsage =
    "usage: gscheck run [--backend NAME] [--sweep N] [--time SECONDS] [--seed S] [--size K]\n"
    "                   [--boundary-fraction P] [--large-fraction P] [--semantics S] [--shard "
    "K/N]\n"
    "                   [--report FILE] "
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
    "  --large-fraction P  that share of the sweep's positions are large cases: 10,000 to\n"
    "                   1,000,000 output elements, named .../large (default 0.015625, one in 64;\n"
    "                   0 for none), as `gscheck export` draws them\n"
    "  --semantics S    sweep only tf-cpu, tf-gpu, xla or jax cases (default: every one the "
    "backend\n"
    "                   claims). `--semantics tf-cpu` on the reference draws the cases of\n"
    "                   `gscheck export --include-invalid` with the same seed, size and fraction\n"
    "  --report FILE    write the JSON report; failing and XFAIL random cases are saved as case\n"
    "                   files in failed_cases/ next to it, each case's repro names its file.\n"
    "                   '-': the report on stdout (the text then goes\n"
    "                   to stderr; no case files are saved)\n" GSCHECK_SHRINK_USAGE
    "  --junit FILE     write JUnit XML ('-': on stdout, as --report -)\n"
    "  --max-bytes N    memory budget for one case's tensors, given to every backend (default\n"
    "                   4294967296); case files larger than it are SKIPPED unread\n"
    "  --repeat K       run each case K times (default 2 for plugin:PATH backends, else 1): a\n"
    "                   backend declaring itself deterministic must give bit-identical outcomes\n"
    "                   (else NONDETERMINISTIC), any other must pass on every run (else FAILED);\n"
    "                   a run that costs the backend its worker (a crash, a timeout) is UNSAFE\n"
    "                   and not repeated\n"
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
    "                   entry declares failing is XPASS; other differences stay FAILED; an\n"
    "                   UNSAFE case an entry describes stays UNSAFE (exit 4)\n"
    "  --strict         an XPASS fails the run too\n"
    "  --lint-known-failures  also check the known-failures file itself (gscheck known-failures\n"
    "                   check): exit 1 when an entry is unused, too wide or would forgive an\n"
    "                   injected bug\n"
    "  A case inside the backend's declared contract that it declines (unimplemented, or\n"
    "  unsupported where TensorFlow computes) is DECLINED, a failure.\n"
    "  Exit status: 0 no case failed, 1 a case FAILED, was MISTRUSTED, NONDETERMINISTIC,\n"
    "  DECLINED or UNSAFE (or XPASS with --strict), 2 bad command line, 3 a report could not be\n"
    "  written, 4 the only failures are UNSAFE cases (a crash, a hang, memory nobody wrote) that\n"
    "  known-failures entries describe: never green, 128+N stopped\n"
    "  by signal N (SIGINT, SIGTERM, SIGHUP). The reports are written atomically; a stopped run\n"
    "  writes what ran, marked \"interrupted\"; a run that is killed leaves a report marked as\n"
    "  not finished.\n";

int usage_error(const std::string& message) { return value_error("gscheck run", message); }

// corpus/<name> relative to the working directory when it is there, else the installed one,
// else the source tree's (data_path).
std::vector<std::string> default_paths() {
  std::vector<std::string> paths;
  for (const char* name : {"corpus/golden", "corpus/regressions"})
    if (auto path = data_path(name)) paths.push_back(*path);
  return paths;
}

// "K/N" with 1 <= K <= N.
Expected<reports::Shard> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto bad = [&] {
    return parse_error("--shard: expected K/N with 1 <= K <= N (e.g. 2/4), got '" + text + "'");
  };
  if (slash == std::string::npos) return bad();
  auto k = parse_int_option("--shard", text.substr(0, slash), 1, reports::kMaxShards);
  auto n = parse_int_option("--shard", text.substr(slash + 1), 1, reports::kMaxShards);
  if (!k.ok() || !n.ok() || *k > *n) return bad();
  return reports::Shard{*k, *n};
}

// Everything the command line says about the run.
struct RunOptions {
  int64_t max_bytes = kDefaultMaxCaseBytes, sweep = kDefaultSweep, size = 30, repeat = 1;
  uint64_t seed = 0;
  double case_timeout = 600;
  double boundary_fraction = gen::kDefaultBoundaryFraction;
  double large_fraction = gen::kDefaultLargeFraction;
  std::optional<Semantics> sweep_semantics;
  std::optional<double> time_budget;
  std::optional<reports::Shard> shard;
  std::string backend_name, report_path;
};

// The numeric options; "" when all parsed, else the usage error's message.
std::string parse_numbers(const ParsedArgs& parsed, RunOptions& o) {
  for (const auto& [name, target, lo, hi] : {std::tuple<const char*, int64_t*, int64_t, int64_t>{
                                                 "--max-bytes", &o.max_bytes, 1, INT64_MAX},
                                             {"--sweep", &o.sweep, 0, 100000000},
                                             {"--size", &o.size, 0, 1000}}) {
    if (auto v = parsed.value(name)) {
      auto n = parse_int_option(name, *v, lo, hi);
      if (!n.ok()) return n.error().message;
      *target = *n;
    }
  }
  if (auto v = parsed.value("--case-timeout")) {
    auto n = parse_int_option("--case-timeout", *v, 0, 86400 * 7);
    if (!n.ok()) return n.error().message;
    o.case_timeout = static_cast<double>(*n);
  }
  o.seed = std::random_device{}();
  if (auto v = parsed.value("--seed")) {
    auto n = parse_int_option("--seed", *v, 0, INT64_MAX);
    if (!n.ok()) return n.error().message;
    o.seed = static_cast<uint64_t>(*n);
  }
  if (auto v = parsed.value("--boundary-fraction")) {
    auto f = parse_fraction_option("--boundary-fraction", *v);
    if (!f.ok()) return f.error().message;
    o.boundary_fraction = *f;
  }
  if (auto v = parsed.value("--large-fraction")) {
    auto f = parse_fraction_option("--large-fraction", *v);
    if (!f.ok()) return f.error().message;
    o.large_fraction = *f;
  }
  if (auto v = parsed.value("--time")) {
    auto n = parse_int_option("--time", *v, 1, 100000000);
    if (!n.ok()) return n.error().message;
    o.time_budget = static_cast<double>(*n);
    if (!parsed.has("--sweep")) o.sweep = 100000000;  // the budget decides
  }
  return "";
}

std::string parse_run_options(const ParsedArgs& parsed, RunOptions& o) {
  if (std::string bad = parse_numbers(parsed, o); !bad.empty()) return bad;
  if (auto v = parsed.value("--semantics")) {
    o.sweep_semantics = semantics_from_name(*v);
    if (!o.sweep_semantics)
      return "--semantics: expected one of " + semantics_names() + ", got '" + *v + "'";
  }
  if (auto v = parsed.value("--shard")) {
    auto s = parse_shard(*v);
    if (!s.ok()) return s.error().message;
    o.shard = *s;
  }
  const auto names = backend_names();
  const bool have_emu = std::find(names.begin(), names.end(), "cuda-emu") != names.end();
  o.backend_name = parsed.value("--backend").value_or(have_emu ? "cuda-emu" : "reference");
  o.repeat = harness::default_repeat(o.backend_name);
  if (auto v = parsed.value("--repeat")) {
    auto n = parse_int_option("--repeat", *v, 1, 1000);
    if (!n.ok()) return n.error().message;
    o.repeat = *n;
  }
  o.report_path = parsed.value("--report").value_or("");
  if (o.report_path == "-" || parsed.value("--junit").value_or("") == "-")
    reports::reserve_stdout_for_reports();  // the report is stdout; the text goes to stderr
  return "";
}

// The replay of the sweep up to `count` positions.
std::string sweep_repro(const RunOptions& o, int64_t count) {
  const char* venv = std::getenv("GSCHECK_PYTHON_VENV");  // set from --python-venv
  const bool python = o.backend_name.starts_with("python:") && venv && *venv;
  return "gscheck run --backend " + harness::shell_quote(o.backend_name) +
         (python ? " --python-venv " + harness::shell_quote(venv) : std::string()) + " --seed " +
         std::to_string(o.seed) + " --sweep " + std::to_string(count) + " --size " +
         std::to_string(o.size) +
         (o.boundary_fraction != gen::kDefaultBoundaryFraction
              ? " --boundary-fraction " + fraction_text(o.boundary_fraction)
              : std::string()) +
         (o.large_fraction != gen::kDefaultLargeFraction
              ? " --large-fraction " + fraction_text(o.large_fraction)
              : std::string()) +
         (o.sweep_semantics ? " --semantics " + std::string(semantics_name(*o.sweep_semantics))
                            : std::string()) +
         (o.shard
              ? " --shard " + std::to_string(o.shard->index) + "/" + std::to_string(o.shard->count)
              : std::string()) +
         (o.repeat > 1 ? " --repeat " + std::to_string(o.repeat) : std::string());
}

reports::RunInfo run_info(const std::vector<std::string>& args, const ParsedArgs& parsed,
                          const RunOptions& o, const Capabilities& caps) {
  reports::RunInfo run;
  run.command = "run";
  run.argv = {"gscheck", "run"};
  run.argv.insert(run.argv.end(), args.begin(), args.end());
  run.started_at = reports::utc_now();
  run.backend = caps;
  run.sweep = o.sweep;
  run.known_failures = parsed.value("--known-failures").value_or("");
  run.strict = parsed.has("--strict");
  run.sweep_size = o.size;
  if (o.sweep > 0) run.sweep_boundary_fraction = o.boundary_fraction;
  if (o.sweep > 0) run.sweep_large_fraction = o.large_fraction;
  run.shard = o.shard;
  run.time_budget_s = o.time_budget;
  if (o.sweep > 0) run.seed = o.seed;
  return run;
}

// The sweep's cases, from the one sampler `gscheck export` draws from too.
class SamplerSource : public harness::CaseSource {
 public:
  explicit SamplerSource(const gen::SampleOptions& so) : sampler_(so) {}
  int64_t position() const override { return sampler_.position(); }
  std::optional<Case> next() override { return sampler_.next(); }
  void skip() override { sampler_.skip(); }

 private:
  gen::Sampler sampler_;
};

void print_run_line(const RunOptions& o, std::size_t files, const harness::Runner::SweepEnd& end,
                    double elapsed) {
  std::printf("backend %s, %zu case files, sweep %lld, repeat %lld", o.backend_name.c_str(), files,
              static_cast<long long>(end.reached), static_cast<long long>(o.repeat));
  if (o.shard)
    std::printf(", shard %lld/%lld", static_cast<long long>(o.shard->index),
                static_cast<long long>(o.shard->count));
  if (o.time_budget)
    std::printf(", time budget %.0f s (sweep %.2f s, run %.2f s)", *o.time_budget, end.elapsed_s,
                elapsed);
  if (o.sweep > 0) std::printf(", seed %llu", static_cast<unsigned long long>(o.seed));
  if (o.sweep > 0) std::printf(" (replay: %s)", sweep_repro(o, end.reached).c_str());
  std::printf("\n");
}

// The options of `gscheck run` (the plugin options come on top).
std::vector<OptionSpec> run_option_specs() {
  // clang-format off
  return {{"--backend", true},   {"--sweep", true},        {"--seed", true},
          {"--size", true},      {"--report", true},       {"--junit", true},
          {"--max-bytes", true}, {"--repeat", true},       {"--case-timeout", true},
          {"--matrix", false},   {"--verbose", false},     {"--quiet", false},
          {"--time", true},      {"--shard", true},        {"--known-failures", true},
          {"--strict", false},   {"--lint-known-failures", false},
          {"--boundary-fraction", true},                   {"--semantics", true},
          {"--large-fraction", true}};
  // clang-format on
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  harness::block_run_signals();  // before any backend starts threads: only the guard takes them
  std::vector<OptionSpec> specs = run_option_specs();
  for (auto& spec : plugin_option_specs()) specs.push_back(spec);
  for (auto& spec : shrink_option_specs()) specs.push_back(spec);
  auto line = parse_command_line(args, specs, "gscheck run", kUsage);
  if (!line.args) return line.exit_status;
  const ParsedArgs& parsed = *line.args;
  RunOptions o;
  if (std::string bad = parse_run_options(parsed, o); !bad.empty()) return usage_error(bad);
  auto plugin = plugin_options(parsed, o.max_bytes);
  if (!plugin.ok()) return usage_error(plugin.error().message);

  // Everything the verdict depends on is read (and hashed) before any graded code runs: a
  // plugin's init() and a Python module's import run in make_named_backend.
  harness::CheckOptions opts;
  opts.max_bytes = o.max_bytes;
  opts.repeat = static_cast<int>(o.repeat);
  // "-": the report is the standard output; failing random cases are not saved (no folder was
  // named) and their replay is the sweep's.
  if (std::string bad = shrink_options(parsed, o.report_path, o.case_timeout, opts); !bad.empty())
    return usage_error(bad);
  opts.sweep_repro = sweep_repro(o, o.sweep);
  std::optional<reports::KnownFailures> known;
  std::optional<reports::KnownFailuresLint> lint;
  if (std::string bad = known_failures_options(parsed, opts, known, lint); !bad.empty())
    return usage_error(bad);
  std::vector<std::string> paths = parsed.positional;
  if (paths.empty()) paths = default_paths();
  std::vector<std::string> files;
  if (!paths.empty()) {
    auto listed = list_case_files(paths);
    if (!listed.ok()) return usage_error(listed.error().message);
    files = harness::Runner::shard_files(std::move(listed).value(), o.shard);
  }
  const harness::SealedInputs sealed = harness::SealedInputs::read(files, o.max_bytes);
  opts.sealed = &sealed;
  if (is_plugin_backend(o.backend_name))
    if (Status hidden = hide_run_inputs(*plugin, parsed, files, opts.failed_cases_dir);
        !hidden.ok())
      return usage_error(hidden.error().message);
  const reports::RunInfo::Sealed sealed_info = sealed_run_info(
      sealed, known ? &*known : nullptr, is_plugin_backend(o.backend_name), !o.report_path.empty());

  auto backend = make_named_backend(o.backend_name, o.max_bytes, *plugin);
  if (!backend.ok()) return usage_error(backend.error().message);
  const Capabilities& caps = (*backend)->capabilities();
  if (o.sweep_semantics && std::find(caps.semantics.begin(), caps.semantics.end(),
                                     *o.sweep_semantics) == caps.semantics.end())
    return usage_error("--semantics: backend " + o.backend_name + " claims no " +
                       std::string(semantics_name(*o.sweep_semantics)) + " semantics");
  auto reference = make_named_backend("reference", o.max_bytes);
  if (!reference.ok()) return usage_error(reference.error().message);
  Backend* ref = o.backend_name == "reference" ? backend->get() : reference->get();
  harness::CaseChecker checker(**backend, ref, opts);

  reports::RunInfo run = run_info(args, parsed, o, caps);
  run.sealed = sealed_info;
  // Case results go to the report files' spools as they come: memory stays flat over the sweep.
  auto stream =
      reports::ReportStream::open(run, o.report_path, parsed.value("--junit").value_or(""));
  if (!stream.ok()) {
    std::fprintf(stderr, "gscheck run: %s\n", stream.error().message.c_str());
    return 3;
  }
  double interval = 10;
  if (const char* e = std::getenv("GSCHECK_PROGRESS_INTERVAL")) {
    auto n = parse_int_option("GSCHECK_PROGRESS_INTERVAL", e, 1, 86400);
    if (!n.ok()) return usage_error(n.error().message);
    interval = static_cast<double>(*n);
  }
  // Progress: the total is known unless a time budget decides it.
  const int64_t total =
      static_cast<int64_t>(files.size()) + harness::Runner::shard_positions(o.sweep, o.shard);
  Progress progress(Progress::mode_for(parsed.has("--quiet"), stderr), stderr,
                    o.time_budget ? std::nullopt : std::optional<int64_t>(total), o.time_budget,
                    interval);
  CliSink sink(**stream, &progress, lint ? &*lint : nullptr, parsed.has("--verbose"), run.strict);
  // Concurrent checking is for plugin workers; the in-tree backends run on this thread.
  const int jobs = is_plugin_backend(o.backend_name) ? plugin->jobs : 1;
  harness::Runner runner(checker, sink, {o.backend_name, jobs, o.case_timeout, o.shard});

  runner.run_files(files);  // case files first, in full; then the sweep
  harness::Runner::SweepEnd end{o.sweep, 0};
  if (o.sweep > 0) {
    SamplerSource source(run_sweep_options(caps, o.seed, o.sweep, static_cast<int>(o.size),
                                           o.boundary_fraction, o.sweep_semantics,
                                           o.large_fraction));
    progress.start_budget();
    // Under a time budget the count is known only at the end: a case's replay runs the sweep
    // up to and including its own position.
    end = runner.run_sweep(source, o.sweep, o.time_budget, [&](int64_t position) {
      return o.time_budget ? sweep_repro(o, position + 1) : opts.sweep_repro;
    });
  }
  progress.finish(sink.done(), sink.failures());
  const bool matrix = parsed.has("--matrix") || is_plugin_backend(o.backend_name);
  int status = finish_stream(**stream, runner.elapsed_s(), run.strict, /*table=*/true, matrix);
  if (sink.spool_error()) {
    std::fprintf(stderr, "gscheck run: %s\n", sink.spool_error()->message.c_str());
    status = 3;
  }
  print_run_line(o, files.size(), end, runner.elapsed_s());
  if (lint && print_lint(*lint, known->path) && (status == 0 || status == 4)) status = 1;
  return status;
}

}  // namespace gscheck::tools
