// gather (tf.gather / GatherV2): the index map, device code the gather kernels of
// cuda/slice_copy.cuh run. Sees only the portability layer.
#pragma once

#include <cstdint>

#include "cuda/portability.h"

namespace gscheck::cuda {

/// Output row (b, o, i) of [batch, outer, n_idx] reads params row (b, o, indices[b, i]) of
/// [batch, outer, axis_dim]; an index outside [0, axis_dim) records its flat position.
template <class Index, class Off>
struct GatherIndexMap {
  const Index* d_indices;
  DivBy<Off> n_idx;  // divisors set up once per launch (no per-row integer division)
  DivBy<Off> outer;
  Off axis_dim;
  int64_t* d_bad;

  GSCHECK_HD_INLINE bool source(Off row, Off* src) const {
    const Off n = n_idx.value();
    const Off bo = n_idx.div(row);
    const Off i = row - bo * n;
    const Off pos = outer.div(bo) * n + i;
    const int64_t v = static_cast<int64_t>(d_indices[pos]);
    if (v < 0 || v >= static_cast<int64_t>(axis_dim)) {
      record_bad_position(d_bad, static_cast<int64_t>(pos));
      return false;
    }
    *src = bo * axis_dim + static_cast<Off>(v);
    return true;
  }
};

}  // namespace gscheck::cuda
