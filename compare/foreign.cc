#include "compare/foreign.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "compare/elements.h"

namespace gscheck::compare {
namespace {

// Inputs past this many elements are not searched (a sorted copy of 16 bytes an element).
constexpr int64_t kSearchCap = int64_t{1} << 22;

using Key = std::array<uint64_t, 2>;

Key key_of(const std::byte* p, std::size_t size) {
  Key k{0, 0};
  std::memcpy(k.data(), p, size);
  return k;
}

// Reads a bool element by its byte: a backend's byte of 2 is no valid bool to load.
template <class T>
bool is_zero(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    unsigned char b;
    std::memcpy(&b, &v, 1);
    return b == 0;
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return to_float(v) == 0.0f;
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    return v.real() == 0 && v.imag() == 0;
  } else {
    return v == T{};
  }
}

}  // namespace

std::optional<int64_t> first_foreign_element(const Case& c, const Tensor& got) {
  std::vector<const Tensor*> inputs;
  if (c.op == Op::kGather || c.op == Op::kGatherNd) {
    if (c.params) inputs.push_back(&*c.params);
  } else if (c.op == Op::kTensorScatterUpdate || c.op == Op::kTensorScatterMin ||
             c.op == Op::kTensorScatterMax) {
    if (c.tensor) inputs.push_back(&*c.tensor);
    if (c.updates) inputs.push_back(&*c.updates);
  }
  if (inputs.empty() || got.dtype() == DType::kString) return std::nullopt;
  int64_t total = 0;
  for (const Tensor* t : inputs) {
    if (t->dtype() != got.dtype()) return std::nullopt;
    total += t->num_elements();
  }
  if (total > kSearchCap) return std::nullopt;
  const std::size_t size = dtype_size(got.dtype());
  return visit_dtype(got.dtype(), [&](auto tag) -> std::optional<int64_t> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::string>) {
      return std::nullopt;
    } else {
      static_assert(sizeof(T) <= sizeof(Key));
      std::vector<Key> known;
      known.reserve(static_cast<std::size_t>(total));
      bool input_nan = false;
      for (const Tensor* t : inputs) {
        for (int64_t i = 0; i < t->num_elements(); ++i) {
          known.push_back(key_of(t->data() + i * size, size));
          input_nan = input_nan || element_is_nan(*t, i);
        }
      }
      std::sort(known.begin(), known.end());
      const T* out = got.template data_as<T>();
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        if (is_zero(out[i]) || (input_nan && element_is_nan(got, i))) continue;
        if (!std::binary_search(known.begin(), known.end(), key_of(got.data() + i * size, size)))
          return i;
      }
      return std::nullopt;
    }
  });
}

}  // namespace gscheck::compare
