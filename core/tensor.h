// Owning tensors (raw little-endian bytes, or std::string elements) and non-owning views.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"

namespace gscheck {

/// Default memory budget for one case's tensors (inputs and output together).
inline constexpr int64_t kDefaultMaxCaseBytes = int64_t{4} << 30;

/// Bytes a tensor of this dtype and shape needs (strings counted as sizeof(std::string) each);
/// nullopt if the shape is invalid or the count overflows.
std::optional<int64_t> tensor_bytes(DType dt, const Shape& shape);

/// A dense row-major tensor that owns its elements. Fixed-size dtypes live in one 64-byte
/// aligned buffer; string tensors hold a std::vector<std::string>. Copying copies the data.
class Tensor {
 public:
  Tensor() = default;
  /// Allocate a zero-filled tensor (false / empty strings). Fails on an invalid shape or when
  /// the tensor would exceed max_bytes; never aborts on bad sizes.
  static Expected<Tensor> zeros(DType dt, Shape shape, int64_t max_bytes = kDefaultMaxCaseBytes);
  /// As zeros() but leaves fixed-size elements unwritten (for outputs that are fully written).
  static Expected<Tensor> uninitialized(DType dt, Shape shape,
                                        int64_t max_bytes = kDefaultMaxCaseBytes);
  /// A tensor from typed values; precondition: values.size() == shape's element count.
  template <class T>
  static Tensor from_values(Shape shape, const std::vector<T>& values);

  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t num_elements() const { return num_elements_; }
  /// Size of the raw buffer (0 for string tensors).
  std::size_t byte_size() const { return byte_size_; }

  /// Raw little-endian element bytes; precondition: not a string tensor.
  std::byte* data();
  const std::byte* data() const;
  /// Typed element pointer; precondition: T matches dtype().
  template <class T>
  T* data_as() {
    GSCHECK_CHECK(dtype_of<T>() == dtype_);
    if constexpr (std::is_same_v<T, std::string>) {
      return strings_.data();
    } else {
      return reinterpret_cast<T*>(buffer_.get());
    }
  }
  template <class T>
  const T* data_as() const {
    return const_cast<Tensor*>(this)->data_as<T>();
  }
  /// String elements; precondition: dtype() == kString.
  std::vector<std::string>& strings();
  const std::vector<std::string>& strings() const;

  /// Integer element i of an integer tensor, widened to int64 (uint64 values above INT64_MAX
  /// wrap; callers validating indices only use signed index dtypes). Precondition: is_integer.
  int64_t int_at(int64_t i) const;

  /// Bitwise equality of dtype, shape and data (NaN payloads and -0.0 distinguished).
  bool bit_equal(const Tensor& other) const;

 private:
  // Returns the buffer to where it came from: free() for small ones, the large-buffer cache
  // (or munmap) for large ones; capacity is the size actually allocated.
  struct BufferDeleter {
    BufferDeleter() noexcept : capacity(0) {}
    explicit BufferDeleter(std::size_t c) noexcept : capacity(c) {}
    std::size_t capacity;
    void operator()(std::byte* p) const;
  };
  static Expected<Tensor> make(DType dt, Shape shape, int64_t max_bytes, bool zero);
  // Allocate byte_size_ bytes into buffer_; true if the memory is known to be zero already.
  Expected<bool> allocate_buffer();
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  int64_t num_elements_ = 0;
  std::size_t byte_size_ = 0;
  std::unique_ptr<std::byte[], BufferDeleter> buffer_;
  std::vector<std::string> strings_;
};

/// Ask the kernel for transparent huge pages over the 2 MiB-aligned interior of a large buffer
/// (first touch of a 2 MiB page costs far less than 512 faults of 4 KiB); a no-op below 8 MiB.
void advise_huge_pages(void* data, std::size_t bytes);

/// A read-only view of a tensor's data, for kernels that take raw pointers.
struct ConstTensorView {
  DType dtype;
  const Shape* shape;
  const void* data;  ///< raw bytes, or const std::string* for string tensors
};
/// A writable view.
struct TensorView {
  DType dtype;
  const Shape* shape;
  void* data;
};
inline ConstTensorView view(const Tensor& t) {
  return {t.dtype(), &t.shape(),
          t.dtype() == DType::kString ? static_cast<const void*>(t.strings().data()) : t.data()};
}
inline TensorView view(Tensor& t) {
  return {t.dtype(), &t.shape(),
          t.dtype() == DType::kString ? static_cast<void*>(t.strings().data()) : t.data()};
}

template <class T>
Tensor Tensor::from_values(Shape shape, const std::vector<T>& values) {
  Tensor t = zeros(dtype_of<T>(), std::move(shape), INT64_MAX).value();
  GSCHECK_CHECK(static_cast<int64_t>(values.size()) == t.num_elements());
  T* out = t.data_as<T>();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

/// Every NaN element (each part of a complex one) becomes the quiet NaN of its sign with no
/// payload: bfloat16 0x7fc3 -> 0x7fc0, float16 0x7c15 -> 0x7e00, float32 -> 0x7fc00000. Other
/// elements and other dtypes keep their bits (the nan=canonical rule of a known failure).
void canonicalize_nans(Tensor& t);

}  // namespace gscheck
