// A cgroup per worker, where the machine lets gscheck make one under its own: the memory the
// worker's processes touch (heap, memfds, page cache) is capped by the kernel, which RLIMIT_AS
// cannot do for memfd pages; so is the number of its processes and threads; an OOM kill is
// read back so the case fails as "over its memory cap" rather than as a bare SIGKILL.
// cgroup v2 when gscheck's cgroup delegates the memory and pids controllers to its children;
// else cgroup v1 when its memory and pids hierarchies are writable; else none (and the report's
// containment says so).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gscheck::plugin {

class WorkerCgroup {
 public:
  WorkerCgroup() = default;
  WorkerCgroup(const WorkerCgroup&) = delete;
  WorkerCgroup& operator=(const WorkerCgroup&) = delete;
  ~WorkerCgroup() { remove(); }

  /// What cgroups this machine offers workers, in words ("cgroup v2 (memory, pids)", "cgroup v1
  /// (memory, pids)"), or "" with `why` saying why none.
  static std::string offered(std::string& why);

  /// Makes the group with at most pids_max processes and threads: "" when made or when none is
  /// offered (offered() says so), else why the offered group could not be made as promised.
  std::string create(int64_t pids_max);
  /// Descriptors of the group's cgroup.procs files: the child writes "0" to each to join the
  /// group before it execs, so nothing it starts is ever outside.
  const std::vector<int>& join_fds() const { return join_; }
  void close_join_fds();
  /// Caps the group's memory at `bytes` above what it uses now.
  void cap_memory_above_current(uint64_t bytes);
  /// Processes and threads in the group now (the kernel's pids.current); -1 without a group.
  int64_t tasks() const;
  /// True when the kernel OOM-killed a process of the group since create().
  bool oom_killed() const;
  /// SIGKILLs every process left in the group.
  void kill_all() const;
  /// Kills what is left and removes the group.
  void remove();

 private:
  int version_ = 0;                // 1 or 2; 0: none
  std::vector<std::string> dirs_;  // v2: one; v1: memory, then pids
  std::vector<int> join_;
};

}  // namespace gscheck::plugin
