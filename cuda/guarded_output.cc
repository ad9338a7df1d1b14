#include "cuda/guarded_output.h"

#include <array>
#include <cstring>

namespace gscheck::cuda {
namespace {

bool element_is_pattern(const uint8_t* e, uint32_t n, uint8_t byte) {
  for (uint32_t i = 0; i < n; ++i) {
    if (e[i] != byte) return false;
  }
  return true;
}

}  // namespace

std::optional<uint8_t> choose_poison(const uint8_t* source, uint64_t source_bytes,
                                     uint32_t elem_bytes) {
  // Byte values with mixed bits: unlikely as whole elements in real data.
  static constexpr uint8_t kCandidates[] = {0xA5, 0x5A, 0xC3, 0x3C, 0x96, 0x69, 0xB7, 0x7B};
  if (elem_bytes == 1) {
    std::array<bool, 256> seen{};
    for (uint64_t i = 0; i < source_bytes; ++i) seen[source[i]] = true;
    for (int b = 0; b < 256; ++b) {
      const uint8_t c = static_cast<uint8_t>((b * 167 + 165) & 0xFF);  // a permutation, 0xA5 first
      if (c != 0 && !seen[c]) return c;
    }
    return std::nullopt;
  }
  for (uint8_t c : kCandidates) {
    bool found = false;
    for (uint64_t off = 0; off + elem_bytes <= source_bytes && !found; off += elem_bytes) {
      found = element_is_pattern(source + off, elem_bytes, c);
    }
    if (!found) return c;
  }
  return std::nullopt;
}

Status check_guards_and_poison(const uint8_t* front_guard, const uint8_t* back_guard,
                               const uint8_t* out, uint64_t out_bytes, uint32_t elem_bytes,
                               std::optional<uint8_t> poison) {
  for (uint64_t i = 0; i < kGuardBytes; ++i) {
    if (front_guard[i] != kGuardByte) {
      return Error{ErrorClass::kInternal,
                   "out-of-bounds write: byte offset " +
                       std::to_string(static_cast<int64_t>(i) - static_cast<int64_t>(kGuardBytes)) +
                       " before the output buffer was changed"};
    }
  }
  for (uint64_t i = 0; i < kGuardBytes; ++i) {
    if (back_guard[i] != kGuardByte) {
      return Error{ErrorClass::kInternal, "out-of-bounds write: byte offset " +
                                              std::to_string(out_bytes + i) +
                                              " (past the end of the " + std::to_string(out_bytes) +
                                              "-byte output buffer) was changed"};
    }
  }
  if (poison && elem_bytes == 1) {
    const void* hit = std::memchr(out, *poison, out_bytes);
    if (hit) {
      const uint64_t off = static_cast<uint64_t>(static_cast<const uint8_t*>(hit) - out);
      return Error{ErrorClass::kInternal, "unwritten output: element " + std::to_string(off) +
                                              " (byte offset " + std::to_string(off) +
                                              ") still holds the poison pattern"};
    }
  } else if (poison && elem_bytes > 1) {
    for (uint64_t off = 0; off + elem_bytes <= out_bytes; off += elem_bytes) {
      if (element_is_pattern(out + off, elem_bytes, *poison)) {
        return Error{ErrorClass::kInternal, "unwritten output: element " +
                                                std::to_string(off / elem_bytes) +
                                                " (byte offset " + std::to_string(off) +
                                                ") still holds the poison pattern"};
      }
    }
  }
  return {};
}

}  // namespace gscheck::cuda
