// A crash of in-process code (the oracle, cuda-emu) fails the case it happened on instead of
// ending the run: SIGSEGV, SIGBUS, SIGFPE and SIGILL raised while a guarded call runs on this
// thread jump back out of it. Plugins run in their own processes and need none of this.
//
// What it costs and cannot do: sigsetjmp and a thread-local pointer per call (no system call);
// the crashed call's state is abandoned, so memory it held leaks and a lock it held stays held
// (a crash inside malloc can then hang the run: the per-case time limit ends it). A hang is not
// a crash: the per-case limit (RunGuard) ends the run there. Under ASan the guard steps aside so
// the sanitizer reports the fault; $GSCHECK_CRASH_GUARD=0 turns it off (for a debugger).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace gscheck::harness {

/// Runs fn on this thread. Returns the signal that ended it early, or nullopt when it returned.
std::optional<int> run_crash_guarded(const std::function<void()>& fn);

/// "SIGFPE (Floating point exception)".
std::string signal_text(int sig);

}  // namespace gscheck::harness
