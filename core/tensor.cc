#include "core/tensor.h"

#include <cstdlib>
#include <cstring>

namespace gscheck {

std::optional<int64_t> tensor_bytes(DType dt, const Shape& shape) {
  auto n = shape.num_elements();
  if (!n) return std::nullopt;
  const int64_t elem = dt == DType::kString ? static_cast<int64_t>(sizeof(std::string))
                                            : static_cast<int64_t>(dtype_size(dt));
  return checked_mul(*n, elem);
}

void Tensor::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

Expected<Tensor> Tensor::zeros(DType dt, Shape shape, int64_t max_bytes) {
  auto t = uninitialized(dt, std::move(shape), max_bytes);
  if (t.ok() && t->buffer_) std::memset(t->buffer_.get(), 0, (t->byte_size_ + 63) / 64 * 64);
  return t;
}

Expected<Tensor> Tensor::uninitialized(DType dt, Shape shape, int64_t max_bytes) {
  auto n = shape.num_elements();
  if (!n) {
    return invalid_argument("Shape " + shape.to_string() +
                            " has a negative dimension or more than 2**63 - 1 elements");
  }
  auto bytes = tensor_bytes(dt, shape);
  if (!bytes || *bytes > max_bytes) {
    return Error{ErrorClass::kResourceExhausted,
                 "a " + std::string(dtype_name(dt)) + " tensor of shape " + shape.to_string() +
                     " exceeds the memory budget of " + std::to_string(max_bytes) + " bytes"};
  }
  Tensor t;
  t.dtype_ = dt;
  t.shape_ = std::move(shape);
  t.num_elements_ = *n;
  if (dt == DType::kString) {
    t.strings_.resize(static_cast<std::size_t>(*n));
    return t;
  }
  t.byte_size_ = static_cast<std::size_t>(*bytes);
  // 64-byte alignment so vector paths see aligned bases; aligned_alloc wants a multiple of it.
  const std::size_t alloc = (t.byte_size_ + 63) / 64 * 64;
  if (alloc > 0) {
    t.buffer_.reset(static_cast<std::byte*>(std::aligned_alloc(64, alloc)));
    if (!t.buffer_) {
      return Error{ErrorClass::kResourceExhausted,
                   "out of memory allocating " + std::to_string(alloc) + " bytes"};
    }
  }
  return t;
}

Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_),
      shape_(other.shape_),
      num_elements_(other.num_elements_),
      byte_size_(other.byte_size_),
      strings_(other.strings_) {
  if (other.buffer_) {
    const std::size_t alloc = (byte_size_ + 63) / 64 * 64;
    buffer_.reset(static_cast<std::byte*>(std::aligned_alloc(64, alloc)));
    GSCHECK_CHECK(buffer_ != nullptr);
    std::memcpy(buffer_.get(), other.buffer_.get(), alloc);
  }
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) {
    Tensor copy(other);
    *this = std::move(copy);
  }
  return *this;
}

std::byte* Tensor::data() {
  GSCHECK_CHECK(dtype_ != DType::kString);
  return buffer_.get();
}
const std::byte* Tensor::data() const {
  GSCHECK_CHECK(dtype_ != DType::kString);
  return buffer_.get();
}
std::vector<std::string>& Tensor::strings() {
  GSCHECK_CHECK(dtype_ == DType::kString);
  return strings_;
}
const std::vector<std::string>& Tensor::strings() const {
  GSCHECK_CHECK(dtype_ == DType::kString);
  return strings_;
}

int64_t Tensor::int_at(int64_t i) const {
  GSCHECK_CHECK(is_integer(dtype_) && i >= 0 && i < num_elements_);
  return visit_dtype(dtype_, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T v;
      std::memcpy(&v, buffer_.get() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
      return static_cast<int64_t>(v);
    } else {
      GSCHECK_CHECK(false);
      return 0;
    }
  });
}

bool Tensor::bit_equal(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (dtype_ == DType::kString) return strings_ == other.strings_;
  return byte_size_ == other.byte_size_ &&
         (byte_size_ == 0 || std::memcmp(buffer_.get(), other.buffer_.get(), byte_size_) == 0);
}

}  // namespace gscheck
