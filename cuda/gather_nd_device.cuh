// gather_nd (tf.gather_nd / GatherNd, batch_dims included): the index map, device code the gather
// kernels of cuda/slice_copy.cuh run. Sees only the portability layer and the kernel table.
#pragma once

#include <cstdint>

#include "cuda/kernel_table.h"  // kMaxDepth
#include "cuda/portability.h"

namespace gscheck::cuda {

/// Output row r reads params slice batch * batch_stride + sum_k indices[r, k] * strides[k];
/// any coordinate outside [0, dims[k]) makes the whole row bad (zeroed, row recorded).
template <class Index, class Off>
struct GatherNdIndexMap {
  const Index* d_indices;
  int depth;
  DivBy<Off> rows_per_batch;
  Off batch_stride;
  Off dims[kMaxDepth];
  Off strides[kMaxDepth];
  int64_t* d_bad;

  GSCHECK_HD_INLINE bool source(Off row, Off* src) const {
    const Index* ix = d_indices + static_cast<uint64_t>(row) * depth;
    Off s = rows_per_batch.div(row) * batch_stride;
    for (int k = 0; k < depth; ++k) {
      const int64_t v = static_cast<int64_t>(ix[k]);
      if (v < 0 || v >= static_cast<int64_t>(dims[k])) {
        record_bad_position(d_bad, static_cast<int64_t>(row));
        return false;
      }
      s += static_cast<Off>(v) * strides[k];
    }
    *src = s;
    return true;
  }
};

}  // namespace gscheck::cuda
