#include "harness/crash_guard.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gscheck::harness {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGuard = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kGuard = false;
#else
constexpr bool kGuard = true;
#endif
#else
constexpr bool kGuard = true;
#endif

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

thread_local sigjmp_buf* t_jump = nullptr;

// Async-signal-safe: reads a thread-local pointer and jumps, or restores the default action and
// returns, so the faulting instruction runs again and the process ends as it would have.
void on_fault(int sig) {
  if (sigjmp_buf* j = t_jump) {
    t_jump = nullptr;
    siglongjmp(*j, sig);
  }
  signal(sig, SIG_DFL);
}

// A stack of its own for the handler, so a stack overflow is caught too.
void ensure_alt_stack() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  stack_t ss{};
  if (sigaltstack(nullptr, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) && ss.ss_sp) return;
  static constexpr std::size_t kSize = 64 * 1024;
  thread_local char* stack = static_cast<char*>(std::malloc(kSize));  // lives with the thread
  if (!stack) return;
  ss.ss_sp = stack;
  ss.ss_size = kSize;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_fault;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;
    for (int sig : kSignals) sigaction(sig, &sa, nullptr);
  });
}

// $GSCHECK_CRASH_GUARD=0 runs unguarded: a debugger then stops at the fault itself.
bool guard_on() {
  static const bool on = [] {
    const char* env = std::getenv("GSCHECK_CRASH_GUARD");
    return kGuard && !(env && std::strcmp(env, "0") == 0);
  }();
  return on;
}

}  // namespace

std::optional<int> run_crash_guarded(const std::function<void()>& fn) {
  if (!guard_on()) {
    fn();
    return std::nullopt;
  }
  install_handlers();
  ensure_alt_stack();
  sigjmp_buf jump;
  sigjmp_buf* outer = t_jump;
  // No mask to restore (SA_NODEFER: the handler runs with the signal unblocked), so no system
  // call on the way in.
  if (const int sig = sigsetjmp(jump, 0); sig != 0) {
    t_jump = outer;
    return sig;
  }
  t_jump = &jump;
  fn();
  t_jump = outer;
  return std::nullopt;
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* descr = sigdescr_np(sig);
  return std::string("SIG") + (abbrev ? abbrev : std::to_string(sig).c_str()) + " (" +
         (descr ? descr : "unknown signal") + ")";
}

}  // namespace gscheck::harness
