#include "backends/plugin/host_sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

extern char** environ;

namespace gscheck::plugin {
namespace {

enum class Mode { kUndecided, kNamespaces, kProcessGroup };

std::mutex g_mu;
Mode g_mode = Mode::kUndecided;
bool g_user_ns = false;
std::string g_containment;

// What the child of clone() needs, prepared before it: it may only make system calls.
struct ChildArgs {
  const char* exe;
  char* const* argv;
  const int* fds;
  int nfds;
  const char* const* ro_dirs;
  const unsigned long* ro_flags;
  int nro;
  const int* join;
  int njoin;
  int err_fd;
  bool user_ns;
  const char* uid_map;
  const char* gid_map;
};

// Stages of the child's set-up, for the error it reports.
enum Stage : int { kUserMap = 1, kPrivateMounts, kProc, kReadOnly, kCgroup, kExec };

[[noreturn]] void child_fail(int fd, int stage) {
  const int m[2] = {stage, errno};
  [[maybe_unused]] ssize_t n = ::write(fd, m, sizeof m);
  ::_exit(127);
}

bool write_file(const char* path, const char* text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const auto n = static_cast<ssize_t>(std::strlen(text));
  const bool ok = ::write(fd, text, static_cast<std::size_t>(n)) == n;
  ::close(fd);
  return ok;
}

// Default signal handling and the worker's descriptors, then exec.
[[noreturn]] void exec_worker(const ChildArgs& a) {
  for (int i = 0; i < a.njoin; ++i)
    if (::write(a.join[i], "0", 1) != 1) child_fail(a.err_fd, kCgroup);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);  // the worker leads its own process group
  // Sources sit above every target (host_process.cc), so no dup2 overwrites a later source.
  for (int i = 0; i < a.nfds; ++i)
    if (::dup2(a.fds[i], i) < 0) child_fail(a.err_fd, kExec);
  // Everything else closes at exec: err_fd too, which tells the parent exec succeeded.
  ::close_range(static_cast<unsigned>(a.nfds), ~0u, CLOSE_RANGE_CLOEXEC);
  ::execve(a.exe, a.argv, environ);
  child_fail(a.err_fd, kExec);
}

int contained_child(void* p) {
  const auto& a = *static_cast<const ChildArgs*>(p);
  if (a.user_ns && (!write_file("/proc/self/setgroups", "deny") ||
                    !write_file("/proc/self/uid_map", a.uid_map) ||
                    !write_file("/proc/self/gid_map", a.gid_map)))
    child_fail(a.err_fd, kUserMap);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    child_fail(a.err_fd, kPrivateMounts);
  // This namespace's own /proc: pids in it are the worker's (it reads its children there).
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    child_fail(a.err_fd, kProc);
  for (int i = 0; i < a.nro; ++i) {
    if (::mount(a.ro_dirs[i], a.ro_dirs[i], nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
        ::mount(nullptr, a.ro_dirs[i], nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | a.ro_flags[i],
                nullptr) != 0)
      child_fail(a.err_fd, kReadOnly);
  }
  exec_worker(a);
}

int plain_child(void* p) { exec_worker(*static_cast<const ChildArgs*>(p)); }

// A bind remount keeps the mount's locked flags (nosuid, nodev, noexec...) or fails.
unsigned long mount_flags_of(const std::string& dir) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) return 0;
  unsigned long f = 0;
  if (s.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (s.f_flag & ST_NODEV) f |= MS_NODEV;
  if (s.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (s.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (s.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (s.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

const char* stage_name(int stage) {
  switch (stage) {
    case kUserMap:
      return "cannot map its user id in a user namespace";
    case kPrivateMounts:
      return "cannot make its mounts private";
    case kProc:
      return "cannot mount /proc in its PID namespace";
    case kReadOnly:
      return "cannot make the report and case directories read-only";
    case kCgroup:
      return "cannot join its cgroup";
    default:
      return "cannot start gscheck-worker";
  }
}

struct Started {
  int error = 0;   // errno of clone(), or of the child's failed stage
  int stage = 0;   // the child's failed stage, 0 when clone() itself failed or all went well
  pid_t pid = -1;  // on success
};

// One clone(), sharing memory and suspending this thread until the child execs or fails (as
// posix_spawn does: no copy of gscheck's page tables); the child reports a failed stage through
// a pipe that closes at exec.
Started clone_worker(ChildArgs a, int flags) {
  Started s;
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) return Started{errno, 0, -1};
  a.err_fd = err[1];
  alignas(64) static char stack[64 * 1024];  // one spawn at a time (host_process.cc's Spawner)
  const pid_t pid =
      ::clone(flags & (CLONE_NEWPID | CLONE_NEWUSER) ? &contained_child : &plain_child,
              stack + sizeof stack, flags | CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
  ::close(err[1]);
  if (pid < 0) {
    s.error = errno;
    ::close(err[0]);
    return s;
  }
  int m[2] = {0, 0};
  ssize_t n = 0;
  while ((n = ::read(err[0], m, sizeof m)) < 0 && errno == EINTR) {
  }
  ::close(err[0]);
  if (n == static_cast<ssize_t>(sizeof m)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    s.stage = m[0];
    s.error = m[1];
    return s;
  }
  s.pid = pid;
  return s;
}

bool transient(int e) { return e == EAGAIN || e == ENOMEM; }

}  // namespace

int spawn_contained(const SpawnPlan& plan, pid_t& pid) {
  std::vector<char*> argv;
  for (const auto& s : plan.argv) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  std::vector<const char*> ro;
  std::vector<unsigned long> ro_flags;
  for (const auto& d : plan.read_only_dirs) {
    ro.push_back(d.c_str());
    ro_flags.push_back(mount_flags_of(d));
  }
  const std::string uid_map = "0 " + std::to_string(::geteuid()) + " 1";
  const std::string gid_map = "0 " + std::to_string(::getegid()) + " 1";
  ChildArgs a{plan.exe.c_str(),
              argv.data(),
              plan.fds.data(),
              static_cast<int>(plan.fds.size()),
              ro.data(),
              ro_flags.data(),
              static_cast<int>(ro.size()),
              plan.join_fds.data(),
              static_cast<int>(plan.join_fds.size()),
              -1,
              false,
              uid_map.c_str(),
              gid_map.c_str()};
  std::lock_guard lock(g_mu);
  if (g_mode == Mode::kUndecided) {
    const char* env = std::getenv("GSCHECK_NAMESPACES");
    if (env && std::strcmp(env, "0") == 0) {
      g_mode = Mode::kProcessGroup;
      g_containment = "process group only: namespaces turned off ($GSCHECK_NAMESPACES=0)";
    }
  }
  Started s;
  for (int attempt = 0; attempt < 6; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(10 << attempt));
    if (g_mode != Mode::kProcessGroup) {
      const bool user_ns = g_mode == Mode::kNamespaces ? g_user_ns : ::geteuid() != 0;
      a.user_ns = user_ns;
      s = clone_worker(a, CLONE_NEWPID | CLONE_NEWNS | (user_ns ? CLONE_NEWUSER : 0));
      if (s.pid > 0) {
        if (g_mode == Mode::kUndecided) {
          g_mode = Mode::kNamespaces;
          g_user_ns = user_ns;
          g_containment = user_ns ? "pid, mount and user namespaces" : "pid and mount namespaces";
        }
        pid = s.pid;
        return 0;
      }
      if (transient(s.error) && s.stage == 0) continue;
      if (g_mode == Mode::kNamespaces) return s.error ? s.error : EPERM;
      // The first spawn finds the machine offers no namespaces: say why once, then go on.
      g_mode = Mode::kProcessGroup;
      g_containment = std::string("process group only: ") +
                      (s.stage ? stage_name(s.stage)
                               : (user_ns ? "cannot make a user namespace"
                                          : "cannot make PID and mount namespaces")) +
                      " (" + std::strerror(s.error) + ")";
    }
    s = clone_worker(a, 0);
    if (s.pid > 0) {
      pid = s.pid;
      return 0;
    }
    if (!transient(s.error)) break;
  }
  return s.error ? s.error : EPERM;
}

std::string containment() {
  std::lock_guard lock(g_mu);
  return g_containment;
}

}  // namespace gscheck::plugin
