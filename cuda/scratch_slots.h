// Kept scratch buffers by slot, shared by the device and emulator executors.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/status.h"

namespace gscheck::cuda {

/// Four buffers an executor keeps across calls, each grown when too small: the sorted path
/// allocates nothing per call once warm. Buffer is the executor's own (device or host) buffer.
template <class Buffer>
struct ScratchSlots {
  static constexpr int kSlots = 4;
  Buffer buf[kSlots];
  uint64_t bytes[kSlots] = {};

  /// A buffer of at least `want` bytes for `slot`; alloc(n) returns Expected<Buffer>. fresh:
  /// a new buffer even when the kept one is large enough (race mode tracks allocations per case).
  template <class Alloc>
  Expected<uint8_t*> get(int slot, uint64_t want, Alloc&& alloc, bool fresh = false) {
    if (slot < 0 || slot >= kSlots) {
      return Error{ErrorClass::kInternal, "scratch slot " + std::to_string(slot) + " out of range"};
    }
    if (fresh || bytes[slot] < want || !buf[slot].get()) {
      buf[slot] = Buffer();  // free first: the old and the new need not fit together
      bytes[slot] = 0;
      auto b = alloc(want);
      if (!b.ok()) return b.error();
      buf[slot] = std::move(*b);
      bytes[slot] = want;
    }
    return buf[slot].get();
  }
};

}  // namespace gscheck::cuda
