#include "core/shape.h"

namespace gscheck {

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> Shape::num_elements(int begin, int end) const {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) {
    auto m = checked_mul(n, dims_[static_cast<size_t>(i)]);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

std::optional<int64_t> Shape::num_elements() const { return num_elements(0, rank()); }

std::string Shape::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

}  // namespace gscheck
