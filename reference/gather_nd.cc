// tf.gather_nd: Python's batch_dims lowering (batch coordinates prepended to every index row),
// then GatherNd's checks and copy.
#include <algorithm>
#include <cstring>
#include <limits>

#include "reference/ops.h"
#include "reference/validate.h"

namespace gscheck::reference::detail {
namespace {

constexpr int kMaxDepth = 7;  // GatherNd instantiates index depths 0..7

// The lowered problem: rows of the augmented indices [batch, rows_per_batch, batch_dims + depth].
struct Geometry {
  int64_t batch = 1;                // prod(params.shape[:batch_dims])
  int64_t rows_per_batch = 0;       // rows of one batch
  int64_t batch_stride = 0;         // slices between consecutive batches of params
  int depth = 0;                    // coordinates read from indices per row (without batch coords)
  int64_t dims[kMaxDepth] = {};     // params dims addressed by those coordinates
  int64_t strides[kMaxDepth] = {};  // their strides, in slices
  int64_t slice = 1;                // elements per slice
};

// Gathers every row; returns the last bad row when bad indices raise, else -1. Bad rows give a
// zero (default-constructed) slice.
template <class T, class Index>
int64_t gather_nd_rows(const Tensor& params, const Tensor& indices, Tensor& out,
                       const Geometry& geo, bool raise, IndexRule rule) {
  const Geometry g = geo;  // a local copy the compiler can keep in registers across memcpy
  const T* p = params.data_as<T>();
  const Index* ix = indices.data_as<Index>();
  T* o = out.data_as<T>();
  const std::size_t slice_bytes = static_cast<std::size_t>(g.slice) * sizeof(T);
  int64_t bad = -1;
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t first = b * g.rows_per_batch;  // this batch's first row
    const int64_t base = b * g.batch_stride;
    for_each_row_prefetched(
        g.rows_per_batch, p, slice_bytes, /*for_write=*/false,
        [&](int64_t i) {
          return row_slice_offset(ix + (first + i) * g.depth, g.depth, g.dims, g.strides, base,
                                  g.slice, rule);
        },
        [&](int64_t i, int64_t offset) {
          T* dst = o + (first + i) * g.slice;
          if (offset < 0) {
            bad = first + i;  // TF's CPU generator records the row and moves on
            if (!raise) std::fill_n(dst, g.slice, T{});
          } else if constexpr (std::is_same_v<T, std::string>) {
            std::copy_n(p + offset, g.slice, dst);
          } else {
            std::memcpy(dst, p + offset, slice_bytes);
          }
          return true;
        });
  }
  return raise ? bad : -1;
}

// GatherNd's CPU generator (gather_nd_op_cpu_impl.h, TF 2.21) stores every bad row it meets
// into one atomic in Eigen's parallelFor shards, so the last store names the last bad row of
// some shard. One thread names the last bad row (the message); shards end at multiples of at
// least min_shard_units (an over-approximation: every block size from that minimum), so a bad
// row r is nameable when r + 1 lies there.
Error bad_row_error(const Tensor& params, const Tensor& indices, const Geometry& g, int64_t last,
                    int bd, int64_t batch, int64_t element_bytes) {
  const auto& pd = params.shape().dims();
  const auto& id = indices.shape().dims();
  const int64_t depth = g.depth;
  // The message quotes the augmented row: batch coordinates, then the row's own indices,
  // located in the augmented indices shape [batch] + indices.shape[batch_dims:-1].
  std::vector<int64_t> row_dims;
  if (bd > 0) row_dims.push_back(batch);
  row_dims.insert(row_dims.end(), id.begin() + bd, id.end() - 1);
  const Shape row_shape(std::move(row_dims));
  const Shape batch_shape(std::vector<int64_t>(pd.begin(), pd.begin() + bd));
  auto text = [&](int64_t row) {
    std::string values;
    if (bd > 0) {
      const std::string batch_pos = slice_debug_string(batch_shape, row / g.rows_per_batch);
      // "[b0,b1]" -> "b0, b1"
      for (char ch : batch_pos.substr(1, batch_pos.size() - 2)) {
        values += ch;
        if (ch == ',') values += ' ';
      }
    }
    for (int64_t k = 0; k < depth; ++k) {
      if (!values.empty()) values += ", ";
      values += std::to_string(indices.int_at(row * depth + k));
    }
    return "indices" + slice_debug_string(row_shape, row) + " = [" + values +
           "] does not index into param shape " + params.shape().to_string();
  };
  Error e = bad_index(text(last));
  // Eigen's cost of a row: sizeof(T) * (slice + IXDIM) bytes loaded and stored, slice + IXDIM
  // cycles, at 11/64 cycles per byte each way (TensorCostModel::totalCost).
  const int64_t units = g.batch * g.rows_per_batch;
  const double per_row = static_cast<double>(g.slice + bd + depth);
  const double cost = 2 * (11.0 / 64) * static_cast<double>(element_bytes) * per_row + per_row;
  const int64_t min_end = min_shard_units(units, cost, /*with_sharder=*/false);
  if (min_end == 0) return e;
  for (int64_t r = std::max<int64_t>(0, min_end - 1); r < last; ++r) {
    bool is_bad = false;
    for (int64_t k = 0; k < depth && !is_bad; ++k)
      is_bad = !in_range(indices.int_at(r * depth + k), g.dims[k]);
    if (!is_bad) continue;
    if (e.alternatives.size() == kMaxMessageAlternatives) break;
    e.alternatives.push_back(text(r));
  }
  return e;
}

}  // namespace

Outcome run_gather_nd(const Case& c, const Options& options) {
  const Tensor& params = *c.params;
  const Tensor& indices = *c.indices;
  const int rp = params.rank();
  const int ri = indices.rank();
  const auto& pd = params.shape().dims();
  const auto& id = indices.shape().dims();

  // Python's batch_gather_nd checks and lowering.
  const int64_t bd = c.batch_dims;
  int64_t batch = 1;
  if (bd < 0) return invalid_argument("tf.gather_nd does not allow negative batch_dims.");
  if (bd > 0) {
    if (bd >= ri) {
      return invalid_argument("Argument `batch_dims` = " + std::to_string(bd) +
                              " must be less than rank(`indices`) = " + std::to_string(ri));
    }
    if (bd >= rp) {
      return invalid_argument("Argument `batch_dims` = " + std::to_string(bd) +
                              " must be less than rank(`params`) = " + std::to_string(rp));
    }
    // indices are reshaped to [prod(params.shape[:batch_dims])] + indices.shape[batch_dims:].
    const Product pb = product(pd, 0, static_cast<size_t>(bd));
    const Product rest = product(id, static_cast<size_t>(bd), id.size());
    std::optional<int64_t> want =
        pb.overflow || rest.overflow ? std::nullopt : checked_mul(pb.value, rest.value);
    if (!want || *want != indices.num_elements()) {
      return invalid_argument("Input to reshape is a tensor with " +
                              std::to_string(indices.num_elements()) +
                              " values, but the requested shape has " +
                              (want ? std::to_string(*want) : pb.text() + " * " + rest.text()));
    }
    batch = pb.value;
  }

  // Kernel lookup (after Python's checks): the index dtype, and the policy, which GatherNd's
  // registrations constrain to "", DEFAULT, ERROR, IGNORE: any other value finds no kernel
  // (TensorFlow 2.21: NotFoundError), before the kernel's own "Unknown bad indices" check.
  if (!is_index_dtype(indices.dtype())) {
    return unsupported("gather_nd: TensorFlow has no GatherNd kernel for indices of dtype " +
                       std::string(dtype_name(indices.dtype())) +
                       " (it registers int16, int32 and int64)");
  }
  if (std::optional<Error> e = xla_string_error(c.semantics, params.dtype(), "gather_nd"))
    return *e;
  Expected<BadIndicesPolicy> policy = parse_policy(c.bad_indices_policy, c.semantics);
  if (!policy.ok()) {
    return unsupported("gather_nd: TensorFlow has no GatherNd kernel for bad_indices_policy \"" +
                       c.bad_indices_policy + "\" (it registers \"\", DEFAULT, ERROR, IGNORE)");
  }

  if (rp < 1) return invalid_argument("params must be at least a vector");
  if (ri < 1) return invalid_argument("indices must be at least a vector");
  const int64_t depth = id.back();
  const int64_t aug_depth = bd + depth;
  if (aug_depth > rp) {
    return invalid_argument("index innermost dimension length must be <= params rank; saw: " +
                            std::to_string(aug_depth) + " vs. " + std::to_string(rp));
  }
  // Rows of the augmented indices [batch] + indices.shape[batch_dims:-1].
  Product rows = product(id, static_cast<size_t>(bd), id.size() - 1);
  if (!rows.overflow) {
    auto all = checked_mul(batch, rows.value);
    rows = all ? Product{*all, false} : Product{0, true};
  }
  if (rows.overflow || rows.value > std::numeric_limits<int32_t>::max()) {
    return invalid_argument("indices has too many elements for int indexing: " + rows.text() +
                            " > 2147483647");
  }
  const int64_t imax = index_max(indices.dtype());
  if (params.num_elements() > imax) {
    return invalid_argument(
        "params.NumElements() too large for " + index_type_name(indices.dtype()) +
        " indexing: " + std::to_string(params.num_elements()) + " > " + std::to_string(imax));
  }
  const size_t d = static_cast<size_t>(aug_depth);
  const Product slice = product(pd, d, pd.size());
  if (slice.overflow || slice.value > imax) {
    return invalid_argument("slice size is too large for indexing: " + slice.text() + " > " +
                            std::to_string(imax));
  }

  // Output: params.shape[:batch_dims] + indices.shape[batch_dims:-1] + params.shape[depth:].
  std::vector<int64_t> out_dims(pd.begin(), pd.begin() + static_cast<std::ptrdiff_t>(bd));
  out_dims.insert(out_dims.end(), id.begin() + static_cast<std::ptrdiff_t>(bd), id.end() - 1);
  out_dims.insert(out_dims.end(), pd.begin() + static_cast<std::ptrdiff_t>(d), pd.end());
  GSCHECK_RETURN_IF_ERROR(check_output_rank(static_cast<int64_t>(out_dims.size())));
  Expected<Tensor> out =
      new_output(params.dtype(), Shape(std::move(out_dims)), options.max_output_bytes, false);
  if (!out.ok()) return out.error();

  if (ri == bd + 1) {  // one index row per batch example: each coordinate is a 0-d index
    for (int64_t k = 0; k < depth; ++k)
      if (pd[static_cast<size_t>(bd + k)] == 0)
        if (std::optional<Error> e = scalar_index_into_empty_dim(c.semantics, static_cast<int>(k)))
          return *e;
  }
  if (rows.value == 0) return out;
  if (params.num_elements() == 0) {
    if (is_xla_profile(c.semantics)) {
      // Rows read a dim of 0: the first one (output elements exist, so it is an indexed dim).
      const int zero_dim = static_cast<int>(std::find(pd.begin(), pd.end(), 0) - pd.begin());
      if (std::optional<Error> e = gather_from_empty_dim(c.semantics, zero_dim)) return *e;
      return new_output(params.dtype(), out->shape(), options.max_output_bytes, /*zero=*/true);
    }
    return invalid_argument("Requested more than 0 entries, but params is empty.  Params shape: " +
                            params.shape().to_string());
  }
  if (aug_depth > kMaxDepth) {
    return invalid_argument(
        "Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested "
        "rank: " +
        std::to_string(aug_depth));
  }

  // params non-empty: every product below is a factor of its element count.
  Geometry g;
  g.batch = batch;
  g.rows_per_batch = rows.value / batch;
  g.depth = static_cast<int>(depth);
  g.slice = slice.value;
  g.batch_stride = product(pd, static_cast<size_t>(bd), d).value;
  for (int k = 0; k < g.depth; ++k) {
    const size_t dim = static_cast<size_t>(bd) + static_cast<size_t>(k);
    g.dims[k] = pd[dim];
    g.strides[k] = product(pd, dim + 1, d).value;
  }

  const bool raise = bad_indices_raise(c.semantics, *policy, options.departure);
  IndexRule rule = index_rule(c.semantics, /*gathers=*/true, *policy, options.departure);
  if (options.departure.int64_cut == Departure::Int64Cut::kJaxNumpy &&
      *policy != BadIndicesPolicy::kIgnore && indices.rank() == bd + 1)
    rule = jax_numpy_slice_rule(rule, params.rank() - bd);
  const int64_t bad = visit_dtype(params.dtype(), [&](auto ttag) {
    using T = typename decltype(ttag)::type;
    return visit_index_dtype(indices.dtype(), [&](auto itag) {
      using Index = typename decltype(itag)::type;
      return gather_nd_rows<T, Index>(params, indices, *out, g, raise, rule);
    });
  });
  if (bad >= 0) {
    return bad_row_error(params, indices, g, bad, static_cast<int>(bd), batch,
                         tf_element_bytes(params.dtype()));
  }
  return out;
}

}  // namespace gscheck::reference::detail
