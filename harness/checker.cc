#include "harness/checker.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <new>
#include <optional>

#include "compare/elements.h"
#include "compare/foreign.h"
#include "core/case_json.h"
#include "harness/budget.h"
#include "harness/crash_guard.h"
#include "harness/explain.h"
#include "harness/judge.h"
#include "harness/regression.h"
#include "harness/shrink.h"

namespace gscheck::harness {

using reports::CaseResult;
using reports::Verdict;

int default_repeat(const std::string& backend_name) {
  return backend_name.starts_with("plugin:") || backend_name.starts_with("python:") ? 2 : 1;
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

CaseResult file_result(const std::string& path, const std::string& backend) {
  CaseResult r;
  r.name = path;
  r.file = path;
  r.backend = backend;
  r.repro = replay_command(backend, path);
  return r;
}

// One call of run(), which must neither throw nor crash: an exception or a crash of an
// in-process backend (harness/crash_guard.h) is an internal error, a failed case, not the end of
// the run.
struct Ran {
  Outcome outcome = Error{};
  bool threw = false;    ///< an exception other than std::bad_alloc
  bool oom = false;      ///< std::bad_alloc in gscheck's own process
  bool crashed = false;  ///< a signal (in-process backends only)
};

Ran run_guarded(Backend& b, const Case& c, const char* who) {
  Ran ran;
  const std::optional<int> sig = run_crash_guarded([&] {
    try {
      ran.outcome = b.run(c);
    } catch (const std::bad_alloc&) {
      ran.oom = true;
      ran.outcome = Error{ErrorClass::kResourceExhausted,
                          std::string("the ") + who + " ran out of memory (std::bad_alloc)"};
    } catch (const std::exception& e) {
      ran.threw = true;
      ran.outcome = Error{ErrorClass::kInternal,
                          std::string("the ") + who + " threw an exception: " + e.what()};
    }
  });
  if (sig) {
    ran.crashed = true;
    Error e{ErrorClass::kInternal, std::string("the ") + who + " crashed with " +
                                       signal_text(*sig) + " in gscheck's process"};
    e.unsafe = true;
    ran.outcome = std::move(e);
  }
  return ran;
}

bool lost_worker(const Outcome& o) { return !o.ok() && o.error().lost_worker; }

bool refused(const Outcome& o) {
  return !o.ok() && o.error().cls == ErrorClass::kResourceExhausted;
}

// The verdict of run 1 alone, where it settles the case: a backend that threw is FAILED; a
// budget refusal is SKIPPED only where gscheck says the case is over budget: its own process ran
// out (std::bad_alloc), the output would be over --max-bytes or of a rank no Tensor holds by
// shape arithmetic alone (before TensorFlow's checks, which a backend may order otherwise), or
// nothing else can grade it (the backend is the reference). Any other refusal is settled by the
// reference (consult_reference): only gscheck decides a case is over budget, never the code it
// grades.
bool settled_by_first_run(const CaseFile& f, const Ran& first, bool consults_reference,
                          int64_t max_bytes, CaseResult& r) {
  const Outcome& got = first.outcome;
  if (first.threw) {
    r.verdict = Verdict::kFailed;
    r.reason = got.error().message;
    return true;
  }
  const bool expects_budget_error =
      f.expect && f.expect->error_class == ErrorClass::kResourceExhausted;
  if (!refused(got) || expects_budget_error) return false;
  if (first.oom || !consults_reference) {
    r.verdict = Verdict::kSkipped;
    r.reason = "over gscheck's memory budget: " + got.error().message;
    return true;
  }
  if (auto why = over_budget(f.c, max_bytes)) {
    r.verdict = Verdict::kSkipped;
    r.reason = *why + "; the backend refused it: " + got.error().message;
    return true;
  }
  return false;
}

// The expect block the backend is graded by: TF's message text only where the contract has it
// (a backend with tf_messages, and an invalid_argument or bad_index expectation).
const Expect* graded_expect(const CaseFile& f, const compare::Options& opts,
                            std::optional<Expect>& stripped) {
  if (f.expect && f.expect->error_regex &&
      !(f.expect->error_class && compare::messages_graded(opts, *f.expect->error_class))) {
    stripped = *f.expect;  // an error expectation: no tensor to copy
    stripped->error_regex.reset();
    return &*stripped;
  }
  return f.expect ? &*f.expect : nullptr;
}

enum class Consulted {
  kGraded,   ///< the reference's outcome is evidence (or it refused and the rest can grade)
  kSkipped,  ///< the reference cannot grade the case (over its budget) and nothing else can
  kCrashed,  ///< the reference crashed or threw: a bug in the oracle, the case FAILED
};

// The reference's outcome as evidence.
Consulted consult_reference(Backend& reference, Evidence& ev, std::optional<Outcome>& want,
                            CaseResult& r) {
  const Case& c = ev.f.c;
  const Outcome& got = ev.runs.front();
  Ran ran = run_guarded(reference, c, "reference");
  want = std::move(ran.outcome);
  if (ran.threw || ran.crashed) {
    // No baseline, and a bug of gscheck's own: the case is kept to reproduce it.
    r.verdict = Verdict::kFailed;
    r.reason = want->error().message + ": a bug in the reference, not in " + r.backend;
    return Consulted::kCrashed;
  }
  const bool expects_budget_error =
      ev.f.expect && ev.f.expect->error_class == ErrorClass::kResourceExhausted;
  if (refused(*want) && !(refused(got) && expects_budget_error)) {
    // Over gscheck's budget: the reference cannot grade the case, but its expect block and a
    // crash still can; a backend that refused it too is SKIPPED (unless the case expects the
    // refusal: then both are graded as answers).
    const bool expect_failed =
        !refused(got) && ev.graded && !compare::check_expect(c, *ev.graded, got, ev.opts).pass;
    if (!expect_failed && !backend_failure(ev, got)) {
      r.verdict = Verdict::kSkipped;
      r.reason = "the reference refused it: " + want->error().message;
      return Consulted::kSkipped;
    }
    ev.reference_refused = want->error().message;
    want.reset();
    return Consulted::kGraded;
  }
  if (ev.f.expect) {
    const auto ref_vs_expect = compare::check_expect(c, *ev.f.expect, *want);
    if (!ref_vs_expect.pass)
      ev.mistrust = "the reference fails this case's expect: " + ref_vs_expect.summary;
  }
  ev.want = &*want;
  return Consulted::kGraded;
}

// Why the case is UNSAFE, or "": a run that crashed, hung, went over its memory cap or wrote
// outside its output (Error::unsafe, set by the containment or the crash guard), or an output
// element in no input where every element is a copy (compare/foreign.h). Nothing the backend
// answers decides this, and no known-failures entry turns it green.
std::string unsafe_reason(const Case& c, const std::vector<Outcome>& runs) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Outcome& o = runs[i];
    const std::string run = runs.size() > 1 ? "run " + std::to_string(i + 1) + " of " +
                                                  std::to_string(runs.size()) + ": "
                                            : "";
    if (!o.ok() && o.error().unsafe)
      return run + "the backend did not answer: " + o.error().message;
    if (!o.ok()) continue;
    if (const auto at = compare::first_foreign_element(c, *o))
      return run + "output element " + compare::format_index(compare::unravel(o->shape(), *at)) +
             " = " + compare::format_element(*o, *at) +
             " is in no input and not zero where every element is a copy: memory the backend "
             "never wrote, read outside its inputs, or a value it made up";
  }
  return "";
}

// A case that is unsafe fails whatever explained its differences: an entry that would have made
// it XFAIL is kept as what describes it (exit status 4 when every failure is described so).
void mark_unsafe(CaseResult& r, const std::string& why) {
  if (r.verdict == Verdict::kXfail && r.known) {
    r.reason = "unsafe, described by known failure (" + r.known->entry + ": " + r.known->reason +
               ", " + r.known->link + "), which cannot make it green: " + why;
  } else {
    r.known.reset();
    r.reason = "unsafe: " + why;
  }
  r.verdict = Verdict::kUnsafe;
}

// The entries that would turn `bad` in place of the backend's outcome into XFAIL; none when the
// fake case would be UNSAFE (nothing forgives that) or fail anyway.
std::vector<std::size_t> absorbing(const reports::KnownFailures& known, const Evidence& ev,
                                   const CaseResult& r, Outcome bad) {
  std::vector<Outcome> fake;
  fake.push_back(std::move(bad));
  const Evidence with_fake{ev.f,
                           ev.graded,
                           ev.want,
                           fake,
                           ev.deterministic,
                           ev.opts,
                           ev.mistrust,
                           ev.reference_refused,
                           ev.max_output_bytes};
  const Explanation x = explain(known, with_fake, judge(with_fake), r.name, r.file);
  if (x.verdict != Verdict::kXfail || !unsafe_reason(ev.f.c, fake).empty()) return {};
  // A rule accepts only its own answer (bit for bit, or within its bounds: any order of a sum
  // admits a NaN where opposite overflows meet): that is a prediction, not a forgiveness.
  std::vector<std::size_t> out;
  for (std::size_t i : x.entries)
    if (known.entries[i].forgives != reports::Forgive::kFollows) out.push_back(i);
  return out;
}

// `known-failures check`: on a case the backend got right, would the file forgive an injected
// bug? Each entry that would is recorded as absorbing it.
void lint_injected_bugs(const reports::KnownFailures& known, const Evidence& ev,
                        const CaseResult& r, reports::CaseResult::KnownLint& lint) {
  for (auto& [kind, bad] : injected_bugs(ev))
    for (std::size_t i : absorbing(known, ev, r, std::move(bad)))
      lint.absorbed.emplace_back(i, kind);
}

// `known-failures check` on a case entries explained: would they explain another tensor too (a
// wrong row, an untouched element changed)? Entries that accept values gscheck cannot predict
// (values unchecked) do by design and are counted apart; any other that does is recorded.
void lint_injected_on_explained(const reports::KnownFailures& known, const Evidence& ev,
                                const CaseResult& r, reports::CaseResult::KnownLint& lint) {
  for (auto& [kind, bad] : injected_bugs_on_explained(ev))
    for (std::size_t i : absorbing(known, ev, r, std::move(bad)))
      if (!reports::values_unchecked(known.entries[i])) lint.absorbed.emplace_back(i, kind);
}

// Known failures turn an explained failure into XFAIL and a declared-failing pass into XPASS.
void apply_known_failures(const reports::KnownFailures& known, bool lint, const Evidence& ev,
                          const Judged& j, CaseResult& r) {
  Explanation x = explain(known, ev, j, r.name, r.file);
  r.explained = std::move(x.explained);
  r.unexplained = std::move(x.unexplained);
  if (x.verdict == Verdict::kXfail || x.verdict == Verdict::kXpass) {
    std::string ids;
    for (std::size_t i : x.entries) ids += (ids.empty() ? "" : ", ") + known.entries[i].id;
    const reports::KnownFailure& first = known.entries[x.entries.front()];
    r.known = CaseResult::Known{r.verdict, ids, first.reason, first.link, false, x.follows};
    if (x.verdict == Verdict::kXfail)
      for (std::size_t i : x.entries)
        r.known->values_unchecked |= reports::values_unchecked(known.entries[i]);
    const std::string entry = ids + ": " + first.reason + ", " + first.link;
    r.reason = x.verdict == Verdict::kXfail
                   ? "known failure (" + entry + "): " + r.reason
                   : "declared a known failure (" + entry + ") but passed: " + r.reason;
    r.verdict = x.verdict;
  } else if (!x.reason.empty()) {
    r.reason = x.reason;  // graded against the rule an entry says the backend follows
  } else if (!r.unexplained.empty() && !r.explained.empty()) {
    r.reason += " (" + std::to_string(r.unexplained.size()) +
                " kind(s) of difference no known failure explains)";
  }
  if (!lint) return;
  if (j.verdict == Verdict::kPassed) lint_injected_bugs(known, ev, r, x.lint);
  if (x.verdict == Verdict::kXfail) lint_injected_on_explained(known, ev, r, x.lint);
  r.lint = std::move(x.lint);
}

}  // namespace

CaseResult CaseChecker::check_file(const std::string& path) {
  try {
    return check_file_unguarded(path);
  } catch (const std::bad_alloc&) {
    return out_of_memory(file_result(path, backend_.capabilities().name),
                         "while loading or checking " + path);
  }
}

CaseResult CaseChecker::check_case(const CaseFile& f, const std::string& file) {
  try {
    return grade(f, file);
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
  auto f = [&]() -> Expected<CaseFile> {
    if (!opts_.sealed) return load_case_file(path, opts_.max_bytes);
    // The text read before the backend started; the file itself is never read again.
    const SealedInputs::File* sealed = opts_.sealed->find(path);
    if (!sealed)
      return Error{ErrorClass::kInternal, path + ": not among the case files read at the start"};
    if (!sealed->text.ok()) return sealed->text.error();
    auto parsed = parse_case_file_text(*sealed->text, opts_.max_bytes);
    if (!parsed.ok()) return Error{parsed.error().cls, path + ": " + parsed.error().message};
    return parsed;
  }();
  if (f.ok()) return check_case(*f, path);
  CaseResult r = file_result(path, backend_.capabilities().name);
  r.outcome = "not run";
  r.reason = f.error().message;
  r.verdict =
      f.error().cls == ErrorClass::kResourceExhausted ? Verdict::kSkipped : Verdict::kFailed;
  return r;
}

namespace {

// What a failure is, for shrinking: the verdict and the kinds of outcome on both sides (an
// error's class, a lost worker; a tensor of the wrong shape or with wrong values). A smaller case
// that fails the same way has the same signature.
std::string outcome_kind(const Outcome& o) {
  if (!o.ok())
    return std::string(error_class_name(o.error().cls)) + (o.error().lost_worker ? " lost" : "");
  return "tensor";
}

std::string failure_signature(const CaseResult& r, const Outcome& got,
                              const std::optional<Outcome>& want) {
  std::string s = std::string(reports::verdict_name(r.verdict)) + "|" + outcome_kind(got) + "|" +
                  (want ? outcome_kind(*want) : "none");
  if (want && want->ok() && got.ok())
    s += want->value().dtype() == got->dtype() && want->value().shape() == got->shape() ? "|values"
                                                                                        : "|shape";
  return s;
}

}  // namespace

struct CaseChecker::Graded {
  CaseResult r;
  std::optional<Outcome> want;  ///< the reference's outcome, when it graded the case
  std::string signature;        ///< failure_signature; "" when the backend's run settled it
  bool reference_crashed = false;
};

CaseResult CaseChecker::grade(const CaseFile& f, const std::string& file) {
  Graded g = grade_unsaved(f, file, /*step=*/false);
  CaseResult& r = g.r;
  if (opts_.failed_cases_dir.empty()) return r;
  const Capabilities& caps = backend_.capabilities();
  if (g.reference_crashed) {
    if (file.empty()) {
      auto path = save_regression(opts_.failed_cases_dir, {f.c, std::optional<Outcome>(),
                                                           opts_.found_by, "reference", r.reason});
      if (path.ok()) r.repro = replay_command("reference", *path);
    }
    return r;
  }
  const bool xfail = r.verdict == reports::Verdict::kXfail;
  if ((!reports::is_failure(r.verdict) && !xfail) || !g.want) return r;
  // A failing generated case becomes a regression: the reference's outcome as its expect. An
  // XFAIL one is saved too, so that every case a report or page lists replays by itself.
  if (file.empty()) {
    auto path = save_regression(opts_.failed_cases_dir,
                                {f.c, *g.want, opts_.found_by, caps.name, r.reason});
    if (path.ok()) r.repro = replay_command(caps.name, *path, opts_.repeat, caps.replay_flags);
  }
  if (opts_.shrink_seconds > 0 && !g.signature.empty() && !xfail) shrink(f, g, r);
  return r;
}

void CaseChecker::shrink(const CaseFile& f, const Graded& g, CaseResult& r) {
  const auto total_ms = static_cast<int64_t>(opts_.shrink_total_seconds * 1000);
  if (total_ms > 0 && shrink_spent_ms_->load() >= total_ms) return;
  double seconds = opts_.shrink_seconds;
  if (total_ms > 0)
    seconds = std::min(seconds, static_cast<double>(total_ms - shrink_spent_ms_->load()) / 1000);
  std::optional<Graded> last;  // the grading of the smallest case kept so far
  Shrunk s = shrink_case(f.c,
                         [&](const Case& c) {
                           CaseFile step{c, std::nullopt, ""};
                           Graded sg = grade_unsaved(step, "", /*step=*/true);
                           if (sg.signature != g.signature) return false;
                           last = std::move(sg);
                           return true;
                         },
                         {.seconds = seconds});
  shrink_spent_ms_->fetch_add(static_cast<int64_t>(s.stats.seconds * 1000));
  if (s.stats.kept == 0 || !last || !last->want) return;
  const Capabilities& caps = backend_.capabilities();
  auto path = save_regression(
      opts_.failed_cases_dir,
      {s.c, *last->want,
       opts_.found_by + ", shrunk from " + (r.file.empty() ? "a generated case" : r.file),
       caps.name, last->r.reason});
  if (!path.ok()) return;
  CaseResult::Shrunk out;
  out.file = *path;
  out.repro = replay_command(caps.name, *path, opts_.repeat, caps.replay_flags);
  out.inputs = last->r.inputs;
  out.reason = last->r.reason;
  out.tried = s.stats.tried;
  out.kept = s.stats.kept;
  out.seconds = s.stats.seconds;
  out.limited = s.stats.limited;
  r.shrunk = std::move(out);
}

CaseChecker::Graded CaseChecker::grade_unsaved(const CaseFile& f, const std::string& file,
                                               bool step) {
  const Case& c = f.c;
  const Capabilities& caps = backend_.capabilities();
  Graded g;
  CaseResult& r = g.r;
  reports::describe_case(c, r);
  r.file = file;
  r.backend = caps.name;
  r.repro = file.empty() ? opts_.sweep_repro
                         : replay_command(caps.name, file, opts_.repeat, caps.replay_flags);
  if (Status admitted = admit(caps, c); !admitted.ok()) {
    r.verdict = Verdict::kUnimplemented;
    r.outcome = "not run";
    r.reason = admitted.error().message;
    return g;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Outcome> runs;
  Ran first = run_guarded(backend_, c, "backend");
  ++r.runs;
  r.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.outcome = reports::outcome_summary(first.outcome);
  const bool consults_reference = reference_ && reference_ != &backend_;
  if (settled_by_first_run(f, first, consults_reference, opts_.max_bytes, r)) return g;
  runs.push_back(std::move(first.outcome));

  Evidence ev{f,  nullptr, nullptr,        runs, caps.deterministic, compare::options_for(caps),
              "", "",      opts_.max_bytes};
  std::optional<Expect> stripped;
  ev.graded = graded_expect(f, ev.opts, stripped);
  std::optional<Outcome>& want = g.want;
  if (consults_reference) {
    const Consulted consulted = consult_reference(*reference_, ev, want, r);
    g.reference_crashed = consulted == Consulted::kCrashed;
    if (consulted != Consulted::kGraded) {
      want.reset();
      return g;
    }
  }
  // A run that cost the backend its worker is not repeated (Error::lost_worker): the case has
  // failed whatever a repeat gives, and a fresh worker of a Python backend costs seconds.
  for (int run = 2; run <= opts_.repeat && !lost_worker(runs.back()); ++run, ++r.runs)
    runs.push_back(run_guarded(backend_, c, "backend").outcome);

  Judged j = judge(ev);
  r.verdict = j.verdict;
  r.reason = j.reason;
  r.differing_runs = j.differing_runs;
  if (refused(runs.front()) && reports::is_failure(r.verdict))
    r.reason =
        "answered resource_exhausted for a case gscheck ran within --max-bytes (only "
        "gscheck decides a case is over budget): " +
        r.reason;
  if (opts_.known_failures)
    apply_known_failures(*opts_.known_failures, opts_.lint && !step, ev, j, r);
  if (r.verdict != Verdict::kPassed && r.verdict != Verdict::kXpass)
    if (std::string why = unsafe_reason(c, runs); !why.empty()) mark_unsafe(r, why);
  r.checks = std::move(j.checks);
  g.signature = failure_signature(r, runs.front(), want);
  return g;
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
           m.got + (m.triage.empty() ? "" : "\n      " + m.triage) + "\n";
  }
  for (const auto& d : r.explained)
    s += "    explained by " + d.entry + ": " + std::to_string(d.count) + " difference(s), e.g. " +
         d.example + "\n";
  for (const auto& d : r.unexplained)
    s += "    unexplained: " + std::to_string(d.count) + " difference(s), e.g. " + d.example + "\n";
  if (reports::is_failure(r.verdict) || r.verdict == Verdict::kXfail ||
      r.verdict == Verdict::kXpass)
    s += "    repro: " + r.repro + "\n";
  if (r.shrunk) {
    std::string in;
    for (const auto& i : r.shrunk->inputs)
      in += (in.empty() ? "" : ", ") + i.name + " " + i.shape.to_string();
    s += "    minimal (" + std::to_string(r.shrunk->kept) + " steps, " +
         std::to_string(r.shrunk->tried) + " tried" + (r.shrunk->limited ? ", time limit" : "") +
         "): " + in + "\n      " + r.shrunk->reason + "\n    repro: " + r.shrunk->repro + "\n";
  }
  return s;
}

}  // namespace gscheck::harness
