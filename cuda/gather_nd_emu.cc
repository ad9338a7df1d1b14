// cuda-emu instantiation of the gather_nd launcher: the kernels of cuda/gather_nd_launch.cuh as
// plain C++.
#include "cuda/emu_executor.h"
#include "cuda/gather_nd_launch.cuh"

namespace gscheck::cuda {
template Outcome run_gather_nd<EmuExec>(EmuExec&, const Case&, const GatherNdPlan&,
                                        const RunConfig&);
}  // namespace gscheck::cuda
