// Host-side validation for the cuda backends: TensorFlow's checks (spec order), producing the
// flattened geometry ("plan") each kernel launch needs. Written for cuda/, independent of
// reference/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/case.h"
#include "cuda/kernel_table.h"  // kMaxDepth

namespace gscheck::cuda {

/// gather: params seen as [batch, outer, axis_dim, inner], indices as [batch, n_idx]; the
/// output is [batch, outer, n_idx, inner], one row (slice of `inner` elements) per index use.
struct GatherPlan {
  Shape out_shape;
  int64_t batch = 1;
  int64_t outer = 1;
  int64_t axis_dim = 0;
  int64_t inner = 1;
  int64_t n_idx = 1;
  int64_t out_elements = 0;
};

/// gather_nd: params seen as [batch, dims[0..depth), slice], indices as [rows, depth]. Row r
/// belongs to batch r / rows_per_batch. depth counts only the user's index columns.
struct GatherNdPlan {
  Shape out_shape;
  int64_t rows = 0;
  int64_t rows_per_batch = 1;
  int64_t batch_stride = 1;  ///< params slices per batch
  int batch_dims = 0;
  int depth = 0;
  int64_t dims[kMaxDepth] = {};
  int64_t strides[kMaxDepth] = {};  ///< in slices
  int64_t slice = 1;
  int64_t out_elements = 0;
};

/// scatter_nd / tensor_scatter_nd_*: output seen as [dims[0..depth), slice], updates as
/// [rows, slice].
struct ScatterPlan {
  Shape out_shape;
  int64_t rows = 0;
  int depth = 0;
  int64_t dims[kMaxDepth] = {};
  int64_t strides[kMaxDepth] = {};  ///< in slices
  int64_t slice = 1;
  int64_t out_elements = 0;
};

/// Validate a gather case and compute its plan (errors: TensorFlow's class and text). An output
/// over max_bytes (the run's --max-bytes) is kResourceExhausted.
Expected<GatherPlan> validate_gather(const Case& c, int64_t max_bytes = kDefaultMaxCaseBytes);
/// Validate a gather_nd case (batch_dims included) and compute its plan.
/// tf.gather_nd's Python-level batch_dims checks (they run before the kernel is looked up);
/// *batch is prod(params.shape[:batch_dims]), the batch count after TensorFlow's reshape.
Status check_gather_nd_batch_dims(const Case& c, int64_t* batch);
Expected<GatherNdPlan> validate_gather_nd(const Case& c, int64_t max_bytes = kDefaultMaxCaseBytes);
/// Validate a scatter_nd or tensor_scatter_nd_* case and compute its plan.
Expected<ScatterPlan> validate_scatter(const Case& c, int64_t max_bytes = kDefaultMaxCaseBytes);

/// TensorFlow's text for a position: the multi-index of `flat` in `dims`, "[0,1]"; "" for rank 0.
std::string position_string(const std::vector<int64_t>& dims, int64_t flat);

}  // namespace gscheck::cuda
