#include "tools/case_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <type_traits>

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
  return grade(f, file);
}

namespace {

using reports::Difference;
using DiffKind = reports::Difference::Kind;

// What the checks found for one set of runs of a case (the verdict before known failures).
struct Judged {
  Verdict verdict = Verdict::kPassed;
  std::string reason;
  std::vector<reports::Check> checks;
  int differing_runs = 0;
  std::vector<Difference> differences;
};

// The inputs of a judgement: the case, the expect block graded, the reference's outcome, and the
// backend's outcome on every run.
struct Evidence {
  const CaseFile& f;
  const Expect* graded = nullptr;    ///< the expect block as the contract grades it
  const Outcome* want = nullptr;     ///< the reference's outcome, when it could grade
  const std::vector<Outcome>& runs;  ///< run 1, then the repeats
  bool deterministic = true;
  compare::Options opts;
  std::string mistrust;           ///< the reference fails the expect block
  std::string reference_refused;  ///< why the reference could not grade ("" when it did)
};

// A crash, hang or other failure of the backend itself (class internal) is never a right answer.
bool backend_failure(const Evidence& ev, const Outcome& o) {
  const bool expects_internal = ev.f.expect && ev.f.expect->error_class == ErrorClass::kInternal;
  return !o.ok() && o.error().cls == ErrorClass::kInternal && !expects_internal;
}

// TensorFlow's outcome class for the case: the reference's, else the expect block's.
std::optional<ErrorClass> expected_error_class(const Evidence& ev, bool* expects_output) {
  *expects_output = false;
  if (ev.want) {
    *expects_output = ev.want->ok();
    return ev.want->ok() ? std::nullopt : std::optional(ev.want->error().cls);
  }
  if (ev.f.expect && ev.f.expect->output) *expects_output = true;
  return ev.f.expect ? ev.f.expect->error_class : std::nullopt;
}

// Declining: unimplemented at run time, or unsupported where TensorFlow gives another outcome.
bool declined(const Evidence& ev, const Outcome& o) {
  if (o.ok()) return false;
  if (o.error().cls == ErrorClass::kUnimplemented) return true;
  bool output = false;
  const auto cls = expected_error_class(ev, &output);
  return o.error().cls == ErrorClass::kUnsupported && (output || (cls && *cls != o.error().cls));
}

// The differences a failing check stands for: one for an outcome that differs as a whole, one per
// element otherwise.
void add_differences(const Evidence& ev, const reports::Check& ch, const Outcome& got,
                     const Tensor* expected, std::vector<Difference>& out) {
  Difference d;
  d.against = ch.against;
  d.text = ch.against + ": " + ch.result.summary;
  if (!got.ok()) {
    d.got_error = got.error();
    d.kind = backend_failure(ev, got) ? DiffKind::kCrash
             : declined(ev, got)      ? DiffKind::kDeclined
                                      : DiffKind::kError;
    out.push_back(std::move(d));
    return;
  }
  if (ch.result.mismatch_count == 0 || !expected || !ch.result.elements_complete) {
    bool output = false;
    expected_error_class(ev, &output);
    d.kind = output ? DiffKind::kOther : DiffKind::kOutput;
    out.push_back(std::move(d));
    return;
  }
  for (const compare::ElementDiff& e : ch.result.elements) {
    Difference el;
    el.kind = DiffKind::kElement;
    el.against = ch.against;
    el.expected = expected;
    el.got = &got.value();
    el.element = e;
    el.text = ch.against + ": element " + std::to_string(e.flat) + " (flat): expected " +
              compare::format_element(*expected, e.flat) + ", got " +
              compare::format_element(got.value(), e.flat);
    out.push_back(std::move(el));
  }
}

// Grade the runs: every check, then one precedence table picks the verdict.
Judged judge(const Evidence& ev) {
  Judged j;
  const Case& c = ev.f.c;
  const Outcome& got = ev.runs.front();
  const int repeat = static_cast<int>(ev.runs.size());
  std::vector<std::pair<const Outcome*, const Tensor*>> compared;  // per check: got, expected
  const Tensor* expect_tensor = ev.graded && ev.graded->output ? &*ev.graded->output : nullptr;
  const Tensor* want_tensor = ev.want && ev.want->ok() ? &ev.want->value() : nullptr;
  if (ev.graded) {
    j.checks.push_back({"expect", compare::check_expect(c, *ev.graded, got, ev.opts)});
    compared.emplace_back(&got, expect_tensor);
  }
  if (ev.want) {
    j.checks.push_back({"reference", compare::compare_outcomes(c, *ev.want, got, ev.opts)});
    compared.emplace_back(&got, want_tensor);
  }
  std::string crash;
  const Outcome* crashed = nullptr;
  if (backend_failure(ev, got)) {
    crash = "run 1 of " + std::to_string(repeat) + ": the backend failed: " + got.error().message;
    crashed = &got;
  }
  std::string decline;
  if (declined(ev, got))
    decline = "declined a case inside its declared contract: " + got.error().message;

  // Repeats: an outcome bit-identical to the first needs no new comparison.
  std::string nondeterminism, repeat_failure;
  for (int run = 2; run <= repeat; ++run) {
    const Outcome& again = ev.runs[static_cast<std::size_t>(run - 1)];
    const std::string which = "run " + std::to_string(run) + " of " + std::to_string(repeat);
    if (crash.empty() && backend_failure(ev, again)) {
      crash = which + ": the backend failed: " + again.error().message;
      crashed = &again;
    }
    // Determinism is judged on what the contract grades: an error's text only where messages
    // are graded (PyTorch names whichever bad index its threads reach first).
    const bool same_ungraded_error = !got.ok() && !again.ok() &&
                                     got.error().cls == again.error().cls &&
                                     !compare::messages_graded(ev.opts, got.error().cls);
    const std::string diff = same_ungraded_error ? "" : bitwise_difference(got, again);
    if (diff.empty()) continue;
    ++j.differing_runs;
    if (ev.deterministic) {
      if (nondeterminism.empty())
        nondeterminism = "declared deterministic, but " + which + " differs from run 1: " + diff;
      continue;
    }
    if (!repeat_failure.empty()) continue;
    std::vector<std::pair<reports::Check, const Tensor*>> again_checks;
    if (ev.graded)
      again_checks.push_back(
          {{"expect", compare::check_expect(c, *ev.graded, again, ev.opts)}, expect_tensor});
    if (ev.want)
      again_checks.push_back(
          {{"reference", compare::compare_outcomes(c, *ev.want, again, ev.opts)}, want_tensor});
    for (auto& [ch, expected] : again_checks) {
      if (ch.result.pass) continue;
      repeat_failure = which + " against " + ch.against + ": " + ch.result.summary;
      j.checks.push_back(std::move(ch));  // its mismatches are printed and reported
      compared.emplace_back(&again, expected);
      break;
    }
  }

  const reports::Check* failed = nullptr;
  for (std::size_t i = 0; i < j.checks.size(); ++i) {
    if (j.checks[i].result.pass) continue;
    if (!failed) failed = &j.checks[i];
    add_differences(ev, j.checks[i], *compared[i].first, compared[i].second, j.differences);
  }
  if (crashed && std::none_of(j.differences.begin(), j.differences.end(),
                              [](const Difference& d) { return d.kind == DiffKind::kCrash; })) {
    Difference d;
    d.kind = DiffKind::kCrash;
    d.text = crash;
    d.got_error = crashed->error();
    j.differences.push_back(std::move(d));
  }
  if (!decline.empty() &&
      std::none_of(j.differences.begin(), j.differences.end(), [](const Difference& d) {
        return d.kind == DiffKind::kDeclined;
      })) {  // no check to compare with: declining still is one
    Difference d;
    d.kind = DiffKind::kDeclined;
    d.text = decline;
    d.got_error = got.error();
    j.differences.push_back(std::move(d));
  }
  if (!nondeterminism.empty()) {
    Difference d;
    d.kind = DiffKind::kNondeterministic;
    d.text = nondeterminism;
    j.differences.push_back(std::move(d));
  }

  // The precedence table: the first row whose condition holds gives the verdict.
  const std::string against_failed =
      failed ? "against " + failed->against + ": " + failed->result.summary +
                   (ev.reference_refused.empty() ? "" : " (the reference refused it)")
             : "";
  const std::pair<Verdict, const std::string*> table[] = {
      {Verdict::kFailed, &crash},  // a crash is not an answer that varies
      {Verdict::kDeclined, &decline},       {Verdict::kNondeterministic, &nondeterminism},
      {Verdict::kMistrusted, &ev.mistrust}, {Verdict::kFailed, &repeat_failure},
      {Verdict::kFailed, &against_failed},
  };
  for (const auto& [verdict, why] : table) {
    if (why->empty()) continue;
    j.verdict = verdict;
    j.reason = *why;
    return j;
  }
  j.verdict = Verdict::kPassed;
  for (const auto& ch : j.checks)
    j.reason += (j.reason.empty() ? "" : "; ") + ch.against + ": " + ch.result.summary;
  if (j.checks.empty()) j.reason = "ran (no expect block, no reference to compare with)";
  if (j.differing_runs > 0)
    j.reason += "; " + std::to_string(j.differing_runs) + " of " + std::to_string(repeat - 1) +
                " repeats differed bitwise, each within bound";
  return j;
}

// Known failures: a failing case is XFAIL when every difference is explained by an entry whose
// predicate holds; a passing case an outcome entry naming it selects is XPASS. MISTRUSTED is the
// oracle's problem and never forgiven.
struct Explanation {
  Verdict verdict;
  std::vector<std::size_t> entries;  ///< those that explained something (or declared, for XPASS)
  std::vector<reports::CaseResult::Differences> explained, unexplained;
  reports::CaseResult::KnownLint lint;
};

Explanation explain(const reports::KnownFailures& known, const Evidence& ev, const Judged& j,
                    const std::string& name, const std::string& file) {
  Explanation x{j.verdict, {}, {}, {}, {}};
  const reports::CaseView view(ev.f.c, ev.want, ev.f.expect ? &*ev.f.expect : nullptr);
  std::vector<bool> selected(known.entries.size());
  for (std::size_t i = 0; i < known.entries.size(); ++i) {
    selected[i] = reports::selects(known.entries[i], view, name, file);
    if (selected[i]) x.lint.selected.push_back(i);
  }
  if (j.verdict == Verdict::kPassed) {
    // Only an entry naming cases promises they fail; one selecting by what cases are allows.
    for (std::size_t i : x.lint.selected) {
      const reports::KnownFailure& e = known.entries[i];
      if (e.case_pattern != "*" && (e.forgives != reports::Forgive::kElements ||
                                    e.element_rule == reports::ElementRule::kAnyValue))
        x.entries.push_back(i);
    }
    if (!x.entries.empty()) x.verdict = Verdict::kXpass;
    return x;
  }
  if (!reports::is_failure(j.verdict) || j.verdict == Verdict::kMistrusted) return x;
  std::vector<int64_t> used(known.entries.size(), 0);
  auto group = [](std::vector<reports::CaseResult::Differences>& list, const std::string& key,
                  const std::string& text) {
    for (auto& g : list)
      if (g.entry == key) {
        ++g.count;
        return;
      }
    list.push_back({key, 1, text});
  };
  for (const Difference& d : j.differences) {
    const std::vector<std::size_t> by = reports::explaining(known, selected, view, d);
    if (by.empty()) {
      // Unexplained groups are keyed by kind (entry stays "" in the report).
      auto it = std::find_if(x.unexplained.begin(), x.unexplained.end(), [&](const auto& g) {
        return g.example.rfind(std::string(reports::difference_kind_name(d.kind)) + ": ", 0) == 0;
      });
      if (it != x.unexplained.end()) {
        ++it->count;
      } else {
        x.unexplained.push_back(
            {"", 1, std::string(reports::difference_kind_name(d.kind)) + ": " + d.text});
      }
      continue;
    }
    ++used[by.front()];
    group(x.explained, known.entries[by.front()].id, d.text);
    for (std::size_t k = 1; k < by.size(); ++k) x.lint.overlaps.emplace_back(by.front(), by[k]);
  }
  for (std::size_t i = 0; i < used.size(); ++i)
    if (used[i] > 0) {
      x.entries.push_back(i);
      x.lint.used.emplace_back(i, used[i]);
    }
  if (!j.differences.empty() && x.unexplained.empty()) x.verdict = Verdict::kXfail;
  return x;
}

// The injected bugs `known-failures check` tries on a case the backend got right: a known-failures
// file that would forgive one there is wider than the failures it explains.
std::vector<std::pair<std::string, Outcome>> injected_bugs(const Evidence& ev) {
  std::vector<std::pair<std::string, Outcome>> out;
  out.emplace_back(
      "abort", Error{ErrorClass::kInternal, "plugin crashed with signal 6 (Aborted) [injected]"});
  out.emplace_back("declined", Error{ErrorClass::kUnimplemented, "declined [injected]"});
  bool output = false;
  const auto cls = expected_error_class(ev, &output);
  out.emplace_back("wrong class",
                   Error{cls == ErrorClass::kInvalidArgument ? ErrorClass::kBadIndex
                                                             : ErrorClass::kInvalidArgument,
                         "wrong class [injected]"});
  if (cls != ErrorClass::kBadIndex)
    out.emplace_back("false bad_index",
                     Error{ErrorClass::kBadIndex, "indices[0] = 7 is not in [0, 4) [injected]"});
  const Outcome& got = ev.runs.front();
  if (got.ok() && got.value().num_elements() > 0 && got.value().dtype() != DType::kString) {
    Tensor wrong = got.value();
    visit_dtype(wrong.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = wrong.template data_as<T>();
      if constexpr (std::is_same_v<T, bool>) {
        p[0] = !p[0];
      } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        p[0] = T(std::isnan(to_float(p[0])) ? 1000.0f : to_float(p[0]) + 1000.0f);
      } else if constexpr (std::is_floating_point_v<T>) {
        p[0] = std::isnan(p[0]) ? T(1000) : p[0] + T(1000);
      } else if constexpr (std::is_integral_v<T>) {
        p[0] = static_cast<T>(p[0] + 1);
      } else if constexpr (!std::is_same_v<T, std::string>) {  // complex
        p[0] = T(std::isnan(p[0].real()) ? 1000 : p[0].real() + 1000, p[0].imag());
      }
    });
    out.emplace_back("wrong value", std::move(wrong));
  }
  return out;
}

}  // namespace

std::optional<std::string> admit(const Capabilities& caps, const Case& c) {
  if (caps.supports(c)) return std::nullopt;
  return "outside the backend's capabilities: " + unsupported_reason(caps, c);
}

CaseResult CaseChecker::grade(const CaseFile& f, const std::string& file) {
  const Case& c = f.c;
  const Capabilities& caps = backend_.capabilities();
  CaseResult r;
  reports::describe_case(c, r);
  r.file = file;
  r.backend = caps.name;
  r.repro = file.empty() ? opts_.sweep_repro : eval_repro(caps.name, file, opts_.repeat);
  if (auto why = admit(caps, c)) {
    r.verdict = Verdict::kUnimplemented;
    r.outcome = "not run";
    r.reason = *why;
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
  std::vector<Outcome> runs;
  runs.push_back(run_once());
  const Outcome& got = runs.front();
  r.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.outcome = reports::outcome_summary(got);
  if (!got.ok() && got.error().message.rfind("the backend threw an exception: ", 0) == 0) {
    r.verdict = Verdict::kFailed;
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

  Evidence ev{f, nullptr, nullptr, runs, caps.deterministic, compare::options_for(caps), "", ""};
  // The expect block the backend is graded by: TF's message text only where the contract has it
  // (a backend with tf_messages, and an invalid_argument or bad_index expectation).
  std::optional<Expect> stripped;
  if (f.expect && f.expect->error_regex &&
      !(f.expect->error_class && compare::messages_graded(ev.opts, *f.expect->error_class))) {
    stripped = *f.expect;  // an error expectation: no tensor to copy
    stripped->error_regex.reset();
  }
  ev.graded = stripped ? &*stripped : f.expect ? &*f.expect : nullptr;

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
      const bool expect_failed =
          ev.graded && !compare::check_expect(c, *ev.graded, got, ev.opts).pass;
      if (!expect_failed && !backend_failure(ev, got)) {
        r.verdict = Verdict::kSkipped;
        r.reason = "the reference refused it: " + want->error().message;
        return r;
      }
      ev.reference_refused = want->error().message;
      want.reset();
    } else {
      if (f.expect) {
        const auto ref_vs_expect = compare::check_expect(c, *f.expect, *want);
        if (!ref_vs_expect.pass)
          ev.mistrust = "the reference fails this case's expect: " + ref_vs_expect.summary;
      }
      ev.want = &*want;
    }
  }
  for (int run = 2; run <= opts_.repeat; ++run) runs.push_back(run_once());

  Judged j = judge(ev);
  r.verdict = j.verdict;
  r.reason = j.reason;
  r.differing_runs = j.differing_runs;
  if (opts_.known_failures) {
    const reports::KnownFailures& known = *opts_.known_failures;
    Explanation x = explain(known, ev, j, r.name, r.file);
    r.explained = std::move(x.explained);
    r.unexplained = std::move(x.unexplained);
    if (x.verdict == Verdict::kXfail || x.verdict == Verdict::kXpass) {
      std::string ids;
      for (std::size_t i : x.entries) ids += (ids.empty() ? "" : ", ") + known.entries[i].id;
      const reports::KnownFailure& first = known.entries[x.entries.front()];
      r.known = CaseResult::Known{r.verdict, ids, first.reason, first.link};
      r.reason =
          x.verdict == Verdict::kXfail
              ? "known failure (" + ids + ": " + first.reason + ", " + first.link + "): " + r.reason
              : "declared a known failure (" + ids + ": " + first.reason + ", " + first.link +
                    ") but passed: " + r.reason;
      r.verdict = x.verdict;
    } else if (!r.unexplained.empty() && !r.explained.empty()) {
      r.reason += " (" + std::to_string(r.unexplained.size()) +
                  " kind(s) of difference no known failure explains)";
    }
    if (opts_.lint) {
      // A case the backend got right: would the file forgive a bug injected there?
      if (j.verdict == Verdict::kPassed) {
        for (auto& [kind, bad] : injected_bugs(ev)) {
          std::vector<Outcome> fake;
          fake.push_back(std::move(bad));
          const Evidence with_fake{f,           ev.graded,           ev.want,
                                   fake,        ev.deterministic,    ev.opts,
                                   ev.mistrust, ev.reference_refused};
          const Judged jj = judge(with_fake);
          const Explanation xx = explain(known, with_fake, jj, r.name, r.file);
          if (xx.verdict == Verdict::kXfail)
            for (std::size_t i : xx.entries) x.lint.absorbed.emplace_back(i, kind);
        }
      }
      r.lint = std::move(x.lint);
    }
  }
  r.checks = std::move(j.checks);

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
  for (const auto& d : r.explained)
    s += "    explained by " + d.entry + ": " + std::to_string(d.count) + " difference(s), e.g. " +
         d.example + "\n";
  for (const auto& d : r.unexplained)
    s += "    unexplained: " + std::to_string(d.count) + " difference(s), e.g. " + d.example + "\n";
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

bool print_lint(const reports::KnownFailuresLint& lint, const std::string& path) {
  std::printf("known failures %s:\n%s", path.c_str(), lint.table().c_str());
  const std::vector<std::string> findings = lint.findings();
  for (const std::string& f : findings) std::printf("KNOWN-FAILURES %s\n", f.c_str());
  std::printf("known-failures check: %zu finding(s)\n", findings.size());
  std::fflush(stdout);
  return !findings.empty();
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
