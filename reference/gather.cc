// tf.gather: Python's axis/batch_dims handling, then GatherV2's checks and copy.
#include <algorithm>
#include <cstring>
#include <limits>

#include "reference/ops.h"
#include "reference/validate.h"

namespace gscheck::reference::detail {
namespace {

// params viewed as [batch, outer, dim, inner]; indices as [batch, n]; out as [batch, outer, n,
// inner].
struct Geometry {
  int64_t batch = 1, outer = 1, dim = 0, inner = 1, n = 0;
};

// Copies every row; returns the flat position of the first bad index when bad indices raise
// (tf-cpu), else -1. Bad indices under tf-gpu give zero (default-constructed) elements; xla and
// jax resolve them by their rule first (a bad one is then a dim of 0, which also gives zeros).
template <class T, class Index>
int64_t gather_rows(const Tensor& params, const Tensor& indices, Tensor& out, const Geometry& geo,
                    bool raise, IndexRule rule) {
  const Geometry g = geo;  // a local copy the compiler can keep in registers across memcpy
  const T* p = params.data_as<T>();
  const Index* ix = indices.data_as<Index>();
  T* o = out.data_as<T>();
  const int64_t inner = g.inner;
  const std::size_t slice_bytes = static_cast<std::size_t>(inner) * sizeof(T);
  int64_t bad = -1;
  for (int64_t b = 0; b < g.batch && bad < 0; ++b) {
    const Index* ib = ix + b * g.n;
    for (int64_t q = 0; q < g.outer && bad < 0; ++q) {
      const int64_t bq = b * g.outer + q;
      const T* src = p + bq * g.dim * inner;
      T* dst = o + bq * g.n * inner;
      for_each_row_prefetched(
          g.n, src, slice_bytes, /*for_write=*/false,
          [&](int64_t i) {
            const int64_t v = resolve_coordinate(static_cast<int64_t>(ib[i]), g.dim, rule);
            return v >= 0 ? v * inner : int64_t{-1};
          },
          [&](int64_t i, int64_t offset) {
            T* d = dst + i * inner;
            if (offset < 0) {
              if (raise) {
                bad = b * g.n + i;
                return false;
              }
              std::fill_n(d, inner, T{});
            } else if constexpr (std::is_same_v<T, std::string>) {
              std::copy_n(src + offset, inner, d);
            } else {
              std::memcpy(d, src + offset, slice_bytes);
            }
            return true;
          });
    }
  }
  return bad;
}

// HandleCopies (gather_functor.h, gather_functor_batched.h of TF 2.21) walks the work units
// (batch, outer, index) in shards; each shard stops at its first bad index and stores it under a
// mutex, so the last shard to find one names it. One thread names the first bad index (the
// message); a shard may start at any unit from min_shard_units on (an over-approximation: every
// block size from that minimum), so a bad index is nameable when one of its units lies there.
Error bad_index_error(const Tensor& indices, const Geometry& g, int64_t first,
                      int64_t element_bytes) {
  auto text = [&](int64_t j) {
    return "indices" + slice_debug_string(indices.shape(), j) + " = " +
           std::to_string(indices.int_at(j)) + " is not in [0, " + std::to_string(g.dim) + ")";
  };
  Error e = bad_index(text(first));
  const int64_t units = g.batch * g.outer * g.n;
  const int64_t min_start =
      min_shard_units(units, static_cast<double>(g.inner * element_bytes), /*with_sharder=*/true);
  if (min_start == 0) return e;
  for (int64_t j = first + 1; j < indices.num_elements(); ++j) {
    if (in_range(indices.int_at(j), g.dim)) continue;
    const int64_t b = j / g.n;
    const int64_t last_unit = (b * g.outer + g.outer - 1) * g.n + j % g.n;  // outer row outer-1
    if (last_unit < min_start) continue;
    if (e.alternatives.size() == kMaxMessageAlternatives) break;
    e.alternatives.push_back(text(j));
  }
  return e;
}

}  // namespace

Outcome run_gather(const Case& c, const Options& options) {
  const Tensor& params = *c.params;
  const Tensor& indices = *c.indices;
  // Python: axis=None means axis=batch_dims; array_ops.gather first tests
  // `tensor_util.constant_value(axis) != 0` with NumPy, whose truth value of an array of 0 or
  // 2+ elements raises ValueError (TF 2.21, NumPy 2.4; docs/spec_notes.md). An axis equal to 0
  // (scalar or one element) calls GatherV2 without batch_dims, so batch_dims is then dropped.
  // The raw kernel (api kernel) always has its axis input and keeps batch_dims.
  const bool python = c.api == Api::kPython;
  const Tensor axis_tensor =
      c.axis ? *c.axis : Tensor::from_values<int64_t>(Shape{}, {c.batch_dims});
  if (python && axis_tensor.num_elements() > 1) {
    return invalid_argument(
        "The truth value of an array with more than one element is ambiguous. Use a.any() or "
        "a.all()");
  }
  if (python && axis_tensor.num_elements() == 0) {
    return invalid_argument(
        "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an "
        "array is not empty.");
  }
  int64_t batch_dims = c.batch_dims;
  if (python && is_integer(axis_tensor.dtype()) && axis_tensor.int_at(0) == 0) batch_dims = 0;
  // No kernel for the index dtype: after Python's own test of the axis.
  if (!is_index_dtype(indices.dtype())) {
    return unsupported("gather: TensorFlow has no GatherV2 kernel for indices of dtype " +
                       std::string(dtype_name(indices.dtype())) +
                       " (it registers int16, int32 and int64)");
  }
  if (std::optional<Error> e = xla_string_error(c.semantics, params.dtype(), "gather")) return *e;

  // The kernel reads its batch_dims attribute as an int32.
  if (batch_dims < std::numeric_limits<int32_t>::min() ||
      batch_dims > std::numeric_limits<int32_t>::max()) {
    return invalid_argument("Attr batch_dims has value " + std::to_string(batch_dims) +
                            " out of range for an int32");
  }

  const int rp = params.rank();
  const int ri = indices.rank();
  if (rp < 1) return invalid_argument("params must be at least 1 dimensional");
  if (axis_tensor.rank() != 0) return invalid_argument("axis must be scalar");
  if (axis_tensor.dtype() != DType::kInt32 && axis_tensor.dtype() != DType::kInt64) {
    return invalid_argument("axis must be int32 or int64.");
  }
  int64_t axis = axis_tensor.int_at(0);
  // TensorFlow 2.21's texts (the golden corpus was cross-checked with it); INT64_MIN aborts
  // there, a newer kernel refuses it like INT64_MAX.
  if (axis == std::numeric_limits<int64_t>::max()) {
    return invalid_argument("axis must be less than std::numeric_limits<int64_t>::max()");
  }
  if (axis == std::numeric_limits<int64_t>::min()) {
    return invalid_argument("axis must be greater than std::numeric_limits<int64_t>::min()");
  }
  const int64_t min_rank = axis < 0 ? -axis : axis + 1;
  if (rp < min_rank) {
    return invalid_argument("Shape must be at least rank " + std::to_string(min_rank) +
                            " but is rank " + std::to_string(rp));
  }
  if (axis < 0) axis += rp;

  if (batch_dims != 0) {
    if (batch_dims < -ri || batch_dims > ri) {
      return invalid_argument("Expected batch_dims in the range [" + std::to_string(-ri) + ", " +
                              std::to_string(ri) + "], but got " + std::to_string(batch_dims));
    }
    if (batch_dims < 0) batch_dims += ri;
    if (batch_dims >= rp) {
      return invalid_argument("batch_dims (" + std::to_string(batch_dims) +
                              ") must be less than rank(params) (" + std::to_string(rp) + ").");
    }
    if (axis < batch_dims) {
      return invalid_argument("batch_dims (" + std::to_string(batch_dims) +
                              ") must be less than or equal to axis (" + std::to_string(axis) +
                              ").");
    }
    for (int i = 0; i < batch_dims; ++i) {
      if (params.shape().dim(i) != indices.shape().dim(i)) {
        return invalid_argument("params.shape[" + std::to_string(i) +
                                "]: " + std::to_string(params.shape().dim(i)) +
                                " should be equal to indices.shape[" + std::to_string(i) +
                                "]: " + std::to_string(indices.shape().dim(i)));
      }
    }
  }

  const auto& pd = params.shape().dims();
  const auto& id = indices.shape().dims();
  const size_t a = static_cast<size_t>(axis);
  const size_t bd = static_cast<size_t>(batch_dims);
  const int64_t gather_dim = pd[a];
  if (gather_dim > index_max(indices.dtype())) {
    return invalid_argument("params.shape[" + std::to_string(axis) + "] too large for " +
                            index_type_name(indices.dtype()) +
                            " indexing: " + std::to_string(gather_dim) + " > " +
                            std::to_string(index_max(indices.dtype())));
  }

  // params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:]
  std::vector<int64_t> out_dims(pd.begin(), pd.begin() + static_cast<std::ptrdiff_t>(a));
  out_dims.insert(out_dims.end(), id.begin() + static_cast<std::ptrdiff_t>(bd), id.end());
  out_dims.insert(out_dims.end(), pd.begin() + static_cast<std::ptrdiff_t>(a) + 1, pd.end());
  GSCHECK_RETURN_IF_ERROR(check_output_rank(static_cast<int64_t>(out_dims.size())));
  Expected<Tensor> out =
      new_output(params.dtype(), Shape(std::move(out_dims)), options.max_output_bytes, false);
  if (!out.ok()) return out.error();
  if (gather_dim == 0 && indices.rank() == batch_dims) {
    if (std::optional<Error> e =
            scalar_index_into_empty_dim(c.semantics, static_cast<int>(axis - batch_dims)))
      return *e;
  }
  // Lazy validation: with no output element (N, outer, inner or batch 0) no index is read.
  if (out->num_elements() == 0) return out;

  // Every factor below divides the non-zero output count, so none overflows.
  Geometry g;
  g.batch = product(pd, 0, bd).value;
  g.outer = product(pd, bd, a).value;
  g.dim = gather_dim;
  g.inner = product(pd, a + 1, pd.size()).value;
  g.n = indices.num_elements() / g.batch;

  if (g.dim == 0) {
    if (std::optional<Error> e = gather_from_empty_dim(c.semantics, static_cast<int>(axis)))
      return *e;
  }
  const BadIndicesPolicy policy = BadIndicesPolicy::kDefault;  // GatherV2 reads no policy here
  const bool raise = bad_indices_raise(c.semantics, policy, options.departure);
  IndexRule rule = index_rule(c.semantics, /*gathers=*/true, policy, options.departure);
  if (options.departure.int64_cut == Departure::Int64Cut::kJaxNumpy && ri == batch_dims)
    rule = jax_numpy_slice_rule(rule, rp - batch_dims);
  const int64_t bad = visit_dtype(params.dtype(), [&](auto ttag) {
    using T = typename decltype(ttag)::type;
    return visit_index_dtype(indices.dtype(), [&](auto itag) {
      using Index = typename decltype(itag)::type;
      return gather_rows<T, Index>(params, indices, *out, g, raise, rule);
    });
  });
  if (bad >= 0) return bad_index_error(indices, g, bad, tf_element_bytes(params.dtype()));
  return out;
}

}  // namespace gscheck::reference::detail
