#include "cuda/emu/warp_sync.h"

#include <cxxabi.h>
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "cuda/portability/qualifiers.h"

#if defined(__SANITIZE_ADDRESS__)
#define GSCHECK_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GSCHECK_ASAN_FIBERS 1
#endif
#endif
#if defined(GSCHECK_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif

namespace gscheck::cuda::emu {
namespace {

struct ThreadId {
  uint32_t block = 0, thread = 0;
};
thread_local ThreadId t_thread;
thread_local LaunchFaults* t_faults = nullptr;

const char* op_name(Collective op) {
  switch (op) {
    case Collective::kActiveMask:
      return "__activemask";
    case Collective::kMatchAny:
      return "__match_any_sync";
    case Collective::kShfl:
      return "__shfl_sync";
    case Collective::kShflUp:
      return "__shfl_up_sync";
    case Collective::kShflDown:
      return "__shfl_down_sync";
    case Collective::kShflXor:
      return "__shfl_xor_sync";
    case Collective::kBallot:
      return "__ballot_sync";
    case Collective::kAny:
      return "__any_sync";
    case Collective::kAll:
      return "__all_sync";
    case Collective::kSyncWarp:
      return "__syncwarp";
  }
  return "?";
}

std::string hex(uint32_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

struct Post {
  Collective op = Collective::kActiveMask;
  uint32_t mask = 0;
  uint64_t value = 0;
  int bytes = 0;
  int arg = 0;
  int width = 32;
};

bool same_call(const Post& a, const Post& b) {
  return a.op == b.op && a.mask == b.mask && a.bytes == b.bytes && a.width == b.width;
}

// Lane i's result of a collective whose taking part lanes are `members` (posts indexed by lane).
uint64_t result_for(const Post* posts, uint32_t members, int i) {
  const Post& p = posts[i];
  auto lanes_where = [&](auto pred) {
    uint32_t m = 0;
    for (int j = 0; j < 32; ++j)
      if ((members >> j & 1u) && pred(posts[j])) m |= 1u << j;
    return m;
  };
  switch (p.op) {
    case Collective::kActiveMask:
      return members;
    case Collective::kMatchAny:
      return lanes_where([&](const Post& q) { return q.value == p.value; });
    case Collective::kBallot:
      return lanes_where([](const Post& q) { return q.value != 0; });
    case Collective::kAny:
      return lanes_where([](const Post& q) { return q.value != 0; }) != 0;
    case Collective::kAll:
      return lanes_where([](const Post& q) { return q.value != 0; }) == members;
    case Collective::kSyncWarp:
      return 0;
    default:
      break;
  }
  const int w = p.width;
  if (w < 1 || w > 32 || (w & (w - 1)) != 0) {
    fault(std::string(op_name(p.op)) + " with width " + std::to_string(w) +
          " (a power of two up to 32)");
    return p.value;
  }
  const int base = i & ~(w - 1);
  int src = i;
  if (p.op == Collective::kShfl) src = base + (p.arg & (w - 1));
  if (p.op == Collective::kShflUp) src = i - p.arg >= base ? i - p.arg : i;
  if (p.op == Collective::kShflDown) src = i + p.arg < base + w ? i + p.arg : i;
  if (p.op == Collective::kShflXor) src = (i ^ p.arg) < base + w ? (i ^ p.arg) : i;
  if (src < 0 || src > 31 || !(members >> src & 1u)) {
    fault(std::string(op_name(p.op)) + ": lane " + std::to_string(i) + " reads lane " +
          std::to_string(src) + ", which is not taking part (its value is undefined)");
    return p.value;
  }
  return posts[src].value;
}

// Plain cuda-emu and race mode: the lane runs alone, every other lane diverged away.
uint64_t alone(const Post& p) {
  const int lane = static_cast<int>(current_lane());
  const uint32_t self = 1u << lane;
  if (p.op != Collective::kActiveMask && p.mask != self) {
    fault(std::string(op_name(p.op)) + " over lanes " + hex(p.mask) + " from lane " +
          std::to_string(lane) +
          ": this mode runs each lane alone; a mask naming other lanes needs the "
          "warp-synchronous mode (cuda-emu-warp)");
  }
  Post posts[32];
  posts[lane] = p;
  return result_for(posts, self, lane);
}

enum class LaneState : uint8_t { kRunnable, kBlocked, kExited };

struct Lane {
  ucontext_t ctx;
  std::unique_ptr<char[]> stack;
  LaneState state = LaneState::kExited;
  Post post;
  uint64_t result = 0;
};

constexpr std::size_t kStackBytes = 256 * 1024;  // ASan Debug frames included

struct Warp {
  ucontext_t main;
  Lane lanes[32];
  uint32_t present = 0;  // lanes that exist (a last partial warp has fewer)
  uint32_t base = 0;     // threadIdx.x of lane 0
  uint32_t block = 0, block_threads = 0, grid_dim = 0;
  const void* kernel = nullptr;
  ThreadBody body = nullptr;
  int cur = -1;
  const void* main_bottom = nullptr;
  std::size_t main_size = 0;
};
thread_local Warp* t_warp = nullptr;

// Switch from the scheduler to lane i, back when it blocks or exits.
[[gnu::noinline]] void to_lane(Warp& w, int i) {
  w.cur = i;
  set_current_thread(w.block, w.base + static_cast<uint32_t>(i));
#if defined(GSCHECK_ASAN_FIBERS)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, w.lanes[i].stack.get(), kStackBytes);
#endif
  swapcontext(&w.main, &w.lanes[i].ctx);
#if defined(GSCHECK_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  w.cur = -1;
}

[[gnu::noinline]] void to_scheduler(Warp& w, Lane& l, bool exiting) {
#if defined(GSCHECK_ASAN_FIBERS)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(exiting ? nullptr : &fake, w.main_bottom, w.main_size);
#else
  (void)exiting;
#endif
  swapcontext(&l.ctx, &w.main);
#if defined(GSCHECK_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(fake, &w.main_bottom, &w.main_size);
#endif
}

void lane_main() {
  Warp& w = *t_warp;
#if defined(GSCHECK_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(nullptr, &w.main_bottom, &w.main_size);
#endif
  const int i = w.cur;
  w.body(w.kernel,
         ThreadIndex{w.block, w.base + static_cast<uint32_t>(i), w.block_threads, w.grid_dim});
  w.lanes[i].state = LaneState::kExited;
  to_scheduler(w, w.lanes[i], true);
}

// Every live lane is blocked: resolve each complete sync collective; failing that, the lanes at
// __activemask (the set that arrived together); failing that, a deadlock (a fault).
void resolve(Warp& w) {
  Post posts[32];
  uint32_t blocked = 0;
  for (int i = 0; i < 32; ++i) {
    if (w.lanes[i].state != LaneState::kBlocked) continue;
    posts[i] = w.lanes[i].post;
    blocked |= 1u << i;
  }
  auto release = [&](uint32_t members) {
    for (int j = 0; j < 32; ++j) {
      if (!(members >> j & 1u)) continue;
      set_current_thread(w.block, w.base + static_cast<uint32_t>(j));
      w.lanes[j].result = result_for(posts, members, j);
      w.lanes[j].state = LaneState::kRunnable;
    }
  };
  uint32_t done = 0;
  for (int i = 0; i < 32; ++i) {
    if (!(blocked >> i & 1u) || (done >> i & 1u) || posts[i].op == Collective::kActiveMask)
      continue;
    const Post& p = posts[i];
    if (!(p.mask >> i & 1u)) {
      set_current_thread(w.block, w.base + static_cast<uint32_t>(i));
      fault(std::string(op_name(p.op)) + " with mask " + hex(p.mask) + " that leaves out lane " +
            std::to_string(i) + ", the caller");
      done |= 1u << i;
      release(1u << i);
      continue;
    }
    uint32_t members = 0, exited = 0;
    bool complete = true;
    for (int j = 0; j < 32 && complete; ++j) {
      if (!(p.mask >> j & 1u)) continue;
      const bool gone = !(w.present >> j & 1u) || w.lanes[j].state == LaneState::kExited;
      if (gone) {
        exited |= 1u << j;
      } else if ((blocked >> j & 1u) && !(done >> j & 1u) && same_call(posts[j], p)) {
        members |= 1u << j;
      } else {
        complete = false;  // lane j has yet to arrive (or waits elsewhere)
      }
    }
    if (!complete) continue;
    if (exited) {
      set_current_thread(w.block, w.base + static_cast<uint32_t>(i));
      fault(std::string(op_name(p.op)) + " with mask " + hex(p.mask) + " names lanes " +
            hex(exited) + " that have exited or do not exist (undefined on the device)");
    }
    done |= members;
    release(members);
  }
  if (done) return;
  uint32_t at_activemask = 0;
  for (int i = 0; i < 32; ++i)
    if ((blocked >> i & 1u) && posts[i].op == Collective::kActiveMask) at_activemask |= 1u << i;
  if (at_activemask) return release(at_activemask);
  std::string what = "warp deadlock: lanes wait at";
  for (int i = 0; i < 32; ++i) {
    if (!(blocked >> i & 1u)) continue;
    what += " " + std::to_string(i) + ":" + op_name(posts[i].op) + "(" + hex(posts[i].mask) + ")";
  }
  set_current_thread(w.block, w.base);
  fault(what);
  for (int i = 0; i < 32; ++i)
    if (blocked >> i & 1u) release(1u << i);  // each alone, so the launch can end
}

// Apart from run_warp's loops: getcontext returns twice, which would clobber their counters.
[[gnu::noinline]] void start_lane(Lane& l) {
  if (!l.stack) l.stack = std::unique_ptr<char[]>(new char[kStackBytes]);
  getcontext(&l.ctx);
  l.ctx.uc_stack.ss_sp = l.stack.get();
  l.ctx.uc_stack.ss_size = kStackBytes;
  l.ctx.uc_link = nullptr;
  makecontext(&l.ctx, lane_main, 0);
  l.state = LaneState::kRunnable;
}

void run_warp(Warp& w) {
  for (int i = 0; i < 32; ++i) {
    Lane& l = w.lanes[i];
    if (!(w.present >> i & 1u)) {
      l.state = LaneState::kExited;
      continue;
    }
    start_lane(l);
  }
  for (;;) {
    bool live = false;
    for (int i = 0; i < 32; ++i) {
      if (w.lanes[i].state == LaneState::kRunnable) to_lane(w, i);
      live = live || w.lanes[i].state != LaneState::kExited;
    }
    if (!live) return;
    bool runnable = false;
    for (const Lane& l : w.lanes) runnable = runnable || l.state == LaneState::kRunnable;
    if (!runnable) resolve(w);
  }
}

}  // namespace

uint64_t collective(Collective op, uint32_t mask, uint64_t value, int value_bytes, int arg,
                    int width) {
  const Post p{op, mask, value, value_bytes, arg, width};
  Warp* w = t_warp;
  if (w == nullptr || w->cur < 0) return alone(p);
  const int me = w->cur;
  Lane& l = w->lanes[me];
  l.post = p;
  l.state = LaneState::kBlocked;
  to_scheduler(*w, l, false);
  return w->lanes[me].result;
}

void set_current_thread(uint32_t block, uint32_t thread) { t_thread = ThreadId{block, thread}; }
uint32_t current_lane() { return t_thread.thread & 31u; }

void LaunchFaults::record(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (count_++ == 0) first_ = what;
  any_.store(true, std::memory_order_relaxed);
}

std::string LaunchFaults::message() const {
  std::lock_guard<std::mutex> lock(mu_);
  int status = 0;
  char* d = abi::__cxa_demangle(kernel_, nullptr, nullptr, &status);
  std::string k = status == 0 && d ? d : kernel_;
  std::free(d);
  for (std::string_view ns : {"gscheck::cuda::", "gscheck::"}) {
    for (auto p = k.find(ns); p != std::string::npos; p = k.find(ns)) k.erase(p, ns.size());
  }
  std::string m = "cuda-emu: device fault in " + k + ": " + first_;
  if (count_ > 1) m += " (" + std::to_string(count_) + " faults in the launch)";
  return m;
}

FaultScope::FaultScope(LaunchFaults* f) : prev_(t_faults) { t_faults = f; }
FaultScope::~FaultScope() { t_faults = prev_; }

void fault(const std::string& what) {
  const std::string full = what + " (block " + std::to_string(t_thread.block) + ", thread " +
                           std::to_string(t_thread.thread) + ")";
  if (t_faults == nullptr) {
    std::fprintf(stderr, "cuda-emu: device fault outside a launch: %s\n", full.c_str());
    std::abort();
  }
  t_faults->record(full);
}

void run_block_warp_synchronous(const void* kernel, ThreadBody body, uint32_t block,
                                uint32_t block_threads, uint32_t grid_dim) {
  thread_local std::unique_ptr<Warp> runner;  // the lanes' stacks, kept per OS thread
  if (!runner) runner = std::make_unique<Warp>();
  Warp& w = *runner;
  Warp* const outer = t_warp;
  t_warp = &w;
  w.block = block;
  w.block_threads = block_threads;
  w.grid_dim = grid_dim;
  w.kernel = kernel;
  w.body = body;
  for (uint32_t base = 0; base < block_threads; base += 32) {
    const uint32_t n = std::min<uint32_t>(32, block_threads - base);
    w.base = base;
    w.present = n == 32 ? ~0u : (1u << n) - 1u;
    run_warp(w);
  }
  t_warp = outer;
}

}  // namespace gscheck::cuda::emu
