#include "compare/elements.h"

#include <cmath>
#include <complex>
#include <type_traits>

namespace gscheck::compare {

bool element_is_nan(const Tensor& t, int64_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return std::isnan(to_float(t.data_as<T>()[i]));
    } else if constexpr (std::is_floating_point_v<T>) {
      return std::isnan(t.data_as<T>()[i]);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      const T& v = t.data_as<T>()[i];
      return std::isnan(v.real()) || std::isnan(v.imag());
    } else {
      return false;
    }
  });
}

std::string format_element(const Tensor& t, int64_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return format_value(t.data_as<T>()[i]);
  });
}

std::vector<int64_t> unravel(const Shape& shape, int64_t i) {
  std::vector<int64_t> index(static_cast<std::size_t>(shape.rank()));
  for (int d = shape.rank() - 1; d >= 0; --d) {
    const int64_t n = shape.dim(d);
    index[static_cast<std::size_t>(d)] = n > 0 ? i % n : 0;
    if (n > 0) i /= n;
  }
  return index;
}

std::string format_index(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(index[i]);
  }
  return s + "]";
}

}  // namespace gscheck::compare
