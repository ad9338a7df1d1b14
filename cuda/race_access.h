// The one door from race mode's -fsanitize=thread hooks (race_tsan_hooks.cc) into the detector
// (race_detector.cc): the launch running on this thread, and its access recorder.
#pragma once

#include <cstdint>

#include "cuda/race_detector.h"

namespace gscheck::cuda {

enum class AccessKind : uint8_t { kRead, kWrite, kAtomic };

/// The state of the race-mode launch running on this thread, else null. constinit: the hooks'
/// check on every instrumented access is one thread-local load, no TLS wrapper call.
extern constinit thread_local RaceDetector::State* t_state;

/// Record one access of the current launch (t_state non-null).
void race_access(RaceDetector::State* s, uintptr_t addr, uint64_t size, AccessKind kind);

}  // namespace gscheck::cuda
