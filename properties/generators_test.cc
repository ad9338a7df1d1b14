// Tests of the generators themselves: sample_cases is deterministic and honours its filters,
// every invalid case is rejected by the reference, and shrinking keeps a case's class.
#include "properties/generators.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "properties/model.h"
#include "properties/sample.h"
#include "reference/reference.h"

namespace gscheck::gen {
namespace {

TEST(SampleCases, SameSeedSameCasesAndNamesRecordSeedAndPosition) {
  SampleOptions o;
  o.seed = 1234;
  o.count = 200;
  const std::vector<Case> a = sample_cases(o), b = sample_cases(o);
  ASSERT_EQ(a.size(), 200u);
  ASSERT_EQ(b.size(), 200u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(describe(a[i]), describe(b[i]));
    EXPECT_EQ(
        a[i].name,
        "sweep/1234/" + std::to_string(i) + "/" + std::string(op_name(a[i].op)) +
            (large_case(1234, static_cast<int64_t>(i), kDefaultLargeFraction) ? "/large" : "") +
            (a[i].api == Api::kKernel ? "/kernel" : ""));
    EXPECT_TRUE(check_well_formed(a[i]).ok()) << describe(a[i]);
  }
  o.seed = 1235;
  const std::vector<Case> c = sample_cases(o);
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i)
    same += describe(a[i]).substr(a[i].name.size()) == describe(c[i]).substr(c[i].name.size());
  EXPECT_LT(same, 20);
}

TEST(SampleCases, DrawsBothApiLevelsOrTheOneAskedFor) {
  SampleOptions o;
  o.seed = 5;
  o.count = 400;
  int kernel = 0;
  for (const Case& c : sample_cases(o)) {
    kernel += c.api == Api::kKernel;
    EXPECT_TRUE(check_well_formed(c).ok()) << c.name;  // kernel gathers have an axis
  }
  EXPECT_GT(kernel, 60);  // about a quarter
  EXPECT_LT(kernel, 150);
  o.apis = {Api::kKernel};
  for (const Case& c : sample_cases(o)) {
    EXPECT_EQ(c.api, Api::kKernel) << c.name;
    EXPECT_TRUE(check_well_formed(c).ok()) << c.name;
  }
  o.apis = {Api::kPython};
  for (const Case& c : sample_cases(o)) EXPECT_EQ(c.api, Api::kPython) << c.name;
}

TEST(SampleCases, HonoursFilters) {
  SampleOptions o;
  o.seed = 9;
  o.count = 300;
  o.ops = {Op::kGatherNd, Op::kTensorScatterAdd};
  o.dtypes = {DType::kFloat32, DType::kInt64};
  o.index_dtypes = {DType::kInt64};
  o.semantics = {Semantics::kTfGpu};
  o.invalid_fraction = 0.0;
  for (const Case& c : sample_cases(o)) {
    EXPECT_TRUE(c.op == Op::kGatherNd || c.op == Op::kTensorScatterAdd);
    const DType dt = c.params ? c.params->dtype() : c.updates->dtype();
    EXPECT_TRUE(dt == DType::kFloat32 || dt == DType::kInt64);
    EXPECT_EQ(c.indices->dtype(), DType::kInt64);
    EXPECT_EQ(c.semantics, Semantics::kTfGpu);
    EXPECT_TRUE(props::geometry(c).has_value()) << describe(c);
  }
}

TEST(SampleCases, InvalidFractionIsRoughlyHonoured) {
  SampleOptions o;
  o.seed = 5;
  o.count = 1000;
  o.invalid_fraction = 0.3;
  int invalid = 0;
  for (const Case& c : sample_cases(o)) invalid += !props::geometry(c).has_value();
  EXPECT_GT(invalid, 200);
  EXPECT_LT(invalid, 400);
}

TEST(InvalidCases, EveryRuleIsRejectedByTheReference) {
  const rc::Gen<Case> g = invalid_cases();
  rc::Random random(77);
  std::map<std::string, int> seen;
  for (int i = 0; i < 3000; ++i) {
    const Case c = g(random.split(), 50).value();
    seen[c.name]++;
    const Outcome out = reference::run(c);
    EXPECT_FALSE(out.ok()) << describe(c);
    if (!out.ok()) {
      EXPECT_NE(out.error().cls, ErrorClass::kBadIndex) << describe(c);
    }
  }
  size_t rules = 0;
  for (Op op : kAllOps) rules += invalid_rules_for(op).size();
  EXPECT_EQ(seen.size(), rules) << "some rule was never drawn";
}

// Every shrink of a case keeps its op, dtypes, semantics and strategy, and an out-of-range
// strategy keeps an out-of-range index.
TEST(Shrinking, KeepsTheCaseClass) {
  Constraints k;
  k.strategies = {IndexStrategy::kBoundary, IndexStrategy::kSparseOob};
  k.allow_empty = false;
  const rc::Gen<Case> g = cases(k);
  rc::Random random(3);
  int checked = 0;
  for (int i = 0; i < 40; ++i) {
    const rc::Shrinkable<Case> s = g(random.split(), 60);
    const Case c = s.value();
    const props::CaseClass cls = props::classify(c);
    auto shrinks = s.shrinks();
    for (int n = 0; n < 30; ++n) {
      const rc::Maybe<rc::Shrinkable<Case>> next = shrinks.next();
      if (!next) break;
      const Case d = next->value();
      EXPECT_EQ(d.name, c.name);
      EXPECT_EQ(d.op, c.op);
      EXPECT_EQ(d.semantics, c.semantics);
      EXPECT_EQ(d.indices->dtype(), c.indices->dtype());
      EXPECT_EQ(d.bad_indices_policy, c.bad_indices_policy);
      if (cls.out_of_bounds && d.indices->num_elements() > 0) {
        EXPECT_TRUE(props::classify(d).out_of_bounds) << describe(c) << " -> " << describe(d);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// Shrinking moves in-range indices toward a boundary of their dimension, not toward 0 alone.
TEST(Shrinking, MovesIndicesTowardBothBoundaries) {
  Constraints k;
  k.ops = {Op::kGather};
  k.strategies = {IndexStrategy::kInRange};
  k.allow_empty = false;
  const rc::Gen<Case> g = cases(k);
  rc::Random random(4);
  int at_low = 0, at_high = 0;
  for (int i = 0; i < 200; ++i) {
    // Size 0 is what a fully shrunk case looks like: every offset 0.
    const Case c = g(random.split(), 0).value();
    const auto geo = props::geometry(c);
    ASSERT_TRUE(geo.has_value());
    for (int64_t j = 0; j < c.indices->num_elements(); ++j) {
      const int64_t v = c.indices->int_at(j), n = geo->column_dims[0];
      EXPECT_TRUE(v == 0 || v == n - 1) << describe(c);
      at_low += v == 0 && n > 1;
      at_high += v == n - 1 && n > 1;
    }
  }
  EXPECT_GT(at_low, 0);
  EXPECT_GT(at_high, 0);
}

}  // namespace
}  // namespace gscheck::gen
