// Template definitions for compare/elements.h.
#pragma once

#include <charconv>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

namespace gscheck::compare {
namespace detail {

template <class F, class Bits>
std::string format_floating(F v, Bits bits) {
  if (v != v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "nan(0x%0*llx)", static_cast<int>(2 * sizeof(Bits)),
                  static_cast<unsigned long long>(bits));
    return buf;
  }
  if (v == std::numeric_limits<F>::infinity()) return "inf";
  if (v == -std::numeric_limits<F>::infinity()) return "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace detail

template <class T>
std::string format_value(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return detail::format_floating(to_float(v), v.bits);
  } else if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    Bits bits;
    std::memcpy(&bits, &v, sizeof bits);
    return detail::format_floating(v, bits);
  } else if constexpr (std::is_same_v<T, std::string>) {
    std::string out = "\"";
    for (unsigned char ch : v) {
      if (ch == '"' || ch == '\\') {
        out += '\\';
        out += static_cast<char>(ch);
      } else if (ch >= 0x20 && ch < 0x7f) {
        out += static_cast<char>(ch);
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", ch);
        out += buf;
      }
    }
    return out + "\"";
  } else {  // complex
    return "(" + format_value(v.real()) + ", " + format_value(v.imag()) + ")";
  }
}

template <class T>
bool same_bits(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
    return a == b;
  } else {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
}

}  // namespace gscheck::compare
