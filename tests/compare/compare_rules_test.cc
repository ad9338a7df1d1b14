// One wrong outcome per comparator rule, differing from the right one only where that rule looks:
// each test fails if its rule is relaxed (tools/mutants.json plants those relaxations; see
// docs/mutation.md for the rule -> test -> mutant table).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>

#include "compare/compare.h"
#include "core/message_regex.h"

namespace gscheck::compare {
namespace {

Tensor f32(Shape s, std::vector<float> v) { return Tensor::from_values<float>(std::move(s), v); }

Case gather_case() {
  Case c;
  c.name = "rules/gather";
  c.op = Op::kGather;
  c.params = f32(Shape{6}, {1, 2, 3, 4, 5, 6});
  c.indices = Tensor::from_values<int32_t>(Shape{2, 3}, {0, 1, 2, 3, 4, 5});
  return c;
}

Case scatter(Op op, Semantics sem, Tensor tensor, Tensor indices, Tensor updates) {
  Case c;
  c.name = "rules/scatter";
  c.op = op;
  c.semantics = sem;
  c.tensor = std::move(tensor);
  c.indices = std::move(indices);
  c.updates = std::move(updates);
  return c;
}

void expect_rejected(const Comparison& v, const std::string& why) {
  EXPECT_FALSE(v.pass) << "accepted: " << v.summary;
  EXPECT_NE(v.summary.find(why), std::string::npos) << v.summary;
}

TEST(CompareRules, ShapeNotJustElementCount) {
  const Case c = gather_case();
  const Tensor want = f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor got = want;
  got = f32(Shape{3, 2}, {1, 2, 3, 4, 5, 6});  // same bytes, same count
  expect_rejected(compare_outcomes(c, want, got), "[3,2]");
  expect_rejected(compare_outcomes(c, want, f32(Shape{6}, {1, 2, 3, 4, 5, 6})), "[6]");
  expect_rejected(compare_outcomes(c, want, f32(Shape{2, 3, 1}, {1, 2, 3, 4, 5, 6})), "[2,3,1]");
  Expect e;
  e.output = want;
  expect_rejected(check_expect(c, e, got), "[3,2]");
}

TEST(CompareRules, DtypeNotJustBits) {
  const Case c = gather_case();
  const Tensor want = f32(Shape{2}, {1.5f, -2});
  const Tensor got = Tensor::from_values<int32_t>(
      Shape{2}, {std::bit_cast<int32_t>(1.5f), std::bit_cast<int32_t>(-2.0f)});
  expect_rejected(compare_outcomes(c, want, got), "int32");
}

TEST(CompareRules, ErrorClassWithTheSameMessage) {
  const Case c = gather_case();
  const Outcome want = bad_index("indices[0] = 9 is not in [0, 6)");
  const Outcome got = invalid_argument("indices[0] = 9 is not in [0, 6)");
  for (bool messages : {true, false}) {
    Options o;
    o.compare_messages = messages;
    expect_rejected(compare_outcomes(c, want, got, o), "got error invalid_argument");
  }
}

TEST(CompareRules, MessageTextNotJustLength) {
  const Case c = gather_case();
  const Outcome want = bad_index("indices[2] = [6] does not index into shape [6]");
  const Outcome got = bad_index("indices[0] = [9] does not index into shape [6]");  // same length
  expect_rejected(compare_outcomes(c, want, got), "message differs");
  Options lax;
  lax.compare_messages = false;
  EXPECT_TRUE(compare_outcomes(c, want, got, lax).pass);
  Capabilities caps;
  caps.tf_messages = true;
  expect_rejected(compare_outcomes(c, want, got, options_for(caps)), "message differs");
}

TEST(CompareRules, MessagesPromisedForKernelErrorsOnly) {
  // tf_messages promises TensorFlow's text where its kernels write it (invalid_argument,
  // bad_index); an unsupported dtype's text comes from the kernel registry and is not graded.
  const Case c = gather_case();
  const Outcome want = Error{ErrorClass::kUnsupported, "no GatherV2 kernel for int8 indices"};
  const Outcome got = Error{ErrorClass::kUnsupported, "cuda does not take int8 indices"};
  EXPECT_TRUE(compare_outcomes(c, want, got).pass);
  expect_rejected(compare_outcomes(c, invalid_argument("axis must be scalar"),
                                   invalid_argument("axis must be a scalar")),
                  "message differs");
}

TEST(CompareRules, BadIndexMessagesOnlyContract) {
  // cuda's checked mode promises TensorFlow's bad_index text, not its validation texts.
  const Case c = gather_case();
  Capabilities caps;
  caps.tf_bad_index_messages = true;
  const Options o = options_for(caps);
  EXPECT_TRUE(messages_graded(o, ErrorClass::kBadIndex));
  EXPECT_FALSE(messages_graded(o, ErrorClass::kInvalidArgument));
  expect_rejected(compare_outcomes(c, bad_index("indices[2] = [6] does not index into shape [6]"),
                                   bad_index("indices[0] = [9] does not index into shape [6]"), o),
                  "message differs");
  EXPECT_TRUE(compare_outcomes(c, invalid_argument("axis must be scalar"),
                               invalid_argument("axis has rank 1"), o)
                  .pass);
}

TEST(CompareRules, BadIndexAlternativesAreAcceptedAndNothingElse) {
  // A multi-threaded TensorFlow may name another bad index: the reference lists those it can.
  const Case c = gather_case();
  Error want = bad_index("indices[0] = 9 is not in [0, 2)");
  want.alternatives = {"indices[40] = 8 is not in [0, 2)"};
  EXPECT_TRUE(compare_outcomes(c, want, bad_index("indices[0] = 9 is not in [0, 2)")).pass);
  EXPECT_TRUE(compare_outcomes(c, want, bad_index("indices[40] = 8 is not in [0, 2)")).pass);
  expect_rejected(compare_outcomes(c, want, bad_index("indices[1] = 6 is not in [0, 2)")),
                  "or one of 1 others");
  // A case file's regex is the escaped alternation, anchored at both ends.
  EXPECT_EQ(
      error_message_regex(want),
      "^(?:indices\\[0\\] = 9 is not in \\[0, 2\\)|indices\\[40\\] = 8 is not in \\[0, 2\\))$");
  EXPECT_EQ(error_message_regex(bad_index("a.b")), "^a\\.b$");
  EXPECT_EQ(error_message_regex(bad_index("a.b"), false), "^a\\.b");
  const auto re = MessageRegex::compile(error_message_regex(want));
  ASSERT_TRUE(re.ok());
  EXPECT_TRUE(re->search("indices[40] = 8 is not in [0, 2)"));
  EXPECT_TRUE(re->search("indices[0] = 9 is not in [0, 2)"));
  EXPECT_FALSE(re->search("indices[4] = 8 is not in [0, 2)"));
  EXPECT_FALSE(re->search("indices[0] = 9 is not in [0, 2), node name: x"));
}

TEST(CompareRules, OneFlippedBitInOneElement) {
  const Case c = gather_case();
  const Tensor want = Tensor::from_values<int32_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor got = want;
  got.data_as<int32_t>()[4] ^= 1;
  const Comparison v = compare_outcomes(c, want, got);
  expect_rejected(v, "1 of 6 elements differ");
  EXPECT_EQ(v.mismatch_count, 1);
}

TEST(CompareRules, NanPayloadAndSignedZeroInDataMovement) {
  const Case c = gather_case();
  const float nan_a = std::bit_cast<float>(0x7fc00000u), nan_b = std::bit_cast<float>(0x7fc00001u);
  expect_rejected(compare_outcomes(c, f32(Shape{2}, {nan_a, 1}), f32(Shape{2}, {nan_b, 1})),
                  "nan(0x7fc00001)");
  expect_rejected(compare_outcomes(c, f32(Shape{2}, {0.0f, 1}), f32(Shape{2}, {-0.0f, 1})), "-0");
  // A tensor_scatter_nd_update moves bits: a NaN of another payload is wrong there too (only a
  // sum's NaN may carry any payload).
  const Case u = scatter(Op::kTensorScatterUpdate, Semantics::kTfCpu, f32(Shape{2}, {0, 0}),
                         Tensor::from_values<int32_t>(Shape{1, 1}, {0}), f32(Shape{1}, {nan_a}));
  expect_rejected(compare_outcomes(u, f32(Shape{2}, {nan_a, 0}), f32(Shape{2}, {nan_b, 0})),
                  "nan(0x7fc00001)");
}

TEST(CompareRules, SetValuedUpdateOnlyTheCollidingRows) {
  // rows 0, 0 write 1 and 2 into [7, 7]: element 0 is 1 or 2, never the starting 7.
  const Case c = scatter(Op::kTensorScatterUpdate, Semantics::kTfGpu, f32(Shape{2}, {7, 7}),
                         Tensor::from_values<int32_t>(Shape{2, 1}, {0, 0}), f32(Shape{2}, {1, 2}));
  EXPECT_TRUE(compare_outcomes(c, f32(Shape{2}, {2, 7}), f32(Shape{2}, {1, 7})).pass);
  expect_rejected(compare_outcomes(c, f32(Shape{2}, {2, 7}), f32(Shape{2}, {7, 7})), "1 of 2");
}

TEST(CompareRules, RowDecodeSkipsIndexEqualToDim) {
  // [2,2] tensor, element-level rows: (0,2) is out of range (skipped on tf-gpu), so element (1,0)
  // has only row (1,0)'s update 20: the skipped row's 10 is no candidate.
  const Case c =
      scatter(Op::kTensorScatterUpdate, Semantics::kTfGpu, f32(Shape{2, 2}, {0, 0, 0, 0}),
              Tensor::from_values<int32_t>(Shape{2, 2}, {0, 2, 1, 0}), f32(Shape{2}, {10, 20}));
  const Tensor want = f32(Shape{2, 2}, {0, 0, 20, 0});
  EXPECT_TRUE(compare_outcomes(c, want, want).pass);
  expect_rejected(compare_outcomes(c, want, f32(Shape{2, 2}, {0, 0, 10, 0})), "expected 20");
}

TEST(CompareRules, SingleGpuRowIsOneRoundingNotTheSumBound) {
  // (1 + 2^-23) + -1 is exactly 2^-23; the any-order bound for two terms (about 2^-23 here,
  // from the cancelling magnitudes) would also take 0.
  const Case c = scatter(Op::kTensorScatterAdd, Semantics::kTfGpu, f32(Shape{1}, {1.0f + 0x1p-23f}),
                         Tensor::from_values<int32_t>(Shape{1, 1}, {0}), f32(Shape{1}, {-1.0f}));
  const Tensor want = f32(Shape{1}, {0x1p-23f});
  EXPECT_TRUE(compare_outcomes(c, want, want).pass);
  expect_rejected(compare_outcomes(c, want, f32(Shape{1}, {0.0f})), "expected");
}

TEST(CompareRules, SummationBoundIsTight) {
  // 1 + 1e8 - 1e8 (float32, tf-gpu): exact 1, bound 2u(1 + 2e8) / (1 - 2u) ~ 23.84.
  const Case c =
      scatter(Op::kTensorScatterAdd, Semantics::kTfGpu, f32(Shape{1}, {1}),
              Tensor::from_values<int32_t>(Shape{2, 1}, {0, 0}), f32(Shape{2}, {1e8f, -1e8f}));
  const Tensor want = f32(Shape{1}, {0});
  EXPECT_TRUE(compare_outcomes(c, want, f32(Shape{1}, {24})).pass);              // 23 from exact
  expect_rejected(compare_outcomes(c, want, f32(Shape{1}, {26})), "(3 terms)");  // 25
}

TEST(CompareRules, UntouchedAgainstTheStartingTensorNotTheReference) {
  const Case c = scatter(Op::kTensorScatterMax, Semantics::kTfCpu, f32(Shape{3}, {1, 2, 3}),
                         Tensor::from_values<int32_t>(Shape{1, 1}, {0}), f32(Shape{1}, {5}));
  // A reference that wrote 9 to the unaddressed element 2, and a backend that agrees with it.
  expect_rejected(compare_outcomes(c, f32(Shape{3}, {5, 2, 9}), f32(Shape{3}, {5, 2, 9})),
                  "(untouched)");
}

TEST(CompareRules, MinMaxNanOperandsOnlyOperands) {
  const float nan = std::bit_cast<float>(0x7fc00000u);
  const Case c =
      scatter(Op::kTensorScatterMin, Semantics::kTfGpu, f32(Shape{1}, {4}),
              Tensor::from_values<int32_t>(Shape{2, 1}, {0, 0}), f32(Shape{2}, {nan, 3}));
  EXPECT_TRUE(compare_outcomes(c, f32(Shape{1}, {3}), f32(Shape{1}, {nan})).pass);
  expect_rejected(
      compare_outcomes(c, f32(Shape{1}, {3}), f32(Shape{1}, {std::bit_cast<float>(0x7fc00002u)})),
      "one of {");
}

// A NaN among the operands does not make every operand right: only what a sequence of steps
// returns. min of [1] with updates [nan, 5, -3] on tf-cpu: -3 (TensorFlow's) or the NaN, never 5,
// which is max's answer; on tf-gpu an order exists that returns 5 (nan first, then -3, then 5),
// but none returns the starting 1.
TEST(CompareRules, MinMaxNanOperandsOnlyWhatTheReductionReturns) {
  const float nan = std::bit_cast<float>(0x7fc00000u);
  auto c = [&](Semantics sem) {
    return scatter(Op::kTensorScatterMin, sem, f32(Shape{1}, {1}),
                   Tensor::from_values<int32_t>(Shape{3, 1}, {0, 0, 0}),
                   f32(Shape{3}, {nan, 5, -3}));
  };
  const Case cpu = c(Semantics::kTfCpu), gpu = c(Semantics::kTfGpu);
  EXPECT_TRUE(compare_outcomes(cpu, f32(Shape{1}, {-3}), f32(Shape{1}, {-3})).pass);
  EXPECT_TRUE(compare_outcomes(cpu, f32(Shape{1}, {-3}), f32(Shape{1}, {nan})).pass);
  expect_rejected(compare_outcomes(cpu, f32(Shape{1}, {-3}), f32(Shape{1}, {5})), "got 5");
  expect_rejected(compare_outcomes(cpu, f32(Shape{1}, {-3}), f32(Shape{1}, {1})), "got 1");
  EXPECT_TRUE(compare_outcomes(gpu, f32(Shape{1}, {-3}), f32(Shape{1}, {5})).pass);
  expect_rejected(compare_outcomes(gpu, f32(Shape{1}, {-3}), f32(Shape{1}, {1})), "got 1");
}

TEST(CompareRules, CpuMinMaxTieIsExact) {
  const Case c = scatter(Op::kTensorScatterMin, Semantics::kTfCpu, f32(Shape{1}, {0.0f}),
                         Tensor::from_values<int32_t>(Shape{1, 1}, {0}), f32(Shape{1}, {-0.0f}));
  expect_rejected(compare_outcomes(c, f32(Shape{1}, {0.0f}), f32(Shape{1}, {-0.0f})), "-0");
}

TEST(CompareRules, CpuDuplicatesInRowOrder) {
  const Case c = scatter(Op::kTensorScatterUpdate, Semantics::kTfCpu, f32(Shape{1}, {0}),
                         Tensor::from_values<int32_t>(Shape{2, 1}, {0, 0}), f32(Shape{2}, {1, 2}));
  expect_rejected(compare_outcomes(c, f32(Shape{1}, {2}), f32(Shape{1}, {1})), "expected 2");
}

TEST(CompareRules, ExpectBlockErrorClass) {
  const Case c = gather_case();
  Expect e;
  e.error_class = ErrorClass::kBadIndex;
  expect_rejected(check_expect(c, e, invalid_argument("x")), "got error invalid_argument");
}

}  // namespace
}  // namespace gscheck::compare
