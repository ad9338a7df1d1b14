// Clean-ups that must run even where the process ends with _exit(): a run stopped by a signal
// or by --case-timeout (harness/run_guard.cc) leaves no destructor to run, and whatever a
// backend made outside the process (a worker's cgroup folders) would outlive it.
#pragma once

namespace gscheck {

/// Registers `fn` (at most 8, each once); thread-safe.
void add_exit_cleanup(void (*fn)());
/// Runs every registered clean-up once, in the order registered; later calls do nothing.
void run_exit_cleanups();

}  // namespace gscheck
