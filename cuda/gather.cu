// GPU instantiation of the gather launcher: the kernels of cuda/gather.cuh compiled by nvcc.
#include "cuda/device_executor.cuh"
#include "cuda/gather.cuh"

namespace gscheck::cuda {
template Outcome run_gather<DeviceExec>(DeviceExec&, const Case&, const GatherPlan&,
                                        const RunConfig&);
}  // namespace gscheck::cuda
