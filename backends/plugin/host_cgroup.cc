#include "backends/plugin/host_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

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

}  // namespace

std::string WorkerCgroup::offered(std::string& why) {
  why = roots().why;
  return roots().what;
}

bool WorkerCgroup::create(int64_t pids_max) {
  const Roots& r = roots();
  if (!r.version) return false;
  static std::atomic<int> counter{0};
  const std::string name =
      "gscheck-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  for (const auto& root : r.dirs) {
    const std::string dir = root + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) {
      remove();
      return false;
    }
    dirs_.push_back(dir);
  }
  version_ = r.version;
  const std::string& pids_dir = version_ == 2 ? dirs_[0] : dirs_[1];
  write_text(pids_dir + "/pids.max", std::to_string(pids_max));
  for (const auto& dir : dirs_) {
    const int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      remove();
      return false;
    }
    join_.push_back(fd);
  }
  return true;
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
  // A killed process leaves its group when it is reaped: wait a little for the last ones.
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);;) {
    bool busy = false;
    for (const auto& dir : dirs_)
      if (::rmdir(dir.c_str()) != 0 && errno == EBUSY) busy = true;
    if (!busy || std::chrono::steady_clock::now() > until) break;
    kill_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  dirs_.clear();
  version_ = 0;
}

}  // namespace gscheck::plugin
