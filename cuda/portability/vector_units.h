// Vector units for slice copies: W bytes moved by one load and one store.
#pragma once

#include <cstdint>

#include "cuda/portability/qualifiers.h"

namespace gscheck::cuda {

template <int W>
struct VecUnit;
template <>
struct VecUnit<1> {
  using type = uint8_t;
};
template <>
struct VecUnit<2> {
  using type = uint16_t;
};
template <>
struct VecUnit<4> {
  using type = uint32_t;
};
template <>
struct VecUnit<8> {
  using type = uint64_t;
};
template <>
struct VecUnit<16> {
  using type = uint4;  // one 128-bit ld.global.v4 / st.global.v4 (cuda-emu: its own uint4)
};

}  // namespace gscheck::cuda
