#include <gtest/gtest.h>

#include <cstring>

#include "core/tensor.h"

namespace gscheck {
namespace {

// Large buffers are recycled; zeros() must still return zeros when it gets a dirty block.
TEST(TensorBufferCache, ReusedLargeBufferIsZeroedAgain) {
  const Shape shape{int64_t{1} << 19};  // 2 MiB of float32
  const std::byte* first = nullptr;
  {
    auto dirty = Tensor::uninitialized(DType::kFloat32, shape);
    ASSERT_TRUE(dirty.ok());
    first = dirty->data();
    std::memset(dirty->data(), 0x7f, dirty->byte_size());
  }
  auto again = Tensor::zeros(DType::kFloat32, shape);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);  // the freed block came back
  for (int64_t i = 0; i < again->num_elements(); ++i)
    ASSERT_EQ(again->data_as<float>()[i], 0.0f) << i;
}

TEST(TensorBufferCache, CopiesOfLargeTensorsAreDeep) {
  auto a = Tensor::zeros(DType::kInt32, Shape{int64_t{1} << 20});
  ASSERT_TRUE(a.ok());
  a->data_as<int32_t>()[12345] = 7;
  Tensor b = *a;
  EXPECT_NE(b.data(), a->data());
  EXPECT_TRUE(b.bit_equal(*a));
  b.data_as<int32_t>()[12345] = 8;
  EXPECT_EQ(a->data_as<int32_t>()[12345], 7);
}

}  // namespace
}  // namespace gscheck
