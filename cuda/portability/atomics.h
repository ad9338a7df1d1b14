// Atomics on the kernels' element types. Device: native instructions where the architecture
// has them. Host (cuda-emu): real atomics through the __atomic builtins, because the executor
// runs blocks on several threads; read-modify-writes there are CAS loops over the element's bits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/portability/element_types.h"
#include "cuda/portability/qualifiers.h"

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

#if !defined(__CUDA_ARCH__)
/// Host CAS loop: *addr = f(*addr) atomically, for any element of 1, 2, 4 or 8 bytes.
template <class T, class F>
inline void host_atomic_update(T* addr, F f) {
  using U = typename UIntOf<sizeof(T)>::type;
  U* p = reinterpret_cast<U*>(addr);
  U old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    const U next = bit_cast<U>(f(bit_cast<T>(old)));
    if (next == old) return;  // unchanged: nothing to write (as the device loop)
    if (__atomic_compare_exchange_n(p, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      return;
    }
  }
}
#endif

#if defined(__CUDA_ARCH__)
/// Device CAS loop: *addr = f(*addr). Exits without a write as soon as f leaves the value
/// unchanged (min/max updates that do not improve, the common case once a destination has
/// settled). 2-byte elements are one 32-bit CAS on the aligned word holding them (no nested
/// 16-bit CAS), the neighbour half preserved.
template <class T, class F>
__device__ __forceinline__ void device_atomic_update(T* addr, F f) {
  if constexpr (sizeof(T) == 2) {
    // Step back from addr itself (not through an integer) so the compiler keeps the global
    // address space: ATOMG, not a generic ATOM.
    const unsigned int low = static_cast<unsigned int>(reinterpret_cast<uintptr_t>(addr) & 2u);
    unsigned int* p = reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(addr) - low);
    const unsigned int sh = low ? 16u : 0u;
    unsigned int old = *reinterpret_cast<volatile unsigned int*>(p);
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
    unsigned int old = *reinterpret_cast<volatile unsigned int*>(p);
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
    unsigned long long old = *reinterpret_cast<volatile unsigned long long*>(p);
    for (;;) {
      const unsigned long long next = bit_cast<unsigned long long>(f(bit_cast<T>(old)));
      if (next == old) return;
      const unsigned long long seen = atomicCAS(p, old, next);
      if (seen == old) return;
      old = seen;
    }
  }
}
#endif

/// *addr += v. Device: native atomicAdd for int32, int64 (as unsigned 64), float, double, half
/// (sm_70+), bfloat16 (sm_80+); complex64 is one float2 atomicAdd on sm_90 and two float adds
/// below; complex128 is two double adds (complex addition is componentwise, so no CAS is needed).
template <class T>
GSCHECK_HD_INLINE void atomic_add(T* addr, T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, float> ||
                std::is_same_v<T, double>) {
    atomicAdd(addr, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<T, half_t>) {
    // A reduction (no return value): red.global.add.noftz.f16, native since sm_70.
    asm volatile("red.global.add.noftz.f16 [%0], %1;" ::"l"(addr), "h"(v.bits) : "memory");
  } else if constexpr (std::is_same_v<T, bf16_t>) {
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.noftz.bf16 [%0], %1;" ::"l"(addr), "h"(v.bits) : "memory");
#else
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(addr), __ushort_as_bfloat16(v.bits));
#endif
  } else if constexpr (std::is_same_v<T, complex64_t>) {
#if __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float2*>(addr), make_float2(v.re, v.im));
#else
    atomicAdd(&addr->re, v.re);
    atomicAdd(&addr->im, v.im);
#endif
  } else if constexpr (std::is_same_v<T, complex128_t>) {
    atomicAdd(&addr->re, v.re);
    atomicAdd(&addr->im, v.im);
  } else if constexpr (std::is_same_v<T, bool>) {
    // Or: only a true update changes anything, and a byte store is single-copy atomic.
    if (v) *reinterpret_cast<volatile bool*>(addr) = true;
  } else {
    static_assert(sizeof(T) == 0, "no atomic add for this type");
  }
#else
  if constexpr (std::is_same_v<T, complex64_t>) {
    atomic_add(&addr->re, v.re);
    atomic_add(&addr->im, v.im);
  } else if constexpr (std::is_same_v<T, complex128_t>) {
    atomic_add(&addr->re, v.re);
    atomic_add(&addr->im, v.im);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v) __atomic_store_n(reinterpret_cast<uint8_t*>(addr), uint8_t{1}, __ATOMIC_RELAXED);
  } else {
    host_atomic_update(addr, [v](T cur) { return elem_add(cur, v); });
  }
#endif
}

/// Two adjacent half-type elements in one packed atomic (addr 4-byte aligned): half2 / bfloat162
/// atomicAdd on the device, one 32-bit CAS on the host.
template <class T>
GSCHECK_HD_INLINE void atomic_add2(T* addr, T v0, T v1) {
  static_assert(std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>);
#if defined(__CUDA_ARCH__)
  // Global reductions through inline PTX: atomicAdd(__half2*) compiles to a generic ATOM with
  // a shared-memory branch; red.global gives REDG.
  const unsigned int packed =
      static_cast<unsigned int>(v0.bits) | (static_cast<unsigned int>(v1.bits) << 16);
  if constexpr (std::is_same_v<T, half_t>) {
    asm volatile("red.global.add.noftz.f16x2 [%0], %1;" ::"l"(addr), "r"(packed) : "memory");
  } else {
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.noftz.bf16x2 [%0], %1;" ::"l"(addr), "r"(packed) : "memory");
#else
    atomicAdd(reinterpret_cast<__nv_bfloat162*>(addr),
              __halves2bfloat162(__ushort_as_bfloat16(v0.bits), __ushort_as_bfloat16(v1.bits)));
#endif
  }
#else
  struct Pair {
    T a, b;
  };
  host_atomic_update(reinterpret_cast<Pair*>(addr), [v0, v1](Pair cur) {
    return Pair{elem_add(cur.a, v0), elem_add(cur.b, v1)};
  });
#endif
}

/// addr[0..N) += v[0..N) for float32, N = 2 or 4 (addr 8/16-byte aligned): one vector reduction
/// on sm_90 (atomicAdd(float2*/float4*) -> RED.F32x2/x4), N scalar adds elsewhere and on the host.
template <int N>
GSCHECK_HD_INLINE void atomic_add_f32v(float* addr, const float* v) {
  static_assert(N == 2 || N == 4);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (N == 4) {
    atomicAdd(reinterpret_cast<float4*>(addr), make_float4(v[0], v[1], v[2], v[3]));
  } else {
    atomicAdd(reinterpret_cast<float2*>(addr), make_float2(v[0], v[1]));
  }
#else
  for (int k = 0; k < N; ++k) atomic_add(addr + k, v[k]);
#endif
}

/// *addr = min(*addr, v) / max. Device: native atomicMin/Max for int32 and int64; float, double,
/// half and bfloat16 have no native min/max atomic on sm_90, so they are CAS loops that exit as
/// soon as the value would not change (one 32-bit CAS on the enclosing word for the half types).
template <class T>
GSCHECK_HD_INLINE void atomic_min(T* addr, T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, int32_t>) {
    atomicMin(addr, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  } else {
    device_atomic_update(addr, [v](T cur) { return elem_min(cur, v); });
  }
#else
  host_atomic_update(addr, [v](T cur) { return elem_min(cur, v); });
#endif
}
template <class T>
GSCHECK_HD_INLINE void atomic_max(T* addr, T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, int32_t>) {
    atomicMax(addr, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  } else {
    device_atomic_update(addr, [v](T cur) { return elem_max(cur, v); });
  }
#else
  host_atomic_update(addr, [v](T cur) { return elem_max(cur, v); });
#endif
}

/// A racing store where any one writer may win (tf-gpu update). Elements of 1-8 bytes are
/// single-copy atomic stores on both sides; 16-byte elements are routed to the sorted path.
template <class T>
GSCHECK_HD_INLINE void atomic_store(T* addr, T v) {
  static_assert(sizeof(T) <= 8);
#if defined(__CUDA_ARCH__)
  using U = typename UIntOf<sizeof(T)>::type;
  *reinterpret_cast<volatile U*>(addr) = bit_cast<U>(v);
#else
  using U = typename UIntOf<sizeof(T)>::type;
  __atomic_store_n(reinterpret_cast<U*>(addr), bit_cast<U>(v), __ATOMIC_RELAXED);
#endif
}

/// The bad-index record: d_bad[0] = min, d_bad[1] = max position seen (checked mode).
GSCHECK_HD_INLINE void record_bad_position(int64_t* d_bad, int64_t pos) {
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<long long*>(d_bad), static_cast<long long>(pos));
  atomicMax(reinterpret_cast<long long*>(d_bad + 1), static_cast<long long>(pos));
#else
  int64_t cur = __atomic_load_n(d_bad, __ATOMIC_RELAXED);
  while (pos < cur &&
         !__atomic_compare_exchange_n(d_bad, &cur, pos, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  cur = __atomic_load_n(d_bad + 1, __ATOMIC_RELAXED);
  while (pos > cur && !__atomic_compare_exchange_n(d_bad + 1, &cur, pos, true, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED)) {
  }
#endif
}

}  // namespace gscheck::cuda
