#include "core/exit_cleanup.h"

#include <array>
#include <cstddef>
#include <mutex>

#include "core/status.h"

namespace gscheck {
namespace {

std::mutex mu;
std::array<void (*)(), 8> fns{};
std::size_t count = 0;
bool ran = false;

}  // namespace

void add_exit_cleanup(void (*fn)()) {
  std::lock_guard<std::mutex> lock(mu);
  for (std::size_t i = 0; i < count; ++i)
    if (fns[i] == fn) return;
  GSCHECK_CHECK(count < fns.size());
  fns[count++] = fn;
}

void run_exit_cleanups() {
  std::lock_guard<std::mutex> lock(mu);
  if (ran) return;
  ran = true;
  for (std::size_t i = 0; i < count; ++i) fns[i]();
}

}  // namespace gscheck
