#include "backends/plugin/worker_cuda_runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace gscheck::worker {

std::string CudaRuntime::error(int e) const {
  return "CUDA error " + std::to_string(e) + " (" +
         (error_string ? error_string(e) : "no cudaGetErrorString") + ")";
}

std::string CudaRuntime::load() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("GSCHECK_CUDART"); env && *env) {
    names.push_back(env);
  } else {
    names = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
  }
  std::string tried;
  void* h = nullptr;
  for (const auto& n : names) {
    h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h) break;
    tried += (tried.empty() ? "" : "; ") + std::string(::dlerror());
  }
  if (!h) return "the plugin takes device pointers, but no CUDA runtime loads: " + tried;
  auto sym = [&](const char* name) { return ::dlsym(h, name); };
  malloc_fn = reinterpret_cast<decltype(malloc_fn)>(sym("cudaMalloc"));
  free_fn = reinterpret_cast<decltype(free_fn)>(sym("cudaFree"));
  memcpy_fn = reinterpret_cast<decltype(memcpy_fn)>(sym("cudaMemcpy"));
  memset_fn = reinterpret_cast<decltype(memset_fn)>(sym("cudaMemset"));
  sync_fn = reinterpret_cast<decltype(sync_fn)>(sym("cudaDeviceSynchronize"));
  error_string = reinterpret_cast<decltype(error_string)>(sym("cudaGetErrorString"));
  if (!malloc_fn || !free_fn || !memcpy_fn || !memset_fn || !sync_fn)
    return "the CUDA runtime lacks cudaMalloc, cudaFree, cudaMemcpy, cudaMemset or "
           "cudaDeviceSynchronize";
  // Create the context now, before the address-space cap, and keep it for the worker's life.
  if (int e = free_fn(nullptr); e != 0) return "cannot create a CUDA context: " + error(e);
  return "";
}

}  // namespace gscheck::worker
