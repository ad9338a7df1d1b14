// GPU instantiation of the scatter_nd launcher: the kernels of cuda/scatter_nd_launch.cuh compiled
// by nvcc.
#include "cuda/device_executor.cuh"
#include "cuda/scatter_nd_launch.cuh"

namespace gscheck::cuda {
template Outcome run_scatter_nd<DeviceExec>(DeviceExec&, const Case&, const ScatterPlan&,
                                            const RunConfig&);
}  // namespace gscheck::cuda
