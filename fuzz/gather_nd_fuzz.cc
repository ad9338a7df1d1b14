// libFuzzer target for tf.gather_nd: decoded cases, the reference against every backend.
#include <cstddef>
#include <cstdint>

#include "fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return gscheck::fuzz::run_differential(gscheck::fuzz::Family::kGatherNd, data, size);
}
