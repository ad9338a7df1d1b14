// Factories of the cuda-emu backends (and of the cuda backend in builds without CUDA).
#include <memory>

#include "cuda/cuda_backends.h"
#include "cuda/emu_executor.h"
#include "cuda/kernel_backend.h"

namespace gscheck::cuda {

std::unique_ptr<Backend> make_cuda_emu_backend(int threads) {
  return make_cuda_emu_backend(threads, KernelOptions{});
}

std::unique_ptr<Backend> make_cuda_emu_backend(int threads, const KernelOptions& options) {
  const char* name = options.deterministic ? "cuda-emu-det" : "cuda-emu";
  return std::make_unique<KernelBackend<EmuExec>>(kernel_capabilities(name, options.deterministic),
                                                  EmuExec(threads, options.max_blocks),
                                                  options.deterministic, options.max_bytes);
}

#if !defined(GSCHECK_HAVE_CUDA)
Expected<std::unique_ptr<Backend>> make_cuda_backend() {
  return Error{ErrorClass::kUnimplemented,
               "the cuda backend is not available: gscheck was built without CUDA (no nvcc found "
               "or GSCHECK_CUDA=OFF)"};
}
Expected<std::unique_ptr<Backend>> make_cuda_backend(const KernelOptions&) {
  return make_cuda_backend();
}
#endif

}  // namespace gscheck::cuda
