// One call in the worker: the inputs read from "in" (copied to the device for device plugins),
// run(), the output checked, children the plugin left behind, and the kResult frame.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "backends/plugin/wire.h"
#include "backends/plugin/worker_state.h"

namespace gscheck::worker {

/// The worker's live (not zombie) child processes.
std::vector<pid_t> live_children();

/// Runs one call described in the first frame.in_bytes of "in"; sends its result frame.
void serve_call(WorkerState& state, const CallFrame& frame);

/// --isolate call: the call runs in a child forked from the worker; the worker reports a child
/// that dies without answering.
void serve_call_forked(WorkerState& state, const CallFrame& frame);

}  // namespace gscheck::worker
