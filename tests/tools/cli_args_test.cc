#include "tools/cli_args.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tools/case_check.h"

namespace gscheck::tools {
namespace {

using reports::Verdict;

TEST(CliArgs, ValuesFlagsPositionalsAndDoubleDash) {
  auto p = parse_args(
      {"a.json", "--backend", "cuda-emu", "--report=out.json", "--quiet", "--", "--not-an-option"},
      {{"--backend", true}, {"--report", true}, {"--quiet", false}});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->value("--backend"), "cuda-emu");
  EXPECT_EQ(p->value("--report"), "out.json");
  EXPECT_TRUE(p->has("--quiet"));
  EXPECT_FALSE(p->has("--junit"));
  EXPECT_EQ(p->positional, (std::vector<std::string>{"a.json", "--not-an-option"}));
  EXPECT_TRUE(parse_args({"-h"}, {})->has("--help"));
}

TEST(CliArgs, Errors) {
  const std::vector<OptionSpec> specs = {{"--backend", true}, {"--quiet", false}};
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Bad& b : std::vector<Bad>{
           {{"--backnd", "x"}, "unknown option '--backnd'"},
           {{"--backend"}, "option '--backend' needs a value"},
           {{"--quiet=yes"}, "option '--quiet' takes no value"},
           {{"--backend", "a", "--backend", "b"}, "option '--backend' given twice"},
       }) {
    auto p = parse_args(b.args, specs);
    ASSERT_FALSE(p.ok()) << b.message;
    EXPECT_EQ(p.error().cls, ErrorClass::kParse);
    EXPECT_EQ(p.error().message, b.message);
  }
  EXPECT_EQ(*parse_int_option("--sweep", "12", 0, 100), 12);
  EXPECT_EQ(parse_int_option("--sweep", "12x", 0, 100).error().message,
            "--sweep: expected an integer in [0, 100], got '12x'");
  EXPECT_FALSE(parse_int_option("--sweep", "101", 0, 100).ok());
  EXPECT_FALSE(parse_int_option("--sweep", "", 0, 100).ok());
}

TEST(CliArgs, ShellQuote) {
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
    caps_.ops = {Op::kGather};
    caps_.dtypes = {DType::kFloat32};
    caps_.index_dtypes = {DType::kInt32};
    caps_.semantics = {Semantics::kTfCpu};
    caps_.tf_messages = true;
  }
  const Capabilities& capabilities() const override { return caps_; }
  Outcome run(const Case&) override {
    if (throws) throw std::runtime_error("boom");
    return answer;
  }
  Capabilities caps_;
  Outcome answer = Tensor::from_values<float>(Shape{2}, {3, 1});
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

  backend.answer = Error{ErrorClass::kUnimplemented, "not yet"};
  EXPECT_EQ(checker.check_case(gather_file({3, 1}), "x.json").verdict, Verdict::kUnimplemented);
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

}  // namespace
}  // namespace gscheck::tools
