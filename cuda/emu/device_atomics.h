// cuda-emu's model of the CUDA atomic functions the kernels call (host builds only): real atomics
// through the __atomic builtins (the executor runs blocks on several threads, and race mode sees
// these as atomic accesses), returning the old value as the device does. Vector atomics are
// element by element in the device's layout (component x at the lowest address), after the
// device's alignment check.
#pragma once

#if defined(__CUDACC__)
#error "cuda/emu/device_atomics.h is the host build's model of the CUDA atomic functions"
#endif

#include <cstdint>

#include "cuda/portability/qualifiers.h"

namespace gscheck::cuda {
namespace emu {

template <int N>
struct AtomicWord;
template <>
struct AtomicWord<2> {
  using type = uint16_t;
};
template <>
struct AtomicWord<4> {
  using type = uint32_t;
};
template <>
struct AtomicWord<8> {
  using type = uint64_t;
};

/// *addr = f(*addr) atomically (a CAS loop over the element's bits, no write when f leaves the
/// value unchanged); returns the old value.
template <class T, class F>
inline T atomic_rmw(T* addr, F f) {
  using U = typename AtomicWord<sizeof(T)>::type;
  if (!check_aligned(addr, sizeof(T), "atomic")) return T{};
  U* p = reinterpret_cast<U*>(addr);
  U old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    const U next = bit_cast<U>(f(bit_cast<T>(old)));
    if (next == old) return bit_cast<T>(old);
    if (__atomic_compare_exchange_n(p, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      return bit_cast<T>(old);
    }
  }
}

}  // namespace emu

inline int atomicAdd(int* a, int v) {
  return emu::atomic_rmw(a, [v](int c) {
    return static_cast<int>(static_cast<unsigned>(c) + static_cast<unsigned>(v));
  });
}
inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) {
  return emu::atomic_rmw(a, [v](unsigned long long c) { return c + v; });
}
inline float atomicAdd(float* a, float v) {
  return emu::atomic_rmw(a, [v](float c) { return c + v; });
}
inline double atomicAdd(double* a, double v) {
  return emu::atomic_rmw(a, [v](double c) { return c + v; });
}
/// sm_90's vector atomics: one RED.F32x2 / F32x4 on the device, N element atomics here.
inline float2 atomicAdd(float2* a, float2 v) {
  if (!emu::check_aligned(a, sizeof(float2), "atomicAdd(float2*)")) return float2{};
  float* p = &a->x;
  return float2{atomicAdd(p, v.x), atomicAdd(p + 1, v.y)};
}
inline float4 atomicAdd(float4* a, float4 v) {
  if (!emu::check_aligned(a, sizeof(float4), "atomicAdd(float4*)")) return float4{};
  float* p = &a->x;
  return float4{atomicAdd(p, v.x), atomicAdd(p + 1, v.y), atomicAdd(p + 2, v.z),
                atomicAdd(p + 3, v.w)};
}
inline int atomicMin(int* a, int v) {
  return emu::atomic_rmw(a, [v](int c) { return v < c ? v : c; });
}
inline long long atomicMin(long long* a, long long v) {
  return emu::atomic_rmw(a, [v](long long c) { return v < c ? v : c; });
}
inline int atomicMax(int* a, int v) {
  return emu::atomic_rmw(a, [v](int c) { return v > c ? v : c; });
}
inline long long atomicMax(long long* a, long long v) {
  return emu::atomic_rmw(a, [v](long long c) { return v > c ? v : c; });
}
template <class U>
inline U atomicCAS(U* a, U compare, U v) {
  static_assert(sizeof(U) == 4 || sizeof(U) == 8);
  if (!emu::check_aligned(a, sizeof(U), "atomicCAS")) return U{};
  __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;  // the value seen: v's predecessor on success
}

}  // namespace gscheck::cuda
