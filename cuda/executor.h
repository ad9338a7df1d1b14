// What the op launchers need from where they run: the Executor concept. Two models: EmuExec
// (cuda/emu_executor.h, the CPU grid executor of cuda-emu) and DeviceExec
// (cuda/device_executor.cuh, the GPU).
#pragma once

#include <concepts>
#include <cstdint>

#include "core/status.h"
#include "cuda/portability/qualifiers.h"

namespace gscheck::cuda {

/// The shape of every kernel functor: one call per thread of a 1-D grid.
struct ExecutorProbeKernel {
  GSCHECK_HD void operator()(const ThreadIndex&) const {}
};

/// Memory, launches and sorts in an executor's "device" memory:
///  - Buffer: an owning allocation whose get() is its device address;
///  - alloc / to_device / to_host / fill: memory, errors as values;
///  - launch(k, work_threads, block_threads): run functor k over a grid-stride 1-D grid;
///  - max_blocks(): how many blocks fill the machine (the gather launch splits rows by it);
///  - scratch(slot, bytes): a kept buffer per slot 0..2, reused across calls;
///  - sort_pairs: CUB DeviceRadixSort::SortPairs semantics (stable, key bits [0, end_bit)).
template <class E>
concept Executor = requires(E& ex, const E& cex, typename E::Buffer& buf, void* d, const void* h,
                            uint64_t n, uint8_t byte, int slot, const ExecutorProbeKernel& k,
                            const uint32_t* k32, uint32_t* o32, const uint64_t* k64,
                            uint64_t* o64) {
  { buf.get() } -> std::same_as<uint8_t*>;
  { ex.alloc(n) } -> std::same_as<Expected<typename E::Buffer>>;
  { ex.to_device(d, h, n) } -> std::same_as<Status>;
  { ex.to_host(d, h, n) } -> std::same_as<Status>;
  { ex.fill(d, byte, n) } -> std::same_as<Status>;
  { cex.max_blocks() } -> std::same_as<uint32_t>;
  { ex.launch(k, n, uint32_t{256}) } -> std::same_as<Status>;
  { ex.scratch(slot, n) } -> std::same_as<Expected<uint8_t*>>;
  { ex.sort_pairs(k32, o32, k32, o32, n, slot) } -> std::same_as<Status>;
  { ex.sort_pairs(k64, o64, k64, o64, n, slot) } -> std::same_as<Status>;
};

}  // namespace gscheck::cuda
