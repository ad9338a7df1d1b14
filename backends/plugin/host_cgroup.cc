#include "backends/plugin/host_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "core/exit_cleanup.h"

namespace gscheck::plugin {
namespace {

constexpr long kCgroup2Magic = 0x63677270;

struct Roots {
  int version = 0;
  std::vector<std::string> dirs;  // where worker groups are made: v2 one, v1 memory and pids
  std::string what, why;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool write_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// The value after `key ` on a line of a flat-keyed file (memory.events, memory.oom_control).
int64_t keyed(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  int64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

Roots find_roots() {
  Roots r;
  std::string v2_path, memory_path, pids_path;
  std::istringstream lines(read_text("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.substr(0, a) == "0" && controllers.empty()) v2_path = path;
    std::istringstream names(controllers);
    for (std::string n; std::getline(names, n, ',');) {
      if (n == "memory") memory_path = path;
      if (n == "pids") pids_path = path;
    }
  }
  struct statfs fs {};
  if (!v2_path.empty() && ::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == kCgroup2Magic) {
    const std::string dir = "/sys/fs/cgroup" + v2_path;
    const std::string delegated = read_text(dir + "/cgroup.subtree_control");
    if (has_word(delegated, "memory") && has_word(delegated, "pids") &&
        ::access(dir.c_str(), W_OK) == 0) {
      r.version = 2;
      r.dirs = {dir};
      r.what = "cgroup v2 (memory, pids)";
      return r;
    }
    r.why = "no cgroup: gscheck's cgroup v2 (" + dir +
            ") does not delegate the memory and pids controllers to new groups";
    return r;
  }
  const std::string memory = "/sys/fs/cgroup/memory" + memory_path;
  const std::string pids = "/sys/fs/cgroup/pids" + pids_path;
  if (!memory_path.empty() && !pids_path.empty() && ::access(memory.c_str(), W_OK) == 0 &&
      ::access(pids.c_str(), W_OK) == 0) {
    r.version = 1;
    r.dirs = {memory, pids};
    r.what = "cgroup v1 (memory, pids)";
    return r;
  }
  r.why = "no cgroup: neither a delegated cgroup v2 nor writable v1 memory and pids hierarchies";
  return r;
}

const Roots& roots() {
  static const Roots r = find_roots();
  return r;
}

std::vector<pid_t> procs_of(const std::string& dir) {
  std::vector<pid_t> out;
  std::istringstream in(read_text(dir + "/cgroup.procs"));
  for (long p = 0; in >> p;) out.push_back(static_cast<pid_t>(p));
  return out;
}

// The run (gscheck's pid) a worker group's folder name belongs to: "gscheck-<pid>-<n>".
std::optional<pid_t> run_of(const char* name) {
  int pid = 0, n = 0, used = 0;
  if (std::sscanf(name, "gscheck-%d-%d%n", &pid, &n, &used) != 2 || name[used] != '\0' || pid <= 0)
    return std::nullopt;
  return static_cast<pid_t>(pid);
}

// Kills what is left in the groups and removes them, for up to `patience`.
void remove_groups(const std::vector<std::string>& dirs, std::chrono::milliseconds patience) {
  const auto until = std::chrono::steady_clock::now() + patience;
  for (;;) {
    bool busy = false;
    for (const auto& dir : dirs) {
      for (pid_t p : procs_of(dir)) ::kill(p, SIGKILL);
      if (::rmdir(dir.c_str()) != 0 &&
          (errno == EBUSY || errno == ENOTEMPTY || errno == EAGAIN || errno == EINTR))
        busy = true;
    }
    // A killed process leaves its group when it is reaped: wait a little for the last ones.
    // A CI run under load (2026-12-07) found a stopped run's worker groups left after 2 s of
    // this (bad_input's hanging-case test): a stop now waits up to 5 s, retrying the
    // transient errors.
    if (!busy || std::chrono::steady_clock::now() > until) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Every worker group folder under the roots whose run (the pid in its name) satisfies `of_run`.
template <typename Pred>
std::vector<std::string> groups_where(Pred of_run) {
  std::vector<std::string> out;
  for (const auto& root : roots().dirs) {
    DIR* d = ::opendir(root.c_str());
    if (!d) continue;
    while (const dirent* e = ::readdir(d))
      if (auto pid = run_of(e->d_name); pid && of_run(*pid)) out.push_back(root + "/" + e->d_name);
    ::closedir(d);
  }
  return out;
}

// Group folders are made under this lock, and a stop takes it to close the door: a worker
// started by another thread while the stop runs either made its folder before (the stop finds
// and removes it) or makes none. A stop that scanned first left a later worker's folder behind
// (bad_input's hanging-case test, 2026-12-07, twice on a loaded 2-core VM: "gscheck-<pid>-3").
std::mutex& groups_lock() {
  static std::mutex m;
  return m;
}
bool& stopping() {
  static bool s = false;
  return s;
}

// This run's groups, at a stop that ends the process with _exit (no destructor runs).
void remove_this_runs_groups() {
  {
    std::lock_guard<std::mutex> lock(groups_lock());
    stopping() = true;
  }
  const pid_t self = ::getpid();
  remove_groups(groups_where([&](pid_t pid) { return pid == self; }),
                std::chrono::milliseconds(5000));
}

// Groups left by runs that are gone (gscheck killed or crashed): their processes are killed
// and the folders removed, once per process, before its first group is made. A run is gone
// when no process has its pid (a pid reused since keeps its groups until that process ends).
void sweep_stale_groups() {
  remove_groups(groups_where([](pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }),
                std::chrono::milliseconds(500));
}

}  // namespace

std::string WorkerCgroup::offered(std::string& why) {
  why = roots().why;
  return roots().what;
}

std::string WorkerCgroup::create(int64_t pids_max) {
  const Roots& r = roots();
  if (!r.version) return "";
  static std::once_flag once;
  std::call_once(once, [] {
    sweep_stale_groups();
    add_exit_cleanup(remove_this_runs_groups);
  });
  static std::atomic<int> counter{0};
  const std::string name =
      "gscheck-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  // The report says what is offered: a group that cannot be made as offered stops the worker
  // instead of leaving it without the limits the report claims.
  const auto fail = [&](const std::string& what) {
    const int e = errno;  // the failed call's
    const std::string why = what + ": " + std::strerror(e);
    remove();
    return why;
  };
  {
    std::lock_guard<std::mutex> lock(groups_lock());
    if (stopping()) return "gscheck is stopping: no new worker group";
    for (const auto& root : r.dirs) {
      const std::string dir = root + "/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0) return fail("mkdir " + dir);
      dirs_.push_back(dir);
    }
  }
  version_ = r.version;
  const std::string& pids_dir = version_ == 2 ? dirs_[0] : dirs_[1];
  if (!write_text(pids_dir + "/pids.max", std::to_string(pids_max)))
    return fail("write " + pids_dir + "/pids.max");
  for (const auto& dir : dirs_) {
    const int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fail("open " + dir + "/cgroup.procs");
    join_.push_back(fd);
  }
  return "";
}

void WorkerCgroup::close_join_fds() {
  for (int fd : join_) ::close(fd);
  join_.clear();
}

void WorkerCgroup::cap_memory_above_current(uint64_t bytes) {
  if (!version_) return;
  const std::string& dir = dirs_[0];
  const std::string current =
      read_text(dir + (version_ == 2 ? "/memory.current" : "/memory.usage_in_bytes"));
  const uint64_t used = std::strtoull(current.c_str(), nullptr, 10);
  const uint64_t cap = bytes > (uint64_t{1} << 61) ? uint64_t{1} << 62 : used + bytes;
  write_text(dir + (version_ == 2 ? "/memory.max" : "/memory.limit_in_bytes"), std::to_string(cap));
}

int64_t WorkerCgroup::tasks() const {
  if (!version_) return -1;
  const std::string text = read_text((version_ == 2 ? dirs_[0] : dirs_[1]) + "/pids.current");
  return text.empty() ? -1 : std::strtoll(text.c_str(), nullptr, 10);
}

bool WorkerCgroup::oom_killed() const {
  if (!version_) return false;
  const std::string& dir = dirs_[0];
  return keyed(read_text(dir + (version_ == 2 ? "/memory.events" : "/memory.oom_control")),
               "oom_kill") > 0;
}

void WorkerCgroup::kill_all() const {
  if (!version_) return;
  if (version_ == 2 && write_text(dirs_[0] + "/cgroup.kill", "1")) return;
  for (int round = 0; round < 8; ++round) {
    bool any = false;
    for (const auto& dir : dirs_)
      for (pid_t p : procs_of(dir)) {
        ::kill(p, SIGKILL);
        any = true;
      }
    if (!any) return;
  }
}

void WorkerCgroup::remove() {
  close_join_fds();
  if (dirs_.empty()) return;
  kill_all();
  remove_groups(dirs_, std::chrono::milliseconds(2000));
  dirs_.clear();
  version_ = 0;
}

}  // namespace gscheck::plugin
