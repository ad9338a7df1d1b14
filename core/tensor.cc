#include "core/tensor.h"

#include <sys/mman.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace gscheck {

std::optional<int64_t> tensor_bytes(DType dt, const Shape& shape) {
  auto n = shape.num_elements();
  if (!n) return std::nullopt;
  const int64_t elem = dt == DType::kString ? static_cast<int64_t>(sizeof(std::string))
                                            : static_cast<int64_t>(dtype_size(dt));
  return checked_mul(*n, elem);
}

void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < 4 * kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

namespace {

// Buffers from 1 MiB up are mapped directly (fresh mappings are zero, so zeros() skips its
// memset) and, when freed, kept in a small cache for the next tensor of similar size: an oracle
// called in a loop on large tensors otherwise spends more time faulting in fresh pages than
// copying (docs/performance.md). GSCHECK_BUFFER_CACHE_MB bounds the cache (default 1024, 0 = off).
constexpr std::size_t kLargeBuffer = std::size_t{1} << 20;
constexpr std::size_t kMaxCachedBlock = std::size_t{512} << 20;

class LargeBufferCache {
 public:
  // Never destroyed: tensors in other static objects may be freed after it would be.
  static LargeBufferCache& instance() {
    static auto* cache = new LargeBufferCache;
    return *cache;
  }
  // A cached block of at least `bytes` and at most twice that (so a small tensor does not pin a
  // huge block), or nullptr.
  std::byte* take(std::size_t bytes, std::size_t* capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t best = blocks_.size();
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const std::size_t c = blocks_[i].capacity;
      if (c >= bytes && c <= 2 * bytes && (best == blocks_.size() || c < blocks_[best].capacity))
        best = i;
    }
    if (best == blocks_.size()) return nullptr;
    std::byte* p = blocks_[best].p;
    *capacity = blocks_[best].capacity;
    total_ -= *capacity;
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
    return p;
  }
  void give(std::byte* p, std::size_t capacity) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (capacity <= kMaxCachedBlock && capacity <= limit_) {
        while (total_ + capacity > limit_) {  // evict the oldest
          munmap(blocks_.front().p, blocks_.front().capacity);
          total_ -= blocks_.front().capacity;
          blocks_.erase(blocks_.begin());
        }
        blocks_.push_back({p, capacity});
        total_ += capacity;
        return;
      }
    }
    munmap(p, capacity);
  }

 private:
  LargeBufferCache() {
    if (const char* env = std::getenv("GSCHECK_BUFFER_CACHE_MB")) {
      limit_ = static_cast<std::size_t>(std::strtoull(env, nullptr, 10)) << 20;
    }
  }
  struct Block {
    std::byte* p;
    std::size_t capacity;
  };
  std::mutex mu_;
  std::vector<Block> blocks_;
  std::size_t total_ = 0;
  std::size_t limit_ = std::size_t{1} << 30;
};

}  // namespace

void Tensor::BufferDeleter::operator()(std::byte* p) const {
  if (capacity >= kLargeBuffer) {
    LargeBufferCache::instance().give(p, capacity);
  } else {
    std::free(p);
  }
}

Expected<bool> Tensor::allocate_buffer() {
  // 64-byte alignment so vector paths see aligned bases; aligned_alloc wants a multiple of it.
  const std::size_t bytes = (byte_size_ + 63) / 64 * 64;
  if (bytes == 0) return false;
  auto out_of_memory = [&] {
    return Error{ErrorClass::kResourceExhausted,
                 "out of memory allocating " + std::to_string(bytes) + " bytes"};
  };
  if (bytes < kLargeBuffer) {
    buffer_ = {static_cast<std::byte*>(std::aligned_alloc(64, bytes)), BufferDeleter{bytes}};
    if (!buffer_) return out_of_memory();
    return false;
  }
  std::size_t capacity = 0;
  if (std::byte* p = LargeBufferCache::instance().take(bytes, &capacity)) {
    buffer_ = {p, BufferDeleter{capacity}};
    return false;  // reused: holds an earlier tensor's data
  }
  capacity = (bytes + kLargeBuffer - 1) / kLargeBuffer * kLargeBuffer;
  void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return out_of_memory();
  advise_huge_pages(p, capacity);
  buffer_ = {static_cast<std::byte*>(p), BufferDeleter{capacity}};
  return true;
}

Expected<Tensor> Tensor::zeros(DType dt, Shape shape, int64_t max_bytes) {
  return make(dt, std::move(shape), max_bytes, /*zero=*/true);
}

Expected<Tensor> Tensor::uninitialized(DType dt, Shape shape, int64_t max_bytes) {
  return make(dt, std::move(shape), max_bytes, /*zero=*/false);
}

Expected<Tensor> Tensor::make(DType dt, Shape shape, int64_t max_bytes, bool zero) {
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
  auto fresh_zero = t.allocate_buffer();
  if (!fresh_zero.ok()) return fresh_zero.error();
  if (zero && !*fresh_zero && t.buffer_) std::memset(t.buffer_.get(), 0, t.byte_size_);
  return t;
}

Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_),
      shape_(other.shape_),
      num_elements_(other.num_elements_),
      byte_size_(other.byte_size_),
      strings_(other.strings_) {
  if (other.buffer_) {
    GSCHECK_CHECK(allocate_buffer().ok());
    std::memcpy(buffer_.get(), other.buffer_.get(), byte_size_);
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

namespace {

template <class T>
T canonical_nan(T x) {
  if constexpr (std::is_same_v<T, Float16>) {
    if ((x.bits & 0x7fff) > 0x7c00) x.bits = static_cast<uint16_t>((x.bits & 0x8000) | 0x7e00);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    if ((x.bits & 0x7fff) > 0x7f80) x.bits = static_cast<uint16_t>((x.bits & 0x8000) | 0x7fc0);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) x = std::copysign(std::numeric_limits<T>::quiet_NaN(), x);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    x = T(canonical_nan(x.real()), canonical_nan(x.imag()));
  }
  return x;
}

}  // namespace

void canonicalize_nans(Tensor& t) {
  if (t.dtype() == DType::kString) return;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = t.data_as<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) data[i] = canonical_nan(data[i]);
  });
}

}  // namespace gscheck
