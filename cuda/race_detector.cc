// Race mode: the fiber scheduler and the per-launch shadow of device memory; the
// -fsanitize=thread entry points that feed it are race_tsan_hooks.cc. This file itself must not
// be instrumented (cuda/CMakeLists.txt).
#include "cuda/race_detector.h"

#include <cxxabi.h>
#include <ucontext.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "cuda/emu/warp_sync.h"
#include "cuda/race_access.h"

namespace gscheck::cuda {

bool race_mode_available() {
#if defined(GSCHECK_RACE_INSTRUMENTED)
  return true;
#else
  return false;
#endif
}

namespace {

using Kind = AccessKind;

const char* kind_text(Kind k) {
  switch (k) {
    case Kind::kRead:
      return "non-atomic read";
    case Kind::kWrite:
      return "non-atomic write";
    case Kind::kAtomic:
      return "atomic access";
  }
  return "?";
}

// What one byte saw in the current launch: its non-atomic writer, up to two distinct readers
// and atomic accessors (two are enough to know whether any differs from a given thread).
struct Cell {
  uint32_t epoch = 0;
  int32_t writer = -1;
  int32_t reader[2] = {-1, -1};
  int32_t atomic[2] = {-1, -1};
};

struct Alloc {
  uint64_t id;
  uint64_t size;
  std::vector<Cell> shadow;  // sized on the first access
};

// A span of an allocation the host copied to or from, which names what it holds.
struct Region {
  uint64_t alloc_id;
  uintptr_t d;
  uint64_t n;
  std::string name;  // "" when the host side was no case input
  uint32_t elem = 0;
  const void* host_dst = nullptr;  // to_host's destination
};

struct Race {
  std::string kernel;
  int launch;
  uint64_t alloc_id;
  uintptr_t addr;
  int32_t first, second;  // threads: the earlier access's, the later one's
  Kind first_kind, second_kind;
  uint32_t block_threads;
};

struct Fiber {
  ucontext_t ctx;
  std::unique_ptr<char[]> stack;
  int32_t tid = -1;
  bool done = true;
};

constexpr std::size_t kFibers = 8;              // threads live at once: enough to interleave
constexpr std::size_t kStackBytes = 64 * 1024;  // kernels are shallow; hooks add little
constexpr std::size_t kMaxRaces = 16;           // races kept per case for the message

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ULL;
  return h;
}

std::string kernel_name(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : mangled;
  std::free(d);
  for (std::string_view ns : {"gscheck::cuda::", "gscheck::"}) {
    for (auto p = s.find(ns); p != std::string::npos; p = s.find(ns)) s.erase(p, ns.size());
  }
  return s;
}

}  // namespace

struct RaceDetector::State {
  uint64_t seed;
  std::mt19937_64 rng;
  std::map<const void*, std::pair<std::string, uint32_t>> inputs;  // host data -> name, elem
  std::map<uintptr_t, Alloc> allocs;                               // by base address
  uintptr_t lo = UINTPTR_MAX, hi = 0;                              // their bounding box
  uint64_t next_alloc = 0;
  uint64_t allocated = 0;  // bytes allocated in this case
  std::vector<Region> regions;
  std::vector<Race> races;
  int64_t race_count = 0;
  int launches = 0;

  // The launch running now.
  uint32_t epoch = 0;
  std::string kernel;
  uint32_t block_threads = 0, blocks = 0;
  const void* kernel_ptr = nullptr;
  Body body = nullptr;
  uint64_t accesses = 0;
  std::set<uintptr_t> raced;  // addresses reported in this launch
  ucontext_t main_ctx;
  std::vector<Fiber> fibers = std::vector<Fiber>(kFibers);
  std::vector<Fiber*> live;
  Fiber* cur = nullptr;

  void access(uintptr_t addr, uint64_t size, Kind kind);
  void maybe_switch();
  // The warp intrinsics and device faults read which thread runs (each lane runs alone here).
  void resume_as(const Fiber& f) const {
    emu::set_current_thread(static_cast<uint32_t>(f.tid) / block_threads,
                            static_cast<uint32_t>(f.tid) % block_threads);
  }
  std::string describe(const Race& r, const Outcome& o) const;
};

constinit thread_local RaceDetector::State* t_state = nullptr;

void race_access(RaceDetector::State* s, uintptr_t addr, uint64_t size, AccessKind kind) {
  s->access(addr, size, kind);
}

namespace {

void fiber_main() {
  RaceDetector::State& s = *t_state;
  Fiber* f = s.cur;
  const ThreadIndex t{static_cast<uint32_t>(f->tid) / s.block_threads,
                      static_cast<uint32_t>(f->tid) % s.block_threads, s.block_threads, s.blocks};
  s.body(s.kernel_ptr, t);
  f->done = true;  // returns to main_ctx (uc_link)
}

void add_distinct(int32_t (&slots)[2], int32_t t) {
  if (slots[0] < 0) {
    slots[0] = t;
  } else if (slots[0] != t && slots[1] < 0) {
    slots[1] = t;
  }
}

int32_t other_than(const int32_t (&slots)[2], int32_t t) {
  if (slots[0] >= 0 && slots[0] != t) return slots[0];
  if (slots[1] >= 0 && slots[1] != t) return slots[1];
  return -1;
}

}  // namespace

void RaceDetector::State::access(uintptr_t addr, uint64_t size, Kind kind) {
  if (addr + size <= lo || addr >= hi || !cur) return;
  auto it = allocs.upper_bound(addr);
  if (it == allocs.begin()) return;
  --it;
  Alloc& a = it->second;
  const uintptr_t base = it->first;
  if (addr >= base + a.size) return;  // not device memory: the stack, the kernel's fields
  ++accesses;
  if (a.shadow.empty()) a.shadow.resize(a.size);
  const int32_t t = cur->tid;
  const uintptr_t end = std::min<uintptr_t>(addr + size, base + a.size);
  for (uintptr_t p = addr; p < end; ++p) {
    Cell& c = a.shadow[p - base];
    if (c.epoch != epoch) c = Cell{epoch, -1, {-1, -1}, {-1, -1}};
    int32_t other = -1;
    Kind other_kind = Kind::kWrite;
    if (c.writer >= 0 && c.writer != t) {
      other = c.writer;
    } else if (kind == Kind::kWrite) {
      if ((other = other_than(c.reader, t)) >= 0) {
        other_kind = Kind::kRead;
      } else if ((other = other_than(c.atomic, t)) >= 0) {
        other_kind = Kind::kAtomic;
      }
    }
    switch (kind) {
      case Kind::kWrite:
        if (c.writer < 0) c.writer = t;
        break;
      case Kind::kRead:
        add_distinct(c.reader, t);
        break;
      case Kind::kAtomic:
        add_distinct(c.atomic, t);
        break;
    }
    if (other >= 0 && raced.insert(p).second) {
      ++race_count;
      if (races.size() < kMaxRaces)
        races.push_back({kernel, launches, a.id, p, other, t, other_kind, kind, block_threads});
    }
  }
  maybe_switch();
}

// Every device access is a scheduling point: stay, or (half the time) switch to a random live
// thread, so the loads and stores of different threads interleave as on a GPU.
void RaceDetector::State::maybe_switch() {
  if (live.size() < 2 || (rng() & 1) == 0) return;
  Fiber* next = live[rng() % live.size()];
  if (next == cur) return;
  Fiber* prev = cur;
  cur = next;
  resume_as(*next);
  swapcontext(&prev->ctx, &next->ctx);
}

std::string RaceDetector::State::describe(const Race& r, const Outcome& o) const {
  // The smallest region holding the address names it; of equal ones, a case input, then one
  // copied back to the host (the output: the scatters upload it from an unnamed copy).
  auto rank = [](const Region& g) { return !g.name.empty() ? 0 : g.host_dst ? 1 : 2; };
  const Region* best = nullptr;
  for (const Region& g : regions)
    if (g.alloc_id == r.alloc_id && r.addr >= g.d && r.addr < g.d + g.n &&
        (!best || g.n < best->n || (g.n == best->n && rank(g) < rank(*best))))
      best = &g;
  std::string where;
  if (best) {
    std::string name = best->name;
    uint32_t elem = best->elem;
    if (name.empty() && best->host_dst && o.ok() &&
        best->host_dst == static_cast<const void*>(o->data())) {
      name = "output";
      elem = static_cast<uint32_t>(dtype_size(o->dtype()));
    }
    const uint64_t off = r.addr - best->d;
    if (!name.empty() && elem > 0) {
      where = name + " element " + std::to_string(off / elem) + " (flat)";
    } else {
      where = (best->host_dst ? "a buffer copied back to the host" : "a scratch buffer") +
              std::string(", byte ") + std::to_string(off) + " of " + std::to_string(best->n);
    }
  } else {
    where = "a scratch buffer (never copied to or from the host), allocation " +
            std::to_string(r.alloc_id) + ", address " + std::to_string(r.addr);
  }
  auto thread = [&](int32_t t) {
    return "thread " + std::to_string(t) + " (block " + std::to_string(t / r.block_threads) +
           ", thread " + std::to_string(t % r.block_threads) + ")";
  };
  return "data race in " + r.kernel + " (launch " + std::to_string(r.launch) + " of the case) on " +
         where + ": " + thread(r.first) + " " + kind_text(r.first_kind) + ", " + thread(r.second) +
         " " + kind_text(r.second_kind);
}

RaceDetector::RaceDetector(uint64_t seed) : s_(std::make_unique<State>()) {
  s_->seed = seed;
  s_->rng.seed(seed);
  for (Fiber& f : s_->fibers) f.stack = std::make_unique<char[]>(kStackBytes);
}

RaceDetector::~RaceDetector() = default;

void RaceDetector::begin_case(const Case& c) {
  State& s = *s_;
  s.rng.seed(s.seed ^ fnv1a(c.name));
  s.inputs.clear();
  s.allocs.clear();
  s.lo = UINTPTR_MAX;
  s.hi = 0;
  s.regions.clear();
  s.allocated = 0;
  s.races.clear();
  s.race_count = 0;
  s.launches = 0;
  const std::pair<const char*, const std::optional<Tensor>*> inputs[] = {
      {"params", &c.params},   {"tensor", &c.tensor}, {"indices", &c.indices},
      {"updates", &c.updates}, {"shape", &c.shape},   {"axis", &c.axis}};
  for (const auto& [name, t] : inputs) {
    if (!*t || (*t)->dtype() == DType::kString) continue;
    const Tensor& x = **t;
    s.inputs[static_cast<const void*>(x.data())] = {name,
                                                    static_cast<uint32_t>(dtype_size(x.dtype()))};
  }
}

Outcome RaceDetector::end_case(Outcome o) {
  State& s = *s_;
  if (s.races.empty()) return o;
  std::string msg = "race mode: " + s.describe(s.races.front(), o);
  if (s.race_count > 1) msg += "; " + std::to_string(s.race_count) + " racing bytes in all";
  s.races.clear();
  return Error{ErrorClass::kInternal, msg};
}

Status RaceDetector::on_alloc(const void* p, uint64_t bytes) {
  State& s = *s_;
  s.allocated += bytes;
  if (s.allocated > kMaxTrackedBytes)
    return Error{ErrorClass::kResourceExhausted,
                 "race mode tracks at most " + std::to_string(kMaxTrackedBytes >> 20) +
                     " MiB of device memory per case; this case allocates " +
                     std::to_string(s.allocated) + " bytes"};
  const auto base = reinterpret_cast<uintptr_t>(p);
  // A freed buffer's entry stays until a new allocation overlaps it.
  auto it = s.allocs.lower_bound(base);
  if (it != s.allocs.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second.size > base) it = prev;
  }
  while (it != s.allocs.end() && it->first < base + bytes) it = s.allocs.erase(it);
  s.allocs[base] = Alloc{s.next_alloc++, bytes, {}};
  s.lo = std::min(s.lo, base);
  s.hi = std::max(s.hi, base + bytes);
  return {};
}

namespace {

const Alloc* find_alloc(const std::map<uintptr_t, Alloc>& allocs, uintptr_t p) {
  auto it = allocs.upper_bound(p);
  if (it == allocs.begin()) return nullptr;
  --it;
  return p < it->first + it->second.size ? &it->second : nullptr;
}

}  // namespace

void RaceDetector::on_to_device(const void* d, const void* h, uint64_t n) {
  State& s = *s_;
  const auto p = reinterpret_cast<uintptr_t>(d);
  const Alloc* a = find_alloc(s.allocs, p);
  if (!a) return;
  Region g{a->id, p, n, "", 0, nullptr};
  if (auto it = s.inputs.find(h); it != s.inputs.end()) {
    g.name = it->second.first;
    g.elem = it->second.second;
  }
  s.regions.push_back(std::move(g));
}

void RaceDetector::on_to_host(const void* h, const void* d, uint64_t n) {
  State& s = *s_;
  const auto p = reinterpret_cast<uintptr_t>(d);
  const Alloc* a = find_alloc(s.allocs, p);
  if (!a) return;
  Region g{a->id, p, n, "", 0, nullptr};
  g.host_dst = h;
  s.regions.push_back(std::move(g));
}

Status RaceDetector::launch(const char* kernel_type, const void* kernel, Body body, uint32_t blocks,
                            uint32_t block_threads) {
  State& s = *s_;
  const auto threads = static_cast<uint64_t>(blocks) * block_threads;
  if (threads == 0) return {};
  if (threads > static_cast<uint64_t>(INT32_MAX))
    return Error{ErrorClass::kResourceExhausted, "race mode: grid too large"};
  ++s.launches;
  ++s.epoch;
  s.kernel = kernel_name(kernel_type);
  s.blocks = blocks;
  s.block_threads = block_threads;
  s.kernel_ptr = kernel;
  s.body = body;
  s.accesses = 0;
  s.raced.clear();
  // Threads start in a seeded random order, at most kFibers at once.
  std::vector<int32_t> order(threads);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), s.rng);
  std::size_t next = 0;
  s.live.clear();
  t_state = &s;
  for (;;) {
    for (Fiber& f : s.fibers) {
      if (!f.done || next == order.size()) continue;
      f.tid = order[next++];
      f.done = false;
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack.get();
      f.ctx.uc_stack.ss_size = kStackBytes;
      f.ctx.uc_link = &s.main_ctx;
      makecontext(&f.ctx, fiber_main, 0);
      s.live.push_back(&f);
    }
    if (s.live.empty()) break;
    s.cur = s.live[s.rng() % s.live.size()];
    s.resume_as(*s.cur);
    swapcontext(&s.main_ctx, &s.cur->ctx);
    // Back here when some thread finished.
    s.cur = nullptr;
    std::erase_if(s.live, [](const Fiber* f) { return f->done; });
  }
  t_state = nullptr;
  if (s.accesses == 0)
    return Error{ErrorClass::kInternal,
                 "race mode: " + s.kernel +
                     " ran without one recorded device access: the kernels of this binary are "
                     "not instrumented (see docs/cuda.md, Race mode)"};
  return {};
}

}  // namespace gscheck::cuda
