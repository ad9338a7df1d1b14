// `gscheck eval`: run case files on a backend and check them against their expect blocks (and,
// for a backend other than the reference, against the reference's outcome).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>

#include "core/case_json.h"
#include "reports/known_failures_lint.h"
#include "tools/case_check.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugin_flags.h"

namespace gscheck::tools {
namespace {

constexpr const char* kUsage =
    "usage: gscheck eval [--backend NAME] [--report FILE] [--junit FILE] [--max-bytes N]\n"
    "                    [--repeat K] [--matrix] [--quiet] [--jobs N] [--timeout S]\n"
    "                    [--isolate worker|call] [--known-failures FILE] [--strict]\n"
    "                    CASE.json|DIR...\n"
    "  Runs each case file (directories are searched recursively for *.json) on the backend\n"
    "  and checks the outcome against the file's expect block; a backend other than the\n"
    "  reference is also compared with the reference's outcome. Prints one line per case.\n"
    "  --backend NAME   backend to check (default: reference; see gscheck list-backends)\n"
    "  --report FILE    write the JSON report (docs/report_format.md)\n"
    "  --junit FILE     write JUnit XML\n"
    "  --max-bytes N    memory budget for one case's tensors, given to every backend (default\n"
    "                   4294967296); case files larger than it are SKIPPED unread\n"
    "  --repeat K       run each case K times (default 2 for plugin:PATH backends, else 1): a\n"
    "                   backend declaring itself deterministic must give bit-identical outcomes\n"
    "                   (else NONDETERMINISTIC), any other must pass on every run (else FAILED)\n"
    "  --matrix         also print the capability matrix: verdict counts per op x dtype x index\n"
    "                   dtype x bad_indices_policy\n"
    "  --quiet          print only the failures, and the totals\n" GSCHECK_PLUGIN_USAGE
    "  --known-failures FILE  failures the backend is known to have (see gscheck run --help)\n"
    "  --strict         an XPASS fails the run too\n"
    "  --lint-known-failures  also check the known-failures file itself (gscheck known-failures\n"
    "                   check): exit 1 when an entry is unused, too wide or would forgive an\n"
    "                   injected bug\n"
    "  Exit status: 0 no case failed, 1 a case FAILED, was MISTRUSTED or NONDETERMINISTIC (or\n"
    "  XPASS with --strict), 2 bad command line, 3 a report could not be written.\n";

}  // namespace

int cmd_eval(const std::vector<std::string>& args) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout (`| head`) must not kill it before its report
  std::vector<OptionSpec> specs = {{"--backend", true}, {"--report", true},
                                   {"--junit", true},   {"--max-bytes", true},
                                   {"--repeat", true},  {"--matrix", false},
                                   {"--quiet", false},  {"--known-failures", true},
                                   {"--strict", false}, {"--lint-known-failures", false}};
  for (auto& spec : plugin_option_specs()) specs.push_back(spec);
  auto line = parse_command_line(args, specs, "gscheck eval", kUsage);
  if (!line.args) return line.exit_status;
  const ParsedArgs& parsed = *line.args;
  if (parsed.positional.empty()) {
    std::fprintf(stderr, "gscheck eval: no case files given\n%s", kUsage);
    return 2;
  }
  int64_t max_bytes = kDefaultMaxCaseBytes;
  if (auto v = parsed.value("--max-bytes")) {
    auto n = parse_int_option("--max-bytes", *v, 1, INT64_MAX);
    if (!n.ok()) {
      std::fprintf(stderr, "gscheck eval: %s\n", n.error().message.c_str());
      return 2;
    }
    max_bytes = *n;
  }
  auto files = list_case_files(parsed.positional);
  if (!files.ok()) {
    std::fprintf(stderr, "gscheck eval: %s\n", files.error().message.c_str());
    return 2;
  }
  // An existing folder with no cases yet (corpus/regressions before the first one) is fine.
  if (files->empty())
    std::fprintf(stderr, "gscheck eval: no *.json case files in the given paths\n");
  const std::string backend_name = parsed.value("--backend").value_or("reference");
  int64_t repeat = default_repeat(backend_name);
  if (auto v = parsed.value("--repeat")) {
    auto n = parse_int_option("--repeat", *v, 1, 1000);
    if (!n.ok()) {
      std::fprintf(stderr, "gscheck eval: %s\n", n.error().message.c_str());
      return 2;
    }
    repeat = *n;
  }
  auto plugin = plugin_options(parsed, max_bytes);
  if (!plugin.ok()) {
    std::fprintf(stderr, "gscheck eval: %s\n", plugin.error().message.c_str());
    return 2;
  }
  const int jobs = backend_name.starts_with("plugin:") ? plugin->jobs : 1;
  auto backend = make_named_backend(backend_name, max_bytes, *plugin);
  if (!backend.ok()) {
    std::fprintf(stderr, "gscheck eval: %s\n", backend.error().message.c_str());
    return 2;
  }
  std::unique_ptr<Backend> reference;
  if (backend_name != "reference") {
    auto ref = make_named_backend("reference", max_bytes);
    if (!ref.ok()) {
      std::fprintf(stderr, "gscheck eval: %s\n", ref.error().message.c_str());
      return 2;
    }
    reference = std::move(ref).value();
  }

  reports::Report report;
  report.run.command = "eval";
  report.run.argv = {"gscheck", "eval"};
  report.run.argv.insert(report.run.argv.end(), args.begin(), args.end());
  report.run.started_at = reports::utc_now();
  report.run.backend = (*backend)->capabilities();
  CheckOptions opts;
  opts.max_bytes = max_bytes;
  opts.repeat = static_cast<int>(repeat);
  std::optional<reports::KnownFailures> known;
  if (auto v = parsed.value("--known-failures")) {
    auto k = reports::load_known_failures(*v);
    if (!k.ok()) {
      std::fprintf(stderr, "gscheck eval: %s\n", k.error().message.c_str());
      return 2;
    }
    known = std::move(k).value();
    opts.known_failures = &*known;
  }
  report.run.known_failures = parsed.value("--known-failures").value_or("");
  report.run.strict = parsed.has("--strict");
  opts.lint = parsed.has("--lint-known-failures");
  if (opts.lint && !known) {
    std::fprintf(stderr, "gscheck eval: --lint-known-failures needs --known-failures FILE\n");
    return 2;
  }
  std::optional<reports::KnownFailuresLint> lint;
  if (opts.lint) lint.emplace(*known);
  CaseChecker checker(**backend, reference.get(), opts);
  const bool quiet = parsed.has("--quiet");
  const auto t0 = std::chrono::steady_clock::now();
  for_each_ordered<reports::CaseResult>(
      files->size(), jobs, [&](std::size_t i) { return checker.check_file((*files)[i]); },
      [&](reports::CaseResult&& r) {
        if (!quiet || reports::is_failure(r.verdict)) {
          std::fputs(result_text(r).c_str(), stdout);
          std::fflush(stdout);
        }
        if (lint) lint->add(r);
        report.cases.push_back(std::move(r));
      });
  report.run.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int status =
      finish_run(report, parsed.value("--report").value_or(""),
                 parsed.value("--junit").value_or(""), /*table=*/false, parsed.has("--matrix"));
  if (lint && print_lint(*lint, known->path) && status == 0) status = 1;
  return status;
}

}  // namespace gscheck::tools
