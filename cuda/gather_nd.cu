// GPU instantiation of the gather_nd launcher: the kernels of cuda/gather_nd_launch.cuh compiled by
// nvcc.
#include "cuda/device_executor.cuh"
#include "cuda/gather_nd_launch.cuh"

namespace gscheck::cuda {
template Outcome run_gather_nd<DeviceExec>(DeviceExec&, const Case&, const GatherNdPlan&,
                                           const RunConfig&);
}  // namespace gscheck::cuda
