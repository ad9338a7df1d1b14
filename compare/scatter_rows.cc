#include "compare/scatter_rows.h"

#include <algorithm>

namespace gscheck::compare {

std::optional<ScatterRows> decode_scatter_rows(const Case& c, const Shape& out_shape,
                                               const RowRule& rule) {
  if (!is_scatter(c.op) || !c.indices || !c.updates) return std::nullopt;
  const Tensor& indices = *c.indices;
  if (indices.rank() < 1 || !is_integer(indices.dtype())) return std::nullopt;
  const int64_t depth = indices.shape().dim(indices.rank() - 1);
  if (depth < 1 || depth > out_shape.rank()) return std::nullopt;
  const auto rows = indices.shape().num_elements(0, indices.rank() - 1);
  const auto slice = out_shape.num_elements(static_cast<int>(depth), out_shape.rank());
  if (!rows || !slice) return std::nullopt;
  const auto update_count = checked_mul(*rows, *slice);
  if (!update_count || *update_count != c.updates->num_elements()) return std::nullopt;

  const bool wraps = c.semantics == Semantics::kJax || rule.wrap_negative;
  auto cut = [&](int64_t x) {
    const uint32_t low = static_cast<uint32_t>(x);
    return rule.cut_unsigned ? static_cast<int64_t>(low)
                             : static_cast<int64_t>(static_cast<int32_t>(low));
  };
  ScatterRows out;
  out.slice_size = *slice;
  out.num_rows = *rows;
  out.by_slice.reserve(static_cast<std::size_t>(*rows));
  for (int64_t r = 0; r < *rows; ++r) {
    int64_t slice_id = 0;
    bool in_range = true;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t v = indices.int_at(r * depth + d);
      const int64_t dim = out_shape.dim(static_cast<int>(d));
      if (rule.low_32_bits && !rule.cut_after_wrap) v = cut(v);
      if (wraps && v < 0) v += dim;  // jax.numpy: once; v < 0 < dim cannot overflow
      if (rule.low_32_bits && rule.cut_after_wrap) v = cut(v);
      if (v < 0 || v >= dim) {  // stop before v enters the arithmetic (v may be INT64_MAX)
        in_range = false;
        break;
      }
      slice_id = slice_id * dim + v;  // < prod(out.shape[:depth]) while in range: no overflow
    }
    if (in_range) out.by_slice.emplace_back(slice_id, r);
  }
  std::sort(out.by_slice.begin(), out.by_slice.end());
  return out;
}

}  // namespace gscheck::compare
