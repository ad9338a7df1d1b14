// The op launchers shared by the cuda and cuda-emu backends, templated on the executor (EmuExec
// in cuda-emu, DeviceExec on the GPU; cuda/executor.h) and explicitly instantiated once per
// executor.
#pragma once

#include "core/case.h"
#include "cuda/executor.h"
#include "cuda/validate.h"

namespace gscheck::cuda {

/// How a validated case runs.
struct RunConfig {
  /// Bad indices are errors (tf-cpu semantics, policy not IGNORE): kernels still zero or skip
  /// the bad rows and record the first and last bad position, which the host then reports.
  bool checked = false;
  /// Scatter rows are sorted by destination and applied in row order (deterministic; tf-cpu's
  /// row-order result) instead of with atomics.
  bool sorted_scatter = false;
};

template <Executor Exec>
Outcome run_gather(Exec& ex, const Case& c, const GatherPlan& p, const RunConfig& cfg);
template <Executor Exec>
Outcome run_gather_nd(Exec& ex, const Case& c, const GatherNdPlan& p, const RunConfig& cfg);
/// scatter_nd and tensor_scatter_nd_*.
template <Executor Exec>
Outcome run_scatter_nd(Exec& ex, const Case& c, const ScatterPlan& p, const RunConfig& cfg);

}  // namespace gscheck::cuda
