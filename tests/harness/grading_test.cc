// The grading rules a vendor relies on: which messages are compared, what a
// reference refusal may hide, crashes in repeats, and known failures (XFAIL / XPASS).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <tuple>

#include "backends/reference_backend.h"
#include "compare/compare.h"
#include "harness/checker.h"
#include "harness/judge.h"
#include "reports/known_failures.h"
#include "reports/known_failures_lint.h"

namespace gscheck::harness {
namespace {

using reports::Verdict;

// A backend answering from a script: call k gets script[k % size].
class Scripted final : public Backend {
 public:
  explicit Scripted(std::string name, std::vector<Outcome> script) : script_(std::move(script)) {
    caps_.name = std::move(name);
    caps_.ops = {Op::kGather, Op::kTensorScatterMin};
    caps_.dtypes = {DType::kFloat32, DType::kBFloat16};
    caps_.index_dtypes = {DType::kInt32};
    caps_.semantics = {Semantics::kTfCpu};
    caps_.tf_messages = true;
  }
  const Capabilities& capabilities() const override { return caps_; }
  Outcome run(const Case&) override {
    return script_[static_cast<std::size_t>(calls++) % script_.size()];
  }
  Capabilities caps_;
  std::vector<Outcome> script_;
  int calls = 0;
};

CaseFile gather_case(std::optional<Expect> expect) {
  CaseFile f;
  f.c.name = "gather/graded";
  f.c.op = Op::kGather;
  f.c.params = Tensor::from_values<float>(Shape{3}, {1, 2, 3});
  f.c.indices = Tensor::from_values<int32_t>(Shape{2}, {2, 0});
  f.c.axis = Tensor::from_values<int32_t>(Shape{}, {0});
  f.expect = std::move(expect);
  return f;
}

Expect error_expect(ErrorClass cls, std::string regex) { return Expect{std::nullopt, cls, regex}; }
const Outcome kOut = Tensor::from_values<float>(Shape{2}, {3, 1});

TEST(Grading, MessagesComparedOnlyForInvalidArgumentAndBadIndex) {
  // unsupported: TensorFlow says "Could not find device for node ...", the reference its own
  // words; the class is the contract, the text is not.
  Scripted backend("plugin:tf",
                   {Error{ErrorClass::kUnsupported, "Could not find device for node"}});
  Scripted reference("reference",
                     {Error{ErrorClass::kUnsupported, "no GatherV2 kernel for uint8"}});
  CaseChecker checker(backend, &reference, {});
  auto r = checker.check_case(
      gather_case(error_expect(ErrorClass::kUnsupported, "^no GatherV2 kernel")), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;

  // resource_exhausted: a budget's own words, by class too.
  Scripted big("plugin:tf", {Error{ErrorClass::kResourceExhausted, "OOM when allocating"}});
  Scripted ref_big("reference", {Error{ErrorClass::kResourceExhausted, "over the 4 GiB budget"}});
  CaseChecker budget(big, &ref_big, {});
  r = budget.check_case(
      gather_case(error_expect(ErrorClass::kResourceExhausted, "^over the .* budget$")), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;

  // invalid_argument and bad_index: TensorFlow's text is the contract.
  for (ErrorClass cls : {ErrorClass::kInvalidArgument, ErrorClass::kBadIndex}) {
    Scripted wrong("plugin:tf", {Error{cls, "some other text"}});
    Scripted ref("reference", {Error{cls, "params must be at least 1 dimensional"}});
    CaseChecker c(wrong, &ref, {});
    r = c.check_case(gather_case(error_expect(cls, "^params must be at least 1 dimensional$")),
                     "x.json");
    EXPECT_EQ(r.verdict, Verdict::kFailed) << error_class_name(cls);
    // Without an expect block the reference's text is compared the same way.
    r = c.check_case(gather_case(std::nullopt), "");
    EXPECT_EQ(r.verdict, Verdict::kFailed) << error_class_name(cls);
    EXPECT_NE(r.reason.find("the message differs"), std::string::npos) << r.reason;
  }
}

TEST(Grading, ReferenceRefusalHidesNoExpectFailureAndNoCrash) {
  Scripted reference("reference", {Error{ErrorClass::kResourceExhausted, "over budget"}});
  // The backend fails the case's expect: FAILED, though the reference cannot grade it.
  Scripted wrong("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, 2})});
  CaseChecker c1(wrong, &reference, {});
  auto r = c1.check_case(gather_case(Expect{kOut.value(), std::nullopt, std::nullopt}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_EQ(r.reason,
            "against expect: 1 of 2 elements differ; first at [1]: expected 1, got 2 (the "
            "reference refused it)");
  // The backend crashed on a generated case (no expect): FAILED with the crash.
  Scripted crash("plugin:x", {Error{ErrorClass::kInternal, "plugin crashed with signal 11"}});
  CaseChecker c2(crash, &reference, {});
  r = c2.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_EQ(r.reason, "run 1 of 1: the backend failed: plugin crashed with signal 11");
  // A right answer on a case the reference refuses is still SKIPPED (nothing to compare with).
  Scripted right("plugin:x", {kOut});
  CaseChecker c3(right, &reference, {});
  EXPECT_EQ(c3.check_case(gather_case(std::nullopt), "").verdict, Verdict::kSkipped);
  r = c3.check_case(gather_case(Expect{kOut.value(), std::nullopt, std::nullopt}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kSkipped) << r.reason;
}

TEST(Grading, CrashOrTimeoutInAnyRepeatIsFailedNotNondeterministic) {
  Scripted reference("reference", {kOut});
  CheckOptions opts;
  opts.repeat = 3;
  for (const char* why :
       {"plugin crashed with signal 6 (Aborted)", "plugin timed out after 30 s"}) {
    Scripted backend("plugin:x", {kOut, Error{ErrorClass::kInternal, why}, kOut});
    ASSERT_TRUE(backend.caps_.deterministic);
    CaseChecker checker(backend, &reference, opts);
    auto r =
        checker.check_case(gather_case(Expect{kOut.value(), std::nullopt, std::nullopt}), "x.json");
    EXPECT_EQ(r.verdict, Verdict::kFailed) << why;
    EXPECT_EQ(r.reason, std::string("run 2 of 3: the backend failed: ") + why);
    EXPECT_EQ(r.runs, 3);
  }
  // A crash on run 1 that does not recur: FAILED too, not NONDETERMINISTIC.
  Scripted first("plugin:x",
                 {Error{ErrorClass::kInternal, "plugin crashed with signal 11"}, kOut, kOut});
  CaseChecker checker(first, &reference, opts);
  auto r = checker.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_EQ(r.reason, "run 1 of 3: the backend failed: plugin crashed with signal 11");
  EXPECT_EQ(first.calls, 3);  // the worker survived (isolate call): the repeats are cheap
  // A run 1 that cost the backend its worker is not repeated: FAILED on its own evidence.
  Error lost{ErrorClass::kInternal, "plugin crashed with signal 6 (Aborted)"};
  lost.lost_worker = true;
  Scripted dead("plugin:x", {lost, kOut, kOut});
  CaseChecker once(dead, &reference, opts);
  r = once.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_EQ(r.reason, "run 1 of 1: the backend failed: plugin crashed with signal 6 (Aborted)");
  EXPECT_EQ(r.runs, 1);
  EXPECT_EQ(dead.calls, 1);
  // Outcomes that differ without a crash are still NONDETERMINISTIC.
  Scripted flaky("plugin:x", {kOut, Tensor::from_values<float>(Shape{2}, {3, 2})});
  CaseChecker c2(flaky, &reference, opts);
  EXPECT_EQ(c2.check_case(gather_case(std::nullopt), "").verdict, Verdict::kNondeterministic);
}

reports::KnownFailures parse_known(const std::string& text) {
  auto k = reports::known_failures_from_json(nlohmann::json::parse(text), "known.json");
  EXPECT_TRUE(k.ok()) << (k.ok() ? "" : k.error().message);
  return k.ok() ? std::move(k).value() : reports::KnownFailures{};
}

TEST(Grading, KnownFailuresXfailAndXpass) {
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "aborts", "when": {"case": "gather/*"}, "forgives": {"crash": "signal 6"},
     "reason": "aborts", "link": "https://example.invalid/1"},
    {"id": "wrong-bits", "when": {"case": "gather/graded"}, "forgives": {"elements": "nan_bits"},
     "reason": "wrong bits", "link": "docs/x.md"}]})");
  ASSERT_EQ(known.entries.size(), 2u);
  Scripted reference("reference", {kOut});
  CheckOptions opts;
  opts.known_failures = &known;

  // A crash entry 0 forgives: XFAIL, not a failure of the run; the original verdict is kept.
  Scripted crash("plugin:x",
                 {Error{ErrorClass::kInternal, "plugin crashed with signal 6 (Aborted)"}});
  CaseChecker c1(crash, &reference, opts);
  auto r = c1.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kXfail);
  EXPECT_FALSE(reports::is_failure(r.verdict, /*strict=*/true));
  ASSERT_TRUE(r.known.has_value());
  EXPECT_EQ(r.known->verdict, Verdict::kFailed);
  EXPECT_EQ(r.known->entry, "aborts");
  EXPECT_EQ(r.known->link, "https://example.invalid/1");
  ASSERT_EQ(r.explained.size(), 1u);
  EXPECT_TRUE(r.unexplained.empty());

  // A wrong value no rule forgives (nan_bits needs a NaN): FAILED, listed as unexplained.
  Scripted wrong("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, 2})});
  CaseChecker c2(wrong, &reference, opts);
  r = c2.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  ASSERT_EQ(r.unexplained.size(), 1u);
  EXPECT_EQ(r.unexplained[0].count, 1);

  // Another crash (a segfault) than entry 0 names stays FAILED.
  Scripted other("plugin:x", {Error{ErrorClass::kInternal, "plugin crashed with signal 11"}});
  CaseChecker c3(other, &reference, opts);
  r = c3.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_FALSE(r.known.has_value());

  // A passing case a crash entry selects is XPASS (it fails the run only with --strict); an
  // element rule allows differences and never declares a case failing.
  Scripted right("plugin:x", {kOut});
  CaseChecker c4(right, &reference, opts);
  r = c4.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kXpass);
  EXPECT_EQ(r.known->entry, "aborts");
  EXPECT_FALSE(reports::is_failure(r.verdict));
  EXPECT_TRUE(reports::is_failure(r.verdict, /*strict=*/true));
  CaseFile other_case = gather_case(std::nullopt);
  other_case.c.name = "scatter/other";
  EXPECT_EQ(c4.check_case(other_case, "").verdict, Verdict::kPassed);
}

// An `error` entry forgives that class of error only (and, with `message`, those words only);
// `nan_bits` forgives another NaN where a NaN is expected, never a NaN where a number is
// (docs/report_format.md, known failures).
TEST(Grading, KnownFailuresErrorClassAndNanBitsAreNarrow) {
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "raises", "when": {"case": "gather/*"},
     "forgives": {"error": "bad_index", "message": "^out of range"},
     "reason": "raises", "link": "docs/x.md"},
    {"id": "bits", "when": {"case": "gather/*"}, "forgives": {"elements": "nan_bits"},
     "reason": "NaN bits", "link": "docs/x.md"}]})");
  Scripted reference("reference", {kOut});
  CheckOptions opts;
  opts.known_failures = &known;
  const auto verdict_of = [&](Outcome got) {
    Scripted backend("plugin:x", {std::move(got)});
    CaseChecker c(backend, &reference, opts);
    return c.check_case(gather_case(std::nullopt), "").verdict;
  };
  EXPECT_EQ(verdict_of(Error{ErrorClass::kBadIndex, "out of range: 7"}), Verdict::kXfail);
  EXPECT_EQ(verdict_of(Error{ErrorClass::kInvalidArgument, "out of range: 7"}), Verdict::kFailed);
  EXPECT_EQ(verdict_of(Error{ErrorClass::kBadIndex, "index 7 is bad"}), Verdict::kFailed);
  EXPECT_EQ(verdict_of(Error{ErrorClass::kInternal, "out of range: 7"}), Verdict::kFailed);
  // A NaN where the reference has 1: not a NaN's bits, and in no input of a gather: UNSAFE.
  EXPECT_EQ(verdict_of(Tensor::from_values<float>(Shape{2}, {3, std::nanf("")})), Verdict::kUnsafe);
}

// One explained element does not forgive the case: every difference needs an explanation.
TEST(Grading, KnownFailuresExplainEveryDifference) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 2, "known": [
    {"id": "canonical", "when": {"ops": ["tensor_scatter_nd_min"], "dtypes": ["float32"],
     "has": ["nan_input"]}, "forgives": {"elements": "canonical_nan"}, "reason": "canonical NaN",
     "link": "corpus/tf/x.json"}]})J");
  const float payload = [] {
    const uint32_t bits = 0x7fc00123;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }();
  const float canonical = std::numeric_limits<float>::quiet_NaN();
  CaseFile f;
  f.c.name = "sweep/1/2/tensor_scatter_nd_min";
  f.c.op = Op::kTensorScatterMin;
  f.c.tensor = Tensor::from_values<float>(Shape{3}, {payload, 31, payload});
  f.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {0});  // min(NaN, 1) at [0] only
  f.c.updates = Tensor::from_values<float>(Shape{1}, {1});
  CheckOptions opts;
  opts.known_failures = &known;
  auto grade = [&](std::vector<float> got) {
    Scripted backend("plugin:x", {Tensor::from_values<float>(Shape{3}, got)});
    Scripted reference("reference", {Tensor::from_values<float>(Shape{3}, {payload, 31, payload})});
    backend.caps_.ops = {Op::kTensorScatterMin};
    CaseChecker checker(backend, &reference, opts);
    return checker.check_case(f, "");
  };
  auto r = grade({canonical, 31, payload});
  EXPECT_EQ(r.verdict, Verdict::kXfail) << r.reason;
  r = grade({canonical, 1, payload});  // the NaN is explained, the update at [1] is not
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
  ASSERT_EQ(r.explained.size(), 1u);
  EXPECT_EQ(r.explained[0].entry, "canonical");
  ASSERT_EQ(r.unexplained.size(), 1u);
  EXPECT_NE(r.unexplained[0].example.find("got 1"), std::string::npos) << r.unexplained[0].example;
  // The untouched NaN at [2] is a copy: a NaN rule does not reach it.
  r = grade({payload, 31, canonical});
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
  f.c.tensor = Tensor::from_values<float>(Shape{3}, {2, 31, 2});  // no NaN input: not selected
  Scripted backend("plugin:x", {Tensor::from_values<float>(Shape{3}, {canonical, 31, 2})});
  backend.caps_.ops = {Op::kTensorScatterMin};
  Scripted reference("reference", {Tensor::from_values<float>(Shape{3}, {1, 31, 2})});
  CaseChecker checker(backend, &reference, opts);
  // A min stores an operand: a NaN where no input has one is made up (UNSAFE), and no entry
  // describes it.
  r = checker.check_case(f, "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);
  EXPECT_FALSE(r.known.has_value());
}

// nan_bits on an element a scatter row computed: another NaN where the reference has a NaN is no
// failure, a NaN where it has a number is one (a gather's copies are out of the rule's reach, so
// the gather test above cannot show this).
TEST(Grading, NanBitsNeverExplainsANanForANumberOnATouchedElement) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 2, "known": [
    {"id": "bits", "when": {"ops": ["tensor_scatter_nd_add"]}, "forgives": {"elements": "nan_bits"},
     "reason": "NaN bits", "link": "l"}]})J");
  const auto nan_with = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  CaseFile f;
  f.c.name = "sweep/1/2/tensor_scatter_nd_add";
  f.c.op = Op::kTensorScatterAdd;
  f.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {0});  // row 0 is computed
  f.c.updates = Tensor::from_values<float>(Shape{1}, {1});
  CheckOptions opts;
  opts.known_failures = &known;
  const auto grade = [&](float start, float want, float got) {
    f.c.tensor = Tensor::from_values<float>(Shape{2}, {start, 5});
    Scripted backend("plugin:x", {Tensor::from_values<float>(Shape{2}, {got, 5})});
    Scripted reference("reference", {Tensor::from_values<float>(Shape{2}, {want, 5})});
    backend.caps_.ops = {Op::kTensorScatterAdd};
    CaseChecker checker(backend, &reference, opts);
    return checker.check_case(f, "");
  };
  const float a = nan_with(0x7fc00001), b = nan_with(0x7fc00002);
  auto r = grade(a, a, b);  // NaN + 1 is a NaN: another payload is no failure
  EXPECT_FALSE(reports::is_failure(r.verdict)) << r.reason;
  r = grade(1, 2, b);  // 1 + 1 is 2: a NaN there is a wrong value, whatever the entry says
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
  EXPECT_FALSE(r.known.has_value());
}

// input_element forgives a wrong row read (a value of params) and nothing nobody wrote.
TEST(Grading, InputElementForgivesOnlyValuesOfTheInputs) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 2, "known": [
    {"id": "rows", "when": {"ops": ["gather"]}, "forgives": {"elements": "input_element"},
     "reason": "clamps elsewhere", "link": "l"}]})J");
  CaseFile f;
  f.c.name = "gather/rows";
  f.c.op = Op::kGather;
  f.c.params = Tensor::from_values<float>(Shape{3}, {10, 20, 30});
  f.c.indices = Tensor::from_values<int32_t>(Shape{2}, {2, 0});
  CheckOptions opts;
  opts.known_failures = &known;
  auto grade = [&](std::vector<float> got) {
    Scripted backend("plugin:x", {Tensor::from_values<float>(Shape{2}, got)});
    Scripted reference("reference", {Tensor::from_values<float>(Shape{2}, {30, 10})});
    CaseChecker checker(backend, &reference, opts);
    return checker.check_case(f, "").verdict;
  };
  EXPECT_EQ(grade({30, 10}), Verdict::kPassed);
  EXPECT_EQ(grade({20, 10}), Verdict::kXfail);   // another row of params
  EXPECT_EQ(grade({31, 10}), Verdict::kUnsafe);  // in no input: never forgiven
  EXPECT_EQ(grade({0, 10}), Verdict::kFailed);   // a zero-filled row is not a params value
}

// Past compare::kMaxElementDiffs differing elements the list is cut short: the output then
// differs as a whole, which no element rule explains, even when every listed element would be.
TEST(Grading, ACutShortListOfDifferencesIsNotExplainedElementByElement) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 2, "known": [
    {"id": "rows", "when": {"ops": ["gather"]}, "forgives": {"elements": "input_element"},
     "reason": "reads another row", "link": "l"}]})J");
  const auto listed = static_cast<int64_t>(compare::kMaxElementDiffs);
  const int64_t n = listed + 16;
  CaseFile f;
  f.c.name = "gather/many";
  f.c.op = Op::kGather;
  f.c.params = Tensor::from_values<float>(Shape{2}, {10, 20});
  f.c.indices = Tensor::from_values<int32_t>(Shape{n}, std::vector<int32_t>(n, 0));
  CheckOptions opts;
  opts.known_failures = &known;
  auto grade = [&](float past_the_list) {
    std::vector<float> got(n, 20);  // params[1]: an input element, explained one by one
    std::fill(got.begin() + listed, got.end(), past_the_list);
    Scripted backend("plugin:x", {Tensor::from_values<float>(Shape{n}, got)});
    Scripted reference("reference",
                       {Tensor::from_values<float>(Shape{n}, std::vector<float>(n, 10))});
    CaseChecker checker(backend, &reference, opts);
    return checker.check_case(f, "");
  };
  // Garbage after the listed elements: in no input, so UNSAFE.
  auto r = grade(7);
  EXPECT_EQ(r.verdict, Verdict::kUnsafe) << r.reason;
  // The same with an input element there: still FAILED (what was not listed was not seen).
  r = grade(20);
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
}

// A crash is forgiven only where the entry's case predicate holds (TensorFlow's INT64_MIN abort
// must not hide an abort on a valid gather).
TEST(Grading, KnownFailuresForgiveCrashesOnlyWhereThePredicateHolds) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 2, "known": [
    {"id": "int64-min", "when": {"ops": ["gather"], "axis": -9223372036854775808,
     "expected": "invalid_argument"}, "forgives": {"crash": "signal 6"}, "reason": "r",
     "link": "l"}]})J");
  CheckOptions opts;
  opts.known_failures = &known;
  Scripted abort("plugin:x", {Error{ErrorClass::kInternal, "plugin crashed with signal 6"}});
  CaseFile valid = gather_case(std::nullopt);
  Scripted ok_ref("reference", {kOut});
  CaseChecker c1(abort, &ok_ref, opts);
  EXPECT_EQ(c1.check_case(valid, "").verdict, Verdict::kFailed);
  CaseFile bad_axis = gather_case(std::nullopt);
  bad_axis.c.axis = Tensor::from_values<int64_t>(Shape{}, {INT64_MIN});
  Scripted err_ref("reference", {Error{ErrorClass::kInvalidArgument, "axis out of range"}});
  CaseChecker c2(abort, &err_ref, opts);
  EXPECT_EQ(c2.check_case(bad_axis, "").verdict, Verdict::kXfail);
}

// Memory safety is never green (issue 34 item 3): a call that crashed, hung or wrote outside its
// output (Error::unsafe, set by the containment), and an output element in no input where every
// element is a copy, are UNSAFE. An entry that would have explained it only describes it.
TEST(Grading, UnsafeIsNeverGreen) {
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "aborts", "when": {"case": "gather/*"}, "forgives": {"crash": "signal 6"},
     "reason": "aborts", "link": "l1"},
    {"id": "any", "when": {"case": "gather/*"}, "forgives": {"elements": "any_value"},
     "reason": "reads anything", "link": "l2"},
    {"id": "computes", "when": {"expected": "bad_index"}, "forgives": {"output": true},
     "reason": "computes where TensorFlow raises", "link": "l3"}]})");
  Scripted reference("reference", {kOut});
  CheckOptions opts;
  opts.known_failures = &known;
  Error crash{ErrorClass::kInternal, "plugin crashed with signal 6 (Aborted)"};
  crash.unsafe = true;
  Scripted aborts("plugin:x", {crash});
  CaseChecker c1(aborts, &reference, opts);
  auto r = c1.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);
  EXPECT_TRUE(reports::is_failure(r.verdict));
  ASSERT_TRUE(r.known.has_value());  // described, kept for the report and the lint
  EXPECT_EQ(r.known->entry, "aborts");
  EXPECT_EQ(r.reason.rfind("unsafe, described by known failure (aborts: aborts, l1), which cannot "
                           "make it green: the backend did not answer: plugin crashed",
                           0),
            0u)
      << r.reason;
  // Without a file: UNSAFE, nothing describes it.
  CaseChecker c2(aborts, &reference, {});
  r = c2.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);
  EXPECT_FALSE(r.known.has_value());
  // The same message from the backend's own answer (no containment flag) is an error it
  // returned, which an entry may explain.
  Scripted says("plugin:x", {Error{ErrorClass::kInternal, "plugin crashed with signal 6"}});
  CaseChecker c3(says, &reference, opts);
  EXPECT_EQ(c3.check_case(gather_case(std::nullopt), "").verdict, Verdict::kXfail);
  // A gathered 7.5 is no element of params {1, 2, 3}: UNSAFE though any_value explains it; a
  // wrong element of params, or a zero, is only wrong (XFAIL under any_value here).
  Scripted garbage("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, 7.5f})});
  CaseChecker c4(garbage, &reference, opts);
  r = c4.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);
  EXPECT_NE(r.reason.find("output element [1] = 7.5 is in no input and not zero"),
            std::string::npos)
      << r.reason;
  for (float v : {2.0f, 0.0f, -0.0f}) {
    Scripted wrong("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, v})});
    CaseChecker c5(wrong, &reference, opts);
    EXPECT_EQ(c5.check_case(gather_case(std::nullopt), "").verdict, Verdict::kXfail) << v;
  }
  // A NaN stands for an input's NaN (a runtime may quiet it), never for a number.
  CaseFile with_nan = gather_case(std::nullopt);
  with_nan.c.params = Tensor::from_values<float>(Shape{3}, {1, std::nanf("1"), 3});
  Scripted quiet("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, std::nanf("")})});
  CaseChecker c6(quiet, &reference, opts);
  EXPECT_EQ(c6.check_case(with_nan, "").verdict, Verdict::kXfail);
  CaseChecker c7(quiet, &reference, opts);
  EXPECT_EQ(c7.check_case(gather_case(std::nullopt), "").verdict, Verdict::kUnsafe);
  // A tensor where TensorFlow raises: `output: true` accepts its values only when they are the
  // inputs' (the bad index read outside params is memory nobody gave the backend).
  CaseFile bad = gather_case(std::nullopt);
  bad.c.name = "scatter/bad";  // outside the gather/* entries
  bad.c.indices = Tensor::from_values<int32_t>(Shape{2}, {2, 9});
  Scripted raises("reference", {Error{ErrorClass::kBadIndex, "indices[1] = 9 is not in [0, 3)"}});
  Scripted reads("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, 4.25f})});
  CaseChecker c8(reads, &raises, opts);
  r = c8.check_case(bad, "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);
  ASSERT_TRUE(r.known.has_value());
  EXPECT_EQ(r.known->entry, "computes");
  Scripted copies("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, 1})});
  CaseChecker c9(copies, &raises, opts);
  EXPECT_EQ(c9.check_case(bad, "").verdict, Verdict::kXfail);
  // A min or max stores an operand (or, flushing, a zero): garbage there is in no input either;
  // a wrong operand or a zero is only wrong.
  CaseFile mm;
  mm.c.name = "t/max";
  mm.c.op = Op::kTensorScatterMax;
  mm.c.tensor = Tensor::from_values<float>(Shape{3}, {5, 5, 5});
  mm.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {1});
  mm.c.updates = Tensor::from_values<float>(Shape{1}, {7});
  auto real_reference = make_reference_backend();
  for (const auto& [got, want] : {std::pair{std::vector<float>{5, 7, 5}, Verdict::kPassed},
                                  {std::vector<float>{5, 5, 7}, Verdict::kFailed},
                                  {std::vector<float>{5, -0.0f, 5}, Verdict::kFailed},
                                  {std::vector<float>{5, 6.5f, 5}, Verdict::kUnsafe}}) {
    Scripted b("plugin:x", {Tensor::from_values<float>(Shape{3}, got)});
    b.caps_.ops = {Op::kTensorScatterMax};
    CaseChecker c10(b, real_reference.get(), {});
    EXPECT_EQ(c10.check_case(mm, "").verdict, want) << got[1] << " " << got[2];
  }
  // The exit status: 4 when every failure is an UNSAFE case an entry describes, else 1.
  reports::RunTally tally;
  reports::CaseResult described;
  described.verdict = Verdict::kUnsafe;
  described.known = reports::CaseResult::Known{};
  tally.add(described);
  EXPECT_EQ(tally.unsafe_described(), 1);
  EXPECT_EQ(tally.totals().failures(), 1);
}

// Declining a case inside the declared contract is DECLINED (a failure), unless an entry says so.
TEST(Grading, DecliningIsAFailure) {
  Scripted decline("plugin:x", {Error{ErrorClass::kUnimplemented, "not today"}});
  Scripted reference("reference", {kOut});
  CaseChecker c1(decline, &reference, {});
  auto r = c1.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kDeclined) << r.reason;
  EXPECT_TRUE(reports::is_failure(r.verdict));
  EXPECT_NE(r.reason.find("declined a case inside its declared contract"), std::string::npos);
  // unsupported where TensorFlow computes is declining too; where TensorFlow says unsupported
  // it is the right answer.
  Scripted unsupported("plugin:x", {Error{ErrorClass::kUnsupported, "no kernel"}});
  CaseChecker c2(unsupported, &reference, {});
  EXPECT_EQ(c2.check_case(gather_case(std::nullopt), "").verdict, Verdict::kDeclined);
  Scripted tf_unsupported("reference", {Error{ErrorClass::kUnsupported, "no kernel"}});
  CaseChecker c3(unsupported, &tf_unsupported, {});
  EXPECT_EQ(c3.check_case(gather_case(std::nullopt), "").verdict, Verdict::kPassed);
  // Where TensorFlow raises another class, "unsupported" skipped TensorFlow's check: declining.
  Scripted tf_invalid("reference", {Error{ErrorClass::kInvalidArgument, "indices[0] = 7"}});
  CaseChecker c5(unsupported, &tf_invalid, {});
  EXPECT_EQ(c5.check_case(gather_case(std::nullopt), "").verdict, Verdict::kDeclined);
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "later", "when": {"ops": ["gather"]}, "forgives": {"declined": "not today"},
     "reason": "r", "link": "l"}]})");
  CheckOptions opts;
  opts.known_failures = &known;
  CaseChecker c4(decline, &reference, opts);
  EXPECT_EQ(c4.check_case(gather_case(std::nullopt), "").verdict, Verdict::kXfail);
  // With nothing to compare against (no reference, no expect block) declining is still named.
  CaseChecker alone(decline, nullptr, opts);
  EXPECT_EQ(alone.check_case(gather_case(std::nullopt), "").verdict, Verdict::kXfail);
  CaseChecker alone_plain(decline, nullptr, {});
  EXPECT_EQ(alone_plain.check_case(gather_case(std::nullopt), "").verdict, Verdict::kDeclined);
  // Outside the declared contract is UNIMPLEMENTED, never run.
  CaseFile outside = gather_case(std::nullopt);
  outside.c.params = Tensor::from_values<int64_t>(Shape{3}, {1, 2, 3});
  EXPECT_EQ(c1.check_case(outside, "").verdict, Verdict::kUnimplemented);
}

// "flushed_subnormal": each differing element within the smallest normal, with a subnormal in it
// or in the inputs; anything else stays a failure.
TEST(Grading, KnownFailuresFlushedSubnormalRule) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 2, "known": [
    {"id": "ftz", "when": {"dtypes": ["float32"], "has": ["subnormal_input"]},
     "forgives": {"elements": "flushed_subnormal"}, "reason": "FTZ/DAZ",
     "link": "docs/spec_notes.md"}]})J");
  const float sub = 1e-40f;  // a float32 subnormal
  CaseFile f;
  f.c.name = "sweep/1/3/tensor_scatter_nd_min";
  f.c.op = Op::kTensorScatterMin;
  f.c.tensor = Tensor::from_values<float>(Shape{2}, {sub, sub});
  f.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {1});
  f.c.updates = Tensor::from_values<float>(Shape{1}, {4});
  CheckOptions opts;
  opts.known_failures = &known;
  auto grade = [&](std::vector<float> got) {
    Scripted backend("plugin:tf", {Tensor::from_values<float>(Shape{2}, got)});
    backend.caps_.ops = {Op::kTensorScatterMin};
    Scripted reference("reference", {Tensor::from_values<float>(Shape{2}, {sub, sub})});
    CaseChecker checker(backend, &reference, opts);
    return checker.check_case(f, "");
  };
  auto r = grade({sub, 0});  // the min at [1] flushed: a row touched it
  EXPECT_EQ(r.verdict, Verdict::kXfail) << r.reason;
  ASSERT_TRUE(r.known.has_value());
  r = grade({0, sub});  // the untouched [0] flushed: a copy follows no arithmetic rule
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
  r = grade({sub, 4});  // the min is wrong: a real failure
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
  // Another subnormal is no flush, and a min stores an operand: in no input, UNSAFE whatever
  // the element rule admits (it would be, within the smallest normal).
  r = grade({sub, 2e-40f});
  EXPECT_EQ(r.verdict, Verdict::kUnsafe) << r.reason;
  r = grade({sub, sub});
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;  // not XPASS: the entry names a kind
}

// A gather the backend gets right, graded with `known` and the lint on: its verdict and the
// lint's findings.
std::pair<Verdict, std::vector<std::string>> lint_right_gather(
    const reports::KnownFailures& known) {
  CheckOptions opts;
  opts.known_failures = &known;
  opts.lint = true;
  Scripted right("plugin:x", {kOut});
  Scripted reference("reference", {kOut});
  CaseChecker checker(right, &reference, opts);
  const auto r = checker.check_case(gather_case(std::nullopt), "");
  reports::KnownFailuresLint lint(known);
  lint.add(r);
  return {r.verdict, lint.findings()};
}

// known-failures check: an injected bug on a case the backend got right is tried on the file.
TEST(Grading, LintFindsEntriesThatWouldAbsorbInjectedBugs) {
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "too-wide", "when": {"ops": ["gather"]}, "forgives": {"error": "bad_index"},
     "reason": "r", "link": "l"}]})");
  const auto [verdict, findings] = lint_right_gather(known);
  EXPECT_EQ(verdict, Verdict::kPassed);  // it selects by what cases are: no promise to fail
  bool absorbed = false;
  for (const auto& line : findings)
    absorbed =
        absorbed || line.find("would forgive an injected false bad_index") != std::string::npos;
  EXPECT_TRUE(absorbed) << ::testing::PrintToString(findings);
}

// An entry whose cases all passed is reported as XPASS (its bug is fixed), not as "explains
// nothing" (which says its predicate misses): two findings that ask for different edits.
TEST(Grading, LintCallsAnAllXpassEntryXpassNotUnused) {
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "aborts", "when": {"case": "gather/*"}, "forgives": {"crash": "signal 6"},
     "reason": "r", "link": "l"}]})");  // named cases: a promise that they fail
  const auto [verdict, findings] = lint_right_gather(known);
  ASSERT_EQ(verdict, Verdict::kXpass);
  std::string all;
  for (const auto& f : findings) all += f + "\n";
  EXPECT_NE(all.find("entry aborts: 1 cases it declares failing passed (XPASS)"), std::string::npos)
      << all;
  EXPECT_EQ(all.find("explains nothing"), std::string::npos) << all;
}

// A host-dependent entry (a departure some CPUs show) may explain nothing only where each case
// file that shows it ran and PASSED: the host agreed with the reference there. Any other entry
// that explains nothing stays a finding, host or not.
TEST(Grading, LintAcceptsUnusedHostDependentEntryOnlyWhereItsCaseFilesPassed) {
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "host", "when": {"ops": ["tensor_scatter_nd_min"], "dtypes": ["float16"]},
     "forgives": {"elements": "quieted_nan"}, "reason": "r", "link": "l",
     "host_dependent": {"reason": "AVX2 only", "shown_by": ["cases/a.json", "cases/b.json"]}},
    {"id": "plain", "when": {"ops": ["gather"]}, "forgives": {"output": true},
     "reason": "r", "link": "l"}]})");
  ASSERT_EQ(known.entries.size(), 2u);
  auto result = [](std::string file, Verdict v) {
    reports::CaseResult r;
    r.name = file;
    r.file = std::move(file);
    r.verdict = v;
    r.lint.emplace();
    return r;
  };
  auto findings_of = [&](const std::vector<reports::CaseResult>& results) {
    reports::KnownFailuresLint lint(known);
    for (const auto& r : results) lint.add(r);
    std::string all;
    for (const auto& f : lint.findings()) all += f + "\n";
    return std::make_pair(all, lint.table());
  };
  const std::string plain =
      "entry plain: explains nothing in this run (its predicate selected 0 "
      "cases)\n";
  // Both case files ran (named by longer paths) and passed: the host does not show it.
  auto [f1, t1] = findings_of({result("./plugins/x/cases/a.json", Verdict::kPassed),
                               result("/abs/cases/b.json", Verdict::kPassed)});
  EXPECT_EQ(f1, plain);
  EXPECT_NE(t1.find("entry host: host-dependent, not shown on this host (cases/a.json, "
                    "cases/b.json PASSED): AVX2 only"),
            std::string::npos)
      << t1;
  // One failed, one not run (ba.json is another file): still a finding, naming both.
  auto [f2, t2] = findings_of(
      {result("cases/a.json", Verdict::kFailed), result("cases/ba.json", Verdict::kPassed)});
  EXPECT_EQ(f2,
            "entry host: explains nothing in this run (its predicate selected 0 cases); its "
            "case file cases/a.json was FAILED; its case file cases/b.json was not run\n" +
                plain);
  EXPECT_EQ(t2.find("not shown on this host"), std::string::npos);
  EXPECT_TRUE(reports::names_case_file("a.json", "a.json"));
  EXPECT_TRUE(reports::names_case_file("cases/a.json", "x/cases/a.json"));
  EXPECT_FALSE(reports::names_case_file("a.json", "cases/ba.json"));
  EXPECT_FALSE(reports::names_case_file("", "a.json"));
}

TEST(Grading, KnownFailuresFileErrorsNameTheEntry) {
  auto bad = [](const std::string& text) {
    auto k = reports::known_failures_from_json(nlohmann::json::parse(text), "k.json");
    return k.ok() ? std::string("ok") : k.error().message;
  };
  EXPECT_EQ(bad(R"({"known": []})"),
            "k.json: gscheck_known_failures: missing or not 2 (format version 2)");
  EXPECT_EQ(bad(R"({"gscheck_known_failures": 1, "known": []})")
                .rfind("k.json: gscheck_known_failures: format version 1", 0),
            0u);
  const std::string head = R"({"gscheck_known_failures": 2, "known": [)";
  EXPECT_EQ(bad(head + R"({"id": "a", "forgives": {"output": true}, "link": "l"}]})"),
            "k.json: known[0].reason: missing");
  EXPECT_EQ(bad(head + R"({"id": "a", "forgives": {"output": true, "crash": true}, "reason": "r",
                    "link": "l"}]})"),
            "k.json: known[0].forgives: name exactly one of crash, error, output, declined, "
            "elements, nondeterministic, follows");
  EXPECT_EQ(bad(head + R"({"id": "a", "when": {"ops": ["gathr"]}, "forgives": {"output": true},
                    "reason": "r", "link": "l"}]})"),
            "k.json: known[0].when.ops: unknown name gathr");
  EXPECT_EQ(bad(head + R"J({"id": "a", "forgives": {"crash": "("}, "reason": "r",
                    "link": "l"}]})J")
                .rfind("k.json: known[0].forgives.crash: ", 0),
            0u);
  EXPECT_EQ(bad(head + R"({"id": "a", "when": {"expected": "crash"}, "forgives": {"output": true},
                    "reason": "r", "link": "l"}]})"),
            "k.json: known[0].when.expected: neither \"output\" nor an error class name");
  EXPECT_EQ(bad(head + R"({"id": "a", "when": {"cases": "x"}, "forgives": {"output": true},
                    "reason": "r", "link": "l"}]})")
                .rfind("k.json: known[0].when.cases: unknown field", 0),
            0u);
  EXPECT_EQ(bad(head + R"({"id": "a", "forgives": {"output": true}, "reason": "r", "link": "l"},
                    {"id": "a", "forgives": {"output": true}, "reason": "r", "link": "l"}]})"),
            "k.json: known[1].id: \"a\" is used twice");
  const std::string entry = head + R"({"id": "a", "forgives": {"output": true}, "reason": "r",
                    "link": "l", "host_dependent": )";
  EXPECT_EQ(bad(entry + R"({"reason": "avx2"}}]})"),
            "k.json: known[0].host_dependent.shown_by: missing: the case files that show the "
            "departure where it holds");
  EXPECT_EQ(bad(entry + R"({"reason": "avx2", "shown_by": []}}]})"),
            "k.json: known[0].host_dependent.shown_by: expected a non-empty array of case file "
            "paths");
  EXPECT_EQ(bad(entry + R"({"reason": "avx2", "shown_by": ["cases/*.json"]}}]})"),
            "k.json: known[0].host_dependent.shown_by: expected relative case file paths "
            "without wildcards, got \"cases/*.json\"");
  EXPECT_EQ(bad(entry + R"({"reason": "avx2", "shown_by": ["/abs.json"]}}]})"),
            "k.json: known[0].host_dependent.shown_by: expected relative case file paths "
            "without wildcards, got \"/abs.json\"");
  EXPECT_EQ(bad(entry + R"({"shown_by": ["a.json"]}}]})"),
            "k.json: known[0].host_dependent.reason: missing");
  EXPECT_EQ(bad(entry + R"(true}]})"), "k.json: known[0].host_dependent: expected an object");
}

TEST(Grading, GlobMatch) {
  EXPECT_TRUE(reports::glob_match("*", ""));
  EXPECT_TRUE(reports::glob_match("gather/*", "gather/axis_int64_min"));
  EXPECT_FALSE(reports::glob_match("gather/*", "gather_nd/x"));
  EXPECT_TRUE(
      reports::glob_match("sweep/*/tensor_scatter_nd_?in", "sweep/7/12/tensor_scatter_nd_min"));
  EXPECT_TRUE(reports::glob_match("*a*b*c", "xxaxxbxxc"));
  EXPECT_FALSE(reports::glob_match("*a*b*c", "xxaxxcxxb"));
  EXPECT_FALSE(reports::glob_match("exact", "exact/more"));
  EXPECT_FALSE(reports::glob_match("ab*ba", "aba"));  // head and tail may not share a byte
  EXPECT_TRUE(reports::glob_match("ab*ba", "abba"));
  EXPECT_TRUE(reports::glob_match("a*?*b", "axb"));
  EXPECT_FALSE(reports::glob_match("a*?*b", "ab"));
}

// The linear matcher against the textbook recursive one, on patterns and texts over a small
// alphabet (so stars, '?' and long segments meet many near-matches), segments past 64 bytes too.
TEST(Grading, GlobMatchAgreesWithTheDefinition) {
  std::function<bool(std::string_view, std::string_view)> slow = [&](std::string_view p,
                                                                     std::string_view t) {
    if (p.empty()) return t.empty();
    if (p[0] == '*') return slow(p.substr(1), t) || (!t.empty() && slow(p, t.substr(1)));
    return !t.empty() && (p[0] == '?' || p[0] == t[0]) && slow(p.substr(1), t.substr(1));
  };
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const bool long_segment = i % 50 == 0;
    std::string p, t;
    const int np = static_cast<int>(rng() % (long_segment ? 90 : 8));
    const int nt = static_cast<int>(rng() % (long_segment ? 160 : 12));
    for (int k = 0; k < np; ++k) p += "ab?*"[rng() % (long_segment ? 3 : 4)];
    if (long_segment) p = "*" + p + "*";
    for (int k = 0; k < nt; ++k) t += "ab"[rng() % 2];
    ASSERT_EQ(reports::glob_match(p, t), slow(p, t)) << "pattern " << p << " text " << t;
  }
  // A glob is at most 4 KiB: a longer one is an error naming the entry.
  const std::string path = ::testing::TempDir() + "/long_glob.json";
  std::ofstream(path)
      << R"({"gscheck_known_failures": 2, "known": [{"id": "k", "when": {"case": ")"
      << std::string(4097, 'a')
      << R"("}, "forgives": {"crash": "signal 6"}, "reason": "r", "link": "x.md"}]})";
  auto k = reports::load_known_failures(path);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("known[0].when.case: a glob of 4097 bytes (at most 4096)"),
            std::string::npos)
      << k.error().message;
}

// The shipped TensorFlow 2.21 file parses, and forgives its abort only where rank(updates) <
// rank(indices) - 1.
TEST(Grading, ShippedTensorFlowFile) {
  auto k = reports::load_known_failures(GSCHECK_SOURCE_DIR
                                        "/plugins/tensorflow/tf_2_21_known_failures.json");
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->entries.size(), 7u);
  CheckOptions opts;
  opts.known_failures = &*k;
  CaseFile f;
  f.c.name = "sweep/1/5/scatter_nd/kernel";
  f.c.op = Op::kScatterNd;
  f.c.indices = Tensor::from_values<int32_t>(Shape{2, 2, 1}, {0, 1, 0, 1});
  f.c.updates = Tensor::from_values<float>(Shape{2}, {1, 2});
  f.c.shape = Tensor::from_values<int64_t>(Shape{1}, {2});
  // TensorFlow's CHECK abort is described by the file, and UNSAFE all the same (gscheck exit 4).
  Error aborted{ErrorClass::kInternal, "plugin crashed with signal 6 (Aborted)"};
  aborted.unsafe = true;
  Scripted abort("plugin:tf", {aborted});
  abort.caps_.ops = {Op::kScatterNd};
  Scripted invalid("reference", {Error{ErrorClass::kInvalidArgument,
                                       "Outer dimensions of indices and update must match. "
                                       "Indices shape: [2,2,1], updates shape:[2]"}});
  CaseChecker c1(abort, &invalid, opts);
  auto r = c1.check_case(f, "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);
  ASSERT_TRUE(r.known.has_value());
  EXPECT_EQ(r.known->entry, "scatter-abort-updates-rank-below-indices");
  Error segfault{ErrorClass::kInternal, "plugin crashed with signal 11"};
  segfault.unsafe = true;
  Scripted segv("plugin:tf", {segfault});
  segv.caps_.ops = {Op::kScatterNd};
  CaseChecker c2(segv, &invalid, opts);
  r = c2.check_case(f, "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);  // not TensorFlow's known abort: nothing describes it
  EXPECT_FALSE(r.known.has_value());
  f.c.indices = Tensor::from_values<int32_t>(Shape{2, 1}, {0, 1});  // a valid scatter
  Scripted valid("reference", {Tensor::from_values<float>(Shape{2}, {1, 2})});
  CaseChecker c3(abort, &valid, opts);
  r = c3.check_case(f, "");
  EXPECT_EQ(r.verdict, Verdict::kUnsafe);
  EXPECT_FALSE(r.known.has_value());
}

}  // namespace
}  // namespace gscheck::harness

namespace gscheck::harness {
namespace {

// Determinism is judged on what the contract grades: a backend that does not promise TensorFlow's
// texts may name another bad index on a repeat (PyTorch's threads do), but not change the class.
TEST(Grading, RepeatsDifferingOnlyInUngradedMessagesAreDeterministic) {
  Scripted backend("plugin:x", {Error{ErrorClass::kBadIndex, "index 6 is out of bounds"},
                                Error{ErrorClass::kBadIndex, "index 2 is out of bounds"}});
  backend.caps_.tf_messages = false;
  Scripted reference("reference",
                     {Error{ErrorClass::kBadIndex, "indices[0] = 6 is not in [0, 2)"}});
  CheckOptions opts;
  opts.repeat = 2;
  CaseChecker checker(backend, &reference, opts);
  EXPECT_EQ(checker.check_case(gather_case(std::nullopt), "").verdict, Verdict::kPassed);
  Scripted graded("plugin:x", {Error{ErrorClass::kBadIndex, "indices[0] = 6 is not in [0, 2)"},
                               Error{ErrorClass::kBadIndex, "indices[1] = 2 is not in [0, 2)"}});
  CaseChecker checker2(graded, &reference, opts);
  EXPECT_EQ(checker2.check_case(gather_case(std::nullopt), "").verdict, Verdict::kNondeterministic);
}

// TensorFlow's sharded gather_nd names whichever bad row its threads store last: a deterministic
// backend whose repeats name two rows of the set the reference admits is PASSED, and one naming
// a row outside the set is still FAILED (never NONDETERMINISTIC for the set's sake).
TEST(Grading, RepeatsNamingTwoRowsTensorFlowCanNameAreOneAnswer) {
  const Error admitted{ErrorClass::kBadIndex,
                       "indices[15] = [5] does not index into param shape [2,9999]",
                       {"indices[1] = [5] does not index into param shape [2,9999]",
                        "indices[7] = [5] does not index into param shape [2,9999]"}};
  Scripted reference("reference", {admitted});
  CheckOptions opts;
  opts.repeat = 3;
  Scripted set("plugin:tf", {Error{ErrorClass::kBadIndex, admitted.alternatives[0]},
                             Error{ErrorClass::kBadIndex, admitted.message},
                             Error{ErrorClass::kBadIndex, admitted.alternatives[1]}});
  CaseChecker checker(set, &reference, opts);
  auto r = checker.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;
  Scripted outside(
      "plugin:tf",
      {Error{ErrorClass::kBadIndex, admitted.message},
       Error{ErrorClass::kBadIndex, "indices[3] = [5] does not index into param shape [2,9999]"}});
  CaseChecker checker2(outside, &reference, opts);
  r = checker2.check_case(gather_case(std::nullopt), "");
  EXPECT_TRUE(reports::is_failure(r.verdict)) << r.reason;
  // Without a set, two texts of a deterministic backend are two answers.
  Scripted plain_ref("reference", {Error{ErrorClass::kBadIndex, admitted.message}});
  Scripted two("plugin:tf", {Error{ErrorClass::kBadIndex, admitted.message},
                             Error{ErrorClass::kBadIndex, admitted.alternatives[0]}});
  CaseChecker checker3(two, &plain_ref, opts);
  EXPECT_EQ(checker3.check_case(gather_case(std::nullopt), "").verdict, Verdict::kNondeterministic);
}

}  // namespace
}  // namespace gscheck::harness

namespace gscheck::harness {
namespace {

// "follows": the entry predicts the backend's answer (the reference under the rule) and the
// backend is graded bit for bit against it: garbage, a wrong row or a flushed untouched element
// never match, while `output: true` accepted any tensor there.
TEST(Grading, FollowsGradesAgainstTheReferenceUnderTheRule) {
  const auto known = reports::known_failures_from_json(nlohmann::json::parse(R"J(
    {"gscheck_known_failures": 2, "known": [
      {"id": "wraps", "when": {"has": ["negative_index"], "expected": "bad_index"},
       "forgives": {"follows": {"negative_indices": "wrap"}}, "reason": "NumPy indexing",
       "link": "l"}]})J"),
                                                       "k.json")
                         .value();
  CheckOptions opts;
  opts.known_failures = &known;
  opts.lint = true;
  CaseFile f = gather_case(std::nullopt);
  f.c.indices = Tensor::from_values<int32_t>(Shape{2}, {-1, 0});  // TensorFlow raises
  auto reference = make_reference_backend();
  auto grade = [&](std::vector<float> got) {
    Scripted backend("plugin:x", {Tensor::from_values<float>(Shape{2}, got)});
    CaseChecker checker(backend, reference.get(), opts);
    return checker.check_case(f, "");
  };
  auto r = grade({3, 1});  // -1 wrapped to the last row: what the rule predicts
  EXPECT_EQ(r.verdict, Verdict::kXfail) << r.reason;
  ASSERT_EQ(r.explained.size(), 1u);
  EXPECT_NE(r.explained[0].example.find("follows negative_indices=wrap"), std::string::npos)
      << r.explained[0].example;
  r = grade({2, 1});  // a row, but not the one the rule reads
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
  EXPECT_NE(r.reason.find("against the reference under negative_indices=wrap"), std::string::npos)
      << r.reason;
  EXPECT_EQ(grade({0, 0}).verdict, Verdict::kFailed);  // zeros, garbage: no rule's answer
  // An error where the rule computes is not following it either.
  Scripted raises("plugin:x", {Error{ErrorClass::kBadIndex, "indices[0] = -1 is not in [0, 3)"}});
  CaseChecker c2(raises, reference.get(), opts);
  EXPECT_EQ(c2.check_case(f, "").verdict, Verdict::kPassed);  // TensorFlow's own answer
  // Where the rule raises too (-4 of 3), only an error passes.
  f.c.indices = Tensor::from_values<int32_t>(Shape{2}, {-4, 0});
  EXPECT_EQ(grade({3, 1}).verdict, Verdict::kFailed);
  // A scatter's wrapped row is a touched slice (the comparison decodes rows by the rule too).
  CaseFile s;
  s.c.name = "t/min";
  s.c.op = Op::kTensorScatterMin;
  s.c.tensor = Tensor::from_values<float>(Shape{3}, {5, 5, 5});
  s.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {-1});
  s.c.updates = Tensor::from_values<float>(Shape{1}, {1});
  auto grade_min = [&](std::vector<float> got) {
    Scripted backend("plugin:x", {Tensor::from_values<float>(Shape{3}, got)});
    CaseChecker checker(backend, reference.get(), opts);
    return checker.check_case(s, "").verdict;
  };
  EXPECT_EQ(grade_min({5, 5, 1}), Verdict::kXfail);
  EXPECT_EQ(grade_min({1, 5, 5}), Verdict::kFailed);
}

TEST(Grading, FollowsFlushDenormalsLeavesUntouchedElementsExact) {
  const auto known = reports::known_failures_from_json(nlohmann::json::parse(R"J(
    {"gscheck_known_failures": 2, "known": [
      {"id": "ftz", "when": {"ops": ["tensor_scatter_nd_min"], "has": ["subnormal_input"]},
       "forgives": {"follows": {"arithmetic": "flush_denormals"}}, "reason": "FTZ/DAZ",
       "link": "l"}]})J"),
                                                       "k.json")
                         .value();
  const float sub = 1e-40f;
  CaseFile f;
  f.c.name = "t/min";
  f.c.op = Op::kTensorScatterMin;
  f.c.tensor = Tensor::from_values<float>(Shape{2}, {sub, sub});
  f.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {0});
  f.c.updates = Tensor::from_values<float>(Shape{1}, {1});
  CheckOptions opts;
  opts.known_failures = &known;
  auto reference = make_reference_backend();
  auto grade = [&](std::vector<float> got) {
    Scripted backend("plugin:tf", {Tensor::from_values<float>(Shape{2}, got)});
    CaseChecker checker(backend, reference.get(), opts);
    return checker.check_case(f, "");
  };
  EXPECT_EQ(grade({sub, sub}).verdict, Verdict::kPassed);     // IEEE, TensorFlow's spec
  EXPECT_EQ(grade({0, sub}).verdict, Verdict::kXfail);        // TF's CPU kernels (measured)
  EXPECT_EQ(grade({0, 0}).verdict, Verdict::kFailed);         // an untouched element flushed
  EXPECT_EQ(grade({2e-40f, sub}).verdict, Verdict::kUnsafe);  // another subnormal: in no input
}

// flush_denormals_in_float_or_kept (TF-XLA's bfloat16 min/max): each element stores the chosen
// operand's bits (vector chunks) or the flushed float (scalar tail), which one by slice position
// and ISA. Both predictions are graded bit for bit, element by element.
TEST(Grading, FollowsEitherStoreGradesEachElementAgainstBothPredictions) {
  const auto known = reports::known_failures_from_json(nlohmann::json::parse(R"J(
    {"gscheck_known_failures": 2, "known": [
      {"id": "xla-min", "when": {"ops": ["tensor_scatter_nd_min"], "has": ["subnormal_input"]},
       "forgives": {"follows": {"arithmetic": "flush_denormals_in_float_or_kept"}},
       "reason": "vector chunks keep, the scalar tail flushes", "link": "l"}]})J"),
                                                       "k.json")
                         .value();
  const auto bf = [](Shape shape, std::vector<uint16_t> bits) {
    std::vector<BFloat16> v;
    for (uint16_t b : bits) v.push_back(BFloat16{b});
    return Tensor::from_values<BFloat16>(std::move(shape), v);
  };
  CaseFile f;
  f.c.name = "t/min";
  f.c.op = Op::kTensorScatterMin;
  // Three touched elements (one row of three: min(0x0001, 1.0) each), one untouched subnormal.
  f.c.tensor = bf(Shape{2, 3}, {1, 1, 1, 2, 2, 2});
  f.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {0});
  f.c.updates = bf(Shape{1, 3}, {0x3f80, 0x3f80, 0x3f80});
  CheckOptions opts;
  opts.known_failures = &known;
  auto reference = make_reference_backend();
  auto grade = [&](std::vector<uint16_t> got) {
    Scripted backend("plugin:x", {bf(Shape{2, 3}, std::move(got))});
    CaseChecker checker(backend, reference.get(), opts);
    return checker.check_case(f, "");
  };
  const uint16_t u = 0x0002;  // the untouched row keeps its bits under every rule
  EXPECT_EQ(grade({1, 1, 1, u, u, u}).verdict, Verdict::kPassed);  // TensorFlow's
  auto r = grade({1, 1, 0, u, u, u});  // two kept in a vector chunk, the tail flushed
  EXPECT_EQ(r.verdict, Verdict::kXfail) << r.reason;
  ASSERT_EQ(r.explained.size(), 1u);
  EXPECT_NE(r.explained[0].example.find("follows arithmetic=flush_denormals_in_float_or_kept"),
            std::string::npos)
      << r.explained[0].example;
  EXPECT_EQ(grade({0, 0, 0, u, u, u}).verdict, Verdict::kXfail);        // all flushed
  EXPECT_EQ(grade({1, 0x8000, 0, u, u, u}).verdict, Verdict::kFailed);  // -0: neither store
  EXPECT_EQ(grade({1, 2, 0, u, u, u}).verdict, Verdict::kFailed);       // another subnormal
  EXPECT_EQ(grade({1, 1, 0, u, u, 0}).verdict, Verdict::kFailed);       // an untouched flush
  EXPECT_EQ(grade({1, 0x3f80, 0, u, u, u}).verdict, Verdict::kFailed);  // the update's row
}

TEST(Grading, FollowsEntriesAreCheckedWhenRead) {
  auto err = [](const char* forgives) {
    const std::string text =
        std::string(R"({"gscheck_known_failures": 2, "known": [{"id": "x", )") + R"("forgives": )" +
        forgives + R"(, "reason": "r", "link": "l"}]})";
    auto k = reports::known_failures_from_json(nlohmann::json::parse(text), "k.json");
    return k.ok() ? std::string() : k.error().message;
  };
  EXPECT_NE(err(R"({"follows": {}})").find("name at least one of"), std::string::npos);
  EXPECT_NE(err(R"({"follows": {"int64_indices": "wrap"}})")
                .find("expected low_32_bits, low_32_bits_after_wrap"),
            std::string::npos);
  EXPECT_NE(err(R"({"follows": {"bad_index": "wrap"}})").find("expected raise, zero_fill, clamp"),
            std::string::npos);
  EXPECT_NE(err(R"({"follows": {"negative_indices": "clamp"}})").find("expected wrap"),
            std::string::npos);
  EXPECT_NE(
      err(R"({"follows": {"arithmetic": "ftz"}})").find("known[0].forgives.follows.arithmetic"),
      std::string::npos);
  EXPECT_NE(err(R"({"follows": {"bad_index": "clamp", "x": 1}})").find("unknown field"),
            std::string::npos);
  EXPECT_EQ(err(R"({"follows": {"bad_index": "zero_fill", "negative_indices": "wrap"}})"), "");
}

}  // namespace
}  // namespace gscheck::harness

namespace gscheck::harness {
namespace {

// follows duplicates=any_order (PyTorch's index_put_ at size): colliding rows in any order, on
// every run, within the summation bound; a value no order gives still fails, and without the
// entry row order is the contract.
TEST(Grading, FollowsAnyOrderAdmitsEveryOrderOnEveryRunAndNothingElse) {
  const auto known = parse_known(R"({"gscheck_known_failures": 2, "known": [
    {"id": "order", "when": {"ops": ["tensor_scatter_nd_add"], "has": ["duplicate_destinations"]},
     "forgives": {"follows": {"duplicates": "any_order"}}, "reason": "r", "link": "l"}]})");
  const float big = std::numeric_limits<float>::max();
  CaseFile f;
  f.c.name = "tensor_scatter_nd_add/order";
  f.c.op = Op::kTensorScatterAdd;
  f.c.tensor = Tensor::from_values<float>(Shape{2}, {0, 7});
  f.c.indices = Tensor::from_values<int32_t>(Shape{3, 1}, {0, 0, 0});
  f.c.updates = Tensor::from_values<float>(Shape{3}, {big, -big, 1});
  auto reference = make_reference_backend();
  CheckOptions with;
  with.known_failures = &known;
  with.repeat = 2;
  CheckOptions without;
  without.repeat = 2;
  auto verdict = [&](std::vector<float> first, std::vector<float> second,
                     const CheckOptions& opts) {
    Scripted s("plugin:x", {Tensor::from_values<float>(Shape{2}, std::move(first)),
                            Tensor::from_values<float>(Shape{2}, std::move(second))});
    s.caps_.ops = {Op::kTensorScatterAdd};
    return CaseChecker(s, reference.get(), opts).check_case(f, "").verdict;
  };
  // Row order gives 1; max + 1 first, then -max, gives 0: another order.
  EXPECT_EQ(verdict({0, 7}, {0, 7}, without), Verdict::kFailed);
  EXPECT_EQ(verdict({0, 7}, {0, 7}, with), Verdict::kXfail);
  // Another order on each run: NONDETERMINISTIC under the contract, each run within the rule.
  EXPECT_EQ(verdict({1, 7}, {0, 7}, without), Verdict::kNondeterministic);
  EXPECT_EQ(verdict({1, 7}, {0, 7}, with), Verdict::kXfail);
  // A sum no order gives (small terms: every order is exact), or an untouched element changed.
  f.c.updates = Tensor::from_values<float>(Shape{3}, {1, 2, 3});
  EXPECT_EQ(verdict({7, 7}, {7, 7}, with), Verdict::kFailed);
  EXPECT_EQ(verdict({6, 8}, {6, 8}, with), Verdict::kFailed);
}

}  // namespace
}  // namespace gscheck::harness
