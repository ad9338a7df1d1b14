#include "backends/plugin/host_sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
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
  char* const* envp;  // the contained worker's: environ with TMPDIR=/dev/shm
  const int* fds;
  int nfds;
  const char* const* hide_dirs;  // an empty read-only tmpfs over each
  int nhide_dirs;
  const char* const* hide_files;  // /dev/null over each
  int nhide_files;
  const char* const* writable;  // left writable under the read-only root
  int nwritable;
  const char* const* devices;  // the device nodes it may open; every other one is nodev
  int ndevices;
  const char* shm_options;  // the private /dev/shm tmpfs: "size=N,mode=1777"
  bool sysrq;               // the kernel has /proc/sysrq-trigger
  const int* join;
  int njoin;
  int err_fd;
  bool user_ns;
  const char* uid_map;
  const char* gid_map;
};

// Stages of the child's set-up, for the error it reports.
enum Stage : int {
  kUserMap = 1,
  kPrivateMounts,
  kReadOnly,
  kWritable,
  kDevices,
  kProc,
  kShm,
  kHide,
  kCgroup,
  kSession,
  kCapabilities,
  kExec
};

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

// Every capability gone for good, also across exec as uid 0 (SECBIT_NOROOT), and no way to
// gain one (no_new_privs): a root worker cannot remount, ptrace the guard (non-dumpable, so its
// status pipe under /proc/1/fd stays shut), mknod, or write files its mounts make read-only.
bool drop_capabilities() {
  for (int c = 0; c <= 63; ++c) ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0);  // EINVAL past the last
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return false;
  __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &head, none) != 0) return false;
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
}

// Default signal handling and the worker's descriptors, then exec.
[[noreturn]] void exec_worker(const ChildArgs& a, bool contained) {
  for (int i = 0; i < a.njoin; ++i)
    if (::write(a.join[i], "0", 1) != 1) child_fail(a.err_fd, kCgroup);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (contained) {
    // Its own session: the worker leads its process group and has no controlling terminal, so
    // nothing it writes to /dev/tty reaches gscheck's console.
    if (::setsid() < 0) child_fail(a.err_fd, kSession);
    if (!drop_capabilities()) child_fail(a.err_fd, kCapabilities);
  } else {
    ::setpgid(0, 0);  // the worker leads its own process group
  }
  // Sources sit above every target (host_process.cc), so no dup2 overwrites a later source.
  for (int i = 0; i < a.nfds; ++i)
    if (::dup2(a.fds[i], i) < 0) child_fail(a.err_fd, kExec);
  // Everything else closes at exec: err_fd too, which tells the parent exec succeeded.
  ::close_range(static_cast<unsigned>(a.nfds), ~0u, CLOSE_RANGE_CLOEXEC);
  ::execve(a.exe, a.argv, contained ? a.envp : environ);
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
  // Every mount of this namespace read-only (gscheck's own stay as they are): the worker writes
  // to no file, through no path and no working directory, but its private /dev/shm and the
  // directories the user named, each a mount of its own whose read-only flag is cleared again.
  for (int i = 0; i < a.nwritable; ++i)
    if (::mount(a.writable[i], a.writable[i], nullptr, MS_BIND, nullptr) != 0)
      child_fail(a.err_fd, kWritable);
  // No device node opens either (a read-only mount stops no device write: a raw disk is root's
  // to write without a capability), but /dev/null and its kind and the GPU's, each a mount of
  // its own whose nodev flag is cleared again.
  for (int i = 0; i < a.ndevices; ++i)
    if (::mount(a.devices[i], a.devices[i], nullptr, MS_BIND, nullptr) != 0)
      child_fail(a.err_fd, kDevices);
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0)
    child_fail(a.err_fd, kReadOnly);
  mount_attr rw{};
  rw.attr_clr = MOUNT_ATTR_RDONLY;
  for (int i = 0; i < a.nwritable; ++i)
    if (::syscall(SYS_mount_setattr, AT_FDCWD, a.writable[i], 0, &rw, sizeof rw) != 0)
      child_fail(a.err_fd, kWritable);
  mount_attr dev{};
  dev.attr_clr = MOUNT_ATTR_NODEV;
  for (int i = 0; i < a.ndevices; ++i)
    if (::syscall(SYS_mount_setattr, AT_FDCWD, a.devices[i], 0, &dev, sizeof dev) != 0)
      child_fail(a.err_fd, kDevices);
  // This namespace's own /proc: pids in it are the worker's (it reads its children there). Its
  // sysctls read-only (core_pattern and hostname are not the worker's to set), sysrq shut.
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0 ||
      ::mount("/proc/sys", "/proc/sys", nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
      ::mount(nullptr, "/proc/sys", nullptr,
              MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0 ||
      (a.sysrq && ::mount("/dev/null", "/proc/sysrq-trigger", nullptr, MS_BIND, nullptr) != 0))
    child_fail(a.err_fd, kProc);
  // The one writable place: a size-limited tmpfs that dies with the namespace.
  if (::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, a.shm_options) != 0)
    child_fail(a.err_fd, kShm);
  // What grades the run is out of sight: case files, known failures, reports, saved cases.
  // Files first: a directory hidden after them covers their mounts too.
  for (int i = 0; i < a.nhide_files; ++i)
    if (::mount("/dev/null", a.hide_files[i], nullptr, MS_BIND, nullptr) != 0)
      child_fail(a.err_fd, kHide);
  for (int i = 0; i < a.nhide_dirs; ++i)
    if (::mount("tmpfs", a.hide_dirs[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=4k,mode=000") != 0)
      child_fail(a.err_fd, kHide);
  if (::chdir("/") != 0) child_fail(a.err_fd, kHide);
  exec_worker(a, true);
}

int plain_child(void* p) { exec_worker(*static_cast<const ChildArgs*>(p), false); }

const char* stage_name(int stage) {
  switch (stage) {
    case kUserMap:
      return "cannot map its user id in a user namespace";
    case kPrivateMounts:
      return "cannot make its mounts private";
    case kReadOnly:
      return "cannot make its mounts read-only";
    case kWritable:
      return "cannot leave the --worker-writable directories writable";
    case kDevices:
      return "cannot leave /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom and the "
             "GPU's device nodes usable";
    case kProc:
      return "cannot mount /proc in its PID namespace with read-only sysctls";
    case kShm:
      return "cannot mount its private /dev/shm";
    case kHide:
      return "cannot hide the case, known-failures and report files";
    case kCgroup:
      return "cannot join its cgroup";
    case kSession:
      return "cannot start its own session";
    case kCapabilities:
      return "cannot drop its capabilities";
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

// The device nodes a worker may open: those every program may (null, zero, full, random,
// urandom) and an NVIDIA GPU's (/dev/nvidia*: the control node, each card, UVM, modeset, and
// /dev/nvidia-caps/*), as this machine has them now.
std::vector<std::string> usable_devices() {
  std::vector<std::string> out;
  const auto add = [&](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) out.push_back(path);
  };
  for (const char* name : {"null", "zero", "full", "random", "urandom"})
    add(std::string("/dev/") + name);
  for (const char* dir : {"/dev", "/dev/nvidia-caps"}) {
    DIR* d = ::opendir(dir);
    if (!d) continue;
    while (const dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, "nvidia", 6) == 0) add(std::string(dir) + "/" + e->d_name);
    ::closedir(d);
  }
  return out;
}

}  // namespace

int spawn_contained(const SpawnPlan& plan, pid_t& pid) {
  std::vector<char*> argv;
  for (const auto& s : plan.argv) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  // Hidden: what exists now (a path made later is not the worker's to see either: the run's
  // outputs are written by gscheck into directories hidden here).
  std::vector<const char*> hide_dirs, hide_files;
  for (const auto& h : plan.hidden) {
    struct stat st {};
    if (h.empty() || h.front() != '/' || ::stat(h.c_str(), &st) != 0) continue;
    (S_ISDIR(st.st_mode) ? hide_dirs : hide_files).push_back(h.c_str());
  }
  std::vector<const char*> writable;
  for (const auto& w : plan.writable) writable.push_back(w.c_str());
  const std::vector<std::string> device_paths = usable_devices();
  std::vector<const char*> devices;
  for (const auto& d : device_paths) devices.push_back(d.c_str());
  // The worker's environment: TMPDIR names its private writable place.
  std::vector<char*> envp;
  static char tmpdir[] = "TMPDIR=/dev/shm";
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "TMPDIR=", 7) != 0) envp.push_back(*e);
  envp.push_back(tmpdir);
  envp.push_back(nullptr);
  const std::string shm =
      "size=" + std::to_string(std::max<int64_t>(plan.shm_bytes, 64 << 20)) + ",mode=1777";
  const std::string uid_map = "0 " + std::to_string(::geteuid()) + " 1";
  const std::string gid_map = "0 " + std::to_string(::getegid()) + " 1";
  ChildArgs a{plan.exe.c_str(),
              argv.data(),
              envp.data(),
              plan.fds.data(),
              static_cast<int>(plan.fds.size()),
              hide_dirs.data(),
              static_cast<int>(hide_dirs.size()),
              hide_files.data(),
              static_cast<int>(hide_files.size()),
              writable.data(),
              static_cast<int>(writable.size()),
              devices.data(),
              static_cast<int>(devices.size()),
              shm.c_str(),
              ::access("/proc/sysrq-trigger", F_OK) == 0,
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
  const auto refuse = [&] { return g_mode == Mode::kProcessGroup && !plan.unsandboxed_ok; };
  for (int attempt = 0; attempt < 6; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(10 << attempt));
    if (g_mode != Mode::kProcessGroup) {
      const bool user_ns = g_mode == Mode::kNamespaces ? g_user_ns : ::geteuid() != 0;
      a.user_ns = user_ns;
      s = clone_worker(a,
                       CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | (user_ns ? CLONE_NEWUSER : 0));
      if (s.pid > 0) {
        if (g_mode == Mode::kUndecided) {
          g_mode = Mode::kNamespaces;
          g_user_ns = user_ns;
          g_containment =
              std::string(user_ns ? "pid, mount, IPC and user namespaces"
                                  : "pid, mount and IPC namespaces") +
              " (read-only root, no device nodes but null, zero, full, random, urandom and "
              "the GPU's, private /dev/shm, the run's inputs and reports hidden, no "
              "capabilities)";
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
                                          : "cannot make PID, mount and IPC namespaces")) +
                      " (" + std::strerror(s.error) + ")";
    }
    if (refuse()) return kNoSandbox;
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
