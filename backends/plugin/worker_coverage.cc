#include "backends/plugin/worker_coverage.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backends/plugin/wire.h"

namespace {

using gscheck::worker::CoverageHeader;

struct Range {
  uint8_t* start;
  uint8_t* stop;
};
// A plugin and the libraries it brings: a few modules at most; more are not counted.
constexpr int kMaxModules = 16;
Range g_modules[kMaxModules];
int g_module_count = 0;
unsigned char* g_shared = nullptr;  // kCoverageFd's mapping, or nullptr

}  // namespace

// SanitizerCoverage's hooks, called by each instrumented module's constructor when dlopen()
// loads it. Exported from the worker (worker_exports.list) so the plugin binds to them.
extern "C" __attribute__((visibility("default"))) void __sanitizer_cov_8bit_counters_init(
    uint8_t* start, uint8_t* stop) {
  if (start == stop || g_module_count == kMaxModules) return;
  for (int i = 0; i < g_module_count; ++i)
    if (g_modules[i].start == start) return;  // a module registers once
  g_modules[g_module_count++] = {start, stop};
}

// pc-table: the counters' program counters; only the counters guide the fuzzer.
extern "C" __attribute__((visibility("default"))) void __sanitizer_cov_pcs_init(const uintptr_t*,
                                                                                const uintptr_t*) {}

namespace gscheck::worker {

void coverage_open() {
  struct stat st {};
  if (::fstat(kCoverageFd, &st) != 0 || static_cast<uint64_t>(st.st_size) < kCoverageBytes) return;
  void* p = ::mmap(nullptr, kCoverageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, kCoverageFd, 0);
  if (p == MAP_FAILED) return;
  g_shared = static_cast<unsigned char*>(p);
}

void coverage_reset() {
  for (int i = 0; i < g_module_count; ++i)
    std::memset(g_modules[i].start, 0,
                static_cast<std::size_t>(g_modules[i].stop - g_modules[i].start));
}

void coverage_publish() {
  if (!g_shared) return;
  CoverageHeader h{kMagic, 0, 0, 0};
  std::memcpy(&h.calls, g_shared + offsetof(CoverageHeader, calls), sizeof h.calls);
  ++h.calls;
  unsigned char* out = g_shared + sizeof(CoverageHeader);
  for (int i = 0; i < g_module_count; ++i) {
    const auto n = static_cast<uint64_t>(g_modules[i].stop - g_modules[i].start);
    h.registered += n;
    const uint64_t take =
        h.written >= kCoverageCounters
            ? 0
            : (n < kCoverageCounters - h.written ? n : kCoverageCounters - h.written);
    std::memcpy(out + h.written, g_modules[i].start, take);
    h.written += take;
  }
  std::memcpy(g_shared, &h, sizeof h);
}

}  // namespace gscheck::worker
