// Division by a divisor fixed at launch, set up on the host and paid on the device as a
// multiply, an add and a shift.
#pragma once

#include <cstdint>

#include "cuda/portability/qualifiers.h"

namespace gscheck::cuda {

/// Division of 32-bit offsets by a divisor fixed at launch: the multiply-high method
/// (Granlund-Montgomery), set up once on the host so kernels pay a multiply, an add and a shift
/// per row instead of a ~20-instruction integer division. Exact for every n < 2^32 (the
/// intermediate sum is 33 bits, computed in 64).
struct FastDivU32 {
  uint32_t d = 1;
  uint32_t mul = 1;
  uint32_t shift = 0;
  FastDivU32() = default;
  explicit FastDivU32(uint32_t divisor) : d(divisor ? divisor : 1) {
    uint32_t l = 0;
    while (l < 32 && (uint64_t{1} << l) < d) ++l;
    shift = l;  // 2^l >= d
    mul = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << l) - d)) / d + 1);
  }
  GSCHECK_HD_INLINE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, mul);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * mul) >> 32);
#endif
    return static_cast<uint32_t>((static_cast<uint64_t>(hi) + n) >> shift);
  }
};

/// Division by a launch-time constant for either offset type: FastDivU32 for 32-bit offsets,
/// plain division for 64-bit ones (rare: tensors over 2^31 elements).
template <class Off>
struct DivBy {
  Off d = 1;
  DivBy() = default;
  explicit DivBy(Off v) : d(v ? v : 1) {}
  GSCHECK_HD_INLINE Off div(Off n) const { return n / d; }
  GSCHECK_HD_INLINE Off value() const { return d; }
};
template <>
struct DivBy<uint32_t> {
  FastDivU32 f;
  DivBy() = default;
  explicit DivBy(uint32_t v) : f(v) {}
  GSCHECK_HD_INLINE uint32_t div(uint32_t n) const { return f.div(n); }
  GSCHECK_HD_INLINE uint32_t value() const { return f.d; }
};

}  // namespace gscheck::cuda
