// Loading the plugin in the worker: dlopen, the gscheck_plugin_v2/v1 entry point, its contract
// (sent to gscheck as kHello), the CUDA runtime for device plugins, and init().
#pragma once

#include <string>

#include "backends/plugin/worker_state.h"

namespace gscheck::worker {

/// Loads the plugin at `path` into `state` (v2, run, device, cuda); "" or why it cannot be used.
std::string load(const char* path, WorkerState& state);

}  // namespace gscheck::worker
