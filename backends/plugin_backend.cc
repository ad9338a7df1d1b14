// The gscheck side of vendor plugins: a pool of gscheck-worker processes (plugin_worker.cc),
// one per job, each loading the plugin once. The plugin never runs in this process. Calls go
// over a pipe as small frames; tensors go through memfds (worker_protocol.h).
#include "backends/plugin_backend.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/worker_protocol.h"
#include "gscheck/plugin.h"

extern char** environ;

#ifndef GSCHECK_WORKER_PATH
#define GSCHECK_WORKER_PATH ""
#endif

namespace gscheck {
namespace {

namespace w = worker;
using Clock = std::chrono::steady_clock;

Clock::duration span(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
Clock::time_point after(double seconds) { return Clock::now() + span(seconds); }

// The C enums mirror the C++ ones value for value; a reorder on either side must fail to build.
static_assert(GSC_BOOL == static_cast<int>(DType::kBool));
static_assert(GSC_FLOAT16 == static_cast<int>(DType::kFloat16));
static_assert(GSC_STRING == static_cast<int>(DType::kString));
static_assert(GSC_GATHER == static_cast<int>(Op::kGather));
static_assert(GSC_TENSOR_SCATTER_MAX == static_cast<int>(Op::kTensorScatterMax));
static_assert(GSC_TF_CPU == static_cast<int>(Semantics::kTfCpu));
static_assert(GSC_TF_GPU == static_cast<int>(Semantics::kTfGpu));
static_assert(w::kMaxRank == kMaxRank);

Error internal(std::string msg) { return Error{ErrorClass::kInternal, std::move(msg)}; }

// Text from a plugin, safe to print: control bytes become \xNN (no newlines, no terminal
// escapes, so no fake summary lines in gscheck's output).
std::string sanitize(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) {
    if (ch < 0x20 || ch == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

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
  Spawner() {
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
  }
  pid_t owner_ = ::getpid();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<int()>> queue_;
};

std::string worker_path() {
  if (const char* env = std::getenv("GSCHECK_WORKER"); env && *env) return env;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<std::size_t>(n));
    dir = dir.substr(0, dir.rfind('/') + 1);
    if (::access((dir + "gscheck-worker").c_str(), X_OK) == 0) return dir + "gscheck-worker";
  }
  return GSCHECK_WORKER_PATH;
}

// The last bytes a worker wrote to its stdout and stderr.
class LogTail {
 public:
  void add(const char* p, std::size_t n) {
    buf_.append(p, n);
    if (buf_.size() > 2 * kKeep) buf_.erase(0, buf_.size() - kKeep);
  }
  // The last lines, sanitised, on one line.
  std::string tail(int lines = 8) const {
    std::string_view s(buf_);
    if (s.size() > kKeep) s = s.substr(s.size() - kKeep);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    std::vector<std::string_view> parts;
    while (!s.empty() && static_cast<int>(parts.size()) < lines) {
      const auto nl = s.rfind('\n');
      parts.push_back(nl == std::string_view::npos ? s : s.substr(nl + 1));
      s = nl == std::string_view::npos ? std::string_view() : s.substr(0, nl);
    }
    if (parts.empty()) return "";
    std::string out = "; worker stderr (last " + std::to_string(parts.size()) + " line" +
                      (parts.size() > 1 ? "s" : "") + "): ";
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      std::string_view line = *it;
      if (line.size() > 300) line = line.substr(line.size() - 300);
      out += (it == parts.rbegin() ? "" : " | ") + sanitize(line);
    }
    return out;
  }

 private:
  static constexpr std::size_t kKeep = 8192;
  std::string buf_;
};

uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }

bool grow(int fd, uint64_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_size) >= bytes) return true;
  return ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
}

// Large tensors leave the memfds' pages behind; give them back (the size stays: it is sealed).
void release_pages(int fd, uint64_t used) {
  if (used >= (16u << 20)) {
    struct stat st {};
    if (::fstat(fd, &st) == 0)
      ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size);
  }
}

int memfd(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd >= 0) ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL);
  return fd;
}

Outcome code_to_outcome(int32_t code, const std::string& raw) {
  const std::string msg = sanitize(raw);
  switch (code) {
    case GSC_INVALID_ARGUMENT:
      return invalid_argument(msg);
    case GSC_BAD_INDEX:
      return bad_index(msg);
    case GSC_UNSUPPORTED:
      return Error{ErrorClass::kUnsupported, msg};
    case GSC_UNIMPLEMENTED:
      return Error{ErrorClass::kUnimplemented, msg};
    case GSC_INTERNAL:
      return internal(msg);
    case GSC_RESOURCE_EXHAUSTED:
      return Error{ErrorClass::kResourceExhausted, msg};
    default:
      return internal("plugin returned unknown code " + std::to_string(code));
  }
}

struct Contract {
  w::WireContract c{};
  std::string name;
};

// One worker process and its pipes.
class Worker {
 public:
  ~Worker() { stop(); }

  // Starts the worker and waits until the plugin is loaded and initialised.
  Expected<Contract> start(const std::string& plugin, const PluginOptions& opt) {
    opt_ = opt;
    if (auto s = spawn(plugin); !s.empty()) return internal(s);
    Contract contract;
    bool hello = false;
    const auto deadline = after(opt.load_timeout_seconds);
    for (;;) {
      Frame f;
      const Wait got = wait_frame(deadline, f);
      if (got == Wait::kTimeout) {
        kill_group();
        return internal("plugin " + plugin + " did not finish loading within " +
                        seconds(opt.load_timeout_seconds) + " (its constructor, " +
                        (hello ? "init()" : "gscheck_plugin_v2()/gscheck_plugin_v1()") +
                        " did not return); the worker was killed" + log_.tail());
      }
      if (got != Wait::kFrame) {
        const std::string why = death_reason(got);
        return internal("plugin " + plugin + " failed while loading: " + why + log_.tail());
      }
      if (f.type == w::Msg::kHello && f.payload.size() >= sizeof(w::WireContract)) {
        std::memcpy(&contract.c, f.payload.data(), sizeof contract.c);
        contract.name = sanitize(f.payload.substr(sizeof(w::WireContract)));
        hello = true;
      } else if (f.type == w::Msg::kLoadError) {
        stop();
        return parse_error(sanitize(f.payload) + log_.tail());
      } else if (f.type == w::Msg::kReady && hello) {
        return contract;
      } else {
        kill_group();
        return internal("plugin worker sent an unexpected message while loading");
      }
    }
  }

  bool alive() const { return pid_ > 0; }

  // One call; a failure that leaves the worker suspect kills it (alive() turns false).
  Outcome call(const Case& c) {
    uint64_t in_bytes = 0;
    const double timeout = opt_.timeout_seconds > 0 ? opt_.timeout_seconds : 0;
    // Default deadline: 10 s plus 1 s per 64 MiB of inputs (the output adds its share later).
    uint64_t input_bytes = 0;
    for (const auto* t : {&c.params, &c.indices, &c.updates, &c.tensor, &c.shape, &c.axis})
      if (*t) input_bytes += (*t)->dtype() == DType::kString ? 0 : (*t)->byte_size();
    const double seconds_allowed = timeout > 0 ? timeout : 10.0 + input_bytes / double(64 << 20);
    auto deadline = after(seconds_allowed);
    double allowed = seconds_allowed;
    if (auto s = write_inputs(c, deadline, in_bytes); !s.empty()) {
      kill_group();
      return internal(s);
    }
    const uint64_t msg = in_bytes;
    if (!send(w::Msg::kCall, &msg, sizeof msg)) {
      const Wait dead = Wait::kEof;
      return internal("plugin worker is gone before the call: " + death_reason(dead) + log_.tail());
    }
    std::string fault;
    for (;;) {
      Frame f;
      const Wait got = wait_frame(deadline, f);
      if (got == Wait::kTimeout) {
        kill_group();
        return internal("plugin timed out after " + seconds(allowed) +
                        (timeout > 0 ? " (--timeout)" : " (the default for this case's bytes)") +
                        " and its worker's process group was killed" + log_.tail());
      }
      if (got != Wait::kFrame) {
        const std::string why = death_reason(got);
        return internal(why + (fault.empty() ? "" : ": " + fault) + log_.tail());
      }
      if (f.type == w::Msg::kAllocated && f.payload.size() == 8 && timeout <= 0) {
        uint64_t bytes = 0;
        std::memcpy(&bytes, f.payload.data(), 8);
        const double more = bytes / double(64 << 20);
        allowed += more;
        deadline += span(more);
      } else if (f.type == w::Msg::kFault) {
        fault = sanitize(f.payload);
      } else if (f.type == w::Msg::kResult) {
        Outcome o = read_result(f.payload, fault);
        release_pages(in_mem_, in_bytes);
        return o;
      } else if (f.type != w::Msg::kAllocated) {
        kill_group();
        return internal("plugin worker sent an unexpected message during the call" + log_.tail());
      }
    }
  }

  // A clean stop: closing the socket makes the worker call finalize() and exit.
  void stop() {
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

 private:
  enum class Wait { kFrame, kEof, kTimeout, kMalformed };
  struct Frame {
    w::Msg type{};
    std::string payload;
  };

  static std::string seconds(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g s", s);
    return b;
  }

  std::string spawn(const std::string& plugin) {
    install_signal_handlers();
    const std::string exe = worker_path();
    if (exe.empty() || ::access(exe.c_str(), X_OK) != 0)
      return "cannot find gscheck-worker (next to this executable, or $GSCHECK_WORKER; built at '" +
             std::string(GSCHECK_WORKER_PATH) + "')";
    int cmd[2], rep[2], log[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cmd) != 0)
      return std::string("socketpair failed: ") + std::strerror(errno);
    if (::pipe2(rep, O_CLOEXEC) != 0 || ::pipe2(log, O_CLOEXEC) != 0)
      return std::string("pipe failed: ") + std::strerror(errno);
    in_mem_ = memfd("gscheck-in");
    out_mem_ = memfd("gscheck-out");
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    cmd_ = cmd[0];
    reply_ = rep[0];
    log_fd_ = log[0];
    ::fcntl(log_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(reply_, F_SETFL, O_NONBLOCK);
    // Sources above every target, so no dup2 overwrites a later source.
    const int sources[] = {devnull, log[1], log[1], cmd[1], rep[1], in_mem_, out_mem_};
    std::vector<int> high;
    std::string error;
    for (int fd : sources) {
      const int h = fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 16);
      if (h < 0)
        error = std::string("cannot set up the worker's descriptors: ") + std::strerror(errno);
      high.push_back(h);
    }
    for (int fd : {devnull, log[1], cmd[1], rep[1]}) ::close(fd);
    const std::string max_bytes = std::to_string(opt_.max_output_bytes);
    const std::string parent = std::to_string(::getpid());
    const char* mode = opt_.isolate == Isolation::kCall ? "call" : "worker";
    char* argv[] = {const_cast<char*>(exe.c_str()),       const_cast<char*>(plugin.c_str()),
                    const_cast<char*>(max_bytes.c_str()), const_cast<char*>(mode),
                    const_cast<char*>(parent.c_str()),    nullptr};
    if (error.empty()) {
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      for (int target = 0; target < 7; ++target)
        posix_spawn_file_actions_adddup2(&fa, high[static_cast<std::size_t>(target)], target);
      posix_spawn_file_actions_addclosefrom_np(&fa, 7);
      posix_spawnattr_t at;
      posix_spawnattr_init(&at);
      sigset_t none, all;
      sigemptyset(&none);
      sigfillset(&all);
      posix_spawnattr_setsigmask(&at, &none);
      posix_spawnattr_setsigdefault(&at, &all);
      posix_spawnattr_setpgroup(&at, 0);  // the worker leads its own process group
      posix_spawnattr_setflags(
          &at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
      // A failed spawn (EAGAIN under a full process table, ENOMEM) is retried with backoff.
      int rc = 0;
      for (int attempt = 0; attempt < 6; ++attempt) {
        pid_t pid = -1;
        rc =
            Spawner::run([&] { return ::posix_spawn(&pid, exe.c_str(), &fa, &at, argv, environ); });
        if (rc == 0) {
          pid_ = pid;
          break;
        }
        if (rc != EAGAIN && rc != ENOMEM) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10 << attempt));
      }
      posix_spawn_file_actions_destroy(&fa);
      posix_spawnattr_destroy(&at);
      if (rc != 0) error = std::string("cannot start gscheck-worker: ") + std::strerror(rc);
    }
    for (int h : high)
      if (h >= 0) ::close(h);
    if (!error.empty()) {
      close_fds();
      return error;
    }
    slot_ = register_group(pid_);
    return "";
  }

  bool send(w::Msg type, const void* p, uint32_t n) {
    w::FrameHeader h{w::kMagic, static_cast<uint32_t>(type), n, 0};
    char buf[sizeof h + 64];
    std::memcpy(buf, &h, sizeof h);
    std::memcpy(buf + sizeof h, p, n);
    std::size_t off = 0;
    while (off < sizeof h + n) {
      const ssize_t k = ::send(cmd_, buf + off, sizeof h + n - off, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      off += static_cast<std::size_t>(k);
    }
    return true;
  }

  void drain_log(int wait_ms) {
    pollfd p{log_fd_, POLLIN, 0};
    if (log_fd_ < 0 || ::poll(&p, 1, wait_ms) <= 0) return;
    char buf[1 << 16];
    for (int i = 0; i < 64; ++i) {
      const ssize_t n = ::read(log_fd_, buf, sizeof buf);
      if (n <= 0) return;
      log_.add(buf, static_cast<std::size_t>(n));
    }
  }

  // The next frame from the worker, draining its log meanwhile.
  Wait wait_frame(Clock::time_point deadline, Frame& f) {
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

  // Why the worker stopped answering; reaps it and kills its group.
  std::string death_reason(Wait how) {
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
    const int st = kill_group();
    if (WIFSIGNALED(st)) {
      const int sig = WTERMSIG(st);
      return "plugin crashed with signal " + std::to_string(sig) + " (" +
             std::string(strsignal(sig)) + ")";
    }
    return "plugin worker exited with status " + std::to_string(WEXITSTATUS(st)) +
           " during the call (exit() inside the plugin?)";
  }

  // True once the worker has ended; it stays a zombie (its pid and group id stay ours).
  bool exited() {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid_;
  }

  // Kills the worker's process group and reaps the worker; returns its wait status. The group
  // is signalled only while the unreaped worker still holds the group id.
  int kill_group() {
    int st = 0;
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      siginfo_t info{};
      while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 &&
             errno == EINTR) {
      }
      ::kill(-pid_, SIGKILL);  // members forked while the first signal was on its way
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
      drain_log(0);
    }
    forget();
    return st;
  }

  void forget() {
    if (slot_ >= 0) g_groups[slot_].store(0);
    slot_ = -1;
    pid_ = -1;
    close_fds();
  }

  void close_fds() {
    for (int* fd : {&cmd_, &reply_, &log_fd_, &in_mem_, &out_mem_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

  // Lays the call out in "in": WireCall, then per input its dims and data, 64-byte aligned.
  std::string write_inputs(const Case& c, Clock::time_point deadline, uint64_t& total) {
    const std::optional<Tensor>* inputs[w::kInputs] = {&c.params, &c.indices, &c.updates,
                                                       &c.tensor, &c.shape,   &c.axis};
    total = align64(sizeof(w::WireCall));
    const uint64_t policy_at = total;
    total = align64(total + c.bad_indices_policy.size());
    for (const auto* t : inputs) {
      if (!*t) continue;
      total = align64(total + 8 * (*t)->rank());
      if ((*t)->dtype() == DType::kString) {
        total += 16 * (*t)->strings().size();
        for (const auto& s : (*t)->strings()) total += s.size();
        total = align64(total);
      } else {
        total = align64(total + (*t)->byte_size());
      }
    }
    if (!grow(in_mem_, total))
      return std::string("cannot size the input memory: ") + std::strerror(errno);
    void* m = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, in_mem_, 0);
    if (m == MAP_FAILED) return std::string("cannot map the input memory: ") + std::strerror(errno);
    auto* base = static_cast<unsigned char*>(m);
    w::WireCall wc{};
    wc.magic = w::kMagic;
    wc.op = static_cast<int32_t>(c.op);
    wc.semantics = static_cast<int32_t>(c.semantics);
    wc.batch_dims = c.batch_dims;
    wc.max_bytes = opt_.max_output_bytes;
    wc.deadline_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    wc.policy_offset = policy_at;
    wc.policy_size = c.bad_indices_policy.size();
    std::memcpy(base + policy_at, c.bad_indices_policy.data(), c.bad_indices_policy.size());
    uint64_t at = align64(policy_at + c.bad_indices_policy.size());
    for (int k = 0; k < w::kInputs; ++k) {
      const auto& t = *inputs[k];
      if (!t) continue;
      w::WireTensor& wt = wc.inputs[k];
      wt.present = 1;
      wt.dtype = static_cast<int32_t>(t->dtype());
      wt.rank = t->rank();
      wt.dims_offset = at;
      std::memcpy(base + at, t->shape().dims().data(), 8 * t->rank());
      at = align64(at + 8 * t->rank());
      wt.data_offset = at;
      if (t->dtype() == DType::kString) {
        const auto& strs = t->strings();
        wt.data_bytes = 16 * strs.size();
        uint64_t bytes_at = at + wt.data_bytes;
        for (std::size_t i = 0; i < strs.size(); ++i) {
          const uint64_t e[2] = {bytes_at, strs[i].size()};
          std::memcpy(base + at + 16 * i, e, sizeof e);
          std::memcpy(base + bytes_at, strs[i].data(), strs[i].size());
          bytes_at += strs[i].size();
        }
        at = align64(bytes_at);
      } else {
        wt.data_bytes = t->byte_size();
        if (t->byte_size()) std::memcpy(base + at, t->data(), t->byte_size());
        at = align64(at + t->byte_size());
      }
    }
    std::memcpy(base, &wc, sizeof wc);
    ::munmap(m, total);
    return "";
  }

  Outcome read_result(const std::string& payload, const std::string& fault) {
    w::WireResult r{};
    if (payload.size() < sizeof r) {
      kill_group();
      return internal("plugin worker sent a malformed result");
    }
    std::memcpy(&r, payload.data(), sizeof r);
    const uint64_t dims_bytes = r.has_output ? 8ull * static_cast<uint32_t>(r.rank) : 0;
    if ((r.has_output &&
         (r.rank < 0 || r.rank > kMaxRank || r.dtype < 0 || r.dtype > GSC_STRING)) ||
        payload.size() != sizeof r + dims_bytes + r.message_size) {
      kill_group();
      return internal("plugin worker sent a malformed result");
    }
    const std::string message = payload.substr(sizeof r + dims_bytes);
    const auto ending = static_cast<w::Ending>(r.ending);
    if (ending != w::Ending::kReturned) {
      std::string text = sanitize(message) + (fault.empty() ? "" : ": " + fault) + log_.tail();
      if (ending == w::Ending::kFailedRestart) kill_group();
      return internal(std::move(text));
    }
    if (r.code != GSC_OK) return code_to_outcome(r.code, message);
    if (!r.has_output) return internal("plugin returned OK without an output");
    std::vector<int64_t> dims(static_cast<std::size_t>(r.rank));
    std::memcpy(dims.data(), payload.data() + sizeof r, dims_bytes);
    for (int64_t d : dims)
      if (d < 0) return internal("plugin worker sent a malformed result");
    const auto dtype = static_cast<DType>(r.dtype);
    const bool strings = dtype == DType::kString;
    // Check the claimed shape against the shared memory before allocating anything for it:
    // bytes in the pipe (a plugin may write there) must not make gscheck allocate.
    Shape shape(std::move(dims));
    const auto count = shape.num_elements();
    struct stat st {};
    if (::fstat(out_mem_, &st) != 0) return internal("cannot stat the output memory");
    const auto size = static_cast<uint64_t>(st.st_size);
    auto inside = [&](uint64_t off, uint64_t n) { return off <= size && n <= size - off; };
    const uint64_t lo = strings ? r.strings_offset : r.payload_offset;
    const uint64_t n = strings ? r.strings_bytes : r.payload_bytes;
    const uint64_t elem = strings ? 16 : dtype_size(dtype);
    if (!count || !inside(lo, n) || static_cast<uint64_t>(*count) > size / elem ||
        (!strings && n != static_cast<uint64_t>(*count) * elem) ||
        (strings && n < static_cast<uint64_t>(*count) * elem)) {
      kill_group();
      return internal("plugin worker sent a malformed result (output out of bounds)");
    }
    auto out = Tensor::uninitialized(dtype, std::move(shape), INT64_MAX);
    if (!out.ok()) return out.error();
    if (n == 0) return out;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t map_at = lo / page * page;
    void* m = ::mmap(nullptr, lo + n - map_at, PROT_READ, MAP_SHARED, out_mem_,
                     static_cast<off_t>(map_at));
    if (m == MAP_FAILED)
      return internal(std::string("cannot map the output: ") + std::strerror(errno));
    const auto* p = static_cast<const unsigned char*>(m) + (lo - map_at);
    std::string bad;
    if (!strings) {
      std::memcpy(out->data(), p, n);
    } else {
      for (int64_t i = 0; i < out->num_elements() && bad.empty(); ++i) {
        uint64_t e[2];
        std::memcpy(e, p + 16 * i, sizeof e);
        if (e[0] < lo || !inside(e[0], e[1]) || e[0] + e[1] > lo + n) {
          bad = "plugin worker sent a malformed string output";
          break;
        }
        out->strings()[static_cast<std::size_t>(i)].assign(
            reinterpret_cast<const char*>(p + (e[0] - lo)), e[1]);
      }
    }
    ::munmap(m, lo + n - map_at);
    release_pages(out_mem_, n);
    if (!bad.empty()) {
      kill_group();
      return internal(bad);
    }
    return out;
  }

  PluginOptions opt_;
  pid_t pid_ = -1;
  int slot_ = -1;
  int cmd_ = -1, reply_ = -1, log_fd_ = -1, in_mem_ = -1, out_mem_ = -1;
  std::string pending_;
  LogTail log_;
};

template <class E>
std::vector<E> from_mask(uint64_t mask, int count) {
  std::vector<E> out;
  for (int i = 0; i < count; ++i)
    if (mask & (uint64_t{1} << i)) out.push_back(static_cast<E>(i));
  return out;
}

class PluginBackend final : public Backend {
 public:
  PluginBackend(std::string path, Capabilities caps, PluginOptions opt,
                std::unique_ptr<Worker> first)
      : path_(std::move(path)), caps_(std::move(caps)), opt_(opt) {
    idle_.push_back(std::move(first));
    live_ = 1;
  }
  ~PluginBackend() override {
    // Stop the workers in parallel: each may take a moment in finalize().
    std::vector<std::thread> stops;
    for (auto& wk : idle_) stops.emplace_back([&wk] { wk->stop(); });
    for (auto& t : stops) t.join();
  }
  const Capabilities& capabilities() const override { return caps_; }

  Outcome run(const Case& c) override {
    if (Status admitted = admit(caps_, c); !admitted.ok()) return admitted.error();
    std::unique_ptr<Worker> wk;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !idle_.empty() || live_ < opt_.jobs; });
      if (!idle_.empty()) {
        wk = std::move(idle_.back());
        idle_.pop_back();
      } else {
        ++live_;
      }
    }
    if (!wk) {
      // A fresh worker, after a failed call or for one more job.
      wk = std::make_unique<Worker>();
      auto started = wk->start(path_, opt_);
      if (!started.ok()) {
        give_back(nullptr);
        return internal("cannot start a fresh plugin worker: " + started.error().message);
      }
    }
    Outcome o = wk->call(c);
    give_back(wk->alive() ? std::move(wk) : nullptr);
    return o;
  }

 private:
  void give_back(std::unique_ptr<Worker> wk) {
    {
      std::lock_guard lock(mu_);
      if (wk) {
        idle_.push_back(std::move(wk));
      } else {
        --live_;
      }
    }
    cv_.notify_one();
  }

  std::string path_;
  Capabilities caps_;
  PluginOptions opt_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Worker>> idle_;
  int live_ = 0;
};

}  // namespace

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

Expected<std::unique_ptr<Backend>> make_plugin_backend(const std::string& path,
                                                       const PluginOptions& options) {
  if (options.jobs < 1) return parse_error("plugin: --jobs must be at least 1");
  // A bare file name would make dlopen search the library path; plugins are named by path.
  std::string where = path.find('/') == std::string::npos ? "./" + path : path;
  if (char* abs = ::realpath(where.c_str(), nullptr)) {
    where = abs;
    std::free(abs);
  } else {
    return parse_error("cannot load plugin " + path + ": " + std::strerror(errno));
  }
  auto first = std::make_unique<Worker>();
  auto contract = first->start(where, options);
  if (!contract.ok()) {
    const std::string& m = contract.error().message;
    return parse_error(m.starts_with("cannot load plugin") || m.starts_with("plugin ")
                           ? m
                           : "cannot load plugin " + path + ": " + m);
  }
  const w::WireContract& p = contract->c;
  Capabilities caps;
  caps.name = "plugin:" + path;
  caps.ops = from_mask<Op>(p.ops, static_cast<int>(std::size(kAllOps)));
  caps.dtypes = from_mask<DType>(p.dtypes, static_cast<int>(std::size(kAllDTypes)));
  caps.index_dtypes = from_mask<DType>(p.index_dtypes, static_cast<int>(std::size(kAllDTypes)));
  caps.semantics = from_mask<Semantics>(p.semantics, 2);
  caps.deterministic = p.deterministic != 0;
  caps.tf_messages = p.tf_messages != 0;
  caps.accumulates_half_in_float = p.half_in_float != 0;
  if (p.flags & GSC_DEVICE_POINTERS)  // no string tensors on the device
    std::erase(caps.dtypes, DType::kString);
  // The optional API-level hook (gscheck_plugin_api, read by the worker): kernel-level plugins
  // say so; the rest implement Python's API.
  if (p.api != GSC_API_PYTHON && p.api != GSC_API_KERNEL)
    return parse_error("plugin " + path + ": gscheck_plugin_api() returned " +
                       std::to_string(p.api) + " (expected GSC_API_PYTHON or GSC_API_KERNEL)");
  caps.apis = {p.api == GSC_API_KERNEL ? Api::kKernel : Api::kPython};
  return std::unique_ptr<Backend>(
      new PluginBackend(where, std::move(caps), options, std::move(first)));
}

}  // namespace gscheck
