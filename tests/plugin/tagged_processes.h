// Counting processes by their environment, for tests that must show no process outlives a run:
// every worker and everything it forks inherits GSC_TEST_TAG, and the count looks at every pid
// in this (the outermost) PID namespace, so it also sees processes in a worker's namespace.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace gscheck::test {

inline std::string g_tag;

/// A fresh tag for the next workers (set in this process's environment, which they inherit).
inline void new_tag(const std::string& kind = "") {
  static int n = 0;
  g_tag = std::to_string(::getpid()) + "-" + kind + std::to_string(++n);
  ::setenv("GSC_TEST_TAG", g_tag.c_str(), 1);
}

/// Live (not zombie) processes other than this one whose environment holds `var_eq_value`
/// ("NAME=value") as one of its entries.
inline int live_processes_with(const std::string& var_eq_value) {
  int count = 0;
  DIR* d = ::opendir("/proc");
  while (dirent* e = d ? ::readdir(d) : nullptr) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9' || std::atoi(e->d_name) == ::getpid()) continue;
    std::ifstream env(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    std::string vars((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    bool tagged = false;
    for (std::size_t at = 0; at < vars.size() && !tagged;) {
      std::size_t end = vars.find('\0', at);
      if (end == std::string::npos) end = vars.size();
      tagged = vars.compare(at, end - at, var_eq_value) == 0;
      at = end + 1;
    }
    if (!tagged) continue;
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z') ++count;
  }
  if (d) ::closedir(d);
  return count;
}

/// Live processes carrying this test's tag.
inline int tagged_processes() { return live_processes_with("GSC_TEST_TAG=" + g_tag); }

/// Waits (up to 5 s) until at most `workers` tagged processes are left: SIGKILL is asynchronous.
inline bool none_left(int workers = 0) {
  for (int i = 0; i < 250; ++i) {
    if (tagged_processes() <= workers) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace gscheck::test
