#include "backends/plugin/worker_coverage.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
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
// Compares are kept only inside run() (not during init() or finalize()); a plugin's threads may
// make them at once, so the count is atomic and a record is written after its slot is taken.
std::atomic<bool> g_recording{false};
std::atomic<uint64_t> g_compares{0};

// gscheck::CoverageCompare (core/backend.h) read by gscheck.
struct Record {
  uint64_t pc, a, b, size;
};
static_assert(sizeof(Record) == 32);

inline void record(void* pc, uint64_t a, uint64_t b, uint64_t size) {
  if (!g_recording.load(std::memory_order_relaxed) || a == b) return;  // equal: nothing to learn
  const uint64_t at = g_compares.fetch_add(1, std::memory_order_relaxed);
  if (at >= gscheck::worker::kCoverageCompares) return;
  const Record r{reinterpret_cast<uint64_t>(pc), a, b, size};
  std::memcpy(g_shared + gscheck::worker::kCoverageComparesAt + at * sizeof r, &r, sizeof r);
}

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

// trace-cmp (-fsanitize-coverage=...,trace-cmp): each compare of the plugin's code, with the
// caller's address as its place; the fuzzer turns them into mutations (docs/fuzzing.md).
#define GSC_CMP_HOOK(name, type)                                                            \
  extern "C" __attribute__((visibility("default"))) void name(type a, type b) {             \
    record(__builtin_return_address(0), static_cast<uint64_t>(a), static_cast<uint64_t>(b), \
           sizeof(type));                                                                   \
  }
GSC_CMP_HOOK(__sanitizer_cov_trace_cmp1, uint8_t)
GSC_CMP_HOOK(__sanitizer_cov_trace_cmp2, uint16_t)
GSC_CMP_HOOK(__sanitizer_cov_trace_cmp4, uint32_t)
GSC_CMP_HOOK(__sanitizer_cov_trace_cmp8, uint64_t)
GSC_CMP_HOOK(__sanitizer_cov_trace_const_cmp1, uint8_t)
GSC_CMP_HOOK(__sanitizer_cov_trace_const_cmp2, uint16_t)
GSC_CMP_HOOK(__sanitizer_cov_trace_const_cmp4, uint32_t)
GSC_CMP_HOOK(__sanitizer_cov_trace_const_cmp8, uint64_t)
#undef GSC_CMP_HOOK

// A switch: cases[0] values of cases[1] bits follow; the value against each case.
extern "C" __attribute__((visibility("default"))) void __sanitizer_cov_trace_switch(
    uint64_t value, uint64_t* cases) {
  const uint64_t n = cases[0], bits = cases[1];
  for (uint64_t i = 0; i < n && i < 64; ++i)
    record(__builtin_return_address(0), value, cases[2 + i], bits / 8 ? bits / 8 : 1);
}

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
  g_compares.store(0, std::memory_order_relaxed);
  g_recording.store(g_shared != nullptr, std::memory_order_relaxed);
}

void coverage_publish() {
  g_recording.store(false, std::memory_order_relaxed);
  if (!g_shared) return;
  CoverageHeader h{kMagic, 0, 0, 0, 0};
  h.compares = std::min(g_compares.load(std::memory_order_relaxed), kCoverageCompares);
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
