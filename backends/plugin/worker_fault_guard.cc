// ASYNC-SIGNAL-SAFE ONLY (see worker_fault_guard.h): nothing in this file may allocate, lock,
// use stdio or throw; it may call only async-signal-safe functions (signal-safety(7)).
#include "backends/plugin/worker_fault_guard.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "backends/plugin/wire.h"
#include "backends/plugin/worker_io.h"

namespace gscheck::worker {
namespace {

struct FaultRange {
  uintptr_t lo = 0, hi = 0;
  const char* what = "";
};

// Everything the handler reads, and nothing else.
struct FaultState {
  FaultRange ranges[5];  // indexed by Guarded
  volatile sig_atomic_t copying_strings = 0;
};
FaultState g_fault;

// Async-signal-safe.
std::size_t put_number(char* p, uint64_t v) {
  char tmp[24];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  for (std::size_t i = 0; i < n; ++i) p[i] = tmp[n - 1 - i];
  return n;
}

// The handler. Async-signal-safe.
void on_fault(int sig, siginfo_t* si, void*) {
  const auto addr = reinterpret_cast<uintptr_t>(si->si_addr);
  char text[256];
  std::size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n < sizeof text - 24) text[n++] = *s++;
  };
  if (g_fault.copying_strings) {
    put("the plugin's output string data were not readable after run() returned (ABI: data ");
    put("assigned directly must stay valid until the next run(); set_string() copies)");
  }
  for (const auto& r : g_fault.ranges) {
    if (n == 0 && r.lo <= addr && addr < r.hi) {
      put("plugin touched ");
      put(r.what);
      put(" (byte ");
      n += put_number(text + n, addr - r.lo);
      put(" of it)");
    }
  }
  if (n > 0) {  // a small frame: the alternate stack has no room for send_frame's buffer
    char frame[sizeof(FrameHeader) + sizeof text];
    write_all(kReplyFd, frame,
              encode_frame(frame, Msg::kFault, text, static_cast<uint32_t>(n), current_call()));
  }
  // Die of the same signal: a raise() is pending until return, a fault re-runs the access.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

// Async-signal-safe.
void set_range(Guarded which, uintptr_t lo, uintptr_t hi, const char* what) {
  FaultRange& r = g_fault.ranges[static_cast<int>(which)];
  r.lo = lo;
  r.hi = hi;
  r.what = what;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // visible to on_fault at any point
}

// Async-signal-safe.
void set_copying_strings(bool on) { g_fault.copying_strings = on ? 1 : 0; }

// Async-signal-safe.
bool write_all(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Async-signal-safe (sigaltstack and sigaction are).
void install_fault_handler(void* stack, std::size_t stack_bytes) {
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = stack_bytes;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = &on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);
}

}  // namespace gscheck::worker
