#include "core/shape.h"

#include <gtest/gtest.h>

namespace gscheck {
namespace {

TEST(Shape, DebugStringMatchesTensorFlow) {
  EXPECT_EQ(Shape({}).to_string(), "[]");
  EXPECT_EQ(Shape({2, 3}).to_string(), "[2,3]");
  EXPECT_EQ(Shape({5, 0}).to_string(), "[5,0]");
}

TEST(Shape, ElementCountIsOverflowChecked) {
  EXPECT_EQ(Shape({}).num_elements(), 1);
  EXPECT_EQ(Shape({2, 0, 7}).num_elements(), 0);
  EXPECT_EQ(Shape({0, int64_t{1} << 62, int64_t{1} << 62}).num_elements(), 0);
  EXPECT_FALSE(Shape({int64_t{1} << 62, int64_t{1} << 62, 0}).num_elements().has_value());
  EXPECT_FALSE(Shape({3, -1}).num_elements().has_value());
  EXPECT_EQ(Shape({2, 3, 4}).num_elements(1, 3), 12);
}

}  // namespace
}  // namespace gscheck
