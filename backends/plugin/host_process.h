// One gscheck-worker process seen from gscheck: spawning it as the leader of its own process
// group, its pipes and memfds, frames in and out, killing the group, and why it died.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "backends/plugin/host_cgroup.h"
#include "backends/plugin/host_text.h"
#include "backends/plugin/wire.h"
#include "backends/plugin_backend.h"

namespace gscheck::plugin {

using Clock = std::chrono::steady_clock;

inline Clock::duration span(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
inline Clock::time_point after(double seconds) { return Clock::now() + span(seconds); }

/// A frame from the worker.
struct Frame {
  worker::Msg type{};
  uint32_t call_id = 0;
  std::string payload;
};

/// How waiting for a frame ended.
enum class Wait { kFrame, kEof, kTimeout, kMalformed };

class WorkerProcess {
 public:
  WorkerProcess() = default;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess() { stop(); }

  /// Starts gscheck-worker for `plugin`; "" or why it could not.
  std::string spawn(const std::string& plugin, const PluginOptions& opt);
  bool alive() const { return pid_ > 0; }

  /// One frame to the worker (small payloads only), with `fd` passed along when >= 0; false
  /// when the worker is gone.
  bool send(worker::Msg type, uint32_t call_id, const void* p, uint32_t n, int fd = -1);
  /// The next frame from the worker, draining its log meanwhile. A malformed frame kills the
  /// group.
  Wait wait_frame(Clock::time_point deadline, Frame& f);
  /// Why the worker stopped answering; reaps it and kills its group.
  std::string death_reason(Wait how);
  /// Kills the worker's process group and reaps the worker; returns its wait status.
  int kill_group();
  /// A clean stop: closing the socket makes the worker call finalize() and exit.
  void stop();

  int out_mem() const { return out_mem_; }
  /// Caps the worker's memory (where it has a cgroup) at `bytes` above what it uses now.
  void cap_memory(uint64_t bytes) { cgroup_.cap_memory_above_current(bytes); }
  const LogTail& log() const { return log_; }
  /// Processes and threads the worker runs now: its cgroup's count, else the threads of every
  /// process in its process group (gscheck bench: no work may outlive a timed call).
  int64_t tasks() const;

 private:
  void drain_log(int wait_ms);
  bool exited();
  void forget();
  void close_fds();

  pid_t pid_ = -1;
  int slot_ = -1;
  int cmd_ = -1, reply_ = -1, log_fd_ = -1, status_fd_ = -1, out_mem_ = -1;
  std::string pending_;
  LogTail log_;
  WorkerCgroup cgroup_;
};

}  // namespace gscheck::plugin
