#include "backends/plugin/host_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "backends/plugin/host_sandbox.h"
#include "core/executable_dir.h"

#ifndef GSCHECK_WORKER_PATH
#define GSCHECK_WORKER_PATH ""
#endif

namespace gscheck::plugin {
namespace {

namespace w = worker;

// Processes and threads one worker may have (its cgroup's pids.max).
constexpr int64_t kMaxWorkerTasks = 4096;

// --- Every live worker's process group, for the signal handler.
constexpr int kMaxWorkers = 1024;
std::atomic<pid_t> g_groups[kMaxWorkers];
struct sigaction g_previous[65];

void kill_groups_and_reraise(int sig) {
  for (auto& g : g_groups)
    if (const pid_t pg = g.load(); pg > 0) ::kill(-pg, SIGKILL);
  ::sigaction(sig, &g_previous[sig], nullptr);
  if (g_previous[sig].sa_handler == SIG_IGN) return;
  ::raise(sig);
}

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      struct sigaction sa {};
      sa.sa_handler = &kill_groups_and_reraise;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &sa, &g_previous[sig]);
    }
  });
}

int register_group(pid_t pg) {
  for (int i = 0; i < kMaxWorkers; ++i) {
    pid_t expected = 0;
    if (g_groups[i].compare_exchange_strong(expected, pg)) return i;
  }
  return -1;
}

// Workers are started from one thread that lives as long as the process: PR_SET_PDEATHSIG
// fires when the *thread* that started a worker exits, and --jobs threads come and go.
class Spawner {
 public:
  static int run(std::function<int()> f) {
    // Never destroyed: its thread outlives every worker. A fork()ed copy of this process has
    // no spawner thread, so it starts its own.
    static std::atomic<Spawner*> current{nullptr};
    Spawner* s = current.load();
    if (!s || s->owner_ != ::getpid()) {
      s = new Spawner();
      if (!s->start()) {  // no thread to spare (a pids or thread limit): this spawn fails
        delete s;
        return EAGAIN;
      }
      current.store(s);
    }
    std::packaged_task<int()> task(std::move(f));
    auto result = task.get_future();
    {
      std::lock_guard lock(s->mu_);
      s->queue_.push_back(std::move(task));
    }
    s->cv_.notify_one();
    return result.get();
  }

 private:
  bool start() {
    try {
      std::thread([this] {
        for (;;) {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [&] { return !queue_.empty(); });
          auto task = std::move(queue_.front());
          queue_.pop_front();
          lock.unlock();
          task();
        }
      }).detach();
      return true;
    } catch (const std::system_error&) {
      return false;
    }
  }
  pid_t owner_ = ::getpid();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<int()>> queue_;
};

std::string worker_path() {
  if (const char* env = std::getenv("GSCHECK_WORKER"); env && *env) return env;
  if (const std::string dir = executable_dir();
      !dir.empty() && ::access((dir + "gscheck-worker").c_str(), X_OK) == 0)
    return dir + "gscheck-worker";
  return GSCHECK_WORKER_PATH;
}

// path made absolute against the working directory (not resolved: a symlink stays one).
std::string absolute_path(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return path;
  return std::string(cwd) + "/" + path;
}

// The paths of `hidden` the worker can do without: a directory holding what it runs (its
// executable, the plugin, a Python module or venv) stays visible; its case files are hidden one
// by one (they are in `hidden` too).
// `path` is `dir` or lies under it.
bool within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::vector<std::string> hidden_from_worker(const std::vector<std::string>& hidden,
                                            std::vector<std::string> needed) {
  for (const char* env : {"GSCHECK_PYTHON_MODULE", "GSCHECK_PYTHON_VENV"})
    if (const char* v = std::getenv(env); v && *v == '/') needed.emplace_back(v);
  const std::size_t given = needed.size();
  for (std::size_t i = 0; i < given; ++i)  // and where their symlinks lead
    if (char* real = ::realpath(needed[i].c_str(), nullptr)) {
      needed.emplace_back(real);
      std::free(real);
    }
  std::vector<std::string> out;
  for (const std::string& h : hidden) {
    const bool holds = std::any_of(needed.begin(), needed.end(),
                                   [&](const std::string& n) { return within(n, h); });
    if (!holds) out.push_back(h);
  }
  // A path under a hidden directory is hidden with it: one mount, not one per case file (5,000
  // exported case files in one folder cost 54 ms of mounts per worker start, 2026-12-05).
  std::sort(out.begin(), out.end());
  std::vector<std::string> pruned;
  for (const std::string& h : out)
    if (pruned.empty() || !within(h, pruned.back())) pruned.push_back(h);
  return pruned;
}

// "out", at its final size (wire.h: out_capacity) and sealed there.
int out_memfd(int64_t max_bytes) {
  const int fd = ::memfd_create("gscheck-out", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fd;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t size =
      w::out_capacity(static_cast<uint64_t>(std::max<int64_t>(max_bytes, 0)), page);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string WorkerProcess::spawn(const std::string& plugin, const PluginOptions& opt) {
  install_signal_handlers();
  const std::string exe = worker_path();
  if (exe.empty() || ::access(exe.c_str(), X_OK) != 0)
    return "cannot find gscheck-worker (next to this executable, or $GSCHECK_WORKER; built at '" +
           std::string(GSCHECK_WORKER_PATH) + "')";
  int cmd[2], rep[2], log[2], status[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cmd) != 0)
    return std::string("socketpair failed: ") + std::strerror(errno);
  if (::pipe2(rep, O_CLOEXEC) != 0 || ::pipe2(log, O_CLOEXEC) != 0 ||
      ::pipe2(status, O_CLOEXEC) != 0)
    return std::string("pipe failed: ") + std::strerror(errno);
  out_mem_ = out_memfd(opt.max_output_bytes);
  if (out_mem_ < 0) {
    for (int fd : {cmd[0], cmd[1], rep[0], rep[1], log[0], log[1], status[0], status[1]})
      ::close(fd);
    return std::string("cannot make the output memory: ") + std::strerror(errno);
  }
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  cmd_ = cmd[0];
  reply_ = rep[0];
  log_fd_ = log[0];
  status_fd_ = status[0];
  ::fcntl(log_fd_, F_SETFL, O_NONBLOCK);
  ::fcntl(reply_, F_SETFL, O_NONBLOCK);
  ::fcntl(status_fd_, F_SETFL, O_NONBLOCK);
  // Sources above every target, so no dup2 overwrites a later source. The order is the
  // worker's descriptors 0..8 (wire.h: kCommandFd and the rest; kCoverageFd is /dev/null unless
  // the plugin is fuzzed with its coverage).
  // Each call brings its own "in" memfd (kInMemFd's slot holds /dev/null until the first).
  const int coverage = opt.coverage_memfd >= 0 ? opt.coverage_memfd : devnull;
  const int sources[] = {devnull, log[1],   log[1],    cmd[1],  rep[1],
                         devnull, out_mem_, status[1], coverage};
  SpawnPlan plan;
  std::string error;
  for (int fd : sources) {
    const int h = fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 16);
    if (h < 0)
      error = std::string("cannot set up the worker's descriptors: ") + std::strerror(errno);
    plan.fds.push_back(h);
  }
  for (int fd : {devnull, log[1], cmd[1], rep[1], status[1]}) ::close(fd);
  // Absolute: the contained worker starts in "/".
  plan.exe = absolute_path(exe);
  const std::string plugin_path = absolute_path(plugin);
  plan.argv = {plan.exe, plugin_path, std::to_string(opt.max_output_bytes),
               opt.isolate == Isolation::kCall ? "call" : "worker", std::to_string(::getpid())};
  plan.hidden = hidden_from_worker(opt.hidden, {plan.exe, plugin_path});
  plan.writable = opt.writable;
  plan.shm_bytes = opt.max_output_bytes;
  // $GSCHECK_UNSAFE_NO_SANDBOX=1 is the flag for test suites (CMakePresets' test presets set
  // it): it changes nothing where a sandbox can be made.
  const char* unsafe_env = std::getenv("GSCHECK_UNSAFE_NO_SANDBOX");
  plan.unsandboxed_ok =
      opt.unsafe_no_sandbox || (unsafe_env && std::string_view(unsafe_env) == "1");
  // Threads count too: TensorFlow's pools start about two per core.
  if (error.empty()) {
    if (const std::string why = cgroup_.create(kMaxWorkerTasks); !why.empty())
      error = "cannot make the worker's cgroup (" + why +
              "): it would run without the limits the report's containment claims";
    else
      plan.join_fds = cgroup_.join_fds();
  }
  if (error.empty()) {
    if (const int rc = Spawner::run([&] { return spawn_contained(plan, pid_); }); rc != 0)
      error = rc == kNoSandbox
                  ? "refused to start the worker without its sandbox (" + containment() +
                        "): graded code runs only contained; --unsafe-no-sandbox runs it in a "
                        "process group, and the report's containment says so"
                  : std::string("cannot start gscheck-worker: ") + std::strerror(rc);
  }
  for (int h : plan.fds)
    if (h >= 0) ::close(h);
  cgroup_.close_join_fds();
  if (!error.empty()) {
    close_fds();
    return error;
  }
  slot_ = register_group(pid_);
  return "";
}

bool WorkerProcess::send(w::Msg type, uint32_t call_id, const void* p, uint32_t n, int fd) {
  char buf[sizeof(w::FrameHeader) + 64];
  if (n > 64) return false;
  const std::size_t size = w::encode_frame(buf, type, p, n, call_id);
  std::size_t off = 0;
  while (off < size) {
    iovec iov{buf + off, size - off};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0 && off == 0) {  // the descriptor rides with the frame's first byte
      m.msg_control = control;
      m.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    const ssize_t k = ::sendmsg(cmd_, &m, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    off += static_cast<std::size_t>(k);
  }
  return true;
}

void WorkerProcess::drain_log(int wait_ms) {
  pollfd p{log_fd_, POLLIN, 0};
  if (log_fd_ < 0 || ::poll(&p, 1, wait_ms) <= 0) return;
  char buf[1 << 16];
  for (int i = 0; i < 64; ++i) {
    const ssize_t n = ::read(log_fd_, buf, sizeof buf);
    if (n <= 0) return;
    log_.add(buf, static_cast<std::size_t>(n));
  }
}

Wait WorkerProcess::wait_frame(Clock::time_point deadline, Frame& f) {
  for (;;) {
    if (pending_.size() >= sizeof(w::FrameHeader)) {
      w::FrameHeader h;
      std::memcpy(&h, pending_.data(), sizeof h);
      if (h.magic != w::kMagic || h.size > w::kMaxFrame) {
        kill_group();
        return Wait::kMalformed;
      }
      if (pending_.size() >= sizeof h + h.size) {
        f.type = static_cast<w::Msg>(h.type);
        f.call_id = h.call_id;
        f.payload = pending_.substr(sizeof h, h.size);
        pending_.erase(0, sizeof h + h.size);
        return Wait::kFrame;
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Wait::kTimeout;
    pollfd p[2] = {{reply_, POLLIN, 0}, {log_fd_, POLLIN, 0}};
    const int ready = ::poll(p, 2, static_cast<int>(std::min<int64_t>(left, 1000)) + 1);
    if (ready < 0 && errno != EINTR) return Wait::kEof;
    if (ready <= 0) continue;
    if (p[1].revents) drain_log(0);
    if (p[0].revents) {
      char buf[1 << 16];
      const ssize_t n = ::read(reply_, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return Wait::kEof;
      pending_.append(buf, static_cast<std::size_t>(n));
    }
  }
}

std::string WorkerProcess::death_reason(Wait how) {
  if (how == Wait::kMalformed) {
    kill_group();
    return "plugin worker sent a malformed reply (the plugin wrote into gscheck's result "
           "pipe?); its process group was killed";
  }
  // The pipe closed: give a dying worker a moment to finish dying, to read how it ended.
  bool gone = false;
  for (const auto until = after(2.0); !gone && Clock::now() < until;) {
    gone = exited();
    if (!gone) {
      drain_log(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  if (!gone) {
    kill_group();
    return "plugin closed gscheck's result pipe without answering; its worker's process "
           "group was killed";
  }
  const bool oom = cgroup_.oom_killed();
  const int st = kill_group();
  if (oom)
    return "plugin went over its memory cap (its cgroup's, from --max-bytes) and the kernel "
           "killed it";
  if (WIFSIGNALED(st)) {
    const int sig = WTERMSIG(st);
    return "plugin crashed with signal " + std::to_string(sig) + " (" +
           std::string(strsignal(sig)) + ")";
  }
  if (WEXITSTATUS(st) == w::kExitLostPipes)
    return "plugin closed the worker's descriptors to gscheck (its command socket or result "
           "pipe) during the call";
  return "plugin worker exited with status " + std::to_string(WEXITSTATUS(st)) +
         " during the call (exit() inside the plugin?)";
}

int64_t WorkerProcess::tasks() const {
  if (const int64_t n = cgroup_.tasks(); n >= 0) return n;
  if (pid_ <= 0) return 0;
  int64_t n = 0;
  DIR* proc = ::opendir("/proc");
  if (!proc) return -1;
  while (const dirent* e = ::readdir(proc)) {
    const pid_t p = static_cast<pid_t>(std::atol(e->d_name));
    if (p <= 0 || ::getpgid(p) != pid_) continue;
    const std::string tasks = "/proc/" + std::string(e->d_name) + "/task";
    if (DIR* t = ::opendir(tasks.c_str())) {
      while (const dirent* te = ::readdir(t))
        if (te->d_name[0] != '.') ++n;
      ::closedir(t);
    }
  }
  ::closedir(proc);
  return n;
}

void WorkerProcess::stop() {
  if (pid_ <= 0) {
    close_fds();
    return;
  }
  if (cmd_ >= 0) ::close(cmd_);
  cmd_ = -1;
  for (const auto until = after(2.0); Clock::now() < until && !exited();) {
    drain_log(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill_group();  // whatever the plugin left in the group goes too
}

// True once the worker has ended; it stays a zombie (its pid and group id stay ours).
bool WorkerProcess::exited() {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

// The group is signalled only while the unreaped worker still holds the group id.
int WorkerProcess::kill_group() {
  int st = 0;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
    ::kill(-pid_, SIGKILL);  // members forked while the first signal was on its way
    cgroup_.kill_all();      // and those that left the group (without a PID namespace)
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    // The guard mirrors how the worker under it ended (a PID namespace's init cannot die of
    // the worker's signal); only the guard holds that pipe's write end.
    int mirrored = 0;
    if (::read(status_fd_, &mirrored, sizeof mirrored) == static_cast<ssize_t>(sizeof mirrored))
      st = mirrored;
    drain_log(0);
  }
  forget();
  return st;
}

void WorkerProcess::forget() {
  cgroup_.remove();
  if (slot_ >= 0) g_groups[slot_].store(0);
  slot_ = -1;
  pid_ = -1;
  close_fds();
}

void WorkerProcess::close_fds() {
  for (int* fd : {&cmd_, &reply_, &log_fd_, &status_fd_, &out_mem_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

}  // namespace gscheck::plugin

namespace gscheck {
std::string plugin_worker_path() { return plugin::worker_path(); }
}  // namespace gscheck
