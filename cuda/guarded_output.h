// Poison and redzones (core/redzone.h) around an output buffer in (emulated or real) device
// memory: guard bytes before and after catch out-of-bounds writes, a poison pattern catches
// unwritten elements of outputs the op must write completely (gathers). Violations are
// ErrorClass::kInternal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/redzone.h"
#include "core/status.h"

namespace gscheck::cuda {

// The guard size, guard byte and poison choice are core/redzone.h's, shared with the plugin
// worker's output arena.
using gscheck::choose_poison;
using gscheck::kGuardByte;
using gscheck::kGuardBytes;

/// Check the guards (copied back from the device) and, when poison is set, the output elements.
/// Returns kInternal naming the first corrupted guard offset or unwritten element.
Status check_guards_and_poison(const uint8_t* front_guard, const uint8_t* back_guard,
                               const uint8_t* out, uint64_t out_bytes, uint32_t elem_bytes,
                               std::optional<uint8_t> poison);

/// An output buffer with redzones in Exec's memory.
template <class Exec>
class GuardedOutput {
 public:
  /// Allocate out_bytes plus guards; fill guards, and the output with `poison` when set.
  static Expected<GuardedOutput> create(Exec& ex, uint64_t out_bytes,
                                        std::optional<uint8_t> poison) {
    auto buf = ex.alloc(out_bytes + 2 * kGuardBytes);
    if (!buf.ok()) return buf.error();
    GuardedOutput g(std::move(*buf), out_bytes, poison);
    GSCHECK_RETURN_IF_ERROR(ex.fill(g.buf_.get(), kGuardByte, kGuardBytes));
    GSCHECK_RETURN_IF_ERROR(ex.fill(g.data() + out_bytes, kGuardByte, kGuardBytes));
    if (poison) GSCHECK_RETURN_IF_ERROR(ex.fill(g.data(), *poison, out_bytes));
    return Expected<GuardedOutput>(std::move(g));  // nvcc does not move implicitly here
  }
  uint8_t* data() const { return buf_.get() + kGuardBytes; }
  uint64_t bytes() const { return bytes_; }

  /// Copy the output to host_out and check guards and poison.
  Status finish(Exec& ex, uint8_t* host_out, uint32_t elem_bytes) {
    std::vector<uint8_t> front(kGuardBytes), back(kGuardBytes);
    GSCHECK_RETURN_IF_ERROR(ex.to_host(front.data(), buf_.get(), kGuardBytes));
    GSCHECK_RETURN_IF_ERROR(ex.to_host(back.data(), data() + bytes_, kGuardBytes));
    GSCHECK_RETURN_IF_ERROR(ex.to_host(host_out, data(), bytes_));
    return check_guards_and_poison(front.data(), back.data(), host_out, bytes_, elem_bytes,
                                   poison_);
  }

 private:
  GuardedOutput(typename Exec::Buffer buf, uint64_t bytes, std::optional<uint8_t> poison)
      : buf_(std::move(buf)), bytes_(bytes), poison_(poison) {}
  typename Exec::Buffer buf_;
  uint64_t bytes_;
  std::optional<uint8_t> poison_;
};

}  // namespace gscheck::cuda
