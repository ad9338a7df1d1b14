// CaseChecker's verdicts on scripted backends: messages graded only when promised, repeats,
// determinism, and the replay line's quoting.
#include "harness/checker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "harness/judge.h"
#include "harness/regression.h"

namespace gscheck::harness {
namespace {

using reports::Verdict;

TEST(Regression, ShellQuote) {
  EXPECT_EQ(shell_quote("corpus/golden/a.json"), "corpus/golden/a.json");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

// A backend whose answer the test chooses.

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(std::string name) {
    caps_.name = std::move(name);
    caps_.ops = {Op::kGather, Op::kTensorScatterAdd};
    caps_.dtypes = {DType::kFloat32};
    caps_.index_dtypes = {DType::kInt32};
    caps_.semantics = {Semantics::kTfCpu, Semantics::kTfGpu};
    caps_.tf_messages = true;
  }
  const Capabilities& capabilities() const override { return caps_; }
  Outcome run(const Case&) override {
    ++calls;
    if (throws) throw std::runtime_error("boom");
    if (!script.empty()) return script[static_cast<std::size_t>(calls - 1) % script.size()];
    return answer;
  }
  Capabilities caps_;
  Outcome answer = Tensor::from_values<float>(Shape{2}, {3, 1});
  std::vector<Outcome> script;  ///< when set, call k answers script[k % size]
  int calls = 0;
  bool throws = false;
};

CaseFile gather_file(std::vector<float> expected) {
  CaseFile f;
  f.c.name = "gather/fake";
  f.c.op = Op::kGather;
  f.c.params = Tensor::from_values<float>(Shape{3}, {1, 2, 3});
  f.c.indices = Tensor::from_values<int32_t>(Shape{2}, {2, 0});
  f.expect = Expect{Tensor::from_values<float>(Shape{2}, expected), std::nullopt, std::nullopt};
  return f;
}

TEST(CaseChecker, Verdicts) {
  FakeBackend backend("fake"), reference("reference");
  CaseChecker checker(backend, &reference, {});
  auto r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[0].against, "expect");
  EXPECT_EQ(r.checks[1].against, "reference");
  EXPECT_EQ(r.repro, "gscheck eval --backend fake x.json");
  EXPECT_EQ(r.outcome, "float32 [2]");

  backend.answer = Tensor::from_values<float>(Shape{2}, {3, 2});
  r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_EQ(r.reason, "against expect: 1 of 2 elements differ; first at [1]: expected 1, got 2");

  // The reference disagrees with the golden file: nothing to trust.
  backend.answer = Tensor::from_values<float>(Shape{2}, {3, 1});
  reference.answer = Tensor::from_values<float>(Shape{2}, {0, 0});
  r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kMistrusted);
  reference.answer = Tensor::from_values<float>(Shape{2}, {3, 1});

  backend.answer = Error{ErrorClass::kUnimplemented, "not yet"};  // inside its contract
  EXPECT_EQ(checker.check_case(gather_file({3, 1}), "x.json").verdict, Verdict::kDeclined);
  backend.answer = Error{ErrorClass::kResourceExhausted, "too big"};
  EXPECT_EQ(checker.check_case(gather_file({3, 1}), "x.json").verdict, Verdict::kSkipped);
  backend.throws = true;
  r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_EQ(r.reason, "the backend threw an exception: boom");
  backend.throws = false;

  CaseFile other = gather_file({3, 1});
  other.c.indices = Tensor::from_values<int64_t>(Shape{2}, {2, 0});
  r = checker.check_case(other, "x.json");
  EXPECT_EQ(r.verdict, Verdict::kUnimplemented);
  EXPECT_EQ(r.reason, "outside the backend's capabilities: int64 indices are not implemented");
}

TEST(CaseChecker, MessagesOnlyWhenPromised) {
  FakeBackend backend("fake");
  backend.caps_.tf_messages = false;
  backend.answer = bad_index("index 5 out of range");
  CaseChecker checker(backend, nullptr, {});
  CaseFile f = gather_file({0, 0});
  f.expect = Expect{std::nullopt, ErrorClass::kBadIndex, "^indices\\[0\\] = 5"};
  EXPECT_EQ(checker.check_case(f, "x.json").verdict, Verdict::kPassed);
  backend.caps_.tf_messages = true;
  EXPECT_EQ(checker.check_case(f, "x.json").verdict, Verdict::kFailed);
}

TEST(CaseChecker, DefaultRepeat) {
  EXPECT_EQ(default_repeat("reference"), 1);
  EXPECT_EQ(default_repeat("cuda-emu"), 1);
  EXPECT_EQ(default_repeat("plugin:./libvendor.so"), 2);
}

TEST(CaseChecker, BitwiseDifference) {
  const Outcome a = Tensor::from_values<float>(Shape{2}, {3, 0.0f});
  EXPECT_EQ(bitwise_difference(a, Tensor::from_values<float>(Shape{2}, {3, 0.0f})), "");
  EXPECT_EQ(bitwise_difference(a, Tensor::from_values<float>(Shape{2}, {3, -0.0f})),
            "element 1 (flat) differs in its bits");
  EXPECT_EQ(bitwise_difference(a, Tensor::from_values<float>(Shape{1, 2}, {3, 0.0f})),
            "float32 [2] vs float32 [1,2]");
  EXPECT_EQ(bitwise_difference(a, bad_index("i")), "float32 [2] vs error bad_index: i");
  EXPECT_EQ(bitwise_difference(bad_index("i"), bad_index("i")), "");
  EXPECT_EQ(bitwise_difference(bad_index("i"), bad_index("j")),
            "error bad_index: i vs error bad_index: j");
  const Outcome s = Tensor::from_values<std::string>(Shape{2}, {"a", "b"});
  EXPECT_EQ(bitwise_difference(s, Tensor::from_values<std::string>(Shape{2}, {"a", "c"})),
            "string element 1 (flat) differs");
}

TEST(CaseChecker, DeterministicBackendMustRepeatBitwise) {
  FakeBackend backend("fake"), reference("reference");
  CheckOptions opts;
  opts.repeat = 3;
  CaseChecker checker(backend, &reference, opts);
  auto r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.runs, 3);
  EXPECT_EQ(r.differing_runs, 0);
  EXPECT_EQ(backend.calls, 3);
  EXPECT_EQ(reference.calls, 1);  // the reference runs once, whatever the repeat
  EXPECT_EQ(r.repro, "gscheck eval --backend fake --repeat 3 x.json");

  // Run 3 answers -0 where runs 1 and 2 answered +0: equal values, different bits.
  backend.calls = 0;
  const Outcome plus = Tensor::from_values<float>(Shape{2}, {3, 0.0f});
  const Outcome minus = Tensor::from_values<float>(Shape{2}, {3, -0.0f});
  backend.script = {plus, plus, minus};
  reference.answer = plus;
  r = checker.check_case(gather_file({3, 0}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kNondeterministic);
  EXPECT_TRUE(reports::is_failure(r.verdict));
  EXPECT_EQ(r.reason,
            "declared deterministic, but run 3 of 3 differs from run 1: element 1 (flat) "
            "differs in its bits");
  EXPECT_EQ(r.runs, 3);
  EXPECT_EQ(r.differing_runs, 1);
  EXPECT_NE(result_text(r).find("NONDETERMINISTIC"), std::string::npos);

  // With one run there is nothing to compare: the contract is not checked.
  CaseChecker once(backend, &reference, {});
  backend.calls = 0;
  r = once.check_case(gather_file({3, 0}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.runs, 1);
}

TEST(CaseChecker, NondeterministicBackendMustPassEveryRun) {
  FakeBackend backend("fake"), reference("reference");
  backend.caps_.deterministic = false;
  CheckOptions opts;
  opts.repeat = 3;
  CaseChecker checker(backend, &reference, opts);

  // A wrong answer on run 2 only: FAILED, and the run is named.
  backend.script = {Tensor::from_values<float>(Shape{2}, {3, 1}),
                    Tensor::from_values<float>(Shape{2}, {3, 2}),
                    Tensor::from_values<float>(Shape{2}, {3, 1})};
  auto r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_EQ(r.reason,
            "run 2 of 3 against expect: 1 of 2 elements differ; first at [1]: expected 1, got 2");
  EXPECT_EQ(r.differing_runs, 1);
  EXPECT_NE(result_text(r).find("at [1]: expected 1, got 2"), std::string::npos);

  // Sums of duplicates in another order (tf-gpu): the bits differ, the bound holds.
  CaseFile sum;
  sum.c.name = "tensor_scatter_nd_add/dup";
  sum.c.op = Op::kTensorScatterAdd;
  sum.c.semantics = Semantics::kTfGpu;
  sum.c.tensor = Tensor::from_values<float>(Shape{1}, {0});
  sum.c.indices = Tensor::from_values<int32_t>(Shape{3, 1}, {0, 0, 0});
  sum.c.updates = Tensor::from_values<float>(Shape{3}, {0.1f, 0.2f, 0.3f});
  const float exact = 0.6f;
  const float next = std::nextafter(exact, 1.0f);
  reference.answer = Tensor::from_values<float>(Shape{1}, {exact});
  backend.calls = 0;
  backend.script = {Tensor::from_values<float>(Shape{1}, {exact}),
                    Tensor::from_values<float>(Shape{1}, {next})};
  r = checker.check_case(sum, "");
  EXPECT_EQ(r.verdict, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.runs, 3);
  EXPECT_EQ(r.differing_runs, 1);
  EXPECT_NE(r.reason.find("; 1 of 2 repeats differed bitwise, each within bound"),
            std::string::npos)
      << r.reason;

  // The same differing bits on a backend that declares determinism are a broken contract.
  backend.caps_.deterministic = true;
  backend.calls = 0;
  EXPECT_EQ(checker.check_case(sum, "").verdict, Verdict::kNondeterministic);
}

}  // namespace
}  // namespace gscheck::harness
