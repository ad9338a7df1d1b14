// Atomics on the kernels' element types: the device's instructions. cuda-emu runs the same code
// over its model of the CUDA atomic functions (cuda/emu/device_atomics.h: real atomics through
// the __atomic builtins, vector and packed ones element by element in the device's layout), so
// what a GPU executes (packing, vector components, the half-word CAS) is what the CPU runs.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/portability/element_types.h"
#include "cuda/portability/qualifiers.h"
#if GSCHECK_EMU
#include "cuda/emu/device_atomics.h"
#endif

namespace gscheck::cuda {

template <int N>
struct UIntOf;
template <>
struct UIntOf<1> {
  using type = uint8_t;
};
template <>
struct UIntOf<2> {
  using type = uint16_t;
};
template <>
struct UIntOf<4> {
  using type = uint32_t;
};
template <>
struct UIntOf<8> {
  using type = uint64_t;
};

/// A single-copy atomic (relaxed) load / store of an aligned word: a volatile access on the
/// device; cuda-emu uses the __atomic builtins, so race mode counts it as the atomic it is.
template <class U>
GSCHECK_HD_INLINE U load_relaxed(const U* p) {
#if GSCHECK_EMU
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#else
  return *reinterpret_cast<const volatile U*>(p);
#endif
}
template <class U>
GSCHECK_HD_INLINE void store_relaxed(U* p, U v) {
#if GSCHECK_EMU
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#else
  *reinterpret_cast<volatile U*>(p) = v;
#endif
}

/// CAS loop: *addr = f(*addr). Exits without a write as soon as f leaves the value unchanged
/// (min/max updates that do not improve, the common case once a destination has settled).
/// 2-byte elements are one 32-bit CAS on the aligned word holding them (no nested 16-bit CAS),
/// the neighbour half preserved.
template <class T, class F>
GSCHECK_HD_INLINE void device_atomic_update(T* addr, F f) {
#if GSCHECK_DEVICE_PATH
  if constexpr (sizeof(T) == 2) {
    // Step back from addr itself (not through an integer) so the compiler keeps the global
    // address space: ATOMG, not a generic ATOM.
    const unsigned int low = static_cast<unsigned int>(reinterpret_cast<uintptr_t>(addr) & 2u);
    unsigned int* p = reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(addr) - low);
    const unsigned int sh = low ? 16u : 0u;
    unsigned int old = load_relaxed(p);
    for (;;) {
      const T cur = bit_cast<T>(static_cast<unsigned short>(old >> sh));
      const unsigned short next = bit_cast<unsigned short>(f(cur));
      if (next == static_cast<unsigned short>(old >> sh)) return;
      const unsigned int want = (old & ~(0xFFFFu << sh)) | (static_cast<unsigned int>(next) << sh);
      const unsigned int seen = atomicCAS(p, old, want);
      if (seen == old) return;
      old = seen;
    }
  } else if constexpr (sizeof(T) == 4) {
    unsigned int* p = reinterpret_cast<unsigned int*>(addr);
    unsigned int old = load_relaxed(p);
    for (;;) {
      const unsigned int next = bit_cast<unsigned int>(f(bit_cast<T>(old)));
      if (next == old) return;
      const unsigned int seen = atomicCAS(p, old, next);
      if (seen == old) return;
      old = seen;
    }
  } else {
    static_assert(sizeof(T) == 8);
    unsigned long long* p = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = load_relaxed(p);
    for (;;) {
      const unsigned long long next = bit_cast<unsigned long long>(f(bit_cast<T>(old)));
      if (next == old) return;
      const unsigned long long seen = atomicCAS(p, old, next);
      if (seen == old) return;
      old = seen;
    }
  }
#else
  (void)addr;
  (void)f;
  GSCHECK_HOST_PASS_UNREACHABLE();
#endif
}

/// red.global.add.noftz.f16 / .bf16: a reduction (no return value), native for f16 since sm_70
/// and for bf16 on sm_90 (the atomicAdd overloads gave a generic ATOM with a shared-memory
/// branch).
template <class T>
GSCHECK_HD_INLINE void red_add_half(T* addr, T v) {
  static_assert(std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>);
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, half_t>) {
    asm volatile("red.global.add.noftz.f16 [%0], %1;" ::"l"(addr), "h"(v.bits) : "memory");
  } else {
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.noftz.bf16 [%0], %1;" ::"l"(addr), "h"(v.bits) : "memory");
#else
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(addr), __ushort_as_bfloat16(v.bits));
#endif
  }
#elif GSCHECK_EMU
  emu::atomic_rmw(addr, [v](T cur) { return elem_add(cur, v); });
#else
  (void)addr;
  (void)v;
  GSCHECK_HOST_PASS_UNREACHABLE();
#endif
}

/// red.global.add.noftz.f16x2 / .bf16x2 on the 4-byte aligned pair at addr: the low 16 bits of
/// `packed` add to addr[0], the high ones to addr[1] (cuda-emu: two element atomics).
template <class T>
GSCHECK_HD_INLINE void red_add_x2(T* addr, unsigned int packed) {
  static_assert(std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>);
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, half_t>) {
    asm volatile("red.global.add.noftz.f16x2 [%0], %1;" ::"l"(addr), "r"(packed) : "memory");
  } else {
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.noftz.bf16x2 [%0], %1;" ::"l"(addr), "r"(packed) : "memory");
#else
    atomicAdd(reinterpret_cast<__nv_bfloat162*>(addr),
              __halves2bfloat162(__ushort_as_bfloat16(static_cast<unsigned short>(packed)),
                                 __ushort_as_bfloat16(static_cast<unsigned short>(packed >> 16))));
#endif
  }
#elif GSCHECK_EMU
  if (!emu::check_aligned(addr, 4, "red.global.add.noftz.f16x2/bf16x2")) return;
  red_add_half(addr, bit_cast<T>(static_cast<uint16_t>(packed & 0xFFFFu)));
  red_add_half(addr + 1, bit_cast<T>(static_cast<uint16_t>(packed >> 16)));
#else
  (void)addr;
  (void)packed;
  GSCHECK_HOST_PASS_UNREACHABLE();
#endif
}

/// *addr += v: atomicAdd for int32, int64 (as unsigned 64), float, double; the half types
/// through red_add_half; complex64 is one float2 atomicAdd on sm_90 (two float adds below);
/// complex128 is two double adds (complex addition is componentwise, so no CAS is needed).
template <class T>
GSCHECK_HD_INLINE void atomic_add(T* addr, T v) {
#if GSCHECK_DEVICE_PATH
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, float> ||
                std::is_same_v<T, double>) {
    atomicAdd(addr, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
    red_add_half(addr, v);
  } else if constexpr (std::is_same_v<T, complex64_t>) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    atomicAdd(&addr->re, v.re);
    atomicAdd(&addr->im, v.im);
#else
    atomicAdd(reinterpret_cast<float2*>(addr), make_float2(v.re, v.im));
#endif
  } else if constexpr (std::is_same_v<T, complex128_t>) {
    atomicAdd(&addr->re, v.re);
    atomicAdd(&addr->im, v.im);
  } else if constexpr (std::is_same_v<T, bool>) {
    // Or: only a true update changes anything, and a byte store is single-copy atomic.
    if (v) store_relaxed(reinterpret_cast<uint8_t*>(addr), uint8_t{1});
  } else {
    static_assert(sizeof(T) == 0, "no atomic add for this type");
  }
#else
  (void)addr;
  (void)v;
  GSCHECK_HOST_PASS_UNREACHABLE();
#endif
}

/// Two adjacent half-type elements in one packed reduction (addr 4-byte aligned): v0 in the low
/// half of the 32-bit word, which is the element at the lower address.
template <class T>
GSCHECK_HD_INLINE void atomic_add2(T* addr, T v0, T v1) {
  static_assert(std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>);
  const unsigned int packed =
      static_cast<unsigned int>(v0.bits) | (static_cast<unsigned int>(v1.bits) << 16);
  red_add_x2(addr, packed);
}

/// addr[0..N) += v[0..N) for float32, N = 2 or 4 (addr 8/16-byte aligned): one vector reduction
/// on sm_90 (atomicAdd(float2*/float4*) -> RED.F32x2/x4), N scalar adds below sm_90.
template <int N>
GSCHECK_HD_INLINE void atomic_add_f32v(float* addr, const float* v) {
  static_assert(N == 2 || N == 4);
#if GSCHECK_DEVICE_PATH && !(defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900)
  if constexpr (N == 4) {
    atomicAdd(reinterpret_cast<float4*>(addr), make_float4(v[0], v[1], v[2], v[3]));
  } else {
    atomicAdd(reinterpret_cast<float2*>(addr), make_float2(v[0], v[1]));
  }
#else
  for (int k = 0; k < N; ++k) atomic_add(addr + k, v[k]);
#endif
}

/// *addr = min(*addr, v) / max: atomicMin/Max for int32 and int64; float, double, half and
/// bfloat16 have no native min/max atomic on sm_90, so they are CAS loops that exit as soon as
/// the value would not change (one 32-bit CAS on the enclosing word for the half types).
template <class T>
GSCHECK_HD_INLINE void atomic_min(T* addr, T v) {
#if GSCHECK_DEVICE_PATH
  if constexpr (std::is_same_v<T, int32_t>) {
    atomicMin(addr, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  } else {
    device_atomic_update(addr, [v](T cur) { return elem_min(cur, v); });
  }
#else
  (void)addr;
  (void)v;
  GSCHECK_HOST_PASS_UNREACHABLE();
#endif
}
template <class T>
GSCHECK_HD_INLINE void atomic_max(T* addr, T v) {
#if GSCHECK_DEVICE_PATH
  if constexpr (std::is_same_v<T, int32_t>) {
    atomicMax(addr, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  } else {
    device_atomic_update(addr, [v](T cur) { return elem_max(cur, v); });
  }
#else
  (void)addr;
  (void)v;
  GSCHECK_HOST_PASS_UNREACHABLE();
#endif
}

/// A racing store where any one writer may win (tf-gpu update): a single-copy atomic store for
/// elements of 1-8 bytes; 16-byte elements are routed to the sorted path.
template <class T>
GSCHECK_HD_INLINE void atomic_store(T* addr, T v) {
  static_assert(sizeof(T) <= 8);
  using U = typename UIntOf<sizeof(T)>::type;
  store_relaxed(reinterpret_cast<U*>(addr), bit_cast<U>(v));
}

/// The bad-index record: d_bad[0] = min, d_bad[1] = max position seen (checked mode).
GSCHECK_HD_INLINE void record_bad_position(int64_t* d_bad, int64_t pos) {
#if GSCHECK_DEVICE_PATH
  atomicMin(reinterpret_cast<long long*>(d_bad), static_cast<long long>(pos));
  atomicMax(reinterpret_cast<long long*>(d_bad + 1), static_cast<long long>(pos));
#else
  (void)d_bad;
  (void)pos;
  GSCHECK_HOST_PASS_UNREACHABLE();
#endif
}

}  // namespace gscheck::cuda
