// cuda-emu's CUDA device library (host builds only, never seen by nvcc): the vector types, __ldg
// and the warp intrinsics the kernels call, with the device's semantics, so the kernels' device
// code paths run on the CPU as written. The warp intrinsics meet in cuda/emu/warp_sync.h (all 32
// lanes in lock step in warp-synchronous mode; the calling lane alone otherwise); a vector access
// whose address is not aligned to its width faults as on the device.
#pragma once

#if defined(__CUDACC__)
#error "cuda/emu/device_intrinsics.h is the host build's model of the CUDA device library"
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda/emu/warp_sync.h"

namespace gscheck::cuda {

// CUDA's vector types: the device's sizes, alignments and component order (x at the lowest
// address).
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }

/// A read-only load through the non-coherent cache: an aligned load of sizeof(T) bytes.
template <class T>
inline T __ldg(const T* p) {
  T v{};
  if (!emu::check_aligned(p, sizeof(T), "__ldg")) return v;
  std::memcpy(static_cast<void*>(&v), p, sizeof(T));  // a typed host load would be aliasing UB
  return v;
}

inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }

namespace emu {
template <class T>
inline uint64_t warp_operand(T v) {
  static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "the warp intrinsics take 32- and 64-bit operands");
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  return u;
}
template <class T>
inline T warp_result(uint64_t u) {
  T v;
  std::memcpy(&v, &u, sizeof(T));
  return v;
}
}  // namespace emu

inline unsigned int __activemask() {
  return static_cast<unsigned int>(emu::collective(emu::Collective::kActiveMask, 0, 0, 0, 0, 32));
}
inline void __syncwarp(unsigned int mask = 0xffffffffu) {
  emu::collective(emu::Collective::kSyncWarp, mask, 0, 0, 0, 32);
}
template <class T>
inline unsigned int __match_any_sync(unsigned int mask, T v) {
  static_assert(std::is_integral_v<T>);
  return static_cast<unsigned int>(
      emu::collective(emu::Collective::kMatchAny, mask, emu::warp_operand(v), sizeof(T), 0, 32));
}
inline unsigned int __ballot_sync(unsigned int mask, int p) {
  return static_cast<unsigned int>(
      emu::collective(emu::Collective::kBallot, mask, p != 0, 4, 0, 32));
}
inline int __any_sync(unsigned int mask, int p) {
  return static_cast<int>(emu::collective(emu::Collective::kAny, mask, p != 0, 4, 0, 32));
}
inline int __all_sync(unsigned int mask, int p) {
  return static_cast<int>(emu::collective(emu::Collective::kAll, mask, p != 0, 4, 0, 32));
}
template <class T>
inline T __shfl_sync(unsigned int mask, T v, int src, int width = 32) {
  return emu::warp_result<T>(
      emu::collective(emu::Collective::kShfl, mask, emu::warp_operand(v), sizeof(T), src, width));
}
template <class T>
inline T __shfl_up_sync(unsigned int mask, T v, unsigned int delta, int width = 32) {
  return emu::warp_result<T>(emu::collective(emu::Collective::kShflUp, mask, emu::warp_operand(v),
                                             sizeof(T), static_cast<int>(delta), width));
}
template <class T>
inline T __shfl_down_sync(unsigned int mask, T v, unsigned int delta, int width = 32) {
  return emu::warp_result<T>(emu::collective(emu::Collective::kShflDown, mask, emu::warp_operand(v),
                                             sizeof(T), static_cast<int>(delta), width));
}
template <class T>
inline T __shfl_xor_sync(unsigned int mask, T v, int lane_mask, int width = 32) {
  return emu::warp_result<T>(emu::collective(emu::Collective::kShflXor, mask, emu::warp_operand(v),
                                             sizeof(T), lane_mask, width));
}

}  // namespace gscheck::cuda
