// gscheck-worker: loads one vendor plugin and serves gscheck's calls to it (wire.h). gscheck
// starts it per job; it lives as long as the plugin behaves. Everything the plugin may break
// (the heap, stdio, signal handlers) is treated as suspect: replies use raw write(2).
//
//   gscheck-worker PLUGIN MAX_BYTES MODE PARENT_PID     (MODE: worker | call)
//
// The descriptors (wire.h: kCommandFd, kReplyFd, kInMemFd, kOutMemFd) are set up by gscheck.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/plugin/wire.h"
#include "backends/plugin/worker_call.h"
#include "backends/plugin/worker_coverage.h"
#include "backends/plugin/worker_fault_guard.h"
#include "backends/plugin/worker_io.h"
#include "backends/plugin/worker_loader.h"
#include "backends/plugin/worker_sandbox.h"
#include "backends/plugin/worker_state.h"

namespace {

using namespace gscheck::worker;

// After init(): cap the address space (see plugin.h, MEMORY), not for CUDA plugins.
void cap_memory(const WorkerState& state) {
  if (state.device) return;
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (!f) return;
  const bool ok = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  if (!ok) return;
  const unsigned long long used = pages * state.page;
  const unsigned long long budget = static_cast<unsigned long long>(state.max_bytes);
  const unsigned long long limit =
      budget > (1ull << 60) ? RLIM_INFINITY : used + 4 * budget + (1ull << 30);
  rlimit r{limit, limit};
  ::setrlimit(RLIMIT_AS, &r);
}

// In a PID namespace the guard is its init: its exit kills every process in it.
void kill_own_group(int) {
  ::kill(0, SIGKILL);
  ::_exit(1);
}

// Forks the real worker. In the guard returns how the worker ended (mirroring a signal by dying
// of it); in the worker returns -1.
int guard() {
  const pid_t guard_pid = ::getpid();
  pid_t pid = -1;
  for (int attempt = 0; attempt < 6 && pid < 0; ++attempt) {  // a full process table passes
    pid = ::fork();
    if (pid < 0) ::usleep(10000u << attempt);
  }
  if (pid < 0) {
    std::fprintf(stderr, "gscheck-worker: fork failed: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    ::close(kStatusFd);  // the guard's alone: the plugin cannot forge how the worker ended
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != guard_pid) ::_exit(1);
    // The plugin's orphaned grandchildren become this worker's children, so they are seen.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    return -1;
  }
  // Not dumpable: a worker without capabilities (host_sandbox.cc) cannot open /proc/1/fd/*,
  // the status pipe below among them, nor ptrace or read the guard's memory.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  struct sigaction sa {};
  sa.sa_handler = &kill_own_group;
  ::sigaction(SIGTERM, &sa, nullptr);
  for (int fd = 0; fd <= kCoverageFd; ++fd)
    if (fd != 2 && fd != kStatusFd)
      ::close(fd);  // the worker holds the pipes: their EOF is the worker's
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  [[maybe_unused]] ssize_t n = ::write(kStatusFd, &st, sizeof st);
  if (WIFSIGNALED(st)) {
    ::signal(WTERMSIG(st), SIG_DFL);
    ::raise(WTERMSIG(st));
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

// A kCall header and the call's sealed "in" memfd, which becomes kInMemFd; false at EOF.
bool read_call_header(FrameHeader& h) {
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&h, sizeof h};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n = -1;
  while ((n = ::recvmsg(kCommandFd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      if (fd != kInMemFd) {  // the lowest free descriptor may be kInMemFd itself
        ::dup2(fd, kInMemFd);
        ::close(fd);
      }
    }
  }
  const auto got = static_cast<std::size_t>(n);
  return got == sizeof h || read_all(kCommandFd, reinterpret_cast<char*>(&h) + got, sizeof h - got);
}

// Serves kCall frames until gscheck closes the socket; returns the exit status.
int frame_loop(WorkerState& state) {
  for (;;) {
    FrameHeader h{};
    if (!read_call_header(h)) break;  // gscheck closed the socket: done
    CallFrame frame{};
    if (h.magic != kMagic || h.type != static_cast<uint32_t>(Msg::kCall) ||
        h.size != sizeof frame || !read_all(kCommandFd, &frame, sizeof frame))
      return 3;
    set_current_call(h.call_id);
    if (state.fork_per_call) {
      serve_call_forked(state, frame);
    } else {
      serve_call(state, frame);
    }
    ::close(kInMemFd);  // the call's inputs are freed with gscheck's copy
    if (lost_pipes()) ::_exit(kExitLostPipes);
  }
  if (state.v2 && state.v2->finalize) state.v2->finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "gscheck-worker is started by gscheck, not by hand\n");
    return 2;
  }
  // A plugin crashing on every case must not write a core file per case.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // Die with gscheck, even on SIGKILL; a parent already gone means nobody wants this worker.
  // This process stays a small guard that never loads the plugin: told (SIGTERM) that gscheck
  // died, it kills the whole process group, the plugin's children included.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // In a PID namespace the parent is outside it (getppid() is 0): gscheck alive means its end
  // of the command socket is open.
  const pid_t parent = ::getppid();
  if (parent != static_cast<pid_t>(std::atoll(argv[4])) && parent != 0) return 1;
  pollfd hup{kCommandFd, POLLRDHUP, 0};
  if (::poll(&hup, 1, 0) > 0 && (hup.revents & (POLLRDHUP | POLLHUP))) return 1;
  if (int code = guard(); code >= 0) return code;
  static WorkerState state;  // outlives everything the plugin may still run at exit
  state.page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  state.max_bytes = std::atoll(argv[2]);
  state.fork_per_call = std::strcmp(argv[3], "call") == 0;
  state.gscheck = static_cast<pid_t>(std::atoll(argv[4]));
  coverage_open();  // before the filter and the plugin
  state.seccomp = deny_system_calls() && deny_signals_to_parent(state.gscheck);
  ::signal(SIGPIPE, SIG_DFL);
  static char alt_stack[64 * 1024];
  install_fault_handler(alt_stack, sizeof alt_stack);

  if (std::string e = load(argv[1], state); !e.empty()) {
    send_text(Msg::kLoadError, e);
    return 1;
  }
  state.allowed_children = live_children();
  cap_memory(state);
  send_frame(Msg::kReady, nullptr, 0);
  return frame_loop(state);
}
