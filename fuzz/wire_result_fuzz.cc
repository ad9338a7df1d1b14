// libFuzzer target for gscheck's side of the plugin wire protocol: a result frame and the "out"
// memfd it names, both forgeable by a plugin (fuzz/wire_check.h).
#include <cstddef>
#include <cstdint>

#include "fuzz/wire_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return gscheck::fuzz::run_wire_result(data, size);
}
