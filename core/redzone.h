// Redzones and poison around an output buffer, one scheme for every backend that hands a buffer
// to code under test (cuda/guarded_output.h, the plugin worker's output arena): guard bytes on
// each side catch out-of-bounds writes, a poison pattern that is not an element of the source
// catches unwritten elements of outputs the op must write completely (gathers).
//
// Header-only and free of gscheck's libraries: gscheck-worker links nothing but libdl.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>

namespace gscheck {

/// Guard bytes on each side; 256 keeps the output as aligned as the allocation itself.
inline constexpr uint64_t kGuardBytes = 256;
inline constexpr uint8_t kGuardByte = 0xFD;

/// The fill for outputs judged only by comparing values: scatters (whose right answer is the
/// input or zeros, compared within float tolerances, so a poison must be far from both), and
/// gathers whose source holds every candidate. Large in every float format.
inline constexpr uint8_t kFallbackPoison = 0xCD;

/// True when the n bytes at e all equal `byte`.
inline bool is_pattern(const uint8_t* e, uint64_t n, uint8_t byte) {
  for (uint64_t i = 0; i < n; ++i) {
    if (e[i] != byte) return false;
  }
  return true;
}

/// A poison byte whose repeated pattern is not an element of `source` (so an element still equal
/// to the poison afterwards was never written) and is not zero (written for bad rows); nullopt
/// when every candidate occurs, and then unwritten elements cannot be told apart.
inline std::optional<uint8_t> choose_poison(const uint8_t* source, uint64_t source_bytes,
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
      found = is_pattern(source + off, elem_bytes, c);
    }
    if (!found) return c;
  }
  return std::nullopt;
}

/// The index of the first byte of a guard that is not kGuardByte, or n when none was changed.
inline uint64_t first_changed_guard_byte(const uint8_t* guard, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    if (guard[i] != kGuardByte) return i;
  }
  return n;
}

/// The index of the last byte of a guard that is not kGuardByte (the one nearest an output that
/// ends at guard + n), or n when none was changed.
inline uint64_t last_changed_guard_byte(const uint8_t* guard, uint64_t n) {
  for (uint64_t i = n; i-- > 0;) {
    if (guard[i] != kGuardByte) return i;
  }
  return n;
}

/// The first element of out still holding the poison pattern, or nullopt.
inline std::optional<uint64_t> first_poisoned_element(const uint8_t* out, uint64_t out_bytes,
                                                      uint32_t elem_bytes, uint8_t poison) {
  if (elem_bytes == 0) return std::nullopt;
  if (elem_bytes == 1) {
    const void* hit = std::memchr(out, poison, out_bytes);
    if (!hit) return std::nullopt;
    return static_cast<uint64_t>(static_cast<const uint8_t*>(hit) - out);
  }
  for (uint64_t off = 0; off + elem_bytes <= out_bytes; off += elem_bytes) {
    if (is_pattern(out + off, elem_bytes, poison)) return off / elem_bytes;
  }
  return std::nullopt;
}

}  // namespace gscheck
