// What the worker denies its plugin before loading it: system calls a kernel library never
// needs and that could reach beyond the worker (debugging or writing other processes, mounts,
// namespaces, kernel modules, the clock, reboot). Denied calls fail with EPERM; nothing is
// killed, so a library probing for a feature goes on without it.
#pragma once

#include <sys/types.h>

namespace gscheck::worker {

/// Installs the seccomp filter (libseccomp) on this process and its future children; false when
/// the build has no libseccomp or the kernel refuses the filter.
bool deny_system_calls();

/// A further filter: no signal to `parent` (the guard, or in --isolate call the worker), to
/// gscheck (`gscheck`, its pid as gscheck passed it: nameable where no PID namespace hides it,
/// under --unsafe-no-sandbox), to the whole process group (0) or to every process (-1), so a
/// plugin cannot take down what serves the next call and have an innocent case blamed. Signals
/// to itself still work (abort(), raise()).
bool deny_signals_to_parent(pid_t gscheck);

}  // namespace gscheck::worker
