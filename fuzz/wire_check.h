// The plugin wire protocol's decoders on arbitrary bytes (backends/plugin/wire.h): gscheck's
// side (a result frame and the "out" memfd it names, as a hostile plugin may forge both) and
// the worker's (the "in" memfd of a call). Neither may crash, read outside its memory, or
// allocate beyond the call's byte budget. Shared by the libFuzzer targets and tests/fuzz.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gscheck::fuzz {

/// Input: 4 bytes of byte budget (mod 1 MiB), 2 bytes of payload length, the result payload,
/// then the bytes of "out". Aborts when an accepted output exceeds the budget.
int run_wire_result(const uint8_t* data, std::size_t size);

/// Input: the bytes of "in". Every tensor check_call() accepts is read end to end (ASan sees
/// any read it did not bound). Returns 0.
int run_wire_call(const uint8_t* data, std::size_t size);

}  // namespace gscheck::fuzz
