// Race mode of cuda-emu: the threads of each launch run as fibers on one OS thread, switched in
// a seeded random order at every global memory access, and every access to emulated device
// memory is recorded per launch. Two accesses to one byte from different threads, at least one
// a non-atomic write, are a data race (the kernels use no barriers, so nothing orders two
// threads of one launch). See docs/cuda.md, "Race mode".
//
// The accesses are seen through compiler instrumentation: the kernel translation units are
// built with -fsanitize=thread (cuda/CMakeLists.txt), which calls __tsan_read4(addr) etc.
// before each load and store and __tsan_atomic32_compare_exchange_weak(...) for each atomic;
// race_detector.cc defines those entry points (no TSan runtime is linked). Outside race mode
// they return at once; the atomics always perform the operation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/case.h"
#include "cuda/portability.h"

namespace gscheck::cuda {

/// True when this build's kernels are instrumented (not under ASan/MSan builds, where
/// -fsanitize=thread cannot be combined).
bool race_mode_available();

class RaceDetector {
 public:
  /// seed: the interleavings (mixed with each case's name, so a case replays alone).
  explicit RaceDetector(uint64_t seed);
  ~RaceDetector();
  RaceDetector(const RaceDetector&) = delete;
  RaceDetector& operator=(const RaceDetector&) = delete;

  /// A case starts: its inputs are named by their host buffers (what to_device copies from).
  void begin_case(const Case& c);
  /// The case ended with o: o itself when no launch raced, else a kInternal error naming the
  /// first race (kernel, tensor and element, both threads and their accesses) and the count.
  Outcome end_case(Outcome o);

  /// kResourceExhausted when the case's allocations pass kMaxTrackedBytes (the shadow costs 24
  /// bytes per byte): race mode is for small cases.
  Status on_alloc(const void* p, uint64_t bytes);
  static constexpr uint64_t kMaxTrackedBytes = uint64_t{64} << 20;
  void on_to_device(const void* d, const void* h, uint64_t n);
  void on_to_host(const void* h, const void* d, uint64_t n);

  /// body(kernel, t) for every thread t of the grid, interleaved; an error when the launch
  /// recorded no device access at all (kernels not instrumented in this binary).
  using Body = void (*)(const void* kernel, const ThreadIndex& t);
  Status launch(const char* kernel_type, const void* kernel, Body body, uint32_t blocks,
                uint32_t block_threads);

  struct State;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace gscheck::cuda
