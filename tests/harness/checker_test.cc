// CaseChecker's verdicts on scripted backends: messages graded only when promised, repeats,
// determinism, and the replay line's quoting.
#include "harness/checker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "core/case_json.h"
#include "harness/budget.h"
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

TEST(Budget, NominalOutputBytesByShapesAlone) {
  Case g;
  g.op = Op::kGather;
  g.params = Tensor::from_values<float>(Shape{3, 5}, std::vector<float>(15));
  g.indices = Tensor::from_values<int32_t>(Shape{4, 2}, std::vector<int32_t>(8));
  EXPECT_EQ(nominal_output_bytes(g), 4u * 2 * 5 * 4);  // axis None, batch_dims 0: [4,2,5]
  g.axis = Tensor::from_values<int32_t>(Shape{}, {-1});
  EXPECT_EQ(nominal_output_bytes(g), 3u * 4 * 2 * 4);  // [3,4,2]
  g.axis = Tensor::from_values<int32_t>(Shape{}, {2});
  EXPECT_EQ(nominal_output_bytes(g), 0u);  // no such axis: no shape
  // gather_nd/trap_row_count_over_int32: no index element, 46342*46341 rows of params [2].
  Case nd;
  nd.op = Op::kGatherNd;
  nd.params = Tensor::from_values<float>(Shape{2}, {1, 2});
  nd.indices = Tensor::from_values<int32_t>(Shape{1, 46342, 46341, 0}, {});
  EXPECT_EQ(nominal_output_bytes(nd), uint64_t{46342} * 46341 * 2 * 4);
  EXPECT_EQ(over_budget(nd, int64_t{1} << 32),
            "its output would take 17180276976 bytes, over --max-bytes 4294967296");
  EXPECT_EQ(over_budget(nd, int64_t{1} << 40), std::nullopt);
  // gather_nd/limit_output_rank_256: params of rank 254, indices [1,1,0].
  nd.params = Tensor::from_values<float>(Shape(std::vector<int64_t>(254, 1)), {1});
  nd.indices = Tensor::from_values<int32_t>(Shape{1, 1, 0}, {});
  EXPECT_EQ(over_budget(nd, 1 << 20), "its output would have rank 256, over gscheck's 254");
  // scatter_nd: the shape input, saturating rather than wrapping.
  Case sc;
  sc.op = Op::kScatterNd;
  sc.updates = Tensor::from_values<double>(Shape{0}, {});
  sc.shape = Tensor::from_values<int64_t>(Shape{3}, {int64_t{1} << 31, int64_t{1} << 31, 8});
  EXPECT_EQ(nominal_output_bytes(sc), UINT64_MAX);
  sc.shape = Tensor::from_values<int64_t>(Shape{2}, {4, -1});
  EXPECT_EQ(nominal_output_bytes(sc), 0u);
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
  // Only gscheck decides a case is over budget: a backend's refusal of a case the reference
  // computes fails it, and is SKIPPED only where the reference refuses too.
  backend.answer = Error{ErrorClass::kResourceExhausted, "too big"};
  r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kFailed);
  EXPECT_TRUE(
      r.reason.starts_with("answered resource_exhausted for a case gscheck ran within "
                           "--max-bytes (only gscheck decides a case is over budget)"))
      << r.reason;
  reference.answer = Error{ErrorClass::kResourceExhausted, "over --max-bytes"};
  r = checker.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kSkipped) << r.reason;
  EXPECT_EQ(r.reason, "the reference refused it: over --max-bytes");
  reference.answer = Tensor::from_values<float>(Shape{2}, {3, 1});
  // A case whose output is over --max-bytes by its shapes alone may be refused: gscheck's word.
  CheckOptions small;
  small.max_bytes = 7;  // the output takes 8 bytes
  CaseChecker budgeted(backend, &reference, small);
  r = budgeted.check_case(gather_file({3, 1}), "x.json");
  EXPECT_EQ(r.verdict, Verdict::kSkipped) << r.reason;
  EXPECT_EQ(r.reason,
            "its output would take 8 bytes, over --max-bytes 7; the backend refused it: too big");
  // With nothing to consult (the backend is the reference), its refusal is gscheck's own.
  CaseChecker alone(backend, nullptr, {});
  EXPECT_EQ(alone.check_case(gather_file({3, 1}), "x.json").verdict, Verdict::kSkipped);
  backend.answer = Tensor::from_values<float>(Shape{2}, {3, 1});
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

// A gather backend with a bug on cases holding index 2: element 0 of the output negated. On
// fewer than 3 index rows it fails another way (an error where TensorFlow computes).
class TwoBugBackend final : public Backend {
 public:
  TwoBugBackend() {
    caps_.name = "two-bug";
    caps_.ops = {Op::kGather};
    caps_.dtypes = {DType::kFloat32};
    caps_.index_dtypes = {DType::kInt32};
    caps_.semantics = {Semantics::kTfCpu};
  }
  const Capabilities& capabilities() const override { return caps_; }
  Outcome run(const Case& c) override {
    ++calls;
    if (c.indices->num_elements() < 3) return Error{ErrorClass::kInvalidArgument, "too few"};
    Outcome o = reference_->run(c);
    bool two = false;
    for (int64_t i = 0; i < c.indices->num_elements(); ++i) two |= c.indices->int_at(i) == 2;
    if (o.ok() && two && o->num_elements() > 0) o->data_as<float>()[0] *= -1;
    return o;
  }
  Capabilities caps_;
  std::unique_ptr<Backend> reference_ = std::move(make_backend("reference").value());
  int calls = 0;
};

CaseFile eight_rows() {
  CaseFile f;
  f.c.name = "gather/eight_rows";
  f.c.op = Op::kGather;
  f.c.params = Tensor::from_values<float>(Shape{4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  f.c.indices = Tensor::from_values<int32_t>(Shape{2, 4}, {0, 1, 3, 2, 1, 0, 3, 1});
  return f;
}

TEST(CaseChecker, FailuresShrinkToTheSmallestThatFailsTheSameWay) {
  TwoBugBackend backend;
  auto reference = std::move(make_backend("reference").value());
  const auto dir =
      std::filesystem::temp_directory_path() / ("gscheck_shrink_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  CheckOptions opts;
  opts.failed_cases_dir = dir.string();
  opts.shrink_seconds = 60;
  CaseChecker checker(backend, reference.get(), opts);
  const reports::CaseResult r = checker.check_case(eight_rows(), "");
  // The negated element is in no input of a gather: UNSAFE, shrunk like any failure.
  ASSERT_EQ(r.verdict, Verdict::kUnsafe) << r.reason;
  ASSERT_TRUE(r.shrunk) << result_text(r);
  // Three rows: fewer fail another way (an error), which is not the failure being shrunk.
  ASSERT_TRUE(std::filesystem::exists(r.shrunk->file));
  const CaseFile minimal = load_case_file(r.shrunk->file).value();
  EXPECT_EQ(minimal.c.indices->num_elements(), 3);
  EXPECT_EQ(minimal.c.indices->rank(), 1);
  int twos = 0;
  for (int64_t i = 0; i < 3; ++i) twos += minimal.c.indices->int_at(i) == 2;
  EXPECT_EQ(twos, 1);
  // The slice dim of params is removed; 3 rows of params remain (index 2 reads the third).
  EXPECT_EQ(minimal.c.params->shape(), Shape({3}));
  EXPECT_TRUE(minimal.expect && minimal.expect->output);
  EXPECT_GT(r.shrunk->kept, 0);
  EXPECT_EQ(r.shrunk->reason.rfind("unsafe: output element [0] = -", 0), 0u) << r.shrunk->reason;
  // The original generated case is saved too, and the result's repro is its own.
  EXPECT_NE(r.repro.find(dir.string()), std::string::npos);
  EXPECT_NE(r.repro, r.shrunk->repro);
  EXPECT_NE(result_text(r).find("minimal ("), std::string::npos);
  std::filesystem::remove_all(dir);

  // Nothing is shrunk without a folder to save into, or with shrink time 0.
  opts.failed_cases_dir.clear();
  EXPECT_FALSE(CaseChecker(backend, reference.get(), opts).check_case(eight_rows(), "").shrunk);
  opts.failed_cases_dir = dir.string();
  opts.shrink_seconds = 0;
  EXPECT_FALSE(CaseChecker(backend, reference.get(), opts).check_case(eight_rows(), "").shrunk);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gscheck::harness
