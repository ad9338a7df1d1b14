// Starting a gscheck-worker contained by the kernel (docs/vendor.md, "Threat model"): in its own
// PID namespace (the worker's guard is its init: when the guard dies, every process the plugin
// started dies with it, whatever setsid() or double forks did, and none of them can name, and so
// signal, a process outside), its own mount namespace (every mount read-only, a fresh /proc with
// read-only sysctls, a private size-limited /dev/shm as the only writable place, the run's case,
// known-failures and report files hidden, working directory "/"), its own session (no
// controlling terminal), and without any capability (dropped for good, no_new_privs), as root or
// in a user namespace where the kernel lets an unprivileged user make one. Where it cannot, the
// worker runs in a process group of its own, and containment() says so and why (the report
// carries it), and only where the user allowed it (--unsafe-no-sandbox): else it is refused.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gscheck::plugin {

struct SpawnPlan {
  std::string exe;
  std::vector<std::string> argv;
  std::vector<int> fds;  // become the worker's descriptors 0, 1, 2, ...
  /// Absolute paths the worker must not read (case files, known failures, reports, saved cases):
  /// a directory gets an empty tmpfs over it, a file /dev/null; paths that do not exist are
  /// skipped.
  std::vector<std::string> hidden;
  /// Existing absolute directories the worker may write (outside every hidden path).
  std::vector<std::string> writable;
  int64_t shm_bytes = 0;      // the size of its private /dev/shm (at least 64 MiB)
  std::vector<int> join_fds;  // cgroup.procs files the child joins before anything else
  /// Where the machine offers no namespaces: start the worker in a process group only
  /// (--unsafe-no-sandbox) rather than refuse with kNoSandbox.
  bool unsandboxed_ok = false;
};

/// spawn_contained()'s answer where no sandbox can be made and the plan does not allow running
/// without one: containment() says why.
inline constexpr int kNoSandbox = -1;

/// Starts the worker; 0, kNoSandbox or an errno (after retries of EAGAIN and ENOMEM).
int spawn_contained(const SpawnPlan& plan, pid_t& pid);

/// How workers are contained in this process, in words: "pid, mount[, user] namespaces" or
/// "process group only: <why namespaces are unavailable>". Decided by the first spawn
/// ($GSCHECK_NAMESPACES=0 turns namespaces off); "" before any.
std::string containment();

}  // namespace gscheck::plugin
