#include "core/tensor.h"

#include <gtest/gtest.h>

#include <cstring>

namespace gscheck {
namespace {

TEST(Tensor, ZerosAreZeroAndAligned) {
  auto t = Tensor::zeros(DType::kFloat32, Shape{3, 5});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_elements(), 15);
  EXPECT_EQ(t->byte_size(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(t->data_as<float>()[i], 0.0f);
}

TEST(Tensor, BadShapesAndBudgetAreErrorsNotCrashes) {
  auto neg = Tensor::zeros(DType::kInt32, Shape{2, -1});
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.error().cls, ErrorClass::kInvalidArgument);
  auto huge = Tensor::zeros(DType::kFloat64, Shape{int64_t{1} << 40});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().cls, ErrorClass::kResourceExhausted);
  auto overflow = Tensor::zeros(DType::kFloat64, Shape{int64_t{1} << 61, 8});
  ASSERT_FALSE(overflow.ok());
}

TEST(Tensor, CopyIsDeepAndBitEqualSeesNegativeZero) {
  Tensor a = Tensor::from_values<float>(Shape{2}, {1.0f, 0.0f});
  Tensor b = a;
  EXPECT_TRUE(a.bit_equal(b));
  b.data_as<float>()[1] = -0.0f;
  EXPECT_FALSE(a.bit_equal(b));
  EXPECT_EQ(a.data_as<float>()[1], 0.0f);
}

TEST(Tensor, StringsAndIntAt) {
  Tensor s = Tensor::from_values<std::string>(Shape{2}, {"a", "bc"});
  EXPECT_EQ(s.strings()[1], "bc");
  Tensor i = Tensor::from_values<int16_t>(Shape{3}, {-1, 7, 300});
  EXPECT_EQ(i.int_at(0), -1);
  EXPECT_EQ(i.int_at(2), 300);
}

}  // namespace
}  // namespace gscheck
