#include "core/dtype.h"

#include <array>
#include <bit>

namespace gscheck {
namespace {
constexpr std::array<std::string_view, 16> kNames = {
    "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",     "uint32",
    "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "string"};
}  // namespace

std::string_view dtype_name(DType dt) { return kNames[static_cast<size_t>(dt)]; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<DType>(i);
  return std::nullopt;
}

std::size_t dtype_size(DType dt) {
  return visit_dtype(dt, [](auto tag) -> std::size_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::string>) {
      return 0;
    } else {
      return sizeof(T);
    }
  });
}

bool is_integer(DType dt) { return dt >= DType::kInt8 && dt <= DType::kUInt64; }
bool is_floating(DType dt) { return dt >= DType::kFloat16 && dt <= DType::kFloat64; }
bool is_complex(DType dt) { return dt == DType::kComplex64 || dt == DType::kComplex128; }
bool is_real_number(DType dt) { return is_integer(dt) || is_floating(dt); }
bool is_index_dtype(DType dt) {
  return dt == DType::kInt16 || dt == DType::kInt32 || dt == DType::kInt64;
}

float to_float(Float16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);  // inf, or NaN with its payload
  } else if (exp != 0) {
    out = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    out = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    out = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(out);
}

Float16 float16_from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN
    if (ax == 0x7f800000u) return {static_cast<uint16_t>(sign | 0x7c00u)};
    return {static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu))};
  }
  if (ax >= 0x477ff000u) return {static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to inf
  if (ax < 0x38800000u) {                 // result is subnormal or zero
    if (ax < 0x33000000u) return {sign};  // below half the smallest subnormal
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    // value = m * 2^(e-150) and a subnormal half is k * 2^-24, so k = m >> shift.
    uint32_t half = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return {static_cast<uint16_t>(sign | half)};
  }
  uint32_t r = ax - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t rem = r & 0x1fffu;
  uint32_t h = r >> 13;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return {static_cast<uint16_t>(sign | h)};
}

float to_float(BFloat16 b) { return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16); }

BFloat16 bfloat16_from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return {static_cast<uint16_t>((x & 0x80000000u) ? 0xffc0u : 0x7fc0u)};
  const uint32_t lsb = (x >> 16) & 1u;
  return {static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16)};
}

}  // namespace gscheck
