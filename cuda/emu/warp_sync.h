// cuda-emu's model of a warp: the runtime behind the emulated warp intrinsics
// (cuda/emu/device_intrinsics.h) and the device faults the emulated instructions raise.
//
// Warp-synchronous mode (backend cuda-emu-warp): the 32 lanes of each warp run as fibers on one
// OS thread; a lane runs until it reaches a warp intrinsic or exits, and an intrinsic resolves
// once every lane it names has arrived (real semantics: masks, lanes that exited, __activemask
// as the set of lanes that reached it together). Outside that mode (plain cuda-emu, race mode)
// every lane runs alone: the legal, fully diverged schedule in which each warp intrinsic sees
// only the calling lane. See docs/cuda.md, "Warp-synchronous mode".
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace gscheck::cuda {
struct ThreadIndex;  // cuda/portability/qualifiers.h (which includes this header)
}

namespace gscheck::cuda::emu {

enum class Collective : uint8_t {
  kActiveMask,
  kMatchAny,
  kShfl,
  kShflUp,
  kShflDown,
  kShflXor,
  kBallot,
  kAny,
  kAll,
  kSyncWarp,
};

/// One lane's part in a warp intrinsic. value: the lane's operand (zero-extended; bytes = its
/// width, so match_any compares only those); arg: the shuffle's source lane, delta or xor mask;
/// width: the shuffle's segment. Returns this lane's result.
uint64_t collective(Collective op, uint32_t mask, uint64_t value, int value_bytes, int arg,
                    int width);

/// The thread the calling OS thread (or fiber) runs now: set by the executors before each
/// thread runs or resumes, read by the intrinsics and by fault messages.
void set_current_thread(uint32_t block, uint32_t thread);
uint32_t current_lane();

/// A launch's device faults (misaligned vector access, a warp intrinsic used against its
/// rules): the first is kept; the launch then fails as cudaErrorMisalignedAddress and friends
/// fail it on the device.
class LaunchFaults {
 public:
  explicit LaunchFaults(const char* kernel) : kernel_(kernel) {}
  void record(const std::string& what);
  bool any() const { return any_.load(std::memory_order_relaxed); }
  std::string message() const;  ///< "cuda-emu: device fault in KERNEL: FIRST (N in all)"

 private:
  const char* kernel_;
  std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  std::string first_;
  uint64_t count_ = 0;
};

/// Faults of the calling OS thread go to f while the scope lives (each block's runner opens one).
class FaultScope {
 public:
  explicit FaultScope(LaunchFaults* f);
  ~FaultScope();
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;

 private:
  LaunchFaults* prev_;
};

/// Record a device fault of the current thread (aborts with the message when no launch is
/// listening: a kernel called directly, outside an executor).
void fault(const std::string& what);

/// The device's alignment rule for a `bytes`-wide access: a misaligned one faults. False then:
/// the caller skips the access, as the device never performs it (on the host a typed
/// misaligned access would be undefined behaviour, which UBSan reports).
[[nodiscard]] inline bool check_aligned(const void* p, std::size_t bytes, const char* what) {
  if ((reinterpret_cast<uintptr_t>(p) & (bytes - 1)) != 0) [[unlikely]] {
    fault(std::string("misaligned address (cudaErrorMisalignedAddress on the device): ") + what +
          " needs " + std::to_string(bytes) + "-byte alignment");
    return false;
  }
  return true;
}

/// Runs one block warp-synchronously: body(kernel, t) for each of its threads, each warp's lanes
/// as fibers in lock step at the intrinsics. Call from a thread inside a FaultScope.
using ThreadBody = void (*)(const void* kernel, const ThreadIndex& t);
void run_block_warp_synchronous(const void* kernel, ThreadBody body, uint32_t block,
                                uint32_t block_threads, uint32_t grid_dim);

}  // namespace gscheck::cuda::emu
