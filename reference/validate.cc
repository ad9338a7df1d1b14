#include "reference/validate.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace gscheck::reference::detail {

Expected<BadIndicesPolicy> parse_policy(std::string_view s, Semantics semantics) {
  if (is_xla_profile(semantics))
    return s == "IGNORE" ? BadIndicesPolicy::kIgnore : BadIndicesPolicy::kDefault;
  if (std::optional<BadIndicesPolicy> p = bad_indices_policy_from_name(s)) return *p;
  return invalid_argument("Unknown bad indices handling attribute: " + std::string(s));
}

bool bad_indices_raise(Semantics s, BadIndicesPolicy p) {
  switch (s) {
    case Semantics::kTfCpu:
      return p != BadIndicesPolicy::kIgnore;
    case Semantics::kTfGpu:
      return p == BadIndicesPolicy::kError;
    case Semantics::kXla:
    case Semantics::kJax:
      return false;
  }
  return true;
}

std::optional<Error> xla_string_error(Semantics s, DType dt, std::string_view op) {
  if (!is_xla_profile(s) || dt != DType::kString) return std::nullopt;
  return unsupported(std::string(op) + ": XLA compiles no string tensors (" +
                     std::string(semantics_name(s)) + " semantics)");
}

std::optional<Error> gather_from_empty_dim(Semantics s, int dim) {
  if (s != Semantics::kJax) return std::nullopt;
  // jax.lax.gather's shape rule (jax 0.10.2), which jnp indexing reaches with slice size 1.
  return invalid_argument("Slice size at index " + std::to_string(dim) +
                          " in gather op is out of range, must be within [0, 0 + 1), got 1.");
}

std::optional<Error> scalar_index_into_empty_dim(Semantics s, int axis) {
  if (s != Semantics::kJax) return std::nullopt;
  // jnp's _index_to_gather (jax 0.10.2) checks an integer index's dim before any gather is
  // built, so an empty output does not spare it: zeros((0, 0))[0] raises, zeros((0, 0))[[0]]
  // is a [1, 0] array.
  return invalid_argument("index is out of bounds for axis " + std::to_string(axis) +
                          " with size 0");
}

IndexRule index_rule(Semantics s, bool gathers, BadIndicesPolicy p) {
  return IndexRule{.wrap_negative = s == Semantics::kJax,
                   .clamp = is_xla_profile(s) && gathers && p != BadIndicesPolicy::kIgnore};
}

IndexRule index_rule(Semantics s, bool gathers, BadIndicesPolicy p, const Departure& d) {
  IndexRule r = index_rule(s, gathers, p);
  using B = Departure::BadIndex;
  if (d.bad_index == B::kRaise || d.bad_index == B::kZeroFill) r.clamp = false;
  if (d.bad_index == B::kClamp) r.clamp = gathers;
  if (d.wrap_negative) r.wrap_negative = true;
  using C = Departure::Int64Cut;
  r.low_32_bits = d.int64_cut != C::kNone;
  r.cut_after_wrap = d.int64_cut_after_wrap();
  r.cut_unsigned = d.int64_cut == C::kLow32BitsUnsigned;
  return r;
}

IndexRule jax_numpy_slice_rule(IndexRule r, int64_t example_params_rank) {
  if (example_params_rank == 1) r.low_32_bits = false;
  r.cut_after_wrap = false;
  return r;
}

bool bad_indices_raise(Semantics s, BadIndicesPolicy p, const Departure& d) {
  if (d.bad_index == Departure::BadIndex::kSemantics) return bad_indices_raise(s, p);
  return d.bad_index == Departure::BadIndex::kRaise;
}

std::string slice_debug_string(const Shape& shape, int64_t flat) {
  const int dims = shape.rank();
  if (dims == 0) return "";
  if (dims == 1) {
    std::string s = "[";  // built by appends: GCC 12 -O3 misreports "[" + to_string() (-Wrestrict)
    s += std::to_string(flat);
    return s + "]";
  }
  // Unflatten from the innermost dim outwards; no dim is 0 when an element exists.
  std::vector<int64_t> pos(static_cast<size_t>(dims), 0);
  int64_t left = flat;
  for (int i = dims - 1; i >= 0; --i) {
    const int64_t d = shape.dim(i);
    if (d <= 0) return "[?]";  // unreachable for a real element; keeps the division safe
    pos[static_cast<size_t>(i)] = left % d;
    left /= d;
  }
  pos[0] += left * shape.dim(0);  // keeps an out-of-shape flat index visible, as TF's strides do
  std::string s;
  for (int i = 0; i < dims; ++i) {
    s += i ? "," : "[";
    s += std::to_string(pos[static_cast<size_t>(i)]);
  }
  return s + "]";
}

std::string Product::text() const {
  return overflow ? std::string("more than 9223372036854775807") : std::to_string(value);
}

Product product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  Product p;
  for (size_t i = begin; i < end && i < dims.size(); ++i) {
    if (dims[i] == 0) return Product{0, false};
    if (p.overflow) continue;
    auto m = checked_mul(p.value, dims[i]);
    if (!m) {
      p.overflow = true;
    } else {
      p.value = *m;
    }
  }
  return p;
}

std::string index_type_name(DType dt) { return std::string(dtype_name(dt)); }

int64_t index_max(DType dt) {
  return visit_index_dtype(dt, [](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    return static_cast<int64_t>(std::numeric_limits<T>::max());
  });
}

Expected<Tensor> new_output(DType dt, Shape shape, int64_t max_bytes, bool zero) {
  return zero ? Tensor::zeros(dt, std::move(shape), max_bytes)
              : Tensor::uninitialized(dt, std::move(shape), max_bytes);
}

int64_t tf_element_bytes(DType dt) {
  return dt == DType::kString ? 24 : static_cast<int64_t>(dtype_size(dt));
}

int64_t min_shard_units(int64_t units, double cost_per_unit, bool with_sharder) {
  if (units <= 1) return 0;
  int64_t best = 0;
  // Eigen ThreadPoolDevice::parallelFor (TensorDeviceThreadPool.h, TensorCostModel.h as shipped
  // with the 2.21 wheel): one thread below kStartupCycles + 1.1 * kPerThreadCycles of work; else
  // blocks of max(ceil(n / (4 * threads)), (Index)(kTaskSize / cost)), never smaller.
  const double total = static_cast<double>(units) * cost_per_unit;
  if ((total - 100000) / 100000 + 0.9 >= 2) {
    const int64_t b = std::max<int64_t>(1, static_cast<int64_t>(40000 / cost_per_unit));
    if (b < units) best = b;
  }
  // Sharder::Do (work_sharder.cc): min(parallelism, units * cost / 10000) shards of equal size.
  if (with_sharder) {
    const auto cost = std::max<int64_t>(1, static_cast<int64_t>(cost_per_unit));
    const int64_t shards = std::min<int64_t>(std::numeric_limits<int>::max(),
                                             units > std::numeric_limits<int64_t>::max() / cost
                                                 ? std::numeric_limits<int64_t>::max() / 10000
                                                 : units * cost / 10000);
    if (shards >= 2) {
      const int64_t b = units / shards + (units % shards != 0);
      if (b < units && (best == 0 || b < best)) best = b;
    }
  }
  return best;
}

Error unsupported(std::string msg) { return Error{ErrorClass::kUnsupported, std::move(msg)}; }

Status check_input_ranks(const Case& c) {
  const std::pair<const std::optional<Tensor>*, const char*> inputs[] = {
      {&c.params, "params"}, {&c.indices, "indices"}, {&c.updates, "updates"},
      {&c.tensor, "tensor"}, {&c.shape, "shape"},     {&c.axis, "axis"}};
  for (const auto& [t, name] : inputs) {
    if (*t && (*t)->rank() > kMaxRank) {
      return invalid_argument(std::string(name) + " has rank " + std::to_string((*t)->rank()) +
                              "; TensorFlow tensors have at most " + std::to_string(kMaxRank) +
                              " dimensions");
    }
  }
  return {};
}

Status check_output_rank(int64_t rank) {
  if (rank > kMaxRank) return invalid_argument("Too many dimensions in tensor");
  return {};
}

}  // namespace gscheck::reference::detail
