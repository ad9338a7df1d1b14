// GPU instantiation of the gather launcher: the kernels of cuda/gather_launch.cuh compiled by nvcc.
#include "cuda/device_executor.cuh"
#include "cuda/gather_launch.cuh"

namespace gscheck::cuda {
template Outcome run_gather<DeviceExec>(DeviceExec&, const Case&, const GatherPlan&,
                                        const RunConfig&);
}  // namespace gscheck::cuda
