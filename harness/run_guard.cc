#include "harness/run_guard.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "core/exit_cleanup.h"

namespace gscheck::harness {
namespace {

sigset_t run_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

void say(const std::string& text) {
  // write(2), not stdio: the main thread may hold stdout's lock, blocked on a full pipe.
  const std::string line = "gscheck: " + text + "\n";
  ssize_t r = ::write(STDERR_FILENO, line.data(), line.size());
  (void)r;
}

}  // namespace

void block_run_signals() {
  const sigset_t set = run_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

RunGuard::RunGuard(double case_limit_s, StopFn on_stop)
    : limit_s_(case_limit_s), on_stop_(std::move(on_stop)) {
  // Born with the run signals blocked (so the wake-up below can never kill the process).
  const sigset_t set = run_signals();
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &set, &old);
  try {
    thread_ = std::thread([this] { watch(); });
  } catch (const std::system_error& e) {
    // Without the watcher no signal would stop the run and no case would have a time limit.
    say(std::string("cannot start the run's watch thread (") + e.what() +
        "): a pids or thread limit leaves no thread; nothing was run");
    std::exit(2);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

RunGuard::~RunGuard() {
  quit_ = true;
  // Wakes the thread's sigtimedwait now rather than at the end of its poll (up to 50 ms at the
  // end of every run, and per Runner in the shard properties).
  pthread_kill(thread_.native_handle(), SIGHUP);
  thread_.join();
}

void RunGuard::case_started(InFlightCase c) {
  std::lock_guard<std::mutex> lock(mu_);
  running_case_ = true;
  in_flight_ = std::move(c);
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(limit_s_));
}

void RunGuard::case_finished() {
  std::lock_guard<std::mutex> lock(mu_);
  running_case_ = false;
}

void RunGuard::watch() {
  const sigset_t set = run_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  while (!quit_) {
    const timespec poll{0, 50'000'000};  // 50 ms: how late a quit or a time limit is noticed
    siginfo_t info{};
    const int sig = sigtimedwait(&set, &info, &poll);
    if (quit_) break;  // the destructor's wake-up (a real signal now finds the run over)
    std::string reason;
    int status = 0;
    InFlightCase c;
    bool have_case = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      have_case = running_case_;
      c = in_flight_;
      if (sig > 0) {
        reason = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
        status = 128 + sig;
      } else if (have_case && limit_s_ > 0 && std::chrono::steady_clock::now() > deadline_) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", limit_s_);
        reason = "case " + c.name + " ran longer than the per-case limit of " + buf +
                 " s (--case-timeout)";
        status = 1;
      }
    }
    if (reason.empty()) continue;
    say("stopping: " + reason + "; writing the report of the cases that ran");
    const int final_status = on_stop_(reason, have_case ? &c : nullptr, status);
    run_exit_cleanups();  // _exit runs no destructor: a worker's cgroup folders go here
    ::_exit(final_status);
  }
}

}  // namespace gscheck::harness
