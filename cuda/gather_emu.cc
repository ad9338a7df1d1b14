// cuda-emu instantiation of the gather launcher: the kernels of cuda/gather_launch.cuh as plain
// C++.
#include "cuda/emu_executor.h"
#include "cuda/gather_launch.cuh"

namespace gscheck::cuda {
template Outcome run_gather<EmuExec>(EmuExec&, const Case&, const GatherPlan&, const RunConfig&);
}  // namespace gscheck::cuda
