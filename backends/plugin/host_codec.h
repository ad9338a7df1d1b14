// Marshalling between gscheck's types and the wire (wire.h): a Case laid out in the "in" memfd,
// a WireResult (and the output in the "out" memfd) read back into an Outcome.
#pragma once

#include <cstdint>
#include <string>

#include "backends/plugin/host_process.h"
#include "core/backend.h"
#include "core/case.h"

namespace gscheck::plugin {

/// The bytes of a case's non-string inputs (the default deadline's share of the inputs).
uint64_t input_bytes(const Case& c);

/// Lays the call out in "in": WireCall, then per input its dims and data, 64-byte aligned.
/// Sets `total` to the bytes used; returns "" or why it could not.
std::string write_inputs(int in_mem, const Case& c, int64_t max_output_bytes,
                         Clock::time_point deadline, uint64_t& total);

/// A decoded result; `restart` when the worker is suspect and must be killed.
struct Decoded {
  Outcome outcome;
  bool restart;
};

/// Reads a kResult payload, and the output it names from "out". `fault` (a kFault frame's text)
/// and the worker's log tail join the message of a call that failed outside the plugin.
Decoded read_result(const std::string& payload, const std::string& fault, int out_mem,
                    const LogTail& log);

/// Gives the pages of a large memfd back (the size stays: it is sealed).
void release_pages(int fd, uint64_t used);

}  // namespace gscheck::plugin
