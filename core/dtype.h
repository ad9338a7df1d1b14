// Element types of TensorFlow tensors, and the one dtype switch of the project.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gscheck {

/// Every element type gscheck knows; names follow TensorFlow (float16, bfloat16, complex64...).
enum class DType : unsigned char {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  kString,
};

/// All dtypes, in enum order.
inline constexpr DType kAllDTypes[] = {
    DType::kBool,    DType::kInt8,      DType::kInt16,      DType::kInt32,
    DType::kInt64,   DType::kUInt8,     DType::kUInt16,     DType::kUInt32,
    DType::kUInt64,  DType::kFloat16,   DType::kBFloat16,   DType::kFloat32,
    DType::kFloat64, DType::kComplex64, DType::kComplex128, DType::kString};

/// IEEE binary16, stored as its bits; arithmetic goes through float as in Eigen::half.
struct Float16 {
  uint16_t bits = 0;
  friend bool operator==(Float16, Float16) = default;
};
/// bfloat16, stored as its bits; arithmetic goes through float as in Eigen::bfloat16.
struct BFloat16 {
  uint16_t bits = 0;
  friend bool operator==(BFloat16, BFloat16) = default;
};

/// float16 -> float (exact).
float to_float(Float16 h);
/// float -> float16, round to nearest even; NaN stays NaN (quiet), sign kept.
Float16 float16_from_float(float f);
/// bfloat16 -> float (exact).
float to_float(BFloat16 b);
/// float -> bfloat16, round to nearest even; NaN becomes the quiet NaN 0x7fc0/0xffc0 as Eigen does.
BFloat16 bfloat16_from_float(float f);

/// "float32", "int64", ... (TensorFlow's names).
std::string_view dtype_name(DType dt);
/// Inverse of dtype_name; nullopt for an unknown name.
std::optional<DType> dtype_from_name(std::string_view name);
/// Bytes per element; 0 for string, whose elements are not stored as raw bytes.
std::size_t dtype_size(DType dt);

/// Predicates used by validation and generators.
bool is_integer(DType dt);      ///< int8..int64, uint8..uint64
bool is_floating(DType dt);     ///< float16, bfloat16, float32, float64
bool is_complex(DType dt);      ///< complex64, complex128
bool is_real_number(DType dt);  ///< is_integer || is_floating
bool is_index_dtype(DType dt);  ///< int16, int32, int64 (int16 only on TF's CPU kernels)

/// A tag carrying a C++ element type through visit_dtype.
template <class T>
struct TypeTag {
  using type = T;
};

/// The one dtype switch: calls f(TypeTag<T>{}) with T the C++ type of dt.
/// bool->bool, intN->intN_t, float16->Float16, bfloat16->BFloat16, complex64->std::complex<float>,
/// string->std::string.
template <class F>
decltype(auto) visit_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::kBool:
      return f(TypeTag<bool>{});
    case DType::kInt8:
      return f(TypeTag<int8_t>{});
    case DType::kInt16:
      return f(TypeTag<int16_t>{});
    case DType::kInt32:
      return f(TypeTag<int32_t>{});
    case DType::kInt64:
      return f(TypeTag<int64_t>{});
    case DType::kUInt8:
      return f(TypeTag<uint8_t>{});
    case DType::kUInt16:
      return f(TypeTag<uint16_t>{});
    case DType::kUInt32:
      return f(TypeTag<uint32_t>{});
    case DType::kUInt64:
      return f(TypeTag<uint64_t>{});
    case DType::kFloat16:
      return f(TypeTag<Float16>{});
    case DType::kBFloat16:
      return f(TypeTag<BFloat16>{});
    case DType::kFloat32:
      return f(TypeTag<float>{});
    case DType::kFloat64:
      return f(TypeTag<double>{});
    case DType::kComplex64:
      return f(TypeTag<std::complex<float>>{});
    case DType::kComplex128:
      return f(TypeTag<std::complex<double>>{});
    case DType::kString:
      return f(TypeTag<std::string>{});
  }
  GSCHECK_CHECK(false && "unknown dtype");
  __builtin_unreachable();
}

/// The dtype of a C++ element type (inverse of visit_dtype).
template <class T>
constexpr DType dtype_of();

#define GSCHECK_DTYPE_OF(T, D)    \
  template <>                     \
  constexpr DType dtype_of<T>() { \
    return D;                     \
  }
GSCHECK_DTYPE_OF(bool, DType::kBool)
GSCHECK_DTYPE_OF(int8_t, DType::kInt8)
GSCHECK_DTYPE_OF(int16_t, DType::kInt16)
GSCHECK_DTYPE_OF(int32_t, DType::kInt32)
GSCHECK_DTYPE_OF(int64_t, DType::kInt64)
GSCHECK_DTYPE_OF(uint8_t, DType::kUInt8)
GSCHECK_DTYPE_OF(uint16_t, DType::kUInt16)
GSCHECK_DTYPE_OF(uint32_t, DType::kUInt32)
GSCHECK_DTYPE_OF(uint64_t, DType::kUInt64)
GSCHECK_DTYPE_OF(Float16, DType::kFloat16)
GSCHECK_DTYPE_OF(BFloat16, DType::kBFloat16)
GSCHECK_DTYPE_OF(float, DType::kFloat32)
GSCHECK_DTYPE_OF(double, DType::kFloat64)
GSCHECK_DTYPE_OF(std::complex<float>, DType::kComplex64)
GSCHECK_DTYPE_OF(std::complex<double>, DType::kComplex128)
GSCHECK_DTYPE_OF(std::string, DType::kString)
#undef GSCHECK_DTYPE_OF

}  // namespace gscheck
