#include "tools/case_check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>

#include "backends/reference_backend.h"
#include "compare/elements.h"
#include "core/case_json.h"
#include "core/message_regex.h"
#include "reports/known_failures.h"

namespace gscheck::tools {
namespace {

using reports::CaseResult;
using reports::Verdict;

// The first capability a case falls outside of, for the UNIMPLEMENTED reason.
std::string unsupported_reason(const Capabilities& caps, const Case& c) {
  auto has = [](const auto& list, auto v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  if (!has(caps.ops, c.op)) return std::string(op_name(c.op)) + " is not implemented";
  if (!has(caps.semantics, c.semantics))
    return std::string(semantics_name(c.semantics)) + " semantics are not claimed";
  if (!has(caps.apis, c.api) && !same_at_both_apis(c))
    return "the " + std::string(api_name(c.api)) + " API level is not implemented";
  if (c.indices && !has(caps.index_dtypes, c.indices->dtype()))
    return std::string(dtype_name(c.indices->dtype())) + " indices are not implemented";
  const std::optional<Tensor>& data =
      !is_scatter(c.op) ? c.params : (c.tensor ? c.tensor : c.updates);
  if (data) return std::string(dtype_name(data->dtype())) + " elements are not implemented";
  return "the case lacks the inputs its op takes";
}

std::string file_name_for(const std::string& case_name) {
  std::string s;
  for (char ch : case_name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    s += ok ? ch : '_';
  }
  return s + ".json";
}

}  // namespace

int default_repeat(const std::string& backend_name) {
  return backend_name.starts_with("plugin:") ? 2 : 1;
}

std::string bitwise_difference(const Outcome& a, const Outcome& b) {
  if (a.ok() != b.ok()) return reports::outcome_summary(a) + " vs " + reports::outcome_summary(b);
  if (!a.ok()) {
    if (a.error().cls == b.error().cls && a.error().message == b.error().message) return "";
    return reports::outcome_summary(a) + " vs " + reports::outcome_summary(b);
  }
  const Tensor& x = *a;
  const Tensor& y = *b;
  if (x.dtype() != y.dtype() || x.shape() != y.shape())
    return reports::outcome_summary(a) + " vs " + reports::outcome_summary(b);
  if (x.dtype() == DType::kString) {
    for (std::size_t i = 0; i < x.strings().size(); ++i)
      if (x.strings()[i] != y.strings()[i])
        return "string element " + std::to_string(i) + " (flat) differs";
    return "";
  }
  const std::size_t size = dtype_size(x.dtype());
  for (std::size_t i = 0; i < x.byte_size(); i += size)
    if (std::memcmp(x.data() + i, y.data() + i, size) != 0)
      return "element " + std::to_string(i / size) + " (flat) differs in its bits";
  return "";
}

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-./=:+,@") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string eval_repro(const std::string& backend, const std::string& path, int repeat) {
  return "gscheck eval --backend " + shell_quote(backend) +
         (repeat > 1 ? " --repeat " + std::to_string(repeat) : std::string()) + " " +
         shell_quote(path);
}

Expected<std::unique_ptr<Backend>> make_named_backend(const std::string& name, int64_t max_bytes,
                                                      PluginOptions plugin) {
  if (name.starts_with("plugin:") && name.size() > 7) {
    plugin.max_output_bytes = max_bytes;
    return make_plugin_backend(name.substr(7), plugin);
  }
  return make_backend(name, max_bytes);  // every backend gets the budget
}

CaseChecker::CaseChecker(Backend& backend, Backend* reference, CheckOptions opts)
    : backend_(backend), reference_(reference), opts_(std::move(opts)) {}

namespace {

// A result for a case that ran out of memory (std::bad_alloc anywhere in checking it): a memory
// budget is not a wrong answer, so SKIPPED, with resource_exhausted as the outcome.
CaseResult out_of_memory(CaseResult r, const std::string& where) {
  r.verdict = Verdict::kSkipped;
  r.outcome = "error resource_exhausted: out of memory (std::bad_alloc) " + where;
  r.reason = "out of memory (std::bad_alloc) " + where + "; try a smaller --max-bytes";
  r.checks.clear();
  return r;
}

}  // namespace

CaseResult CaseChecker::check_file(const std::string& path) {
  try {
    return check_file_unguarded(path);
  } catch (const std::bad_alloc&) {
    CaseResult r;
    r.name = path;
    r.file = path;
    r.backend = backend_.capabilities().name;
    r.repro = eval_repro(r.backend, path);
    return out_of_memory(std::move(r), "while loading or checking " + path);
  }
}

CaseResult CaseChecker::check_case(const CaseFile& f, const std::string& file) {
  try {
    return check_case_unguarded(f, file);
  } catch (const std::bad_alloc&) {
    CaseResult r;
    reports::describe_case(f.c, r);
    r.file = file;
    r.backend = backend_.capabilities().name;
    r.repro = file.empty() ? opts_.sweep_repro : "gscheck eval " + shell_quote(file);
    return out_of_memory(std::move(r), "while checking the case");
  }
}

CaseResult CaseChecker::check_file_unguarded(const std::string& path) {
  auto f = load_case_file(path, opts_.max_bytes);
  if (f.ok()) return check_case(*f, path);
  CaseResult r;
  r.name = path;
  r.file = path;
  r.backend = backend_.capabilities().name;
  r.repro = eval_repro(r.backend, path);
  r.outcome = "not run";
  r.reason = f.error().message;
  r.verdict =
      f.error().cls == ErrorClass::kResourceExhausted ? Verdict::kSkipped : Verdict::kFailed;
  return r;
}

CaseResult CaseChecker::check_case_unguarded(const CaseFile& f, const std::string& file) {
  CaseResult r = grade(f, file);
  if (opts_.known_failures) reports::apply_known_failures(*opts_.known_failures, r);
  return r;
}

CaseResult CaseChecker::grade(const CaseFile& f, const std::string& file) {
  const Case& c = f.c;
  const Capabilities& caps = backend_.capabilities();
  CaseResult r;
  reports::describe_case(c, r);
  r.file = file;
  r.backend = caps.name;
  r.repro = file.empty() ? opts_.sweep_repro : eval_repro(caps.name, file, opts_.repeat);
  if (!caps.supports(c)) {
    r.verdict = Verdict::kUnimplemented;
    r.outcome = "not run";
    r.reason = "outside the backend's capabilities: " + unsupported_reason(caps, c);
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // run() must not throw; one that does is a failed case, not the end of the whole run.
  auto run_once = [&]() -> Outcome {
    ++r.runs;
    try {
      return backend_.run(c);
    } catch (const std::bad_alloc&) {
      return Error{ErrorClass::kResourceExhausted,
                   "the backend ran out of memory (std::bad_alloc)"};
    } catch (const std::exception& e) {
      return Error{ErrorClass::kInternal,
                   std::string("the backend threw an exception: ") + e.what()};
    }
  };
  Outcome got = run_once();
  r.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.outcome = reports::outcome_summary(got);
  if (!got.ok() && got.error().message.rfind("the backend threw an exception: ", 0) == 0) {
    r.verdict = Verdict::kFailed;
    r.reason = got.error().message;
    return r;
  }
  if (!got.ok() && got.error().cls == ErrorClass::kUnimplemented) {
    r.verdict = Verdict::kUnimplemented;
    r.reason = got.error().message;
    return r;
  }
  const bool expects_budget_error =
      f.expect && f.expect->error_class == ErrorClass::kResourceExhausted;
  if (!got.ok() && got.error().cls == ErrorClass::kResourceExhausted && !expects_budget_error) {
    r.verdict = Verdict::kSkipped;  // a memory budget is not a wrong answer
    r.reason = "the backend refused it: " + got.error().message;
    return r;
  }

  const compare::Options opts = compare::options_for(caps);
  // The expect block the backend is graded by: TF's message text only where the contract has it
  // (a backend with tf_messages, and an invalid_argument or bad_index expectation).
  std::optional<Expect> stripped;
  if (f.expect && f.expect->error_regex &&
      !(f.expect->error_class && compare::messages_graded(opts, *f.expect->error_class))) {
    stripped = *f.expect;  // an error expectation: no tensor to copy
    stripped->error_regex.reset();
  }
  const Expect* graded = stripped ? &*stripped : f.expect ? &*f.expect : nullptr;
  if (graded) r.checks.push_back({"expect", compare::check_expect(c, *graded, got, opts)});

  // A crash, hang or other failure of the backend itself (class internal) is never a right
  // answer: FAILED with its reason in whichever run it happened.
  const bool expects_internal = f.expect && f.expect->error_class == ErrorClass::kInternal;
  auto backend_failure = [&](const Outcome& o) {
    return !o.ok() && o.error().cls == ErrorClass::kInternal && !expects_internal;
  };
  std::string crash;
  if (backend_failure(got))
    crash =
        "run 1 of " + std::to_string(opts_.repeat) + ": the backend failed: " + got.error().message;

  std::string mistrust;
  std::optional<Outcome> want;
  if (reference_ && reference_ != &backend_) {
    try {
      want = reference_->run(c);
    } catch (const std::bad_alloc&) {
      want =
          Error{ErrorClass::kResourceExhausted, "the reference ran out of memory (std::bad_alloc)"};
    }
    const bool got_refused = !got.ok() && got.error().cls == ErrorClass::kResourceExhausted;
    if (!want->ok() && want->error().cls == ErrorClass::kResourceExhausted && !got_refused) {
      // The reference cannot grade the case, but its expect block and a crash still can.
      const bool expect_failed = graded && !r.checks.back().result.pass;
      if (!expect_failed && crash.empty()) {
        r.verdict = Verdict::kSkipped;
        r.reason = "the reference refused it: " + want->error().message;
        return r;
      }
      want.reset();
    } else {
      if (f.expect) {
        const auto ref_vs_expect = compare::check_expect(c, *f.expect, *want);
        if (!ref_vs_expect.pass)
          mistrust = "the reference fails this case's expect: " + ref_vs_expect.summary;
      }
      r.checks.push_back({"reference", compare::compare_outcomes(c, *want, got, opts)});
    }
  }

  // Repeats: an outcome bit-identical to the first needs no new comparison.
  std::string nondeterminism, repeat_failure;
  for (int run = 2; run <= opts_.repeat; ++run) {
    const Outcome again = run_once();
    const std::string which = "run " + std::to_string(run) + " of " + std::to_string(opts_.repeat);
    if (crash.empty() && backend_failure(again))
      crash = which + ": the backend failed: " + again.error().message;
    const std::string diff = bitwise_difference(got, again);
    if (diff.empty()) continue;
    ++r.differing_runs;
    if (caps.deterministic) {
      if (nondeterminism.empty())
        nondeterminism = "declared deterministic, but " + which + " differs from run 1: " + diff;
      continue;
    }
    if (!repeat_failure.empty()) continue;
    std::vector<reports::Check> again_checks;
    if (graded) again_checks.push_back({"expect", compare::check_expect(c, *graded, again, opts)});
    if (want)
      again_checks.push_back({"reference", compare::compare_outcomes(c, *want, again, opts)});
    for (auto& ch : again_checks) {
      if (ch.result.pass) continue;
      repeat_failure = which + " against " + ch.against + ": " + ch.result.summary;
      r.checks.push_back(std::move(ch));  // its mismatches are printed and reported
      break;
    }
  }

  const reports::Check* failed = nullptr;
  for (const auto& ch : r.checks)
    if (!ch.result.pass && !failed) failed = &ch;
  if (!crash.empty()) {  // before NONDETERMINISTIC: a crash is not an answer that varies
    r.verdict = Verdict::kFailed;
    r.reason = crash;
  } else if (!nondeterminism.empty()) {
    r.verdict = Verdict::kNondeterministic;
    r.reason = nondeterminism;
  } else if (!mistrust.empty()) {
    r.verdict = Verdict::kMistrusted;
    r.reason = mistrust;
  } else if (!repeat_failure.empty()) {
    r.verdict = Verdict::kFailed;
    r.reason = repeat_failure;
  } else if (failed) {
    r.verdict = Verdict::kFailed;
    r.reason = "against " + failed->against + ": " + failed->result.summary;
    // Whether subnormals flushed to zero explain every failing check (a known-failure kind).
    r.flushed_subnormals = got.ok();
    for (const auto& ch : r.checks) {
      if (ch.result.pass || !r.flushed_subnormals) continue;
      const Tensor* expected = ch.against == "reference" && want && want->ok() ? &want->value()
                               : ch.against == "expect" && f.expect && f.expect->output
                                   ? &*f.expect->output
                                   : nullptr;
      r.flushed_subnormals =
          expected && compare::only_flushed_subnormals(c, *expected, got.value());
    }
    if (!want && reference_ && reference_ != &backend_) r.reason += " (the reference refused it)";
  } else {
    r.verdict = Verdict::kPassed;
    for (const auto& ch : r.checks)
      r.reason += (r.reason.empty() ? "" : "; ") + ch.against + ": " + ch.result.summary;
    if (r.checks.empty()) r.reason = "ran (no expect block, no reference to compare with)";
    if (r.differing_runs > 0)
      r.reason += "; " + std::to_string(r.differing_runs) + " of " + std::to_string(r.runs - 1) +
                  " repeats differed bitwise, each within bound";
  }

  // A failing generated case becomes a case file: the reference's outcome as its expect.
  if (file.empty() && reports::is_failure(r.verdict) && !opts_.failed_cases_dir.empty() && want) {
    CaseFile saved;
    saved.c = c;
    saved.description =
        "generated case that failed on " + caps.name + "; expect is the reference's outcome";
    Expect e;
    if (want->ok()) {
      e.output = want->value();
    } else {
      e.error_class = want->error().cls;
      e.error_regex = error_message_regex(want->error());
    }
    saved.expect = std::move(e);
    std::error_code ec;
    std::filesystem::create_directories(opts_.failed_cases_dir, ec);
    const std::string path =
        (std::filesystem::path(opts_.failed_cases_dir) / file_name_for(c.name)).string();
    if (!ec && save_case_file(path, saved).ok()) {
      r.repro = eval_repro(caps.name, path, opts_.repeat);
    }
  }
  return r;
}

std::string result_text(const CaseResult& r) {
  std::string verdict(reports::verdict_name(r.verdict));
  verdict.resize(std::max<std::size_t>(verdict.size(), 13), ' ');
  std::string s = verdict + " " + r.name + "  " + r.outcome;
  if (r.verdict == Verdict::kPassed) return s + "\n";
  s += "\n    " + r.reason + "\n";
  for (const auto& ch : r.checks) {
    if (ch.result.pass) continue;
    for (const auto& m : ch.result.mismatches)
      s += "    at " + compare::format_index(m.index) + ": expected " + m.expected + ", got " +
           m.got + "\n";
  }
  if (reports::is_failure(r.verdict) || r.verdict == Verdict::kXfail ||
      r.verdict == Verdict::kXpass)
    s += "    repro: " + r.repro + "\n";
  return s;
}

namespace {

// The tables and the totals line; the exit status the counts give (0, or 1 on a failure).
int print_totals(const reports::RunTally& tally, bool strict, bool table, bool matrix) {
  if (matrix) std::fputs(reports::matrix_table(tally).c_str(), stdout);
  if (table) std::fputs(reports::summary_table(tally).c_str(), stdout);
  const reports::Totals& t = tally.totals();
  std::string line = std::to_string(tally.cases()) + " cases:";
  for (Verdict v : reports::kAllVerdicts) {
    auto it = t.all.find(v);
    if (it != t.all.end())
      line += " " + std::to_string(it->second) + " " + std::string(reports::verdict_name(v));
  }
  std::printf("%s\n", line.c_str());
  return t.failures(strict) > 0 ? 1 : 0;
}

}  // namespace

int finish_run(reports::Report& report, const std::string& report_path,
               const std::string& junit_path, bool table, bool matrix) {
  int status = print_totals(reports::tally(report), report.run.strict, table, matrix);
  if (!report_path.empty()) {
    if (Status st = reports::write_json_report(report_path, report); !st.ok()) {
      std::fprintf(stderr, "gscheck: %s\n", st.error().message.c_str());
      status = 3;
    }
  }
  if (!junit_path.empty()) {
    if (Status st = reports::write_junit(junit_path, report); !st.ok()) {
      std::fprintf(stderr, "gscheck: %s\n", st.error().message.c_str());
      status = 3;
    }
  }
  std::fflush(stdout);
  return status;
}

int finish_stream(reports::ReportStream& stream, double elapsed_s, bool strict, bool table,
                  bool matrix) {
  int status = print_totals(stream.tally(), strict, table, matrix);
  if (Status st = stream.finish(elapsed_s, ""); !st.ok()) {
    std::fprintf(stderr, "gscheck: %s\n", st.error().message.c_str());
    status = 3;
  }
  std::fflush(stdout);
  return status;
}

}  // namespace gscheck::tools
