#include "backends/plugin/worker_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "backends/plugin/worker_fault_guard.h"

namespace gscheck::worker {
namespace {
std::atomic<uint32_t> g_call{0};
}  // namespace

void set_current_call(uint32_t id) { g_call.store(id, std::memory_order_relaxed); }
uint32_t current_call() { return g_call.load(std::memory_order_relaxed); }

bool send_frame(Msg type, const void* a, std::size_t a_size, const void* b, std::size_t b_size) {
  FrameHeader h = frame_header(type, static_cast<uint32_t>(a_size + b_size), current_call());
  if (a_size + b_size > kMaxFrame) return false;
  char buf[sizeof h + kMaxFrame];
  std::memcpy(buf, &h, sizeof h);
  if (a_size) std::memcpy(buf + sizeof h, a, a_size);
  if (b_size) std::memcpy(buf + sizeof h + a_size, b, b_size);
  return write_all(kReplyFd, buf, sizeof h + a_size + b_size);
}

void send_text(Msg type, const std::string& text) {
  send_frame(type, text.data(), std::min<std::size_t>(text.size(), 4096));
}

bool lost_pipes() {
  struct stat reply {};
  return ::fstat(kReplyFd, &reply) != 0 || !S_ISFIFO(reply.st_mode) ||
         ::fcntl(kCommandFd, F_GETFD) < 0;
}

bool read_all(int fd, void* p, std::size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace gscheck::worker
