// Starting a gscheck-worker contained by the kernel: in its own PID namespace (the worker's
// guard is its init: when the guard dies, every process the plugin started dies with it,
// whatever setsid() or double forks did, and none of them can name, and so signal, a process
// outside), its own mount namespace (a fresh /proc; the directories gscheck writes reports to
// and reads cases from are read-only there), and as root or in a user namespace where the
// kernel lets an unprivileged user make one. Where it cannot, the worker runs as before, in a
// process group of its own, and containment() says so and why (the report carries it).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gscheck::plugin {

struct SpawnPlan {
  std::string exe;
  std::vector<std::string> argv;
  std::vector<int> fds;                     // become the worker's descriptors 0, 1, 2, ...
  std::vector<std::string> read_only_dirs;  // existing directories, made read-only inside
  std::vector<int> join_fds;  // cgroup.procs files the child joins before anything else
};

/// Starts the worker; 0 or an errno (after retries of EAGAIN and ENOMEM).
int spawn_contained(const SpawnPlan& plan, pid_t& pid);

/// How workers are contained in this process, in words: "pid, mount[, user] namespaces" or
/// "process group only: <why namespaces are unavailable>". Decided by the first spawn
/// ($GSCHECK_NAMESPACES=0 turns namespaces off); "" before any.
std::string containment();

}  // namespace gscheck::plugin
