#include "cuda/guarded_output.h"

namespace gscheck::cuda {

Status check_guards_and_poison(const uint8_t* front_guard, const uint8_t* back_guard,
                               const uint8_t* out, uint64_t out_bytes, uint32_t elem_bytes,
                               std::optional<uint8_t> poison) {
  if (const uint64_t i = first_changed_guard_byte(front_guard, kGuardBytes); i < kGuardBytes) {
    return Error{ErrorClass::kInternal,
                 "out-of-bounds write: byte offset " +
                     std::to_string(static_cast<int64_t>(i) - static_cast<int64_t>(kGuardBytes)) +
                     " before the output buffer was changed"};
  }
  if (const uint64_t i = first_changed_guard_byte(back_guard, kGuardBytes); i < kGuardBytes) {
    return Error{ErrorClass::kInternal, "out-of-bounds write: byte offset " +
                                            std::to_string(out_bytes + i) +
                                            " (past the end of the " + std::to_string(out_bytes) +
                                            "-byte output buffer) was changed"};
  }
  if (!poison) return {};
  if (const auto e = first_poisoned_element(out, out_bytes, elem_bytes, *poison)) {
    return Error{ErrorClass::kInternal, "unwritten output: element " + std::to_string(*e) +
                                            " (byte offset " + std::to_string(*e * elem_bytes) +
                                            ") still holds the poison pattern"};
  }
  return {};
}

}  // namespace gscheck::cuda
