// libFuzzer target for the case-file parser (core/case_json.h): arbitrary bytes must give a case
// or an error, never a crash, and what parses must round-trip.
#include <cstddef>
#include <cstdint>

#include "fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return gscheck::fuzz::run_case_json(data, size);
}
