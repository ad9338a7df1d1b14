// The tiny layer that lets one kernel source compile for the GPU (nvcc) and as plain C++ (g++)
// for the cuda-emu grid executor: GSCHECK_HD, thread indices, element types, atomics, vectors.
// Without __CUDACC__ this header needs no CUDA header at all.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"  // host-side half conversions (plain C++)

// An unroll hint for the device pass only (the host compiler would warn about it).
#if defined(__CUDA_ARCH__)
#define GSCHECK_UNROLL _Pragma("unroll")
#else
#define GSCHECK_UNROLL
#endif

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define GSCHECK_HD __host__ __device__
#define GSCHECK_HD_INLINE __host__ __device__ __forceinline__
#else
#define GSCHECK_HD
#define GSCHECK_HD_INLINE inline
#endif

namespace gscheck::cuda {

/// Where one thread sits in a 1-D launch; the kernel functors take it instead of reading
/// blockIdx/threadIdx so the emulator can hand it in.
struct ThreadIndex {
  uint32_t block;      ///< blockIdx.x
  uint32_t thread;     ///< threadIdx.x
  uint32_t block_dim;  ///< blockDim.x
  uint32_t grid_dim;   ///< gridDim.x
  GSCHECK_HD_INLINE uint64_t global() const {
    return static_cast<uint64_t>(block) * block_dim + thread;
  }
  GSCHECK_HD_INLINE uint64_t total() const { return static_cast<uint64_t>(grid_dim) * block_dim; }
};

// Storage types with the tensor buffers' layout (little-endian bits, {re, im} pairs).
struct alignas(2) half_t {
  uint16_t bits;
};
struct alignas(2) bf16_t {
  uint16_t bits;
};
struct alignas(8) complex64_t {
  float re, im;
};
struct alignas(16) complex128_t {
  double re, im;
};

template <class To, class From>
GSCHECK_HD_INLINE To bit_cast(const From& f) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

/// Division of 32-bit offsets by a divisor fixed at launch: the multiply-high method
/// (Granlund-Montgomery), set up once on the host so kernels pay a multiply, an add and a shift
/// per row instead of a ~20-instruction integer division. Exact for every n < 2^32 (the
/// intermediate sum is 33 bits, computed in 64).
struct FastDivU32 {
  uint32_t d = 1;
  uint32_t mul = 1;
  uint32_t shift = 0;
  FastDivU32() = default;
  explicit FastDivU32(uint32_t divisor) : d(divisor ? divisor : 1) {
    uint32_t l = 0;
    while (l < 32 && (uint64_t{1} << l) < d) ++l;
    shift = l;  // 2^l >= d
    mul = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << l) - d)) / d + 1);
  }
  GSCHECK_HD_INLINE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, mul);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * mul) >> 32);
#endif
    return static_cast<uint32_t>((static_cast<uint64_t>(hi) + n) >> shift);
  }
};

/// Division by a launch-time constant for either offset type: FastDivU32 for 32-bit offsets,
/// plain division for 64-bit ones (rare: tensors over 2^31 elements).
template <class Off>
struct DivBy {
  Off d = 1;
  DivBy() = default;
  explicit DivBy(Off v) : d(v ? v : 1) {}
  GSCHECK_HD_INLINE Off div(Off n) const { return n / d; }
  GSCHECK_HD_INLINE Off value() const { return d; }
};
template <>
struct DivBy<uint32_t> {
  FastDivU32 f;
  DivBy() = default;
  explicit DivBy(uint32_t v) : f(v) {}
  GSCHECK_HD_INLINE uint32_t div(uint32_t n) const { return f.div(n); }
  GSCHECK_HD_INLINE uint32_t value() const { return f.d; }
};

GSCHECK_HD_INLINE float to_f32(half_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h.bits));
#else
  return gscheck::to_float(Float16{h.bits});
#endif
}
GSCHECK_HD_INLINE float to_f32(bf16_t h) {
#if defined(__CUDA_ARCH__)
  return __bfloat162float(__ushort_as_bfloat16(h.bits));
#else
  return gscheck::to_float(BFloat16{h.bits});
#endif
}
// Round to nearest even. fp32 holds 24 >= 2*11+2 bits, so an fp32 sum rounded to fp16 (or bf16)
// equals the exactly rounded half sum: no double-rounding error, same as Eigen's half add.
GSCHECK_HD_INLINE half_t half_from_f32(float f) {
#if defined(__CUDA_ARCH__)
  return half_t{__half_as_ushort(__float2half_rn(f))};
#else
  return half_t{gscheck::float16_from_float(f).bits};
#endif
}
GSCHECK_HD_INLINE bf16_t bf16_from_f32(float f) {
#if defined(__CUDA_ARCH__)
  return bf16_t{__bfloat16_as_ushort(__float2bfloat16_rn(f))};
#else
  return bf16_t{gscheck::bfloat16_from_float(f).bits};
#endif
}

// ---- Element arithmetic used by the scatter ops (also by the deterministic row-order path).

template <class T>
GSCHECK_HD_INLINE T elem_add(T a, T b) {
  if constexpr (std::is_same_v<T, half_t>) {
    return half_from_f32(to_f32(a) + to_f32(b));
  } else if constexpr (std::is_same_v<T, bf16_t>) {
    return bf16_from_f32(to_f32(a) + to_f32(b));
  } else if constexpr (std::is_same_v<T, complex64_t> || std::is_same_v<T, complex128_t>) {
    return T{a.re + b.re, a.im + b.im};
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || b;  // TensorFlow adds bools as logical or
  } else if constexpr (std::is_integral_v<T>) {
    // Two's complement wrap, as TensorFlow's integer adds; no signed-overflow UB.
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

/// -b such that elem_add(a, elem_neg(b)) == a - b bit for bit (IEEE defines x - y as x + (-y)).
template <class T>
GSCHECK_HD_INLINE T elem_neg(T b) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
    return T{static_cast<uint16_t>(b.bits ^ 0x8000u)};
  } else if constexpr (std::is_same_v<T, complex64_t> || std::is_same_v<T, complex128_t>) {
    return T{-b.re, -b.im};
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U{0} - static_cast<U>(b));
  } else {
    return -b;
  }
}

template <class T>
GSCHECK_HD_INLINE bool elem_less(T a, T b) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
    return to_f32(a) < to_f32(b);
  } else {
    return a < b;
  }
}
// TensorFlow's min/max keep the current value unless the update compares strictly smaller
// (larger); a NaN on either side therefore keeps the current value.
template <class T>
GSCHECK_HD_INLINE T elem_min(T cur, T v) {
  return elem_less(v, cur) ? v : cur;
}
template <class T>
GSCHECK_HD_INLINE T elem_max(T cur, T v) {
  return elem_less(cur, v) ? v : cur;
}

// ---- Atomics. Device: native instructions where the architecture has them. Host (cuda-emu):
// real atomics through the __atomic builtins, because the executor runs blocks on several
// threads; read-modify-writes there are CAS loops over the element's bits.

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
#if defined(GSCHECK_PLANT_RACES)
  // Test-only planted race (tests/cuda/race_test.cc): the atomic forgotten, a plain
  // read-modify-write that loses updates. Race mode must catch it.
  if constexpr (!std::is_same_v<T, bool>) {
    *addr = elem_add(*addr, v);
    return;
  }
#endif
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
#elif defined(GSCHECK_PLANT_RACES)
  *addr = v;  // test-only planted race (tests/cuda/race_test.cc): a plain store
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

// ---- Vector units for slice copies: W bytes moved by one load and one store.

template <int W>
struct VecUnit;
template <>
struct VecUnit<1> {
  using type = uint8_t;
};
template <>
struct VecUnit<2> {
  using type = uint16_t;
};
template <>
struct VecUnit<4> {
  using type = uint32_t;
};
template <>
struct VecUnit<8> {
  using type = uint64_t;
};
#if defined(__CUDACC__)
template <>
struct VecUnit<16> {
  using type = uint4;  // one 128-bit ld.global.v4 / st.global.v4
};
#else
template <>
struct VecUnit<16> {
  struct alignas(16) type {
    uint64_t lo, hi;
  };
};
#endif

}  // namespace gscheck::cuda
