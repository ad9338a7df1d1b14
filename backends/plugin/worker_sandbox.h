// What the worker denies its plugin before loading it: system calls a kernel library never
// needs and that could reach beyond the worker (debugging or writing other processes, mounts,
// namespaces, kernel modules, the clock, reboot). Denied calls fail with EPERM; nothing is
// killed, so a library probing for a feature goes on without it.
#pragma once

namespace gscheck::worker {

/// Installs the seccomp filter (libseccomp) on this process and its future children; false when
/// the build has no libseccomp or the kernel refuses the filter.
bool deny_system_calls();

}  // namespace gscheck::worker
