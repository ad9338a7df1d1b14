// The reference's op entry points, one per op family; reference.cc dispatches to them.
#pragma once

#include "core/case.h"
#include "reference/reference.h"

namespace gscheck::reference::detail {

/// tf.gather (GatherV2). Precondition: c is well formed and c.op == Op::kGather.
Outcome run_gather(const Case& c, const Options& options);
/// tf.gather_nd (GatherNd, with Python's batch_dims lowering). Precondition: well formed.
Outcome run_gather_nd(const Case& c, const Options& options);
/// tf.scatter_nd and tf.tensor_scatter_nd_* (ScatterNd, TensorScatter*). Precondition: well formed.
Outcome run_scatter_nd(const Case& c, const Options& options);

}  // namespace gscheck::reference::detail
