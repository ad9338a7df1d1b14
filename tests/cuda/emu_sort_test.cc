// cuda-emu's sort_pairs emulates CUB's radix sort bit range: keys are ordered by bits
// [0, end_bit) only and move whole, so a launcher passing too few bits fails on the CPU too.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuda/emu_executor.h"

namespace gscheck::cuda {
namespace {

TEST(EmuSort, OrdersByTheLowEndBitsOnlyAndKeepsWholeKeys) {
  EmuExec ex(1);
  const std::vector<uint32_t> keys = {5, 2, 4, 1, 6};  // low two bits: 1, 2, 0, 1, 2
  const std::vector<uint32_t> values = {0, 1, 2, 3, 4};
  std::vector<uint32_t> k(5), v(5);
  ASSERT_TRUE(ex.sort_pairs(keys.data(), k.data(), values.data(), v.data(), 5, 2).ok());
  EXPECT_EQ(k, (std::vector<uint32_t>{4, 5, 1, 2, 6}));  // stable within equal low bits
  EXPECT_EQ(v, (std::vector<uint32_t>{2, 0, 3, 1, 4}));
  ASSERT_TRUE(ex.sort_pairs(keys.data(), k.data(), values.data(), v.data(), 5, 32).ok());
  EXPECT_EQ(k, (std::vector<uint32_t>{1, 2, 4, 5, 6}));
}

TEST(EmuSort, SentinelLosesItsTopBitWhenEndBitIsShort) {
  // Keys in [0, 4] need 3 bits; with 2 the sentinel 4 sorts as 0, before the real rows.
  EmuExec ex(1);
  const std::vector<uint64_t> keys = {4, 1, 3};
  const std::vector<uint64_t> values = {0, 1, 2};
  std::vector<uint64_t> k(3), v(3);
  ASSERT_TRUE(ex.sort_pairs(keys.data(), k.data(), values.data(), v.data(), 3, 3).ok());
  EXPECT_EQ(k, (std::vector<uint64_t>{1, 3, 4}));
  ASSERT_TRUE(ex.sort_pairs(keys.data(), k.data(), values.data(), v.data(), 3, 2).ok());
  EXPECT_EQ(k, (std::vector<uint64_t>{4, 1, 3}));
}

TEST(EmuSort, EndBitOutsideTheKeyIsAnError) {
  EmuExec ex(1);
  uint32_t k = 0, v = 0, ko = 0, vo = 0;
  EXPECT_FALSE(ex.sort_pairs(&k, &ko, &v, &vo, 1, 33).ok());
  EXPECT_FALSE(ex.sort_pairs(&k, &ko, &v, &vo, 1, -1).ok());
}

}  // namespace
}  // namespace gscheck::cuda
