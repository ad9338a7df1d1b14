// libFuzzer target for tf.tensor_scatter_nd_{update,add,sub,min,max}: decoded cases, the reference
// against every backend.
#include <cstddef>
#include <cstdint>

#include "fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return gscheck::fuzz::run_differential(gscheck::fuzz::Family::kTensorScatter, data, size);
}
