// `gscheck report merge|diff`: combine shard reports, compare two runs.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "reports/bench_diff.h"
#include "reports/combine.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/run_output.h"

namespace gscheck::tools {
namespace {

constexpr const char* kUsage =
    "usage: gscheck report merge REPORT.json... -o OUT.json [--junit FILE] [--force]\n"
    "       gscheck report diff OLD.json NEW.json [--json] [--max-cases N]\n"
    "                           [--alpha P] [--threshold F]\n"
    "  merge: combine the reports of `gscheck run --shard K/N` (K = 1..N, same backend, seed\n"
    "    and sweep size) into the report of the whole run: cases in the unsharded run's order,\n"
    "    totals, per-op table and matrix recomputed, JUnit regenerated. Other combinations are\n"
    "    refused, naming the difference, unless --force (then cases are kept in argument order).\n"
    "    Prints the per-op table; exit 1 when the merged run has a failure (4 when its only\n"
    "    failures are UNSAFE cases known-failures entries describe).\n"
    "  diff: what changed from OLD to NEW, matching cases by name: new failures, capabilities\n"
    "    lost (PASSED -> UNIMPLEMENTED/SKIPPED), fixes, gains, other verdict changes, added and\n"
    "    removed cases, and the capability-matrix rows whose counts changed. --json prints it as\n"
    "    JSON; --max-cases caps the cases listed in the table (default 200). Exit 1 on a\n"
    "    regression (a new failure or a lost capability), 0 otherwise.\n"
    "  diff of two `gscheck bench` reports: per problem and backend, slower or faster beyond the\n"
    "    noise (a median change beyond --threshold, default 0.10, and beyond 3 relative MADs of\n"
    "    either run, and a one-sided Mann-Whitney U test on the repetitions' times with p <\n"
    "    --alpha, default 0.01), and verdict changes; a change past the threshold and the test\n"
    "    but within 3 rMADs is listed as unclear. Exit 1 when a problem got slower, FAILED or\n"
    "    lost its backend's support (docs/performance.md \"Is it slower?\").\n"
    "  Exit status 2: bad command line or unreadable report; 3: an output could not be written.\n";

int usage_error(const std::string& message) { return value_error("gscheck report", message); }

int merge(const std::vector<std::string>& args) {
  auto line = parse_command_line(args, {{"-o", true}, {"--junit", true}, {"--force", false}},
                                 "gscheck report merge", kUsage);
  if (!line.args) return line.exit_status;
  const ParsedArgs& parsed = *line.args;
  const std::string out = parsed.value("-o").value_or("");
  if (out.empty()) return usage_error("merge needs -o OUT.json");
  if (parsed.positional.empty()) return usage_error("merge needs at least one report");
  // The merged report is streamed: the inputs' cases are spooled, not held (bounded memory).
  std::unique_ptr<reports::ReportStream> stream;
  reports::RunInfo run;
  Status st = reports::merge_report_files(
      parsed.positional, parsed.has("--force"), kDefaultMaxCaseBytes,
      [&](const reports::RunInfo& merged) -> Status {
        run = merged;
        run.argv = {"gscheck", "report", "merge"};
        run.argv.insert(run.argv.end(), args.begin(), args.end());
        auto s = reports::ReportStream::open(run, out, parsed.value("--junit").value_or(""));
        if (!s.ok()) return Error{ErrorClass::kInternal, s.error().message};
        stream = std::move(*s);
        return {};
      },
      [&](reports::CaseResult&& c) { return stream->add(c); });
  if (!st.ok()) {
    std::fprintf(stderr, "gscheck %s\n", st.error().message.c_str());
    // A report that could not be written is exit 3; an input that cannot be merged, 2.
    return st.error().cls == ErrorClass::kInternal ? 3 : 2;
  }
  return finish_stream(*stream, run.elapsed_s, run.strict, /*table=*/true, /*matrix=*/false,
                       run.interrupted);
}

// A number option in (lo, hi); false (and the message) when it is not one.
bool fraction_option(const ParsedArgs& parsed, const char* name, double lo, double hi,
                     const char* range, double& out, std::string& error) {
  auto v = parsed.value(name);
  if (!v) return true;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (end == v->c_str() || *end || !(d > lo && d < hi)) {
    error = std::string(name) + ": expected a number in " + range + ", got '" + *v + "'";
    return false;
  }
  out = d;
  return true;
}

int bench_diff(const ParsedArgs& parsed, const std::string& old_path, const std::string& new_path) {
  reports::BenchDiffOptions options;
  std::string error;
  if (!fraction_option(parsed, "--alpha", 0, 0.5, "(0, 0.5)", options.alpha, error) ||
      !fraction_option(parsed, "--threshold", 0, 10, "(0, 10)", options.threshold, error))
    return usage_error(error);
  nlohmann::json reports[2];
  for (int i = 0; i < 2; ++i) {
    const std::string& path = i == 0 ? old_path : new_path;
    std::ifstream in(path, std::ios::binary);
    reports[i] = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (reports[i].is_discarded()) return usage_error(path + ": not valid JSON");
  }
  auto d = reports::diff_bench_reports(reports[0], reports[1], options);
  if (!d.ok()) return usage_error(d.error().message);
  if (parsed.has("--json"))
    std::puts(reports::bench_diff_to_json(*d).dump(2).c_str());
  else
    std::fputs(reports::bench_diff_table(*d).c_str(), stdout);
  std::fflush(stdout);
  return d->regression() ? 1 : 0;
}

int diff(const std::vector<std::string>& args) {
  auto line = parse_command_line(
      args, {{"--json", false}, {"--max-cases", true}, {"--alpha", true}, {"--threshold", true}},
      "gscheck report diff", kUsage);
  if (!line.args) return line.exit_status;
  const ParsedArgs& parsed = *line.args;
  if (parsed.positional.size() != 2)
    return usage_error("diff takes two reports, OLD.json and NEW.json; got " +
                       std::to_string(parsed.positional.size()));
  int64_t max_cases = 200;
  if (auto v = parsed.value("--max-cases")) {
    auto n = parse_int_option("--max-cases", *v, 0, INT64_MAX);
    if (!n.ok()) return usage_error(n.error().message);
    max_cases = *n;
  }
  const std::string& old_path = parsed.positional[0];
  const std::string& new_path = parsed.positional[1];
  auto old_bench = reports::file_is_bench_report(old_path);
  if (!old_bench.ok()) return usage_error(old_bench.error().message);
  auto new_bench = reports::file_is_bench_report(new_path);
  if (!new_bench.ok()) return usage_error(new_bench.error().message);
  if (*old_bench != *new_bench)
    return usage_error((*old_bench ? old_path : new_path) + " is a bench report and " +
                       (*old_bench ? new_path : old_path) +
                       " a run report: diff compares two of a kind");
  if (*old_bench) return bench_diff(parsed, old_path, new_path);
  if (parsed.value("--alpha") || parsed.value("--threshold"))
    return usage_error("--alpha and --threshold are for bench reports");
  auto diffed = reports::diff_report_files(old_path, new_path, kDefaultMaxCaseBytes);
  if (!diffed.ok()) return usage_error(diffed.error().message);
  const reports::ReportDiff& d = *diffed;
  if (parsed.has("--json")) {
    std::puts(reports::diff_to_json(d)
                  .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  .c_str());
  } else {
    std::fputs(reports::diff_table(d, static_cast<std::size_t>(max_cases)).c_str(), stdout);
  }
  std::fflush(stdout);
  return d.regression() ? 1 : 0;
}

}  // namespace

int cmd_report(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("which report command: merge or diff?");
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "merge") return merge(rest);
  if (args[0] == "diff") return diff(rest);
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return usage_error("unknown report command '" + args[0] + "' (merge or diff)");
}

}  // namespace gscheck::tools
