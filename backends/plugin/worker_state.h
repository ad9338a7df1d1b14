// The worker's state for its whole life, one object owned by main() and passed down (the fault
// handler's own state is worker_fault_guard.cc's, the only file-level mutable state).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/plugin/worker_cuda_runtime.h"
#include "gscheck/plugin.h"

namespace gscheck::worker {

struct WorkerState {
  std::size_t page = 4096;
  int64_t max_bytes = 0;       // the call's byte budget (argv)
  bool fork_per_call = false;  // --isolate call
  bool seccomp = false;        // the system-call filter is in place
  pid_t gscheck = 0;           // gscheck's pid, as it passed it (argv)
  // The loaded plugin.
  const gsc_plugin_v2* v2 = nullptr;  // set for ABI v2 plugins
  int32_t (*run)(const gsc_call*, gsc_result*) = nullptr;
  bool device = false;                  // GSC_DEVICE_POINTERS: tensors live on the device
  CudaRuntime cuda;                     // loaded when device
  std::vector<pid_t> allowed_children;  // started by init(): the plugin's own servers
};

}  // namespace gscheck::worker
