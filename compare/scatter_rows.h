// Which index rows of a scatter case address which output slice. An independent decode from the
// case's own tensors (no reference or cuda code), used to find duplicates, the operands of each
// output element and the elements no row addresses.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/case.h"

namespace gscheck::compare {

/// How index values are read besides the case's semantics: a backend graded against the
/// reference under a known failure's rule (harness/explain.cc) reads them so too.
struct RowRule {
  bool wrap_negative = false;   ///< a negative coordinate reads v + dim, once
  bool low_32_bits = false;     ///< an int64 value is cut to its low 32 bits (as int32)
  bool cut_after_wrap = false;  ///< the cut comes after the wrap, else before it
  bool cut_unsigned = false;    ///< the low 32 bits read as uint32, not int32
};

/// The in-range index rows of a scatter case, grouped by the output slice they address.
struct ScatterRows {
  int64_t slice_size = 0;  ///< elements per slice: prod(out.shape[depth:])
  int64_t num_rows = 0;    ///< N = prod(indices.shape[:-1]), in-range or not
  /// (slice, row) for every in-range row, sorted by slice then row (row order kept).
  std::vector<std::pair<int64_t, int64_t>> by_slice;
};

/// Decode the rows of a scatter case whose output has out_shape. Rows with any coordinate
/// outside [0, out_shape[d]) are left out (they were skipped or made the case fail); under jax
/// semantics (or under rule.wrap_negative) a negative coordinate is first wrapped once, as
/// jax.numpy does; rule.low_32_bits cuts each value to int32 before or after that wrap.
/// nullopt when the case is not a consistent scatter (missing inputs, depth 0 or above the
/// output's rank, updates of the wrong size): callers then compare bit-exactly.
std::optional<ScatterRows> decode_scatter_rows(const Case& c, const Shape& out_shape,
                                               const RowRule& rule = {});

}  // namespace gscheck::compare
