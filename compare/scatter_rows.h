// Which index rows of a scatter case address which output slice. An independent decode from the
// case's own tensors (no reference or cuda code), used to find duplicates, the operands of each
// output element and the elements no row addresses.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/case.h"

namespace gscheck::compare {

/// The in-range index rows of a scatter case, grouped by the output slice they address.
struct ScatterRows {
  int64_t slice_size = 0;  ///< elements per slice: prod(out.shape[depth:])
  int64_t num_rows = 0;    ///< N = prod(indices.shape[:-1]), in-range or not
  /// (slice, row) for every in-range row, sorted by slice then row (row order kept).
  std::vector<std::pair<int64_t, int64_t>> by_slice;
};

/// Decode the rows of a scatter case whose output has out_shape. Rows with any coordinate
/// outside [0, out_shape[d]) are left out (they were skipped or made the case fail); under jax
/// semantics (or with wrap_negative: a backend following negative_indices=wrap) a negative
/// coordinate is first wrapped once, as jax.numpy does.
/// nullopt when the case is not a consistent scatter (missing inputs, depth 0 or above the
/// output's rank, updates of the wrong size): callers then compare bit-exactly.
std::optional<ScatterRows> decode_scatter_rows(const Case& c, const Shape& out_shape,
                                               bool wrap_negative = false);

}  // namespace gscheck::compare
