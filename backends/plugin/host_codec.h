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

/// A prepared call's "in" memfd as gscheck keeps it: sealed with F_SEAL_FUTURE_WRITE, so no
/// mapping, write() or reopened descriptor of the worker's can change it, while this mapping of
/// gscheck's rewrites the indices and updates between calls (gscheck bench: fresh inputs on
/// every timed call, so an output kept from an earlier call is wrong).
struct WritableInputs {
  unsigned char* base = nullptr;
  uint64_t bytes = 0;
  WritableInputs() = default;
  WritableInputs(const WritableInputs&) = delete;
  WritableInputs& operator=(const WritableInputs&) = delete;
  ~WritableInputs();
};

/// Lays the call out in a fresh "in" memfd: WireCall, then per input its dims and data, 64-byte
/// aligned, and seals it (no write, grow or shrink, by anyone, from then on). Sets `fd` (the
/// caller closes it) and `total` (the bytes used); returns "" or why it could not. With `keep`,
/// the seal is F_SEAL_FUTURE_WRITE instead and `keep` holds gscheck's writable mapping.
std::string write_inputs(const Case& c, int64_t max_output_bytes, int& fd, uint64_t& total,
                         WritableInputs* keep = nullptr);

/// Writes the case's indices and updates over those laid out in `in` (the other inputs must be
/// those laid out: they are not read). Each must have the shape and dtype laid out; returns ""
/// or what differs.
std::string rewrite_inputs(const Case& c, const WritableInputs& in);

/// A decoded result; `restart` when the worker is suspect and must be killed.
struct Decoded {
  Outcome outcome;
  bool restart;
};

/// Reads a kResult payload, and the output it names from "out". Nothing in it is trusted: the
/// output must fit `max_bytes` (checked before anything is mapped or allocated), lie where
/// output_layout() puts it, and leave its guard bytes and guard pages as the worker made them.
/// `fault` (a kFault frame's text) and the worker's log tail join the message of a call that
/// failed outside the plugin.
Decoded read_result(const std::string& payload, const std::string& fault, int out_mem,
                    int64_t max_bytes, const LogTail& log);

/// Empties "out" after a call (its size stays: it is sealed): its pages go back to the system.
void release_pages(int fd);

}  // namespace gscheck::plugin
