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
#include "cuda/executor.h"
#include "cuda/portability.h"
#include "cuda/scratch_slots.h"

namespace gscheck::cuda {

/// The kernel entry every functor runs through: one ThreadIndex per CUDA thread. The functor is
/// a __grid_constant__ parameter: read in place from the constant bank, never copied to a
/// thread's local memory (a by-value copy of a ~128-byte functor put it on the stack, and its
/// pointers then went through generic LD/ST instead of LDG/STG).
template <class K>
__global__ void kernel_entry(const __grid_constant__ K k) {
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

  /// sync_launches: wait for every kernel and report its execution errors (the backends); false
  /// leaves launches asynchronous on the default stream (the benchmark times back-to-back
  /// launches with CUDA events and synchronises itself).
  explicit DeviceExec(int sm_count, bool sync_launches = true)
      : sm_count_(sm_count), sync_(sync_launches), scratch_(std::make_shared<Scratch>()) {}

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
  /// Upper bound of resident 256-thread blocks (2048 threads per SM): the launchers' estimate
  /// of "enough blocks to fill the machine".
  uint32_t max_blocks() const { return static_cast<uint32_t>(sm_count_) * 8; }

  /// Resident blocks of kernel K per SM at block_threads, from the occupancy API (asked once per
  /// kernel and block size; 8 if the query fails).
  template <class K>
  static uint32_t blocks_per_sm(uint32_t block_threads) {
    static thread_local uint32_t cached_block = 0, cached = 0;
    if (cached_block != block_threads) {
      int n = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &n, kernel_entry<K>, static_cast<int>(block_threads), 0) != cudaSuccess ||
          n <= 0) {
        (void)cudaGetLastError();
        n = 8;
      }
      cached = static_cast<uint32_t>(n);
      cached_block = block_threads;
    }
    return cached;
  }

  /// Grid-stride kernels: a grid of exactly the blocks that can be resident at once (or fewer
  /// when the work is smaller), so no block waits for a free SM and none idles.
  template <class K>
  Status launch(const K& k, uint64_t work_threads, uint32_t block_threads) {
    if (work_threads == 0) return {};
    const uint64_t want = (work_threads + block_threads - 1) / block_threads;
    const uint64_t cap = static_cast<uint64_t>(sm_count_) * blocks_per_sm<K>(block_threads);
    const uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>(want, cap));
    kernel_entry<K><<<blocks, block_threads>>>(k);
    GSCHECK_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "kernel launch"));
    return sync_ ? cuda_status(cudaDeviceSynchronize(), "kernel execution") : Status{};
  }

  /// A device buffer of at least `bytes` for scratch slot `slot` (0..3), kept and reused by
  /// later calls (grown when too small): the sorted path allocates nothing per call once warm.
  /// Valid until the next scratch() call for the same slot.
  Expected<uint8_t*> scratch(int slot, uint64_t bytes) {
    return scratch_->get(slot, bytes, [&](uint64_t n) { return alloc(n); });
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
    auto temp = scratch(kSortTempSlot, temp_bytes);
    if (!temp.ok()) return temp.error();
    GSCHECK_RETURN_IF_ERROR(
        cuda_status(cub::DeviceRadixSort::SortPairs(*temp, temp_bytes, keys_in, keys_out, values_in,
                                                    values_out, items, 0, end_bit),
                    "cub::DeviceRadixSort::SortPairs"));
    return sync_ ? cuda_status(cudaDeviceSynchronize(), "radix sort execution") : Status{};
  }

  /// The scratch slot sort_pairs keeps its temporary storage in (the op launchers use 0..2).
  static constexpr int kSortTempSlot = 3;

 private:
  using Scratch = ScratchSlots<Buffer>;
  int sm_count_;
  bool sync_;
  std::shared_ptr<Scratch> scratch_;  // shared by copies of this executor
};
static_assert(Executor<DeviceExec>);

}  // namespace gscheck::cuda
