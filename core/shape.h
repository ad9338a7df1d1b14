// Tensor shapes with overflow-checked element counts and TensorFlow's debug text.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace gscheck {

/// The largest rank TensorFlow's TensorShape accepts.
inline constexpr int kMaxRank = 254;

/// A list of dimensions. Dimensions may be negative or huge: validation happens in the ops.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_.at(static_cast<size_t>(i)); }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>& dims() { return dims_; }

  /// Product of dims; nullopt if a dim is negative or the product exceeds int64.
  std::optional<int64_t> num_elements() const;
  /// Product of dims [begin, end); nullopt as for num_elements.
  std::optional<int64_t> num_elements(int begin, int end) const;
  /// TensorFlow's TensorShape::DebugString: "[2,3]", "[]".
  std::string to_string() const;

  friend bool operator==(const Shape&, const Shape&) = default;

 private:
  std::vector<int64_t> dims_;
};

/// Checked multiply of non-negative int64 values; nullopt on overflow.
std::optional<int64_t> checked_mul(int64_t a, int64_t b);

}  // namespace gscheck
