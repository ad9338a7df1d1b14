// gscheck-worker: loads one vendor plugin and serves gscheck's calls to it (worker_protocol.h).
// gscheck starts it per job; it lives as long as the plugin behaves. Everything the plugin may
// break (the heap, stdio, signal handlers) is treated as suspect: replies use raw write(2).
//
//   gscheck-worker PLUGIN MAX_BYTES MODE PARENT_PID     (MODE: worker | call)
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "backends/worker_protocol.h"
#include "gscheck/plugin.h"

namespace {

using namespace gscheck::worker;

std::size_t g_page = 4096;

bool write_all(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, std::size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// One frame in one write: a frame is never interleaved with another writer's bytes (pipes keep
// writes up to PIPE_BUF whole; larger frames come only from this thread). Async-signal-safe.
bool send_frame(Msg type, const void* a, std::size_t a_size, const void* b = nullptr,
                std::size_t b_size = 0) {
  FrameHeader h{kMagic, static_cast<uint32_t>(type), static_cast<uint32_t>(a_size + b_size), 0};
  if (a_size + b_size > kMaxFrame) return false;
  char buf[sizeof h + kMaxFrame];
  std::memcpy(buf, &h, sizeof h);
  if (a_size) std::memcpy(buf + sizeof h, a, a_size);
  if (b_size) std::memcpy(buf + sizeof h + a_size, b, b_size);
  return write_all(kReplyFd, buf, sizeof h + a_size + b_size);
}

void send_text(Msg type, const std::string& text) {
  send_frame(type, text.data(), std::min<std::size_t>(text.size(), 4096));
}

// --- Faults: a write into a guard page or a read-only input is named before the worker dies.
struct FaultRange {
  uintptr_t lo = 0, hi = 0;
  const char* what = "";
};
FaultRange g_ranges[3];  // output head guard page, output tail guard page, inputs
volatile sig_atomic_t g_copying_strings = 0;

void set_range(int i, uintptr_t lo, uintptr_t hi, const char* what) {
  g_ranges[i].lo = lo;
  g_ranges[i].hi = hi;
  g_ranges[i].what = what;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // visible to on_fault at any point
}

std::size_t put_number(char* p, uint64_t v) {
  char tmp[24];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  for (std::size_t i = 0; i < n; ++i) p[i] = tmp[n - 1 - i];
  return n;
}

void on_fault(int sig, siginfo_t* si, void*) {
  const auto addr = reinterpret_cast<uintptr_t>(si->si_addr);
  char text[256];
  std::size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n < sizeof text - 24) text[n++] = *s++;
  };
  if (g_copying_strings) {
    put("the plugin's output string data were not readable after run() returned (ABI: data ");
    put("assigned directly must stay valid until the next run(); set_string() copies)");
  }
  for (const auto& r : g_ranges) {
    if (n == 0 && r.lo <= addr && addr < r.hi) {
      put("plugin touched ");
      put(r.what);
      put(" (byte ");
      n += put_number(text + n, addr - r.lo);
      put(" of it)");
    }
  }
  if (n > 0) {  // a small frame: the alternate stack has no room for send_frame's buffer
    const FrameHeader h{kMagic, static_cast<uint32_t>(Msg::kFault), static_cast<uint32_t>(n), 0};
    char frame[sizeof h + sizeof text];
    std::memcpy(frame, &h, sizeof h);
    std::memcpy(frame + sizeof h, text, n);
    write_all(kReplyFd, frame, sizeof h + n);
  }
  // Die of the same signal: a raise() is pending until return, a fault re-runs the access.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// --- The CUDA runtime, loaded only for plugins that take device pointers.
struct Cuda {
  int (*malloc_fn)(void**, std::size_t) = nullptr;
  int (*free_fn)(void*) = nullptr;
  int (*memcpy_fn)(void*, const void*, std::size_t, int) = nullptr;
  int (*memset_fn)(void*, int, std::size_t) = nullptr;
  int (*sync_fn)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  static constexpr int kHostToDevice = 1, kDeviceToHost = 2;
  std::string error(int e) const {
    return "CUDA error " + std::to_string(e) + " (" +
           (error_string ? error_string(e) : "no cudaGetErrorString") + ")";
  }
};
Cuda g_cuda;
bool g_device = false;

std::string load_cuda() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("GSCHECK_CUDART"); env && *env) {
    names.push_back(env);
  } else {
    names = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
  }
  std::string tried;
  void* h = nullptr;
  for (const auto& n : names) {
    h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h) break;
    tried += (tried.empty() ? "" : "; ") + std::string(::dlerror());
  }
  if (!h) return "the plugin takes device pointers, but no CUDA runtime loads: " + tried;
  auto sym = [&](const char* name) { return ::dlsym(h, name); };
  g_cuda.malloc_fn = reinterpret_cast<decltype(g_cuda.malloc_fn)>(sym("cudaMalloc"));
  g_cuda.free_fn = reinterpret_cast<decltype(g_cuda.free_fn)>(sym("cudaFree"));
  g_cuda.memcpy_fn = reinterpret_cast<decltype(g_cuda.memcpy_fn)>(sym("cudaMemcpy"));
  g_cuda.memset_fn = reinterpret_cast<decltype(g_cuda.memset_fn)>(sym("cudaMemset"));
  g_cuda.sync_fn = reinterpret_cast<decltype(g_cuda.sync_fn)>(sym("cudaDeviceSynchronize"));
  g_cuda.error_string = reinterpret_cast<decltype(g_cuda.error_string)>(sym("cudaGetErrorString"));
  if (!g_cuda.malloc_fn || !g_cuda.free_fn || !g_cuda.memcpy_fn || !g_cuda.memset_fn ||
      !g_cuda.sync_fn)
    return "the CUDA runtime lacks cudaMalloc, cudaFree, cudaMemcpy, cudaMemset or "
           "cudaDeviceSynchronize";
  // Create the context now, before the address-space cap, and keep it for the worker's life.
  if (int e = g_cuda.free_fn(nullptr); e != 0) return "cannot create a CUDA context: " + g_cuda.error(e);
  return "";
}

// --- One call's output.
struct Output {
  int64_t max_bytes = 0;
  bool called = false, allocated = false;
  int32_t dtype = 0;
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t count = 0;
  uint64_t payload_bytes = 0;
  // The worker's mapping of "out": guard page | region | guard page.
  unsigned char* map = nullptr;
  std::size_t map_bytes = 0;
  uint64_t region_offset = 0, region_bytes = 0, payload_offset = 0;
  void* device = nullptr;  // guard | payload | guard on the device
  // String elements copied by set_string().
  std::vector<std::string> copies;
  std::vector<char> copied;
  int64_t string_bytes = 0;
  ~Output() { release(); }
  void release() {
    if (map) ::munmap(map, map_bytes);
    map = nullptr;
    if (device) g_cuda.free_fn(device);
    device = nullptr;
    set_range(0, 0, 0, "");
    set_range(1, 0, 0, "");
  }
  unsigned char* payload() { return map + payload_offset; }
};

std::size_t element_size(int32_t dtype) {
  static const std::size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, sizeof(gsc_string)};
  return sizes[dtype];
}

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

bool grow(int fd, uint64_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_size) >= bytes) return true;
  return ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
}

void* alloc_output(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims) {
  auto* o = static_cast<Output*>(ctx);
  if (o->called) return nullptr;  // one output per call
  o->called = true;
  if (dtype < 0 || dtype > GSC_STRING || rank < 0 || rank > kMaxRank || (rank > 0 && !dims))
    return nullptr;
  if (g_device && dtype == GSC_STRING) return nullptr;
  __int128 count = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) return nullptr;
    count *= dims[i];
    if (count > (__int128{1} << 62)) return nullptr;
  }
  const __int128 bytes = count * static_cast<__int128>(element_size(dtype));
  if (bytes > o->max_bytes) return nullptr;
  o->dtype = dtype;
  o->rank = rank;
  for (int i = 0; i < rank; ++i) o->dims[i] = dims[i];
  o->count = static_cast<int64_t>(count);
  o->payload_bytes = static_cast<uint64_t>(bytes);
  if (o->payload_bytes >= (64u << 20)) {
    const uint64_t b = o->payload_bytes;
    send_frame(Msg::kAllocated, &b, sizeof b);
  }
  // Payload 64-byte aligned, ending 64..127 bytes before the tail guard page.
  const uint64_t tail = kGuardBytes + (round_up(o->payload_bytes, 64) - o->payload_bytes);
  o->region_bytes = round_up(kGuardBytes + o->payload_bytes + tail, g_page);
  o->region_offset = g_page;
  o->payload_offset = o->region_offset + o->region_bytes - tail - o->payload_bytes;
  o->map_bytes = o->region_bytes + 2 * g_page;
  if (!grow(kOutMemFd, o->map_bytes)) return nullptr;
  void* m = ::mmap(nullptr, o->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, kOutMemFd, 0);
  if (m == MAP_FAILED) return nullptr;
  o->map = static_cast<unsigned char*>(m);
  ::mprotect(o->map, g_page, PROT_NONE);
  ::mprotect(o->map + g_page + o->region_bytes, g_page, PROT_NONE);
  const auto base = reinterpret_cast<uintptr_t>(o->map);
  set_range(0, base, base + g_page, "the guard page before its output buffer");
  set_range(1, base + g_page + o->region_bytes, base + o->map_bytes,
            "the guard page after the end of its output buffer");
  unsigned char* region = o->map + o->region_offset;
  std::memset(region, kGuardByte, o->payload_offset - o->region_offset);
  std::memset(o->payload() + o->payload_bytes, kGuardByte, tail);
  o->allocated = true;
  if (dtype == GSC_STRING) {
    auto* s = reinterpret_cast<gsc_string*>(o->payload());
    for (int64_t i = 0; i < o->count; ++i) s[i] = gsc_string{nullptr, -1};  // -1: unwritten
    try {
      o->copies.resize(static_cast<std::size_t>(o->count));
      o->copied.assign(static_cast<std::size_t>(o->count), 0);
    } catch (const std::exception&) {
      return nullptr;
    }
    return o->payload();
  }
  std::memset(o->payload(), kPoisonByte, o->payload_bytes);
  if (!g_device) return o->payload();
  const std::size_t dev_bytes = o->payload_bytes + 2 * kGuardBytes;
  if (g_cuda.malloc_fn(&o->device, dev_bytes) != 0) {
    o->device = nullptr;
    o->allocated = false;
    return nullptr;
  }
  auto* d = static_cast<unsigned char*>(o->device);
  g_cuda.memset_fn(d, kGuardByte, dev_bytes);
  g_cuda.memset_fn(d + kGuardBytes, kPoisonByte, o->payload_bytes);
  return d + kGuardBytes;
}

int32_t set_string(void* ctx, int64_t index, const char* data, int64_t size) {
  auto* o = static_cast<Output*>(ctx);
  if (!o->allocated || o->dtype != GSC_STRING || index < 0 || index >= o->count || size < 0 ||
      (size > 0 && !data))
    return GSC_INVALID_ARGUMENT;
  const std::size_t i = static_cast<std::size_t>(index);
  const int64_t before = o->copied[i] ? static_cast<int64_t>(o->copies[i].size()) : 0;
  if (size - before >
      o->max_bytes - static_cast<int64_t>(o->payload_bytes) - o->string_bytes)
    return GSC_RESOURCE_EXHAUSTED;
  try {
    o->copies[i].assign(data, static_cast<std::size_t>(size));
  } catch (const std::exception&) {
    return GSC_RESOURCE_EXHAUSTED;
  }
  o->string_bytes += size - before;
  o->copied[i] = 1;
  reinterpret_cast<gsc_string*>(o->payload())[i] = gsc_string{o->copies[i].data(), size};
  return GSC_OK;
}

// --- Plugin state.
const gsc_plugin_v2* g_v2 = nullptr;  // set for ABI v2 plugins
int32_t (*g_run)(const gsc_call*, gsc_result*) = nullptr;
int64_t g_max_bytes = 0;
bool g_fork_per_call = false;
std::vector<pid_t> g_allowed_children;  // started by init(): the plugin's own servers

std::vector<pid_t> live_children() {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc/self/task");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/children";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    long pid = 0;
    while (std::fscanf(f, "%ld", &pid) == 1) {
      char state = '?';
      if (FILE* s = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r")) {
        // pid (comm) state ...: comm may hold spaces and parentheses; state follows the last ')'.
        char buf[512];
        const std::size_t n = std::fread(buf, 1, sizeof buf - 1, s);
        buf[n] = 0;
        if (const char* p = std::strrchr(buf, ')'); p && p[1] == ' ') state = p[2];
        std::fclose(s);
      }
      if (state != 'Z' && state != '?') out.push_back(static_cast<pid_t>(pid));
    }
    std::fclose(f);
  }
  ::closedir(d);
  return out;
}

struct InputViews {
  std::vector<int64_t> unused;
  gsc_tensor t[kInputs] = {};
  std::vector<gsc_string> strings[kInputs];
  void* device[kInputs] = {};
  ~InputViews() {
    for (void* p : device)
      if (p) g_cuda.free_fn(p);
  }
};

void reply(Ending ending, int32_t code, const Output* o, uint64_t strings_offset,
           uint64_t strings_bytes, std::string message) {
  WireResult r{};
  r.ending = static_cast<int32_t>(ending);
  r.code = code;
  const bool out = ending == Ending::kReturned && code == GSC_OK && o && o->allocated;
  r.has_output = out ? 1 : 0;
  std::string extra;
  if (out) {
    r.dtype = o->dtype;
    r.rank = o->rank;
    r.payload_offset = o->payload_offset;
    r.payload_bytes = o->payload_bytes;
    r.strings_offset = strings_offset;
    r.strings_bytes = strings_bytes;
    extra.assign(reinterpret_cast<const char*>(o->dims), sizeof(int64_t) * o->rank);
  }
  if (message.size() > 2048) message.resize(2048);
  r.message_size = message.size();
  extra += message;
  send_frame(Msg::kResult, &r, sizeof r, extra.data(), extra.size());
}

// Checks the guards around the output, and copies string outputs into "out" after the region.
std::string finish_output(Output& o, int32_t code, uint64_t& strings_offset,
                          uint64_t& strings_bytes) {
  if (o.device) {
    if (int e = g_cuda.sync_fn(); e != 0) return "after run(): " + g_cuda.error(e);
    if (int e = g_cuda.memcpy_fn(o.payload() - kGuardBytes, o.device,
                                 o.payload_bytes + 2 * kGuardBytes, Cuda::kDeviceToHost);
        e != 0)
      return "copying the output from the device: " + g_cuda.error(e);
  }
  const unsigned char* region = o.map + o.region_offset;
  const unsigned char* end = o.payload() + o.payload_bytes;
  for (const unsigned char* p = o.payload(); p-- > region;)
    if (*p != kGuardByte)
      return "plugin wrote before its output buffer (guard byte " +
             std::to_string(o.payload() - p) + " before the start)";
  for (const unsigned char* p = end; p < region + o.region_bytes; ++p)
    if (*p != kGuardByte)
      return "plugin wrote past the end of its output buffer (guard byte " +
             std::to_string(p - end) + " after the end)";
  if (o.dtype != GSC_STRING || code != GSC_OK) return "";
  // String table: per element {offset, size}, then the bytes, after the tail guard page.
  const auto* s = reinterpret_cast<const gsc_string*>(o.payload());
  g_copying_strings = 1;
  uint64_t total = 0;
  for (int64_t i = 0; i < o.count; ++i) {
    if (s[i].size < 0 || (s[i].size > 0 && !s[i].data)) {
      g_copying_strings = 0;
      return "plugin left string element " + std::to_string(i) + " unwritten";
    }
    total += static_cast<uint64_t>(s[i].size);
    if (total > static_cast<uint64_t>(o.max_bytes)) {
      g_copying_strings = 0;
      return "plugin's string output exceeds the byte budget of " + std::to_string(o.max_bytes);
    }
  }
  strings_offset = o.map_bytes;
  strings_bytes = 16 * static_cast<uint64_t>(o.count) + total;
  if (strings_bytes == 0) {  // no elements: nothing to map
    g_copying_strings = 0;
    return "";
  }
  const std::size_t map_offset = strings_offset / g_page * g_page;
  const std::size_t map_len = strings_offset + strings_bytes - map_offset;
  if (!grow(kOutMemFd, strings_offset + strings_bytes)) {
    g_copying_strings = 0;
    return std::string("cannot grow the output memory: ") + std::strerror(errno);
  }
  void* m = ::mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, kOutMemFd,
                   static_cast<off_t>(map_offset));
  if (m == MAP_FAILED) {
    g_copying_strings = 0;
    return std::string("cannot map the output memory: ") + std::strerror(errno);
  }
  unsigned char* table = static_cast<unsigned char*>(m) + (strings_offset - map_offset);
  uint64_t at = strings_offset + 16 * static_cast<uint64_t>(o.count);
  for (int64_t i = 0; i < o.count; ++i) {
    const uint64_t entry[2] = {at, static_cast<uint64_t>(s[i].size)};
    std::memcpy(table + 16 * i, entry, sizeof entry);
    if (s[i].size > 0)
      std::memcpy(table + (at - strings_offset), s[i].data, static_cast<std::size_t>(s[i].size));
    at += static_cast<uint64_t>(s[i].size);
  }
  g_copying_strings = 0;
  ::munmap(m, map_len);
  return "";
}

// Runs one call described in "in"; sends its result frame.
void serve_call(uint64_t in_bytes) {
  void* in = ::mmap(nullptr, in_bytes, PROT_READ, MAP_SHARED, kInMemFd, 0);
  if (in == MAP_FAILED || in_bytes < sizeof(WireCall)) {
    reply(Ending::kFailedRestart, 0, nullptr, 0, 0, "worker cannot map the call's inputs");
    return;
  }
  struct Unmap {
    void* p;
    uint64_t n;
    ~Unmap() { ::munmap(p, n); }
  } unmap{in, in_bytes};
  const auto* base = static_cast<const unsigned char*>(in);
  WireCall wc;
  std::memcpy(&wc, base, sizeof wc);
  const auto lo = reinterpret_cast<uintptr_t>(base);
  set_range(2, lo, lo + in_bytes, "its read-only inputs");
  auto inside = [&](uint64_t off, uint64_t n) { return off <= in_bytes && n <= in_bytes - off; };
  InputViews views;
  const gsc_tensor* ptrs[kInputs] = {};
  for (int k = 0; k < kInputs; ++k) {
    const WireTensor& w = wc.inputs[k];
    if (!w.present) continue;
    if (w.rank < 0 || w.rank > kMaxRank || w.dtype < 0 || w.dtype > GSC_STRING ||
        !inside(w.dims_offset, 8ull * w.rank) || !inside(w.data_offset, w.data_bytes)) {
      reply(Ending::kFailedRestart, 0, nullptr, 0, 0, "worker got a malformed call");
      return;
    }
    gsc_tensor& t = views.t[k];
    t.dtype = w.dtype;
    t.rank = w.rank;
    t.dims = reinterpret_cast<const int64_t*>(base + w.dims_offset);
    if (w.dtype == GSC_STRING) {
      const uint64_t n = w.data_bytes / 16;
      views.strings[k].resize(n);
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t e[2];
        std::memcpy(e, base + w.data_offset + 16 * i, sizeof e);
        if (!inside(e[0], e[1])) {
          reply(Ending::kFailedRestart, 0, nullptr, 0, 0, "worker got a malformed string");
          return;
        }
        views.strings[k][i] = gsc_string{reinterpret_cast<const char*>(base + e[0]),
                                         static_cast<int64_t>(e[1])};
      }
      t.data = views.strings[k].data();
    } else if (g_device) {
      if (int e = g_cuda.malloc_fn(&views.device[k], w.data_bytes ? w.data_bytes : 1); e != 0) {
        views.device[k] = nullptr;
        reply(Ending::kReturned, GSC_RESOURCE_EXHAUSTED, nullptr, 0, 0,
              "gscheck could not allocate an input on the device: " + g_cuda.error(e));
        return;
      }
      if (w.data_bytes)
        g_cuda.memcpy_fn(views.device[k], base + w.data_offset, w.data_bytes, Cuda::kHostToDevice);
      t.data = views.device[k];
    } else {
      t.data = base + w.data_offset;
    }
    ptrs[k] = &t;
  }
  Output out;
  out.max_bytes = wc.max_bytes;
  gsc_call call{};
  call.op = wc.op;
  call.semantics = wc.semantics;
  call.params = ptrs[0];
  call.indices = ptrs[1];
  call.updates = ptrs[2];
  call.tensor = ptrs[3];
  call.shape = ptrs[4];
  call.axis = ptrs[5];
  call.batch_dims = wc.batch_dims;
  std::string policy;
  if (inside(wc.policy_offset, wc.policy_size))
    policy.assign(reinterpret_cast<const char*>(base + wc.policy_offset), wc.policy_size);
  call.bad_indices_policy = policy.c_str();
  call.alloc_output = &alloc_output;
  call.alloc_ctx = &out;
  call.max_bytes = wc.max_bytes;
  call.deadline_ns = wc.deadline_ns;
  call.set_string = &set_string;
  gsc_result result{};
  int32_t code = GSC_INTERNAL;
  try {
    code = g_run(&call, &result);
  } catch (const std::exception& e) {
    reply(Ending::kFailedRestart, 0, nullptr, 0, 0,
          std::string("plugin threw a C++ exception out of run(): ") + e.what());
    return;
  } catch (...) {
    reply(Ending::kFailedRestart, 0, nullptr, 0, 0,
          "plugin threw a C++ exception (not a std::exception) out of run()");
    return;
  }
  result.message[sizeof result.message - 1] = '\0';
  std::string message(result.message);
  uint64_t strings_offset = 0, strings_bytes = 0;
  if (code == GSC_OK) {
    if (!out.called) {
      reply(Ending::kFailed, 0, nullptr, 0, 0, "plugin returned OK without allocating its output");
      return;
    }
    if (!out.allocated) {
      reply(Ending::kFailed, 0, nullptr, 0, 0,
            "plugin returned OK although its output allocation was refused");
      return;
    }
  }
  if (out.allocated) {
    const std::string bad = finish_output(out, code, strings_offset, strings_bytes);
    if (!bad.empty()) {
      reply(Ending::kFailed, 0, nullptr, 0, 0, bad);
      return;
    }
  }
  std::vector<pid_t> left;
  for (pid_t p : live_children())
    if (std::find(g_allowed_children.begin(), g_allowed_children.end(), p) ==
        g_allowed_children.end())
      left.push_back(p);
  if (!left.empty()) {
    // By pid too: a child that left the process group with setsid() is still our child.
    for (pid_t p : left) ::kill(p, SIGKILL);
    std::string pids;
    for (pid_t p : left) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
    reply(Ending::kFailedRestart, 0, nullptr, 0, 0,
          "plugin left " + std::to_string(left.size()) +
              " child process(es) running after run() returned (pid " + pids +
              "); the worker's process group was killed");
    return;
  }
  reply(Ending::kReturned, code, &out, strings_offset, strings_bytes, message);
}

// --isolate call: the call runs in a child forked from the worker; the worker reports a child
// that dies without answering.
void serve_call_forked(uint64_t in_bytes) {
  auto* replied = static_cast<volatile int*>(
      ::mmap(nullptr, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (replied == MAP_FAILED) {
    reply(Ending::kFailed, 0, nullptr, 0, 0, "worker cannot map its flag page");
    return;
  }
  *replied = 0;
  pid_t pid = -1;
  for (int attempt = 0; attempt < 5 && pid < 0; ++attempt) {
    pid = ::fork();
    if (pid < 0) ::usleep(10000u << attempt);
  }
  if (pid < 0) {
    reply(Ending::kFailed, 0, nullptr, 0, 0,
          std::string("worker could not fork the call: ") + std::strerror(errno));
  } else if (pid == 0) {
    serve_call(in_bytes);
    *replied = 1;
    ::_exit(0);
  } else {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!*replied) {
      std::string why;
      if (WIFSIGNALED(st)) {
        why = "plugin crashed with signal " + std::to_string(WTERMSIG(st)) + " (" +
              strsignal(WTERMSIG(st)) + ")";
      } else {
        why = "plugin's call process exited with status " + std::to_string(WEXITSTATUS(st)) +
              " during the call (exit() inside run()?)";
      }
      reply(Ending::kFailed, 0, nullptr, 0, 0, why);
    }
  }
  ::munmap(const_cast<int*>(replied), sizeof(int));
}

std::string load(const char* path) {
  void* h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return std::string("cannot load plugin ") + path + ": " + ::dlerror();
  using V2 = const gsc_plugin_v2* (*)();
  using V1 = const gsc_plugin_v1* (*)();
  auto v2 = reinterpret_cast<V2>(::dlsym(h, "gscheck_plugin_v2"));
  auto v1 = reinterpret_cast<V1>(::dlsym(h, "gscheck_plugin_v1"));
  const std::string prefix = std::string("plugin ") + path + " is not a gscheck plugin: ";
  if (!v2 && !v1) return prefix + "it exports no gscheck_plugin_v2 or gscheck_plugin_v1 symbol";
  WireContract c{};
  const char* name = nullptr;
  if (v2) {
    const gsc_plugin_v2* p = v2();
    if (!p) return prefix + "gscheck_plugin_v2() returned NULL";
    if (p->abi_version != GSCHECK_PLUGIN_ABI_V2)
      return prefix + "gscheck_plugin_v2() says ABI version " + std::to_string(p->abi_version) +
             ", this gscheck reads 1 (gscheck_plugin_v1) and 2 (gscheck_plugin_v2)";
    if (p->flags & ~GSC_DEVICE_POINTERS)
      return prefix + "its flags hold unknown bits " + std::to_string(p->flags & ~GSC_DEVICE_POINTERS);
    g_v2 = p;
    g_run = p->run;
    name = p->name;
    c = {p->abi_version,   p->ops,         p->dtypes,       p->index_dtypes, p->semantics,
         p->deterministic, p->tf_messages, p->half_in_float, p->flags};
  } else {
    const gsc_plugin_v1* p = v1();
    if (!p) return prefix + "gscheck_plugin_v1() returned NULL";
    if (p->abi_version != GSCHECK_PLUGIN_ABI_VERSION)
      return prefix + "it implements ABI version " + std::to_string(p->abi_version) +
             ", this gscheck reads 1 (gscheck_plugin_v1) and 2 (gscheck_plugin_v2)";
    g_run = p->run;
    name = p->name;
    c = {p->abi_version,   p->ops,         p->dtypes,        p->index_dtypes, p->semantics,
         p->deterministic, p->tf_messages, p->half_in_float, 0};
  }
  if (!g_run) return prefix + "its contract has no run function";
  if (!name) return prefix + "its contract has no name";
  const std::string n(name, strnlen(name, 256));
  send_frame(Msg::kHello, &c, sizeof c, n.data(), n.size());
  g_device = (c.flags & GSC_DEVICE_POINTERS) != 0;
  if (g_device && g_fork_per_call)
    return "plugin " + n + " takes device pointers, which cannot cross fork(): run it without "
           "--isolate call";
  if (g_device) {
    if (std::string e = load_cuda(); !e.empty()) return e;
  }
  if (g_v2 && g_v2->init) {
    gsc_result r{};
    int32_t code = GSC_INTERNAL;
    try {
      code = g_v2->init(&r);
    } catch (const std::exception& e) {
      return std::string("plugin's init() threw a C++ exception: ") + e.what();
    } catch (...) {
      return "plugin's init() threw a C++ exception";
    }
    r.message[sizeof r.message - 1] = '\0';
    if (code != GSC_OK)
      return "plugin's init() failed with code " + std::to_string(code) + ": " + r.message;
  }
  return "";
}

// After init(): cap the address space (see plugin.h, MEMORY), not for CUDA plugins.
void cap_memory() {
  if (g_device) return;
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (!f) return;
  const bool ok = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  if (!ok) return;
  const unsigned long long used = pages * g_page;
  const unsigned long long budget = static_cast<unsigned long long>(g_max_bytes);
  const unsigned long long limit =
      budget > (1ull << 60) ? RLIM_INFINITY : used + 4 * budget + (1ull << 30);
  rlimit r{limit, limit};
  ::setrlimit(RLIMIT_AS, &r);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "gscheck-worker is started by gscheck, not by hand\n");
    return 2;
  }
  // Die with gscheck, even on SIGKILL; a parent already gone means nobody wants this worker.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != static_cast<pid_t>(std::atoll(argv[4]))) return 1;
  // The plugin's orphaned grandchildren become this worker's children, so they are seen.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  g_page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  g_max_bytes = std::atoll(argv[2]);
  g_fork_per_call = std::strcmp(argv[3], "call") == 0;
  // A plugin crashing on every case must not write a core file per case.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(SIGPIPE, SIG_DFL);
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = &on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);

  if (std::string e = load(argv[1]); !e.empty()) {
    send_text(Msg::kLoadError, e);
    return 1;
  }
  g_allowed_children = live_children();
  cap_memory();
  send_frame(Msg::kReady, nullptr, 0);
  for (;;) {
    FrameHeader h{};
    if (!read_all(kCommandFd, &h, sizeof h)) break;  // gscheck closed the socket: done
    uint64_t in_bytes = 0;
    if (h.magic != kMagic || h.type != static_cast<uint32_t>(Msg::kCall) ||
        h.size != sizeof in_bytes || !read_all(kCommandFd, &in_bytes, sizeof in_bytes))
      return 3;
    if (g_fork_per_call) {
      serve_call_forked(in_bytes);
    } else {
      serve_call(in_bytes);
    }
  }
  if (g_v2 && g_v2->finalize) g_v2->finalize();
  return 0;
}
