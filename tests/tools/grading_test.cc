// The grading rules a vendor relies on (issue 9, item 3): which messages are compared, what a
// reference refusal may hide, crashes in repeats, and known failures (XFAIL / XPASS).
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "reports/known_failures.h"
#include "tools/case_check.h"

namespace gscheck::tools {
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
  const auto known = parse_known(R"({"gscheck_known_failures": 1, "known": [
    {"case": "gather/*", "verdict": "FAILED", "outcome": "internal",
     "message": "signal 6", "reason": "aborts", "link": "https://example.invalid/1"},
    {"case": "gather/graded", "verdict": "FAILED", "outcome": "output",
     "reason": "wrong bits", "link": "docs/x.md"}]})");
  ASSERT_EQ(known.entries.size(), 2u);
  Scripted reference("reference", {kOut});
  CheckOptions opts;
  opts.known_failures = &known;

  // A crash matching entry 0: XFAIL, not a failure of the run; the original verdict is kept.
  Scripted crash("plugin:x",
                 {Error{ErrorClass::kInternal, "plugin crashed with signal 6 (Aborted)"}});
  CaseChecker c1(crash, &reference, opts);
  auto r = c1.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kXfail);
  EXPECT_FALSE(reports::is_failure(r.verdict, /*strict=*/true));
  ASSERT_TRUE(r.known.has_value());
  EXPECT_EQ(r.known->verdict, Verdict::kFailed);
  EXPECT_EQ(r.known->entry, "gather/*");
  EXPECT_EQ(r.known->link, "https://example.invalid/1");

  // A different failure (a wrong output) of a case entry 1 names: XFAIL by entry 1.
  Scripted wrong("plugin:x", {Tensor::from_values<float>(Shape{2}, {3, 2})});
  CaseChecker c2(wrong, &reference, opts);
  r = c2.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kXfail);
  EXPECT_EQ(r.known->reason, "wrong bits");

  // A failure that matches no entry stays FAILED: another error class than declared.
  Scripted other("plugin:x", {Error{ErrorClass::kBadIndex, "indices[0] = 9 is not in [0, 3)"}});
  CaseChecker c3(other, &reference, opts);
  r = c3.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_FALSE(r.known.has_value());

  // The named case passes: XPASS (entry 1 has no message, so it selects by name alone). It fails
  // the run only with --strict.
  Scripted right("plugin:x", {kOut});
  CaseChecker c4(right, &reference, opts);
  r = c4.check_case(gather_case(std::nullopt), "");
  EXPECT_EQ(r.verdict, Verdict::kXpass);
  EXPECT_FALSE(reports::is_failure(r.verdict));
  EXPECT_TRUE(reports::is_failure(r.verdict, /*strict=*/true));
  // Another passing gather case: entry 0 recognises failures by their message, entry 1 names
  // a different case: plain PASSED.
  CaseFile other_case = gather_case(std::nullopt);
  other_case.c.name = "gather/other";
  EXPECT_EQ(c4.check_case(other_case, "").verdict, Verdict::kPassed);
}

TEST(Grading, KnownFailuresSelectByOpDtypeAndMismatchText) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 1, "known": [
    {"ops": ["tensor_scatter_nd_min"], "dtypes": ["bfloat16"], "verdict": "FAILED",
     "outcome": "output", "message": "got nan\\(0x7fc0\\)", "reason": "canonical NaN",
     "link": "corpus/tf/x.json"}]})J");
  CaseFile f;
  f.c.name = "sweep/1/2/tensor_scatter_nd_min";
  f.c.op = Op::kTensorScatterMin;
  const uint16_t nan_bits = 0xffc5;
  Tensor tensor = Tensor::zeros(DType::kBFloat16, Shape{1}).value();
  std::memcpy(tensor.data(), &nan_bits, 2);
  f.c.tensor = tensor;
  f.c.indices = Tensor::from_values<int32_t>(Shape{0, 1}, {});
  f.c.updates = Tensor::zeros(DType::kBFloat16, Shape{0}).value();
  Tensor canonical = Tensor::zeros(DType::kBFloat16, Shape{1}).value();
  const uint16_t canonical_bits = 0x7fc0;
  std::memcpy(canonical.data(), &canonical_bits, 2);
  Scripted backend("plugin:tf", {canonical});
  Scripted reference("reference", {tensor});
  CheckOptions opts;
  opts.known_failures = &known;
  CaseChecker checker(backend, &reference, opts);
  auto r = checker.check_case(f, "");
  EXPECT_EQ(r.verdict, Verdict::kXfail) << r.reason;
  // The same difference on float32 data is not selected.
  f.c.tensor = Tensor::from_values<float>(Shape{1}, {1});
  f.c.updates = Tensor::from_values<float>(Shape{0}, {});
  Scripted b32("plugin:tf", {Tensor::from_values<float>(Shape{1}, {2})});
  Scripted r32("reference", {Tensor::from_values<float>(Shape{1}, {1})});
  CaseChecker c32(b32, &r32, opts);
  EXPECT_EQ(c32.check_case(f, "").verdict, Verdict::kFailed);
}

// "flushed_subnormals": a CPU running with FTZ/DAZ (TensorFlow's) fails cases only by subnormals
// read or written as zero; the entry selects exactly those, and never makes a pass XPASS.
TEST(Grading, KnownFailuresSelectFlushedSubnormals) {
  const auto known = parse_known(R"J({"gscheck_known_failures": 1, "known": [
    {"verdict": "FAILED", "outcome": "output", "flushed_subnormals": true,
     "reason": "FTZ/DAZ", "link": "docs/spec_notes.md"}]})J");
  const float sub = 1e-40f;  // a float32 subnormal
  CaseFile f;
  f.c.name = "sweep/1/3/tensor_scatter_nd_min";
  f.c.op = Op::kTensorScatterMin;
  f.c.tensor = Tensor::from_values<float>(Shape{2}, {sub, 5});
  f.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {1});
  f.c.updates = Tensor::from_values<float>(Shape{1}, {4});
  CheckOptions opts;
  opts.known_failures = &known;
  auto grade = [&](std::vector<float> got) {
    Scripted backend("plugin:tf", {Tensor::from_values<float>(Shape{2}, got)});
    Scripted reference("reference", {Tensor::from_values<float>(Shape{2}, {sub, 4})});
    CaseChecker checker(backend, &reference, opts);
    return checker.check_case(f, "");
  };
  auto r = grade({0, 4});  // the untouched subnormal flushed
  EXPECT_EQ(r.verdict, Verdict::kXfail) << r.reason;
  ASSERT_TRUE(r.known.has_value());
  EXPECT_TRUE(r.flushed_subnormals);
  r = grade({0, 5});  // flushed, and the min is wrong too: a real failure
  EXPECT_EQ(r.verdict, Verdict::kFailed) << r.reason;
  EXPECT_FALSE(r.flushed_subnormals);
  r = grade({2e-40f, 4});                             // another subnormal is no flush
  EXPECT_EQ(r.verdict, Verdict::kXfail) << r.reason;  // within the smallest normal: admitted
  r = grade({sub, 4});
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;  // not XPASS: the entry names a kind
}

TEST(Grading, KnownFailuresFileErrorsNameTheEntry) {
  auto bad = [](const std::string& text) {
    auto k = reports::known_failures_from_json(nlohmann::json::parse(text), "k.json");
    return k.ok() ? std::string("ok") : k.error().message;
  };
  EXPECT_EQ(bad(R"({"known": []})"),
            "k.json: gscheck_known_failures: missing or not 1 (format version 1)");
  EXPECT_EQ(bad(R"({"gscheck_known_failures": 1, "known": [{"verdict": "FAILED", "link": "l"}]})"),
            "k.json: known[0].reason: missing");
  EXPECT_EQ(bad(R"({"gscheck_known_failures": 1, "known": [{"verdict": "PASSED", "reason": "r",
                    "link": "l"}]})"),
            "k.json: known[0].verdict: \"PASSED\" is not FAILED, NONDETERMINISTIC or MISTRUSTED");
  EXPECT_EQ(bad(R"({"gscheck_known_failures": 1, "known": [{"verdict": "FAILED", "reason": "r",
                    "link": "l", "ops": ["gathr"]}]})"),
            "k.json: known[0].ops: unknown op gathr");
  EXPECT_EQ(bad(R"J({"gscheck_known_failures": 1, "known": [{"verdict": "FAILED", "reason": "r",
                    "link": "l", "message": "("}]})J")
                .rfind("k.json: known[0].message: invalid regex /(/", 0),
            0u);
  EXPECT_EQ(bad(R"({"gscheck_known_failures": 1, "known": [{"verdict": "FAILED", "reason": "r",
                    "link": "l", "outcome": "crash"}]})"),
            "k.json: known[0].outcome: \"crash\" is neither \"output\" nor an error class name");
  EXPECT_EQ(bad(R"({"gscheck_known_failures": 1, "known": [{"verdict": "FAILED", "reason": "r",
                    "link": "l", "cases": "x"}]})")
                .rfind("k.json: known[0].cases: unknown field", 0),
            0u);
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
}

// The shipped TensorFlow 2.21 file parses and recognises the abort it documents.
TEST(Grading, ShippedTensorFlowFile) {
  auto k = reports::load_known_failures(GSCHECK_SOURCE_DIR
                                        "/plugins/tensorflow/tf_2_21_known_failures.json");
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->entries.size(), 6u);
  reports::CaseResult r;
  r.name = "sweep/1/5/scatter_nd/kernel";
  r.op = Op::kScatterNd;
  r.inputs = {{"updates", DType::kFloat32, Shape{2}}};
  r.verdict = Verdict::kFailed;
  r.outcome = "error internal: plugin crashed with signal 6 (Aborted)";
  r.reason = "run 1 of 2: the backend failed: plugin crashed with signal 6 (Aborted)";
  reports::apply_known_failures(*k, r);
  EXPECT_EQ(r.verdict, Verdict::kXfail);
  r.verdict = Verdict::kFailed;
  r.known.reset();
  r.outcome = "error internal: plugin crashed with signal 11 (Segmentation fault)";
  r.reason = "run 1 of 2: the backend failed: plugin crashed with signal 11 (Segmentation fault)";
  reports::apply_known_failures(*k, r);
  EXPECT_EQ(r.verdict, Verdict::kFailed);  // a segfault is not TensorFlow's known abort

  // float16 min/max: a signalling NaN coming back quiet is known; another NaN is not.
  reports::CaseResult h;
  h.name = "sweep/1/9/tensor_scatter_nd_max/kernel";
  h.op = Op::kTensorScatterMax;
  h.inputs = {{"tensor", DType::kFloat16, Shape{4}}, {"updates", DType::kFloat16, Shape{4}}};
  h.outcome = "float16 [4]";
  for (const auto& [expected, got, known] :
       {std::tuple{"nan(0x7c15) or another operand", "nan(0x7e15)", true},
        std::tuple{"nan(0xfd05) or another operand", "nan(0xff05)", true},
        std::tuple{"nan(0x7e15) or another operand", "nan(0x7fff)", false}}) {
    h.verdict = Verdict::kFailed;
    h.known.reset();
    h.checks = {{"reference", {}}};
    h.checks[0].result.mismatches = {{{2}, expected, got}};
    reports::apply_known_failures(*k, h);
    EXPECT_EQ(h.verdict, known ? Verdict::kXfail : Verdict::kFailed) << expected << " " << got;
  }
}

}  // namespace
}  // namespace gscheck::tools
