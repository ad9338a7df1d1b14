#include "tools/run_output.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include "backends/plugin_backend.h"
#include "core/sha256.h"
#include "harness/checker.h"

namespace gscheck::tools {

using reports::Verdict;

std::vector<OptionSpec> shrink_option_specs() {
  return {{"--shrink-time", true}, {"--shrink-total", true}};
}

std::string shrink_options(const ParsedArgs& parsed, const std::string& report_path,
                           double case_timeout_s, harness::CheckOptions& opts) {
  if (!report_path.empty() && report_path != "-")
    opts.failed_cases_dir =
        (std::filesystem::path(report_path).parent_path() / "failed_cases").string();
  opts.shrink_seconds = 5;
  opts.shrink_total_seconds = 120;
  for (const auto& [name, target] :
       {std::pair<const char*, double*>{"--shrink-time", &opts.shrink_seconds},
        {"--shrink-total", &opts.shrink_total_seconds}}) {
    if (auto v = parsed.value(name)) {
      auto n = parse_int_option(name, *v, 0, 86400 * 7);
      if (!n.ok()) return n.error().message;
      *target = static_cast<double>(*n);
    }
  }
  if (case_timeout_s > 0) opts.shrink_seconds = std::min(opts.shrink_seconds, case_timeout_s / 2);
  return "";
}

std::string known_failures_options(const ParsedArgs& parsed, harness::CheckOptions& opts,
                                   std::optional<reports::KnownFailures>& known,
                                   std::optional<reports::KnownFailuresLint>& lint) {
  if (auto v = parsed.value("--known-failures")) {
    auto k = reports::load_known_failures(*v);
    if (!k.ok()) return k.error().message;
    known = std::move(k).value();
    opts.known_failures = &*known;
  }
  opts.lint = parsed.has("--lint-known-failures");
  if (opts.lint && !known) return "--lint-known-failures needs --known-failures FILE";
  if (opts.lint) lint.emplace(*known);
  return "";
}

reports::RunInfo::Sealed sealed_run_info(const harness::SealedInputs& sealed,
                                         const reports::KnownFailures* known, bool worker,
                                         bool report) {
  reports::RunInfo::Sealed out;
  out.case_files = static_cast<int64_t>(sealed.size());
  out.case_bytes = sealed.bytes();
  out.case_files_sha256 = sealed.digest();
  if (known) out.known_failures_sha256 = known->sha256;
  // The executables only for a JSON report, the one place that shows them: gscheck is ~80 MB
  // in a debug build, 57 ms to hash here (2026-12-04), paid by every short eval otherwise.
  if (!report) return out;
  if (auto self = sha256_file("/proc/self/exe"); self.ok()) out.gscheck_sha256 = *self;
  if (worker)
    if (auto w = sha256_file(plugin_worker_path()); w.ok()) out.worker_sha256 = *w;
  return out;
}

void CliSink::add(const reports::CaseResult& r) {
  const bool failed = reports::is_failure(r.verdict, strict_);
  failures_ += failed;
  if (verbose_ || failed) {
    if (progress_) progress_->clear();
    std::fputs(harness::result_text(r).c_str(), stdout);
    std::fflush(stdout);
  }
  if (Status st = stream_.add(r); !st.ok() && !spool_error_) spool_error_ = st.error();
  if (lint_) lint_->add(r);
  ++done_;
  if (progress_) progress_->update(done_, failures_);
}

void CliSink::sweep_reached(int64_t positions, double sweep_elapsed_s) {
  stream_.set_sweep_reached(positions, sweep_elapsed_s);
}

int CliSink::stop(const std::string& reason, double elapsed_s, int status) {
  if (Status st = stream_.finish(elapsed_s, reason); !st.ok()) {
    std::fprintf(stderr, "gscheck: %s\n", st.error().message.c_str());
    return 3;
  }
  return status;
}

namespace {

// The tables and the totals line; the exit status the counts give: 1 on a failure, 4 when the
// only failures are UNSAFE cases that known-failures entries describe, else 0.
int print_totals(const reports::RunTally& tally, bool strict, bool table, bool matrix) {
  if (matrix) std::fputs(reports::matrix_table(tally).c_str(), stdout);
  if (table) std::fputs(reports::summary_table(tally).c_str(), stdout);
  const reports::Totals& t = tally.totals();
  std::string line = std::to_string(tally.cases()) + " cases:";
  for (Verdict v : reports::kAllVerdicts) {
    auto it = t.all.find(v);
    if (it != t.all.end())
      line += " " + std::to_string(it->second) + " " + std::string(reports::verdict_name(v));
    if (v == Verdict::kXfail && tally.values_unchecked() > 0)
      line += " (" + std::to_string(tally.values_unchecked()) + " values unchecked)";
    if (v == Verdict::kUnsafe && tally.unsafe_described() > 0)
      line += " (" + std::to_string(tally.unsafe_described()) + " described by known failures)";
  }
  std::printf("%s\n", line.c_str());
  const int64_t failures = t.failures(strict);
  if (failures > tally.unsafe_described()) return 1;
  return failures > 0 ? 4 : 0;
}

}  // namespace

bool print_lint(const reports::KnownFailuresLint& lint, const std::string& path) {
  std::printf("known failures %s:\n%s", path.c_str(), lint.table().c_str());
  const std::vector<std::string> findings = lint.findings();
  for (const std::string& f : findings) std::printf("KNOWN-FAILURES %s\n", f.c_str());
  std::printf("known-failures check: %zu finding(s)\n", findings.size());
  std::fflush(stdout);
  return !findings.empty();
}

int finish_stream(reports::ReportStream& stream, double elapsed_s, bool strict, bool table,
                  bool matrix, const std::string& interrupted) {
  int status = print_totals(stream.tally(), strict, table, matrix);
  if (Status st = stream.finish(elapsed_s, interrupted); !st.ok()) {
    std::fprintf(stderr, "gscheck: %s\n", st.error().message.c_str());
    status = 3;
  }
  std::fflush(stdout);
  return status;
}

}  // namespace gscheck::tools
