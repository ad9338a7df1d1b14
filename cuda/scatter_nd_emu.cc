// cuda-emu instantiation of the scatter_nd launcher: the kernels of cuda/scatter_nd_launch.cuh as
// plain C++.
#include "cuda/emu_executor.h"
#include "cuda/scatter_nd_launch.cuh"

namespace gscheck::cuda {
template Outcome run_scatter_nd<EmuExec>(EmuExec&, const Case&, const ScatterPlan&,
                                         const RunConfig&);
}  // namespace gscheck::cuda
