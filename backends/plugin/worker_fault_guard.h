// The worker's SIGSEGV/SIGBUS handler and everything it reads. A write into a guard page or a
// read-only input is named (a kFault frame) before the worker dies of the signal.
//
// worker_fault_guard.cc holds ONLY async-signal-safe code: every function there may run inside
// the handler or be interrupted by it at any point. No allocation, no stdio, no locks, no
// std::string; state is written with a signal fence so the handler sees it whole.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gscheck::worker {

/// The address ranges the handler names.
enum class Guarded : int {
  kHeadPage = 0,      ///< the output's guard page before it
  kTailPage = 1,      ///< the output's guard page after it
  kInputs = 2,        ///< the call's read-only inputs
  kBeforeOutput = 3,  ///< reserved address space before the head guard page
  kAfterOutput = 4,   ///< reserved address space after the tail guard page
};

/// Async-signal-safe. Sets (lo == hi: clears) a range; `what` must be a string literal.
void set_range(Guarded which, uintptr_t lo, uintptr_t hi, const char* what);
/// Async-signal-safe. While set, a fault is blamed on the plugin's string data (copying them).
void set_copying_strings(bool on);
/// Async-signal-safe. write(2) until all n bytes are written; false on error.
bool write_all(int fd, const void* p, std::size_t n);
/// Async-signal-safe. Installs the handler on an alternate stack of `stack_bytes` at `stack`.
void install_fault_handler(void* stack, std::size_t stack_bytes);

}  // namespace gscheck::worker
