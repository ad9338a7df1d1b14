#include "fuzz/shrink.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gscheck::fuzz {
namespace {

bool has_index(const Case& c, int64_t v) {
  for (int64_t i = 0; i < c.indices->num_elements(); ++i)
    if (c.indices->int_at(i) == v) return true;
  return false;
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

TEST(FuzzShrink, ScatterKeepsTheOneRowThatMatters) {
  const Case small = shrink_case(scatter_case(), [](const Case& c) { return has_index(c, 3); });
  EXPECT_EQ(small.indices->shape(), Shape({1, 1}));
  EXPECT_EQ(small.indices->int_at(0), 3);
  // Row 3 of the flattened updates came along with its index row.
  ASSERT_EQ(small.updates->shape(), Shape({1, 2}));
  EXPECT_EQ(small.updates->data_as<float>()[0], 6.0f);
  EXPECT_EQ(small.updates->data_as<float>()[1], 7.0f);
  EXPECT_EQ(small.tensor->shape(), Shape({5, 2}));
}

TEST(FuzzShrink, GatherStringsFlattenAndDrop) {
  Case c;
  c.op = Op::kGather;
  c.params = Tensor::from_values<std::string>({3}, {"a", "b", "c"});
  c.indices = Tensor::from_values<int64_t>({2, 2}, {0, 9, 2, 9});
  const Case small = shrink_case(c, [](const Case& s) { return has_index(s, 9); });
  EXPECT_EQ(small.indices->shape(), Shape({1}));
  EXPECT_EQ(small.indices->int_at(0), 9);
  EXPECT_EQ(small.params->strings(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(FuzzShrink, NothingIsDroppedWhenEveryRowMatters) {
  const Case c = scatter_case();
  const Case same = shrink_case(c, [](const Case& s) { return s.indices->num_elements() == 6; });
  // Flattened, every row kept, in order.
  EXPECT_EQ(same.indices->shape(), Shape({6, 1}));
  EXPECT_EQ(same.updates->shape(), Shape({6, 2}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(same.indices->int_at(i), c.indices->int_at(i));
  EXPECT_EQ(same.updates->data_as<float>()[11], 11.0f);
}

TEST(FuzzShrink, MismatchedShapesAndBatchDimsAreNotFlattened) {
  Case c = scatter_case();
  c.updates = Tensor::from_values<float>({3, 2, 2}, std::vector<float>(12, 1.0f));
  EXPECT_FALSE(flatten_rows(c).has_value());
  EXPECT_EQ(row_count(c), -1);

  Case g;
  g.op = Op::kGatherNd;
  g.batch_dims = 1;
  g.params = Tensor::from_values<int32_t>({2, 2}, {1, 2, 3, 4});
  g.indices = Tensor::from_values<int32_t>({2, 1, 1}, {0, 1});
  EXPECT_FALSE(flatten_rows(g).has_value());
  EXPECT_EQ(row_count(g), -1);
  const Case kept = shrink_case(g, [](const Case&) { return true; });
  EXPECT_TRUE(kept.indices->bit_equal(*g.indices));
}

TEST(FuzzShrink, DropRowRemovesExactlyThatRow) {
  const Case flat = *flatten_rows(scatter_case());
  ASSERT_EQ(row_count(flat), 6);
  const Case d = drop_row(flat, 0);
  EXPECT_EQ(row_count(d), 5);
  EXPECT_EQ(d.indices->int_at(0), 1);
  EXPECT_EQ(d.updates->data_as<float>()[0], 2.0f);
  const Case last = drop_row(flat, 5);
  EXPECT_EQ(last.indices->int_at(4), 4);
  EXPECT_EQ(last.updates->data_as<float>()[9], 9.0f);
}

}  // namespace
}  // namespace gscheck::fuzz
