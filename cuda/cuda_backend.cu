// Factories of the cuda backends: the kernels on the first visible GPU.
#include <memory>
#include <string>

#include "cuda/cuda_backends.h"
#include "cuda/device_executor.cuh"
#include "cuda/kernel_backend.h"

namespace gscheck::cuda {

Expected<std::unique_ptr<Backend>> make_cuda_backend(const KernelOptions& options) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return Error{
        ErrorClass::kInternal,
        std::string("the cuda backend needs a GPU, and none is usable: ") +
            (e != cudaSuccess ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)
                              : std::string("cudaGetDeviceCount found 0 devices"))};
  }
  int sms = 0;
  GSCHECK_RETURN_IF_ERROR(cuda_status(cudaSetDevice(0), "cudaSetDevice(0)"));
  GSCHECK_RETURN_IF_ERROR(cuda_status(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute"));
  const char* name = options.deterministic ? "cuda-det" : "cuda";
  std::unique_ptr<Backend> b = std::make_unique<KernelBackend<DeviceExec>>(
      kernel_capabilities(name, options.deterministic), DeviceExec(sms), options.deterministic,
      options.max_bytes);
  return Expected<std::unique_ptr<Backend>>(std::move(b));
}

Expected<std::unique_ptr<Backend>> make_cuda_backend() {
  return make_cuda_backend(KernelOptions{});
}

}  // namespace gscheck::cuda
