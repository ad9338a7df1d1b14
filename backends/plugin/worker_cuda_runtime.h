// The CUDA runtime, dlopen()ed by the worker only for plugins that take device pointers
// (GSC_DEVICE_POINTERS, ABI v2): gscheck-worker links nothing but libdl.
#pragma once

#include <cstddef>
#include <string>

namespace gscheck::worker {

struct CudaRuntime {
  int (*malloc_fn)(void**, std::size_t) = nullptr;
  int (*free_fn)(void*) = nullptr;
  int (*memcpy_fn)(void*, const void*, std::size_t, int) = nullptr;
  int (*memset_fn)(void*, int, std::size_t) = nullptr;
  int (*sync_fn)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  static constexpr int kHostToDevice = 1, kDeviceToHost = 2;

  /// "CUDA error N (text)".
  std::string error(int e) const;
  /// Loads $GSCHECK_CUDART or libcudart.so.{13,12,} and creates the context; "" or why not.
  std::string load();
};

}  // namespace gscheck::worker
