// `gscheck eval`: run case files on a backend and check them against their expect blocks (and,
// for a backend other than the reference, against the reference's outcome).
#include <cstdio>
#include <optional>

#include "core/case_json.h"
#include "harness/checker.h"
#include "harness/runner.h"
#include "reports/atomic_file.h"
#include "reports/known_failures_lint.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugin_flags.h"
#include "tools/run_output.h"

namespace gscheck::tools {
namespace {

constexpr const char* kUsage =
    "usage: gscheck eval [--backend NAME] [--report FILE] [--junit FILE] [--max-bytes N]\n"
    "                    [--repeat K] [--case-timeout S] [--matrix] [--quiet] [--jobs N]\n"
    "                    [--timeout S] [--isolate worker|call] [--known-failures FILE]\n"
    "                    [--strict] [--lint-known-failures] [--shrink-time S]\n"
    "                    [--shrink-total S] CASE.json|DIR...\n"
    "  Runs each case file (directories are searched recursively for *.json) on the backend\n"
    "  and checks the outcome against the file's expect block; a backend other than the\n"
    "  reference is also compared with the reference's outcome. Prints one line per case.\n"
    "  --backend NAME   backend to check (default: reference; see gscheck list-backends)\n"
    "  --report FILE    write the JSON report (docs/report_format.md); '-': on stdout (the text\n"
    "                   then goes to stderr; --junit - likewise)\n"
    "  --junit FILE     write JUnit XML\n" GSCHECK_SHRINK_USAGE
    "  --max-bytes N    memory budget for one case's tensors, given to every backend (default\n"
    "                   4294967296); case files larger than it are SKIPPED unread\n"
    "  --repeat K       run each case K times (default 2 for plugin:PATH backends, else 1): a\n"
    "                   backend declaring itself deterministic must give bit-identical outcomes\n"
    "                   (else NONDETERMINISTIC), any other must pass on every run (else FAILED);\n"
    "                   a run that costs the backend its worker (a crash, a timeout) is FAILED\n"
    "                   and not repeated\n"
    "  --case-timeout S wall-clock limit per case in seconds (default 600; 0 for none): a case\n"
    "                   past it is FAILED and the run ends there, its report marked interrupted\n"
    "  --matrix         also print the capability matrix: verdict counts per op x dtype x index\n"
    "                   dtype x bad_indices_policy\n"
    "  --quiet          print only the failures, and the totals\n" GSCHECK_PLUGIN_USAGE
    "  --known-failures FILE  failures the backend is known to have (see gscheck run --help)\n"
    "  --strict         an XPASS fails the run too\n"
    "  --lint-known-failures  also check the known-failures file itself (gscheck known-failures\n"
    "                   check): exit 1 when an entry is unused, too wide or would forgive an\n"
    "                   injected bug\n"
    "  Exit status: 0 no case failed, 1 a case FAILED, was MISTRUSTED, NONDETERMINISTIC,\n"
    "  DECLINED or UNSAFE (or XPASS with --strict), 2 bad command line, 3 a report could not be\n"
    "  written, 4 the only failures are UNSAFE cases (a crash, a hang, memory nobody wrote) that\n"
    "  known-failures entries describe: never green, 128+N stopped by signal N (SIGINT, SIGTERM,\n"
    "  SIGHUP); the reports are then written with what ran, marked \"interrupted\".\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "gscheck eval: %s\n", message.c_str());
  return 2;
}

// --max-bytes, --repeat and --case-timeout; "" or the usage error's message.
std::string parse_numbers(const ParsedArgs& parsed, const std::string& backend_name,
                          int64_t& max_bytes, int64_t& repeat, double& case_timeout) {
  if (auto v = parsed.value("--max-bytes")) {
    auto n = parse_int_option("--max-bytes", *v, 1, INT64_MAX);
    if (!n.ok()) return n.error().message;
    max_bytes = *n;
  }
  repeat = harness::default_repeat(backend_name);
  if (auto v = parsed.value("--repeat")) {
    auto n = parse_int_option("--repeat", *v, 1, 1000);
    if (!n.ok()) return n.error().message;
    repeat = *n;
  }
  if (auto v = parsed.value("--case-timeout")) {
    auto n = parse_int_option("--case-timeout", *v, 0, 86400 * 7);
    if (!n.ok()) return n.error().message;
    case_timeout = static_cast<double>(*n);
  }
  return "";
}

}  // namespace

int cmd_eval(const std::vector<std::string>& args) {
  harness::block_run_signals();  // before any backend starts threads: only the guard takes them
  std::vector<OptionSpec> specs = {{"--backend", true},
                                   {"--report", true},
                                   {"--junit", true},
                                   {"--max-bytes", true},
                                   {"--repeat", true},
                                   {"--case-timeout", true},
                                   {"--matrix", false},
                                   {"--quiet", false},
                                   {"--known-failures", true},
                                   {"--strict", false},
                                   {"--lint-known-failures", false}};
  for (auto& spec : plugin_option_specs()) specs.push_back(spec);
  for (auto& spec : shrink_option_specs()) specs.push_back(spec);
  auto line = parse_command_line(args, specs, "gscheck eval", kUsage);
  if (!line.args) return line.exit_status;
  const ParsedArgs& parsed = *line.args;
  if (parsed.value("--report").value_or("") == "-" || parsed.value("--junit").value_or("") == "-")
    reports::reserve_stdout_for_reports();  // the report is stdout; the text goes to stderr
  if (parsed.positional.empty()) {
    std::fprintf(stderr, "gscheck eval: no case files given\n%s", kUsage);
    return 2;
  }
  const std::string backend_name = parsed.value("--backend").value_or("reference");
  int64_t max_bytes = kDefaultMaxCaseBytes, repeat = 1;
  double case_timeout = 600;
  if (std::string bad = parse_numbers(parsed, backend_name, max_bytes, repeat, case_timeout);
      !bad.empty())
    return usage_error(bad);
  auto files = list_case_files(parsed.positional);
  if (!files.ok()) return usage_error(files.error().message);
  // An existing folder with no cases yet (corpus/regressions before the first one) is fine.
  if (files->empty())
    std::fprintf(stderr, "gscheck eval: no *.json case files in the given paths\n");
  auto plugin = plugin_options(parsed, max_bytes);
  if (!plugin.ok()) return usage_error(plugin.error().message);
  // Everything the verdict depends on is read (and hashed) before any graded code runs: a
  // plugin's init() and a Python module's import run in make_named_backend.
  harness::CheckOptions opts;
  opts.max_bytes = max_bytes;
  opts.repeat = static_cast<int>(repeat);
  std::optional<reports::KnownFailures> known;
  std::optional<reports::KnownFailuresLint> lint;
  if (std::string bad = known_failures_options(parsed, opts, known, lint); !bad.empty())
    return usage_error(bad);
  // Minimal cases of the failures go beside the report, as `gscheck run` saves its failures.
  if (std::string bad =
          shrink_options(parsed, parsed.value("--report").value_or(""), case_timeout, opts);
      !bad.empty())
    return usage_error(bad);
  const harness::SealedInputs sealed = harness::SealedInputs::read(*files, max_bytes);
  opts.sealed = &sealed;
  if (is_plugin_backend(backend_name))
    if (Status hidden = hide_run_inputs(*plugin, parsed, *files, opts.failed_cases_dir);
        !hidden.ok())
      return usage_error(hidden.error().message);
  const reports::RunInfo::Sealed sealed_info =
      sealed_run_info(sealed, known ? &*known : nullptr, is_plugin_backend(backend_name),
                      !parsed.value("--report").value_or("").empty());
  auto backend = make_named_backend(backend_name, max_bytes, *plugin);
  if (!backend.ok()) return usage_error(backend.error().message);
  std::unique_ptr<Backend> reference;
  if (backend_name != "reference") {
    auto ref = make_named_backend("reference", max_bytes);
    if (!ref.ok()) return usage_error(ref.error().message);
    reference = std::move(ref).value();
  }
  harness::CaseChecker checker(**backend, reference.get(), opts);

  reports::RunInfo run;
  run.command = "eval";
  run.argv = {"gscheck", "eval"};
  run.argv.insert(run.argv.end(), args.begin(), args.end());
  run.started_at = reports::utc_now();
  run.backend = (*backend)->capabilities();
  run.known_failures = parsed.value("--known-failures").value_or("");
  run.sealed = sealed_info;
  run.strict = parsed.has("--strict");
  auto stream = reports::ReportStream::open(run, parsed.value("--report").value_or(""),
                                            parsed.value("--junit").value_or(""));
  if (!stream.ok()) {
    std::fprintf(stderr, "gscheck eval: %s\n", stream.error().message.c_str());
    return 3;
  }
  CliSink sink(**stream, nullptr, lint ? &*lint : nullptr, !parsed.has("--quiet"), run.strict);
  const int jobs = is_plugin_backend(backend_name) ? plugin->jobs : 1;
  harness::Runner runner(checker, sink, {backend_name, jobs, case_timeout, std::nullopt});
  runner.run_files(*files);
  int status = finish_stream(**stream, runner.elapsed_s(), run.strict, /*table=*/false,
                             parsed.has("--matrix"));
  if (sink.spool_error()) {
    std::fprintf(stderr, "gscheck eval: %s\n", sink.spool_error()->message.c_str());
    status = 3;
  }
  if (lint && print_lint(*lint, known->path) && (status == 0 || status == 4)) status = 1;
  return status;
}

}  // namespace gscheck::tools
