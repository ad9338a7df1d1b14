// libFuzzer target for the worker's side of the plugin wire protocol: the "in" memfd of a call
// (fuzz/wire_check.h).
#include <cstddef>
#include <cstdint>

#include "fuzz/wire_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return gscheck::fuzz::run_wire_call(data, size);
}
