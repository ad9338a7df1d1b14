// The kernels' element types (the tensor buffers' bytes, device-friendly) and TensorFlow's
// element semantics on them: half conversions, add, negate, compare, min/max, NaN.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"  // host-side half conversions (plain C++)
#include "cuda/portability/qualifiers.h"

namespace gscheck::cuda {

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

/// The kernels' storage type for a tensor element type (same bytes, device-friendly).
template <class T>
struct StorageOf {
  using type = T;
};
template <>
struct StorageOf<Float16> {
  using type = half_t;
};
template <>
struct StorageOf<BFloat16> {
  using type = bf16_t;
};
template <>
struct StorageOf<std::complex<float>> {
  using type = complex64_t;
};
template <>
struct StorageOf<std::complex<double>> {
  using type = complex128_t;
};

/// The dtype of a storage type (inverse of StorageOf, then dtype_of).
template <class T>
constexpr DType storage_dtype() {
  if constexpr (std::is_same_v<T, half_t>)
    return DType::kFloat16;
  else if constexpr (std::is_same_v<T, bf16_t>)
    return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, complex64_t>)
    return DType::kComplex64;
  else if constexpr (std::is_same_v<T, complex128_t>)
    return DType::kComplex128;
  else
    return dtype_of<T>();
}

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

// Element arithmetic of the scatter ops (also of the deterministic row-order path).
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

template <class T>
GSCHECK_HD_INLINE bool elem_is_nan(T x) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
    const float f = to_f32(x);
    return f != f;
  } else if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

}  // namespace gscheck::cuda
