#include "core/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

namespace gscheck {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType dt : kAllDTypes) {
    auto back = dtype_from_name(dtype_name(dt));
    ASSERT_TRUE(back.has_value()) << dtype_name(dt);
    EXPECT_EQ(*back, dt);
  }
  EXPECT_FALSE(dtype_from_name("float8").has_value());
}

TEST(DType, SizesMatchCxxTypes) {
  EXPECT_EQ(dtype_size(DType::kBool), 1u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kComplex128), 16u);
  EXPECT_EQ(dtype_size(DType::kString), 0u);
}

TEST(Float16, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    Float16 h{static_cast<uint16_t>(b)};
    Float16 back = float16_from_float(to_float(h));
    if (std::isnan(to_float(h))) {
      EXPECT_TRUE(std::isnan(to_float(back)));
    } else {
      EXPECT_EQ(back.bits, h.bits) << std::hex << b;
    }
  }
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(float16_from_float(1.0f).bits, 0x3c00);
  EXPECT_EQ(float16_from_float(65504.0f).bits, 0x7bff);
  EXPECT_EQ(float16_from_float(65520.0f).bits, 0x7c00);               // halfway to inf rounds up
  EXPECT_EQ(float16_from_float(1.0f + 1.0f / 2048).bits, 0x3c00);     // tie to even
  EXPECT_EQ(float16_from_float(1.0f + 3.0f / 2048).bits, 0x3c02);     // tie to even, upward
  EXPECT_EQ(float16_from_float(std::ldexp(1.0f, -25)).bits, 0x0000);  // tie to even zero
  EXPECT_EQ(float16_from_float(std::ldexp(1.5f, -25)).bits, 0x0001);
  EXPECT_EQ(float16_from_float(-0.0f).bits, 0x8000);
}

TEST(BFloat16, RoundsAndKeepsNaN) {
  EXPECT_EQ(bfloat16_from_float(1.0f).bits, 0x3f80);
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80);  // tie, even
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82);  // tie, up
  EXPECT_EQ(bfloat16_from_float(std::numeric_limits<float>::quiet_NaN()).bits, 0x7fc0);
  EXPECT_EQ(to_float(BFloat16{0x3f80}), 1.0f);
}

TEST(DType, VisitMapsEveryDtypeToItsType) {
  for (DType dt : kAllDTypes) {
    DType back = visit_dtype(dt, [](auto tag) { return dtype_of<typename decltype(tag)::type>(); });
    EXPECT_EQ(back, dt);
  }
}

}  // namespace
}  // namespace gscheck
