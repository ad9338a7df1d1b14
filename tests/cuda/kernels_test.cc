// Unit tests of the portable kernel pieces: vector widths, slice-size paths, offset selection,
// atomics under several emulator threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda/emu_executor.h"
#include "cuda/gather_dispatch.cuh"
#include "cuda/gather_launch.cuh"
#include "cuda/portability.h"
#include "cuda/slice_copy.cuh"

namespace gscheck::cuda {
namespace {

TEST(CopyUnit, WidestUnitOnWhichBothAddressesAgree) {
  EXPECT_EQ(copy_unit_bytes(0x1000, 0x2000), 16u);
  EXPECT_EQ(copy_unit_bytes(0x1003, 0x2003), 16u);  // equal misalignment: head, then 16 B
  EXPECT_EQ(copy_unit_bytes(0x1008, 0x2000), 8u);
  EXPECT_EQ(copy_unit_bytes(0x1004, 0x2000), 4u);
  EXPECT_EQ(copy_unit_bytes(0x1002, 0x200c), 2u);
  EXPECT_EQ(copy_unit_bytes(0x1001, 0x2000), 1u);
}

TEST(RowMapping, PathFollowsSliceBytes) {
  EXPECT_EQ(choose_row_mapping(4).group, 0u);  // per element
  EXPECT_EQ(choose_row_mapping(15).group, 0u);
  EXPECT_EQ(choose_row_mapping(16).group, 2u);  // sub-warp
  EXPECT_EQ(choose_row_mapping(64).group, 4u);
  EXPECT_EQ(choose_row_mapping(100).group, 8u);
  EXPECT_EQ(choose_row_mapping(512).group, 32u);
  EXPECT_EQ(choose_row_mapping(513).group, 32u);  // warp
  EXPECT_EQ(choose_row_mapping(4096).group, 32u);
  EXPECT_EQ(choose_row_mapping(4097).group, GatherPolicy::kBlockThreads);  // block
}

TEST(FastDiv, EqualsIntegerDivisionAcrossDivisorsAndDividends) {
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 4100; ++d) divisors.push_back(d);
  for (uint32_t d : {65535u, 65536u, 65537u, 1000003u, (1u << 30) + 1, (1u << 31) - 1, 1u << 31,
                     0xFFFFFFFEu, 0xFFFFFFFFu})
    divisors.push_back(d);
  uint64_t x = 0x243F6A8885A308D3ull;
  for (uint32_t d : divisors) {
    const FastDivU32 f(d);
    std::vector<uint32_t> ns = {0,         1,           d - 1,       d,           d + 1,
                                2 * d - 1, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
    for (int k = 0; k < 64; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      ns.push_back(static_cast<uint32_t>(x >> 32));
    }
    for (uint32_t n : ns) ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
  }
  EXPECT_EQ(DivBy<uint64_t>(7).div(uint64_t{1} << 40), (uint64_t{1} << 40) / 7);
}

TEST(OffsetType, ThirtyTwoBitsOnlyWhenEveryTensorIsBelow2Pow31) {
  const int64_t small[] = {1, (int64_t{1} << 31) - 1, 0};
  const int64_t big_out[] = {1, 5, int64_t{1} << 31};
  const int64_t big_params[] = {int64_t{3} << 31, 1};
  EXPECT_TRUE(fits_32bit_offsets(small, 3));
  EXPECT_FALSE(fits_32bit_offsets(big_out, 3));
  EXPECT_FALSE(fits_32bit_offsets(big_params, 2));
  int chosen = 0;
  Status st = with_offset_type(big_out, [&](auto off) -> Status {
    chosen = sizeof(off);
    return {};
  });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(chosen, 8);
  st = with_offset_type(small, [&](auto off) -> Status {
    chosen = sizeof(off);
    return {};
  });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(chosen, 4);
}

// Every width (16/8/4/2/1 B units, from the relative misalignment), every head/tail split and
// lane count must write each byte of the slice exactly once and nothing around it.
TEST(SliceCopy, EveryWidthMisalignmentAndGroup) {
  alignas(64) uint8_t src[512];
  alignas(64) uint8_t dst[512];
  for (int i = 0; i < 512; ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  int widths_seen[17] = {};
  for (int so = 0; so < 16; ++so) {
    for (int dof = 0; dof < 16; ++dof) {
      for (uint64_t n : {0, 1, 3, 15, 16, 17, 31, 64, 100, 257}) {
        for (uint32_t group : {1u, 2u, 4u, 32u}) {
          std::memset(dst, 0xEE, sizeof(dst));
          const uint8_t* s = src + 64 + so;
          uint8_t* d = dst + 64 + dof;
          ++widths_seen[copy_unit_bytes(reinterpret_cast<uintptr_t>(s),
                                        reinterpret_cast<uintptr_t>(d))];
          for (uint32_t lane = 0; lane < group; ++lane) copy_slice(d, s, n, lane, group);
          ASSERT_EQ(std::memcmp(d, s, n), 0) << "so=" << so << " do=" << dof << " n=" << n;
          for (int i = 0; i < 64 + dof; ++i) ASSERT_EQ(dst[i], 0xEE);
          for (uint64_t i = 64 + dof + n; i < sizeof(dst); ++i) ASSERT_EQ(dst[i], 0xEE);
        }
      }
    }
  }
  for (int w : {1, 2, 4, 8, 16}) EXPECT_GT(widths_seen[w], 0) << "width " << w;
}

TEST(SliceCopy, ZeroSliceWritesExactlyTheSlice) {
  alignas(64) uint8_t dst[256];
  for (int off = 0; off < 16; ++off) {
    for (uint64_t n : {0, 1, 5, 16, 33, 100}) {
      for (uint32_t group : {1u, 4u, 32u}) {
        std::memset(dst, 0xEE, sizeof(dst));
        for (uint32_t lane = 0; lane < group; ++lane) zero_slice(dst + 32 + off, n, lane, group);
        for (uint64_t i = 0; i < sizeof(dst); ++i) {
          const bool inside = i >= static_cast<uint64_t>(32 + off) && i < 32 + off + n;
          ASSERT_EQ(dst[i], inside ? 0 : 0xEE) << "off=" << off << " n=" << n << " i=" << i;
        }
      }
    }
  }
}

// A map reading row (row * 3 + 1) % src_rows, or bad for rows marked in `bad_every`.
template <class Off>
struct StrideMap {
  Off src_rows;
  Off bad_every;
  int64_t* d_bad;
  GSCHECK_HD bool source(Off row, Off* src) const {
    if (bad_every && row % bad_every == 0) {
      record_bad_position(d_bad, static_cast<int64_t>(row));
      return false;
    }
    *src = (row * 3 + 1) % src_rows;
    return true;
  }
};

template <class Off>
void check_gather_paths(uint32_t elem, int src_misalign, int dst_misalign) {
  EmuExec ex(3, /*max_blocks=*/3);  // few blocks: every grid-stride loop wraps
  for (uint64_t slice_elems : {1, 3, 4, 16, 40, 130, 600}) {
    const uint64_t slice_bytes = slice_elems * elem;
    const uint64_t src_rows = 7, rows = 23;
    std::vector<uint8_t> params(src_rows * slice_bytes + 64), out(rows * slice_bytes + 64, 0xEE);
    for (size_t i = 0; i < params.size(); ++i) params[i] = static_cast<uint8_t>(i * 13 + 5);
    int64_t bad[2] = {INT64_MAX, -1};
    StrideMap<Off> map{static_cast<Off>(src_rows), 5, bad};
    const uint8_t* p = params.data() + src_misalign;
    uint8_t* o = out.data() + dst_misalign;
    ASSERT_TRUE(launch_gather<Off>(ex, map, p, o, rows, slice_elems, elem).ok());
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t b = 0; b < slice_bytes; ++b) {
        const uint8_t want = r % 5 == 0 ? 0 : p[((r * 3 + 1) % src_rows) * slice_bytes + b];
        ASSERT_EQ(o[r * slice_bytes + b], want)
            << "elem=" << elem << " slice=" << slice_elems << " row=" << r << " byte=" << b;
      }
    }
    EXPECT_EQ(o[rows * slice_bytes], 0xEE);
    EXPECT_EQ(bad[0], 0);
    EXPECT_EQ(bad[1], 20);
  }
}

// Few rows over 4 KB: launch_gather splits each row into pieces of whole 16-byte units (16 KB:
// 4 of 4 KB) so the grid fills the machine; every byte must still land, bad rows zeroed. Rows of
// an odd number of units (16,400 and 12,304 bytes) cannot be split evenly and stay whole.
TEST(GatherPaths, FewLongRowsAreSplitIntoPieces) {
  EmuExec ex(3, /*max_blocks=*/64);
  auto aligned = [](std::vector<uint8_t>& v) {
    return v.data() + ((16 - reinterpret_cast<uintptr_t>(v.data()) % 16) % 16);
  };
  for (uint64_t slice_bytes : {16384, 16400, 12304, 24576}) {
    for (uint64_t rows : {1, 2, 3, 6}) {
      const uint64_t src_rows = 5;
      std::vector<uint8_t> params_buf(src_rows * slice_bytes + 16);
      uint8_t* params = aligned(params_buf);
      for (size_t i = 0; i < src_rows * slice_bytes; ++i)
        params[i] = static_cast<uint8_t>(i * 7 + 3);
      std::vector<uint8_t> out_buf(rows * slice_bytes + 32, 0xEE);
      uint8_t* o = aligned(out_buf);
      int64_t bad[2] = {INT64_MAX, -1};
      StrideMap<uint32_t> map{static_cast<uint32_t>(src_rows), 2, bad};
      ASSERT_TRUE(launch_gather<uint32_t>(ex, map, params, o, rows, slice_bytes / 8, 8).ok());
      for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t b = 0; b < slice_bytes; ++b) {
          const uint8_t want = r % 2 == 0 ? 0 : params[((r * 3 + 1) % src_rows) * slice_bytes + b];
          ASSERT_EQ(o[r * slice_bytes + b], want)
              << "slice=" << slice_bytes << " rows=" << rows << " row=" << r << " byte=" << b;
        }
      }
      EXPECT_EQ(o[rows * slice_bytes], 0xEE);
    }
  }
}

TEST(GatherPaths, EverySlicePathAndElementSize32BitOffsets) {
  for (uint32_t elem : {1u, 2u, 4u, 8u, 16u}) check_gather_paths<uint32_t>(elem, 0, 0);
}

TEST(GatherPaths, SixtyFourBitOffsetKernelsGiveTheSameRows) {
  for (uint32_t elem : {1u, 4u, 16u}) check_gather_paths<uint64_t>(elem, 0, 0);
}

TEST(GatherPaths, MisalignedBasePointersUseNarrowerUnitsOrHeads) {
  // The rows path handles any byte misalignment (per-row unit, scalar head and tail).
  for (int sm : {0, 1, 2, 4, 8}) {
    for (int dm : {0, 3, 8}) check_gather_paths<uint32_t>(1, sm, dm);
  }
}

// Atomics from many blocks on several pool threads must lose no update.
template <class T, class F>
struct HammerKernel {
  T* target;
  F op;
  uint64_t n;
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    for (uint64_t i = t.global(); i < n; i += t.total()) op(target, i);
  }
};
template <class T, class F>
HammerKernel<T, F> hammer(T* target, F op, uint64_t n) {
  return {target, op, n};
}

TEST(Atomics, NoLostUpdatesUnderSeveralEmulatorThreads) {
  EmuExec ex(4, 64);
  ASSERT_GE(ex.threads(), 4);
  const uint64_t n = 1 << 16;
  int32_t i32 = 0;
  ASSERT_TRUE(ex.launch(hammer(
                            &i32, [](int32_t* p, uint64_t) { atomic_add(p, 1); }, n),
                        n, 256)
                  .ok());
  EXPECT_EQ(i32, static_cast<int32_t>(n));
  int64_t i64 = 0;
  ASSERT_TRUE(ex.launch(hammer(
                            &i64, [](int64_t* p, uint64_t) { atomic_add(p, int64_t{-3}); }, n),
                        n, 256)
                  .ok());
  EXPECT_EQ(i64, -3 * static_cast<int64_t>(n));
  float f = 0;  // sums of 1.0 are exact below 2^24
  ASSERT_TRUE(ex.launch(hammer(
                            &f, [](float* p, uint64_t) { atomic_add(p, 1.0f); }, n),
                        n, 256)
                  .ok());
  EXPECT_EQ(f, static_cast<float>(n));
  complex64_t c{0, 0};
  ASSERT_TRUE(ex.launch(hammer(
                            &c,
                            [](complex64_t* p, uint64_t) {
                              atomic_add(p, complex64_t{1.0f, -2.0f});
                            },
                            n),
                        n, 256)
                  .ok());
  EXPECT_EQ(c.re, static_cast<float>(n));
  EXPECT_EQ(c.im, -2.0f * static_cast<float>(n));
  // half2: 1024 adds of 2^-10 to the low half and 2^-9 to the high half, all exact.
  alignas(4) half_t h2[2] = {half_from_f32(0), half_from_f32(0)};
  const half_t a = half_from_f32(1.0f / 1024), b = half_from_f32(1.0f / 512);
  ASSERT_TRUE(ex.launch(hammer(
                            h2, [a, b](half_t* p, uint64_t) { atomic_add2(p, a, b); }, 1024),
                        1024, 64)
                  .ok());
  EXPECT_EQ(to_f32(h2[0]), 1.0f);
  EXPECT_EQ(to_f32(h2[1]), 2.0f);
  bf16_t bf = bf16_from_f32(0);
  ASSERT_TRUE(
      ex.launch(hammer(
                    &bf, [](bf16_t* p, uint64_t) { atomic_add(p, bf16_from_f32(1.0f)); }, 256),
                256, 64)
          .ok());
  EXPECT_EQ(to_f32(bf), 256.0f);
  // min / max: the extreme of values spread over all threads.
  int32_t mn = INT32_MAX;
  float mx = -1e30f;
  double dmn = 1e300;
  ASSERT_TRUE(ex.launch(hammer(
                            &mn,
                            [](int32_t* p, uint64_t i) {
                              atomic_min(p, static_cast<int32_t>((i * 7919) % 100003) - 5);
                            },
                            n),
                        n, 256)
                  .ok());
  EXPECT_EQ(mn, -5);
  ASSERT_TRUE(
      ex.launch(
            hammer(
                &mx, [](float* p, uint64_t i) { atomic_max(p, static_cast<float>(i % 977)); }, n),
            n, 256)
          .ok());
  EXPECT_EQ(mx, 976.0f);
  ASSERT_TRUE(
      ex.launch(hammer(
                    &dmn, [](double* p, uint64_t i) { atomic_min(p, 0.5 * (i % 1000) - 7); }, n),
                n, 256)
          .ok());
  EXPECT_EQ(dmn, -7.0);
}

TEST(Atomics, MinMaxKeepCurrentValueAgainstNaN) {
  float cur = 3.0f;
  atomic_min(&cur, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(cur, 3.0f);
  atomic_max(&cur, 4.0f);
  EXPECT_EQ(cur, 4.0f);
  float nan = std::numeric_limits<float>::quiet_NaN();
  atomic_min(&nan, 1.0f);
  EXPECT_TRUE(nan != nan);
}

TEST(Atomics, BadPositionRecordKeepsFirstAndLast) {
  EmuExec ex(4, 16);
  int64_t bad[2] = {INT64_MAX, -1};
  const uint64_t n = 10000;
  ASSERT_TRUE(ex.launch(hammer(
                            bad,
                            [](int64_t* p, uint64_t i) {
                              if (i % 3 == 1) record_bad_position(p, static_cast<int64_t>(i));
                            },
                            n),
                        n, 128)
                  .ok());
  EXPECT_EQ(bad[0], 1);
  EXPECT_EQ(bad[1], 9997);
}

}  // namespace
}  // namespace gscheck::cuda
