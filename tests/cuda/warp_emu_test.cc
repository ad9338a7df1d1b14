// cuda-emu's model of the device library: the warp intrinsics' semantics in warp-synchronous
// mode (masks, exited lanes, partial warps), each lane alone in plain mode, device faults for
// misaligned vector atomics and for intrinsics used against their rules, the packed and vector
// reductions' element layout.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cuda/emu_executor.h"
#include "cuda/portability.h"

namespace gscheck::cuda {
namespace {

EmuExec warp_exec() { return EmuExec(1, 0, nullptr, /*warp_sync=*/true); }

// Every lane: match_any over lane % 3, among the lanes not leaving early (lane % 5 == 4).
struct MatchKernel {
  uint32_t* out;
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const uint32_t lane = t.thread & 31u;
    if (lane % 5 == 4) return;
    const unsigned mask = __activemask();
    out[t.global()] = __match_any_sync(mask, static_cast<uint64_t>(lane % 3) << 40);
  }
};

TEST(WarpSync, MatchAnyGroupsEqualValuesAmongActiveLanes) {
  std::vector<uint32_t> out(64, 0xdeadbeefu);
  EmuExec ex = warp_exec();
  ASSERT_TRUE(ex.launch(MatchKernel{out.data()}, 64, 64).ok());
  for (uint32_t i = 0; i < 64; ++i) {
    const uint32_t lane = i & 31u;
    if (lane % 5 == 4) {
      EXPECT_EQ(out[i], 0xdeadbeefu);
      continue;
    }
    uint32_t want = 0;
    for (uint32_t j = 0; j < 32; ++j)
      if (j % 5 != 4 && j % 3 == lane % 3) want |= 1u << j;
    EXPECT_EQ(out[i], want) << "thread " << i;
  }
}

TEST(WarpSync, PlainModeRunsEachLaneAlone) {
  std::vector<uint32_t> out(32, 0);
  EmuExec ex(1);
  ASSERT_TRUE(ex.launch(MatchKernel{out.data()}, 32, 32).ok());
  for (uint32_t lane = 0; lane < 32; ++lane) {
    if (lane % 5 != 4) {
      EXPECT_EQ(out[lane], 1u << lane);
    }
  }
}

struct ActiveMaskKernel {
  uint32_t* out;
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    if (t.thread % 4 == 1) return;  // exited before the intrinsic
    out[t.global()] = __activemask();
  }
};

TEST(WarpSync, ActiveMaskLeavesOutExitedLanesAndMissingLanesOfAPartialWarp) {
  std::vector<uint32_t> out(40, 0);
  EmuExec ex = warp_exec();
  ASSERT_TRUE(ex.launch(ActiveMaskKernel{out.data()}, 40, 40).ok());  // warps of 32 and 8
  EXPECT_EQ(out[0], 0xddddddddu);
  EXPECT_EQ(out[31], 0xddddddddu);
  EXPECT_EQ(out[32], 0xddu);
  EXPECT_EQ(out[39], 0xddu);
}

struct ShuffleKernel {
  int* out;  // 6 results per thread
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const unsigned all = 0xffffffffu;
    const int v = 100 + static_cast<int>(t.thread);
    int* o = out + 6 * t.thread;
    o[0] = __shfl_sync(all, v, 5);
    o[1] = __shfl_sync(all, v, 3, 8);  // lane 3 of each 8-lane segment
    o[2] = __shfl_up_sync(all, v, 2, 8);
    o[3] = __shfl_down_sync(all, v, 2, 8);
    o[4] = __shfl_xor_sync(all, v, 1);
    o[5] = static_cast<int>(__ballot_sync(all, t.thread % 7 == 0)) ^
           (__any_sync(all, t.thread == 9) << 1) ^ (__all_sync(all, t.thread < 32) << 2);
  }
};

TEST(WarpSync, ShufflesAndVotesFollowCudaSemantics) {
  std::vector<int> out(6 * 32, 0);
  EmuExec ex = warp_exec();
  ASSERT_TRUE(ex.launch(ShuffleKernel{out.data()}, 32, 32).ok());
  uint32_t ballot = 0;
  for (int j = 0; j < 32; j += 7) ballot |= 1u << j;
  for (int i = 0; i < 32; ++i) {
    const int* o = out.data() + 6 * i;
    const int seg = i & ~7;
    EXPECT_EQ(o[0], 105);
    EXPECT_EQ(o[1], 100 + seg + 3);
    EXPECT_EQ(o[2], i - 2 >= seg ? 100 + i - 2 : 100 + i) << i;  // below the segment: own value
    EXPECT_EQ(o[3], i + 2 < seg + 8 ? 100 + i + 2 : 100 + i) << i;
    EXPECT_EQ(o[4], 100 + (i ^ 1));
    EXPECT_EQ(static_cast<uint32_t>(o[5]), ballot ^ 2u ^ 4u);
  }
}

// Votes over a mask naming exactly the lanes that call: each against its scalar definition
// (CUDA C++ Programming Guide, warp vote functions) over random masks and predicates.
struct VoteKernel {
  uint32_t mask, pred;
  uint32_t* out;  // 3 per lane: any, all, ballot
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const uint32_t lane = t.thread & 31u;
    if (!((mask >> lane) & 1u)) return;
    const int p = static_cast<int>((pred >> lane) & 1u);
    out[3 * lane] = __any_sync(mask, p) != 0 ? 1u : 0u;  // "non-zero" for true
    out[3 * lane + 1] = __all_sync(mask, p) != 0 ? 1u : 0u;
    out[3 * lane + 2] = __ballot_sync(mask, p);
  }
};

TEST(WarpSync, VotesMatchTheirScalarDefinitionOverRandomMasks) {
  std::mt19937 rng(20261205);
  for (int round = 0; round < 200; ++round) {
    uint32_t mask = static_cast<uint32_t>(rng());
    if (round % 4 == 0) mask |= 0xffffffffu;                   // the full warp
    if (round % 4 == 1) mask &= static_cast<uint32_t>(rng());  // sparse
    if (mask == 0) mask = 1u << (rng() % 32);
    uint32_t pred = static_cast<uint32_t>(rng());
    if (round % 3 == 0) pred |= mask;   // every named lane true: all() holds
    if (round % 3 == 1) pred &= ~mask;  // none true: any() fails
    std::vector<uint32_t> out(3 * 32, 0xdeadbeefu);
    EmuExec ex = warp_exec();
    ASSERT_TRUE(ex.launch(VoteKernel{mask, pred, out.data()}, 32, 32).ok());
    const uint32_t voted = pred & mask;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      if (!((mask >> lane) & 1u)) continue;
      EXPECT_EQ(out[3 * lane], voted != 0 ? 1u : 0u) << "any, mask " << mask << " lane " << lane;
      EXPECT_EQ(out[3 * lane + 1], voted == mask ? 1u : 0u) << "all, mask " << mask;
      EXPECT_EQ(out[3 * lane + 2], voted) << "ballot, mask " << mask;
    }
  }
}

// Lane 0 exits; the others shuffle over the full mask, which names it: undefined on the device.
struct ExitedLaneInMaskKernel {
  int* out;
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    if (t.thread == 0) return;
    out[t.thread] = __shfl_sync(0xffffffffu, static_cast<int>(t.thread), 1);
  }
};

TEST(WarpSync, AMaskNamingAnExitedLaneIsADeviceFault) {
  std::vector<int> out(32, 0);
  EmuExec ex = warp_exec();
  const Status s = ex.launch(ExitedLaneInMaskKernel{out.data()}, 32, 32);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().cls, ErrorClass::kInternal);
  EXPECT_NE(s.error().message.find("__shfl_sync with mask 0xffffffff names lanes 0x00000001"),
            std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("ExitedLaneInMaskKernel"), std::string::npos);
}

TEST(WarpSync, PlainModeRefusesAMaskNamingOtherLanes) {
  std::vector<int> out(6 * 32, 0);  // ShuffleKernel writes 6 results per thread
  EmuExec ex(1);
  const Status s = ex.launch(ShuffleKernel{out.data()}, 32, 32);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cuda-emu-warp"), std::string::npos) << s.error().message;
}

// Lanes waiting at different collectives over the same lanes never meet.
struct DeadlockKernel {
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    if (t.thread % 2 == 0) {
      __syncwarp(0xffffffffu);
    } else {
      (void)__ballot_sync(0xffffffffu, 1);
    }
  }
};

TEST(WarpSync, LanesMeetingAtDifferentIntrinsicsAreADeadlockFault) {
  EmuExec ex = warp_exec();
  const Status s = ex.launch(DeadlockKernel{}, 32, 32);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("warp deadlock"), std::string::npos) << s.error().message;
}

struct VectorAddKernel {
  float* f;          // 8 floats, f + offset gets the float4
  uint32_t offset;   // in floats
  uint32_t threads;  // how many threads add
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    if (t.global() >= threads) return;
    const float v[4] = {1, 2, 3, 4};
    atomic_add_f32v<4>(f + offset, v);
  }
};

TEST(DeviceAtomics, Float4ReductionAddsComponentsInOrderAndFaultsWhenMisaligned) {
  alignas(16) float f[8] = {};
  EmuExec ex(1);
  ASSERT_TRUE(ex.launch(VectorAddKernel{f, 4, 3}, 3, 32).ok());
  EXPECT_EQ(f[4], 3.0f);
  EXPECT_EQ(f[5], 6.0f);
  EXPECT_EQ(f[6], 9.0f);
  EXPECT_EQ(f[7], 12.0f);
  const Status s = ex.launch(VectorAddKernel{f, 2, 1}, 1, 32);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("misaligned address"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("atomicAdd(float4*)"), std::string::npos);
}

template <class T>
struct PairAddKernel {
  T* p;
  T a, b;
  uint32_t threads;
  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    if (t.global() < threads) atomic_add2(p, a, b);
  }
};

template <class T>
void check_pair_layout(T (*from)(float)) {
  alignas(4) T p[4] = {from(0), from(0), from(0), from(0)};
  EmuExec ex(1);
  ASSERT_TRUE(ex.launch(PairAddKernel<T>{p + 2, from(1.5f), from(-4.0f), 2}, 2, 32).ok());
  EXPECT_EQ(to_f32(p[2]), 3.0f);  // the first element of the pair at the lower address
  EXPECT_EQ(to_f32(p[3]), -8.0f);
  EXPECT_EQ(to_f32(p[1]), 0.0f);
  const Status s = ex.launch(PairAddKernel<T>{p + 1, from(1), from(1), 1}, 1, 32);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("misaligned address"), std::string::npos) << s.error().message;
}

TEST(DeviceAtomics, PackedHalfPairsKeepTheDeviceLayout) {
  check_pair_layout<half_t>(half_from_f32);
  check_pair_layout<bf16_t>(bf16_from_f32);
}

}  // namespace
}  // namespace gscheck::cuda
