// The worker's frames to gscheck (kReplyFd) and reads from it (kCommandFd), with raw read(2) and
// write(2): the plugin may have broken stdio and the heap.
#pragma once

#include <cstddef>
#include <string>

#include "backends/plugin/wire.h"

namespace gscheck::worker {

/// One frame in one write: a frame is never interleaved with another writer's bytes (pipes keep
/// writes up to PIPE_BUF whole; larger frames come only from this thread). The payload is a
/// followed by b. Async-signal-safe, but needs kMaxFrame bytes of stack.
bool send_frame(Msg type, const void* a, std::size_t a_size, const void* b = nullptr,
                std::size_t b_size = 0);
/// The id of the call being served: every frame sent carries it. Async-signal-safe.
void set_current_call(uint32_t id);
uint32_t current_call();
/// A text frame, cut to 4096 bytes.
void send_text(Msg type, const std::string& text);
/// True when the plugin closed (or replaced) the descriptors to gscheck.
bool lost_pipes();
/// read(2) until all n bytes are read; false at EOF or on error.
bool read_all(int fd, void* p, std::size_t n);

}  // namespace gscheck::worker
