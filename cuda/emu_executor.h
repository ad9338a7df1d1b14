// The CPU grid executor of cuda-emu: runs the kernel functors of cuda/*.cuh block by block on a
// thread pool, the threads of a block in a loop (the kernels use no __syncthreads), in
// warp-synchronous mode each warp's lanes in lock step (cuda/emu/warp_sync.h), or in race mode
// as interleaved fibers with every device access checked (cuda/race_detector.h). Also the
// "device" memory and sort primitives the op launchers need, all on host memory.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "core/status.h"
#include "cuda/executor.h"
#include "cuda/portability.h"
#include "cuda/race_detector.h"
#include "cuda/scratch_slots.h"

namespace gscheck::cuda {

/// A fixed pool of worker threads running the blocks of one grid at a time.
class BlockPool {
 public:
  /// threads: total threads running blocks, the caller included (0 = hardware concurrency).
  explicit BlockPool(int threads);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  /// body(block) for every block in [0, blocks), spread over the pool; returns when all ran.
  void run(uint32_t blocks, const std::function<void(uint32_t)>& body);

 private:
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(uint32_t)>* body_ = nullptr;
  uint32_t blocks_ = 0;
  uint32_t next_ = 0;      // next block to hand out (guarded by mu_)
  uint32_t finished_ = 0;  // blocks completed (guarded by mu_)
  uint64_t generation_ = 0;
  bool stop_ = false;
};

/// Memory and launch primitives for the op launchers, on the host.
class EmuExec {
 public:
  /// An allocation of "device" memory (host memory, 256-byte aligned like cudaMalloc).
  class Buffer {
   public:
    Buffer() = default;
    explicit Buffer(uint8_t* p) : p_(p, &std::free) {}
    uint8_t* get() const { return p_.get(); }

   private:
    std::unique_ptr<uint8_t, void (*)(void*)> p_{nullptr, &std::free};
  };

  /// threads: pool size (0 = hardware concurrency); max_blocks: grid cap (0 = 8 per thread).
  /// race: run launches in race mode (cuda/race_detector.h) instead of on the pool.
  /// warp_sync: run each warp's 32 lanes in lock step at the warp intrinsics
  /// (cuda/emu/warp_sync.h) instead of each thread to completion alone.
  explicit EmuExec(int threads = 0, uint32_t max_blocks = 0,
                   std::shared_ptr<RaceDetector> race = nullptr, bool warp_sync = false)
      : pool_(std::make_shared<BlockPool>(threads)),
        max_blocks_(max_blocks ? max_blocks : static_cast<uint32_t>(8 * pool_->threads())),
        race_(std::move(race)),
        warp_sync_(warp_sync),
        scratch_(std::make_shared<Scratch>()) {}

  bool warp_sync() const { return warp_sync_; }

  /// The race detector in race mode, else null.
  RaceDetector* race() const { return race_.get(); }

  Expected<Buffer> alloc(uint64_t bytes) {
    const uint64_t rounded = std::max<uint64_t>(256, (bytes + 255) / 256 * 256);
    void* p = std::aligned_alloc(256, rounded);
    if (!p) {
      return Error{ErrorClass::kResourceExhausted,
                   "cuda-emu: out of memory allocating " + std::to_string(bytes) + " bytes"};
    }
    Buffer b(static_cast<uint8_t*>(p));
    if (race_) GSCHECK_RETURN_IF_ERROR(race_->on_alloc(p, rounded));
    return b;
  }
  Status to_device(void* d, const void* h, uint64_t n) {
    if (race_) race_->on_to_device(d, h, n);
    if (n) std::memcpy(d, h, n);
    return {};
  }
  Status to_host(void* h, const void* d, uint64_t n) {
    if (race_) race_->on_to_host(h, d, n);
    if (n) std::memcpy(h, d, n);
    return {};
  }
  Status fill(void* d, uint8_t byte, uint64_t n) {
    if (n) std::memset(d, byte, n);
    return {};
  }
  uint32_t max_blocks() const { return max_blocks_; }
  int threads() const { return pool_->threads(); }

  /// A kept buffer of at least `bytes` for scratch slot `slot` (0..3), as DeviceExec::scratch.
  Expected<uint8_t*> scratch(int slot, uint64_t bytes) {
    // Race mode tracks allocations per case: a fresh buffer each time, so it is one of them.
    return scratch_->get(
        slot, bytes, [&](uint64_t n) { return alloc(n); }, race_ != nullptr);
  }

  /// Run k over a 1-D grid covering work_threads threads (capped at max_blocks blocks; the
  /// kernels are grid-stride loops).
  template <class K>
  Status launch(const K& k, uint64_t work_threads, uint32_t block_threads) {
    if (work_threads == 0) return {};
    const uint64_t want = (work_threads + block_threads - 1) / block_threads;
    const uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>(want, max_blocks_));
    // A device fault (a misaligned vector access, a warp intrinsic used against its rules)
    // fails the launch, as cudaErrorMisalignedAddress and friends do on the device.
    emu::LaunchFaults faults(typeid(K).name());
    const emu::ThreadBody thunk = [](const void* kernel, const ThreadIndex& t) {
      (*static_cast<const K*>(kernel))(t);
    };
    if (race_) {
      emu::FaultScope scope(&faults);
      GSCHECK_RETURN_IF_ERROR(race_->launch(typeid(K).name(), &k, thunk, blocks, block_threads));
    } else {
      const std::function<void(uint32_t)> body = [&](uint32_t b) {
        emu::FaultScope scope(&faults);
        if (warp_sync_) {
          emu::run_block_warp_synchronous(&k, thunk, b, block_threads, blocks);
          return;
        }
        for (uint32_t t = 0; t < block_threads; ++t) {
          emu::set_current_thread(b, t);
          k(ThreadIndex{b, t, block_threads, blocks});
        }
      };
      pool_->run(blocks, body);
    }
    if (faults.any()) return Error{ErrorClass::kInternal, faults.message()};
    return {};
  }

  /// CUB's DeviceRadixSort::SortPairs with begin_bit 0: a stable sort of (key, value) pairs
  /// ordered by the key bits [0, end_bit) only; the keys move whole (bits above end_bit are kept
  /// but ignored for the order), so a launcher that passes too small an end_bit fails here as on
  /// a GPU.
  template <class Key>
  Status sort_pairs(const Key* keys_in, Key* keys_out, const Key* values_in, Key* values_out,
                    uint64_t n, int end_bit) {
    constexpr int kBits = static_cast<int>(8 * sizeof(Key));
    if (end_bit < 0 || end_bit > kBits) {
      return Error{ErrorClass::kInternal, "cuda-emu: sort_pairs end_bit " +
                                              std::to_string(end_bit) + " outside [0, " +
                                              std::to_string(kBits) + "]"};
    }
    const Key mask =
        end_bit == kBits ? static_cast<Key>(~Key{0}) : static_cast<Key>((Key{1} << end_bit) - 1);
    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), uint64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
      return (keys_in[a] & mask) < (keys_in[b] & mask);
    });
    for (uint64_t i = 0; i < n; ++i) {
      keys_out[i] = keys_in[order[i]];
      values_out[i] = values_in[order[i]];
    }
    return {};
  }

 private:
  using Scratch = ScratchSlots<Buffer>;
  std::shared_ptr<BlockPool> pool_;
  uint32_t max_blocks_;
  std::shared_ptr<RaceDetector> race_;
  bool warp_sync_;
  std::shared_ptr<Scratch> scratch_;  // shared by copies of this executor
};
static_assert(Executor<EmuExec>);

}  // namespace gscheck::cuda
