#include "harness/judge.h"

#include <algorithm>
#include <cstring>

#include "compare/elements.h"

namespace gscheck::harness {

using reports::Difference;
using reports::Verdict;
using DiffKind = reports::Difference::Kind;

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

namespace {

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

// What judge() finds on the way to the verdict: one text per row of the precedence table, and
// per check the outcome it compared and the tensor it expected.
struct Findings {
  std::string crash, decline, nondeterminism, repeat_failure;
  const Outcome* crashed = nullptr;
  std::vector<std::pair<const Outcome*, const Tensor*>> compared;  // parallel to Judged::checks
};

const Tensor* expect_tensor(const Evidence& ev) {
  return ev.graded && ev.graded->output ? &*ev.graded->output : nullptr;
}
const Tensor* want_tensor(const Evidence& ev) {
  return ev.want && ev.want->ok() ? &ev.want->value() : nullptr;
}

// Step 1: run 1 against the expect block and the reference; a crash or a decline of run 1.
void check_first_run(const Evidence& ev, Judged& j, Findings& fd) {
  const Case& c = ev.f.c;
  const Outcome& got = ev.runs.front();
  if (ev.graded) {
    j.checks.push_back({"expect", compare::check_expect(c, *ev.graded, got, ev.opts)});
    fd.compared.emplace_back(&got, expect_tensor(ev));
  }
  if (ev.want) {
    j.checks.push_back({"reference", compare::compare_outcomes(c, *ev.want, got, ev.opts)});
    fd.compared.emplace_back(&got, want_tensor(ev));
  }
  if (backend_failure(ev, got)) {
    fd.crash = "run 1 of " + std::to_string(ev.runs.size()) +
               ": the backend failed: " + got.error().message;
    fd.crashed = &got;
  }
  if (declined(ev, got))
    fd.decline = "declined a case inside its declared contract: " + got.error().message;
}

// A repeat of a backend that does not promise determinism must pass every check on its own; the
// first check it fails is recorded (its mismatches are printed and reported).
void check_repeat(const Evidence& ev, const Outcome& again, const std::string& which, Judged& j,
                  Findings& fd) {
  std::vector<std::pair<reports::Check, const Tensor*>> again_checks;
  if (ev.graded)
    again_checks.push_back(
        {{"expect", compare::check_expect(ev.f.c, *ev.graded, again, ev.opts)}, expect_tensor(ev)});
  if (ev.want)
    again_checks.push_back(
        {{"reference", compare::compare_outcomes(ev.f.c, *ev.want, again, ev.opts)},
         want_tensor(ev)});
  for (auto& [ch, expected] : again_checks) {
    if (ch.result.pass) continue;
    fd.repeat_failure = which + " against " + ch.against + ": " + ch.result.summary;
    j.checks.push_back(std::move(ch));
    fd.compared.emplace_back(&again, expected);
    return;
  }
}

// Step 2: the repeats. An outcome bit-identical to run 1 needs no new comparison.
void check_repeats(const Evidence& ev, Judged& j, Findings& fd) {
  const Outcome& got = ev.runs.front();
  const int repeat = static_cast<int>(ev.runs.size());
  for (int run = 2; run <= repeat; ++run) {
    const Outcome& again = ev.runs[static_cast<std::size_t>(run - 1)];
    const std::string which = "run " + std::to_string(run) + " of " + std::to_string(repeat);
    if (fd.crash.empty() && backend_failure(ev, again)) {
      fd.crash = which + ": the backend failed: " + again.error().message;
      fd.crashed = &again;
    }
    // Determinism is judged on what the contract grades: an error's text only where messages
    // are graded (PyTorch names whichever bad index its threads reach first).
    const bool same_ungraded_error = !got.ok() && !again.ok() &&
                                     got.error().cls == again.error().cls &&
                                     !compare::messages_graded(ev.opts, got.error().cls);
    // Nor where TensorFlow itself may name any of a set (its shards race to store the bad row,
    // docs/spec_notes.md): two messages the reference admits are one answer, not two.
    const bool same_admitted_error =
        !got.ok() && !again.ok() && got.error().cls == again.error().cls && ev.want &&
        !ev.want->ok() && ev.want->error().cls == got.error().cls &&
        !ev.want->error().alternatives.empty() && ev.want->error().accepts(got.error().message) &&
        ev.want->error().accepts(again.error().message);
    const std::string diff =
        same_ungraded_error || same_admitted_error ? "" : bitwise_difference(got, again);
    if (diff.empty()) continue;
    ++j.differing_runs;
    if (ev.deterministic) {
      if (fd.nondeterminism.empty())
        fd.nondeterminism = "declared deterministic, but " + which + " differs from run 1: " + diff;
      continue;
    }
    if (fd.repeat_failure.empty()) check_repeat(ev, again, which, j, fd);
  }
}

bool has_kind(const std::vector<Difference>& ds, DiffKind k) {
  return std::any_of(ds.begin(), ds.end(), [k](const Difference& d) { return d.kind == k; });
}

// Step 3: the differences a known failure must explain: every failed check's, then a crash, a
// decline and nondeterminism where no check stands for them.
void collect_differences(const Evidence& ev, Judged& j, const Findings& fd) {
  for (std::size_t i = 0; i < j.checks.size(); ++i)
    if (!j.checks[i].result.pass)
      add_differences(ev, j.checks[i], *fd.compared[i].first, fd.compared[i].second, j.differences);
  auto add = [&](DiffKind kind, const std::string& text, const Outcome* o) {
    Difference d;
    d.kind = kind;
    d.text = text;
    if (o) d.got_error = o->error();
    j.differences.push_back(std::move(d));
  };
  if (fd.crashed && !has_kind(j.differences, DiffKind::kCrash))
    add(DiffKind::kCrash, fd.crash, fd.crashed);
  if (!fd.decline.empty() && !has_kind(j.differences, DiffKind::kDeclined))
    add(DiffKind::kDeclined, fd.decline, &ev.runs.front());  // no check to compare with
  if (!fd.nondeterminism.empty()) add(DiffKind::kNondeterministic, fd.nondeterminism, nullptr);
}

// Step 4: the precedence table. The first row whose text is set gives the verdict.
void pick_verdict(const Evidence& ev, Judged& j, const Findings& fd) {
  const reports::Check* failed = nullptr;
  for (const reports::Check& ch : j.checks)
    if (!ch.result.pass) {
      failed = &ch;
      break;
    }
  const std::string against_failed =
      failed ? "against " + failed->against + ": " + failed->result.summary +
                   (ev.reference_refused.empty() ? "" : " (the reference refused it)")
             : "";
  const std::pair<Verdict, const std::string*> table[] = {
      {Verdict::kFailed, &fd.crash},  // a crash is not an answer that varies
      {Verdict::kDeclined, &fd.decline},    {Verdict::kNondeterministic, &fd.nondeterminism},
      {Verdict::kMistrusted, &ev.mistrust}, {Verdict::kFailed, &fd.repeat_failure},
      {Verdict::kFailed, &against_failed},
  };
  for (const auto& [verdict, why] : table) {
    if (why->empty()) continue;
    j.verdict = verdict;
    j.reason = *why;
    return;
  }
  j.verdict = Verdict::kPassed;
  for (const auto& ch : j.checks)
    j.reason += (j.reason.empty() ? "" : "; ") + ch.against + ": " + ch.result.summary;
  if (j.checks.empty()) j.reason = "ran (no expect block, no reference to compare with)";
  if (j.differing_runs > 0)
    j.reason += "; " + std::to_string(j.differing_runs) + " of " +
                std::to_string(ev.runs.size() - 1) + " repeats differed bitwise, each within bound";
}

}  // namespace

Judged judge(const Evidence& ev) {
  Judged j;
  Findings fd;
  check_first_run(ev, j, fd);
  check_repeats(ev, j, fd);
  collect_differences(ev, j, fd);
  pick_verdict(ev, j, fd);
  return j;
}

}  // namespace gscheck::harness
