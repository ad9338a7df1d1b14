// The GPU executor: device memory, launches and CUB sorts for the op launchers. Every CUDA call
// is checked; a failure becomes an ErrorClass::kInternal naming the call, never an abort.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <memory>
#include <string>

#include "core/status.h"
#include "cuda/portability.h"

namespace gscheck::cuda {

/// The kernel entry every functor runs through: one ThreadIndex per CUDA thread.
template <class K>
__global__ void kernel_entry(K k) {
  k(ThreadIndex{blockIdx.x, threadIdx.x, blockDim.x, gridDim.x});
}

inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  return Error{ErrorClass::kInternal, std::string(what) + " failed: " + cudaGetErrorName(e) + ": " +
                                          cudaGetErrorString(e)};
}

class DeviceExec {
 public:
  /// Device memory released with cudaFree (a failing free at teardown cannot be reported).
  class Buffer {
   public:
    Buffer() = default;
    explicit Buffer(uint8_t* p) : p_(p, &free_device) {}
    uint8_t* get() const { return p_.get(); }

   private:
    static void free_device(uint8_t* p) { (void)cudaFree(p); }
    std::unique_ptr<uint8_t, void (*)(uint8_t*)> p_{nullptr, &free_device};
  };

  explicit DeviceExec(int sm_count) : sm_count_(sm_count) {}

  Expected<Buffer> alloc(uint64_t bytes) {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, std::max<uint64_t>(bytes, 256));
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it
      return Error{ErrorClass::kResourceExhausted,
                   "cudaMalloc of " + std::to_string(bytes) + " bytes: out of device memory"};
    }
    GSCHECK_RETURN_IF_ERROR(cuda_status(e, "cudaMalloc"));
    return Buffer(static_cast<uint8_t*>(p));
  }
  Status to_device(void* d, const void* h, uint64_t n) {
    return n ? cuda_status(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), "cudaMemcpy to device")
             : Status{};
  }
  Status to_host(void* h, const void* d, uint64_t n) {
    return n ? cuda_status(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost), "cudaMemcpy to host")
             : Status{};
  }
  Status fill(void* d, uint8_t byte, uint64_t n) {
    return n ? cuda_status(cudaMemset(d, byte, n), "cudaMemset") : Status{};
  }
  uint32_t max_blocks() const { return static_cast<uint32_t>(sm_count_) * 8; }

  template <class K>
  Status launch(const K& k, uint64_t work_threads, uint32_t block_threads) {
    if (work_threads == 0) return {};
    const uint64_t want = (work_threads + block_threads - 1) / block_threads;
    const uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>(want, max_blocks()));
    kernel_entry<K><<<blocks, block_threads>>>(k);
    GSCHECK_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "kernel launch"));
    return cuda_status(cudaDeviceSynchronize(), "kernel execution");
  }

  /// CUB's stable LSD radix sort over the low end_bit bits of the keys.
  template <class Key>
  Status sort_pairs(const Key* keys_in, Key* keys_out, const Key* values_in, Key* values_out,
                    uint64_t n, int end_bit) {
    size_t temp_bytes = 0;
    const int items = static_cast<int>(n);  // rows < 2^31 (validated)
    GSCHECK_RETURN_IF_ERROR(
        cuda_status(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out,
                                                    values_in, values_out, items, 0, end_bit),
                    "cub::DeviceRadixSort::SortPairs (size query)"));
    auto temp = alloc(temp_bytes);
    if (!temp.ok()) return temp.error();
    GSCHECK_RETURN_IF_ERROR(
        cuda_status(cub::DeviceRadixSort::SortPairs(temp->get(), temp_bytes, keys_in, keys_out,
                                                    values_in, values_out, items, 0, end_bit),
                    "cub::DeviceRadixSort::SortPairs"));
    return cuda_status(cudaDeviceSynchronize(), "radix sort execution");
  }

 private:
  int sm_count_;
};

}  // namespace gscheck::cuda
