#include "harness/shrink.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gscheck::harness {
namespace {

bool has_index(const Case& c, int64_t v) {
  for (int64_t i = 0; i < c.indices->num_elements(); ++i)
    if (c.indices->int_at(i) == v) return true;
  return false;
}

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.int_at(i));
  return v;
}

Case scatter_case() {
  Case c;
  c.op = Op::kTensorScatterAdd;
  c.tensor = Tensor::from_values<float>({5, 2}, std::vector<float>(10, 0.0f));
  c.indices = Tensor::from_values<int32_t>({2, 3, 1}, {0, 1, 2, 3, 4, 1});
  std::vector<float> upd(12);
  for (int i = 0; i < 12; ++i) upd[static_cast<std::size_t>(i)] = static_cast<float>(i);
  c.updates = Tensor::from_values<float>({2, 3, 2}, upd);
  return c;
}

TEST(Shrink, ScatterKeepsTheOneRowThatMattersWithItsUpdates) {
  // The failure needs index 3 in bounds and a non-empty slice.
  const Shrunk s = shrink_case(scatter_case(),
                               [](const Case& c) {
                                 return has_index(c, 3) && c.tensor->shape().dim(0) > 3 &&
                                        c.updates->num_elements() > 0;
                               },
                               {});
  const Case& small = s.c;
  // One index vector, no row dims left.
  EXPECT_EQ(small.indices->shape(), Shape({1}));
  EXPECT_EQ(small.indices->int_at(0), 3);
  // Row 3 of the flattened updates came along with its index row; the slice dim is shared with
  // the tensor, so both lost their second column together, then the dim itself (the data kept
  // keeps its values).
  ASSERT_EQ(small.updates->shape(), Shape({}));
  EXPECT_EQ(small.updates->data_as<float>()[0], 6.0f);
  EXPECT_EQ(small.tensor->shape(), Shape({4}));
  EXPECT_FALSE(s.stats.limited);
  EXPECT_GT(s.stats.kept, 0);
  EXPECT_GE(s.stats.tried, s.stats.kept);
}

TEST(Shrink, GatherStringsFlattenAndDropRows) {
  Case c;
  c.op = Op::kGather;
  c.params = Tensor::from_values<std::string>({3}, {"a", "b", "c"});
  c.indices = Tensor::from_values<int64_t>({2, 2}, {0, 9, 2, 9});
  const Case small = shrink_case(c, [](const Case& s) { return has_index(s, 9); }, {}).c;
  EXPECT_EQ(small.indices->shape(), Shape({}));
  EXPECT_EQ(small.indices->int_at(0), 9);
  // The indexed dimension only loses its last elements (the index 9 never needed them).
  EXPECT_EQ(small.params->shape(), Shape({0}));
}

TEST(Shrink, EveryRowKeptWhenEveryRowMatters) {
  const Case c = scatter_case();
  const std::vector<int64_t> all = ints(*c.indices);
  const Case same = shrink_case(c,
                                [&](const Case& s) {
                                  return ints(*s.indices) == all && s.updates->num_elements() == 12;
                                },
                                {})
                        .c;
  // Flattened, every row kept, in order, and the data as it was.
  EXPECT_EQ(same.indices->shape(), Shape({6, 1}));
  EXPECT_EQ(same.updates->shape(), Shape({6, 2}));
  EXPECT_EQ(same.updates->data_as<float>()[11], 11.0f);
}

TEST(Shrink, GatherAxisFollowsTheDimsRemovedBeforeIt) {
  Case c;
  c.op = Op::kGather;
  std::vector<float> p(24);
  for (int i = 0; i < 24; ++i) p[static_cast<std::size_t>(i)] = static_cast<float>(i);
  c.params = Tensor::from_values<float>({2, 3, 4}, p);
  c.axis = Tensor::from_values<int32_t>({}, {2});
  c.indices = Tensor::from_values<int32_t>({2, 2}, {0, 3, 1, 2});
  auto axis_dim = [](const Case& s) {
    const int64_t a =
        s.axis->int_at(0) < 0 ? s.axis->int_at(0) + s.params->rank() : s.axis->int_at(0);
    return s.params->shape().dim(static_cast<int>(a));
  };
  const Shrunk s =
      shrink_case(c,
                  [&](const Case& t) {
                    return has_index(t, 3) && axis_dim(t) > 3 && t.params->num_elements() > 0;
                  },
                  {});
  EXPECT_EQ(s.c.params->shape(), Shape({4}));
  EXPECT_EQ(s.c.axis->int_at(0), 0);
  EXPECT_EQ(ints(*s.c.indices), std::vector<int64_t>({3}));
  // params[0, 0, :] are the elements kept, with their values.
  EXPECT_EQ(s.c.params->data_as<float>()[3], 3.0f);

  // A negative axis counts from the end and needs no change.
  c.axis = Tensor::from_values<int64_t>({}, {-1});
  const Case neg =
      shrink_case(c,
                  [&](const Case& t) {
                    return has_index(t, 3) && axis_dim(t) > 3 && t.params->num_elements() > 0;
                  },
                  {})
          .c;
  EXPECT_EQ(neg.params->shape(), Shape({4}));
  EXPECT_EQ(neg.axis->int_at(0), -1);
}

TEST(Shrink, GatherNdKeepsBatchDimsLinedUp) {
  Case c;
  c.op = Op::kGatherNd;
  c.batch_dims = 1;
  c.params = Tensor::from_values<int32_t>({3, 4, 2}, std::vector<int32_t>(24, 7));
  c.indices =
      Tensor::from_values<int64_t>({3, 5, 1}, {0, 1, 2, 3, 0, 1, 1, 1, 1, 1, 2, 2, 3, 2, 2});
  const Case small = shrink_case(c,
                                 [](const Case& s) {
                                   return s.params->shape().dim(0) == s.indices->shape().dim(0) &&
                                          has_index(s, 3) && s.params->shape().dim(1) > 3;
                                 },
                                 {})
                         .c;
  EXPECT_EQ(small.batch_dims, 1);
  EXPECT_EQ(small.indices->shape(), Shape({1, 1}));
  EXPECT_EQ(small.indices->int_at(0), 3);
  // Batch dims are erased together and never squeezed (batch_dims would name other dims).
  EXPECT_EQ(small.params->shape(), Shape({1, 4, 0}));
}

TEST(Shrink, ScatterNdShapeVectorMovesWithUpdates) {
  Case c;
  c.op = Op::kScatterNd;
  c.indices = Tensor::from_values<int32_t>({3, 2}, {0, 1, 3, 2, 1, 1});
  c.updates = Tensor::from_values<float>({3, 5}, std::vector<float>(15, 1.0f));
  c.shape = Tensor::from_values<int64_t>({3}, {4, 4, 5});
  const Case small = shrink_case(c,
                                 [](const Case& s) {
                                   return has_index(s, 3) && s.shape->int_at(0) > 3 &&
                                          s.updates->num_elements() > 0;
                                 },
                                 {})
                         .c;
  EXPECT_EQ(ints(*small.indices), std::vector<int64_t>({3, 0}));
  EXPECT_EQ(small.indices->shape(), Shape({2}));
  EXPECT_EQ(small.updates->shape(), Shape({}));
  EXPECT_EQ(ints(*small.shape), std::vector<int64_t>({4, 0}));
}

TEST(Shrink, MismatchedShapesOnlyShrinkIndexValues) {
  Case c = scatter_case();
  c.updates = Tensor::from_values<float>({3, 2, 2}, std::vector<float>(12, 1.0f));
  for (const ShrinkStep& s : shrink_steps(c)) EXPECT_EQ(s.kind, ShrinkStep::kIndexValue);
  const Case kept = shrink_case(c, [](const Case&) { return true; }, {}).c;
  EXPECT_EQ(kept.updates->shape(), Shape({3, 2, 2}));
  EXPECT_EQ(ints(*kept.indices), std::vector<int64_t>(6, 0));
}

TEST(Shrink, StepsThatDoNotFitAreRefused) {
  const Case c = scatter_case();
  EXPECT_FALSE(apply_step(c, {ShrinkStep::kErase, 99, 0, 1}));
  EXPECT_FALSE(apply_step(c, {ShrinkStep::kErase, 0, 1, 9}));
  EXPECT_FALSE(apply_step(c, {ShrinkStep::kIndexValue, 0, 0, 0, 6, 0}));
  // Group 2 is the tensor's indexed dim: only its last element may go.
  EXPECT_FALSE(apply_step(c, {ShrinkStep::kErase, 2, 0, 1}));
  EXPECT_TRUE(apply_step(c, {ShrinkStep::kTrim, 2, 4, 1}));
}

TEST(Shrink, LimitsStopIt) {
  const Shrunk s = shrink_case(scatter_case(), [](const Case&) { return true; }, {.max_tries = 3});
  EXPECT_EQ(s.stats.tried, 3);
  EXPECT_TRUE(s.stats.limited);
  // Each accepted step is strictly smaller; with no limit, shrinking always ends.
  const Shrunk all = shrink_case(scatter_case(), [](const Case&) { return true; }, {});
  EXPECT_FALSE(all.stats.limited);
  EXPECT_EQ(all.c.indices->num_elements(), 0);
}

}  // namespace
}  // namespace gscheck::harness
