#include "backends/plugin/worker_call.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "backends/plugin/wire.h"
#include "backends/plugin/worker_coverage.h"
#include "backends/plugin/worker_fault_guard.h"
#include "backends/plugin/worker_io.h"
#include "backends/plugin/worker_output_arena.h"
#include "backends/plugin/worker_sandbox.h"

namespace gscheck::worker {
namespace {

// The process state letter from /proc/PID/stat, or '?'.
char process_state(long pid) {
  char state = '?';
  if (FILE* s = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r")) {
    // pid (comm) state ...: comm may hold spaces and parentheses; state follows the last ')'.
    char buf[512];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, s);
    buf[n] = 0;
    if (const char* p = std::strrchr(buf, ')'); p && p[1] == ' ') state = p[2];
    std::fclose(s);
  }
  return state;
}

// The call's inputs as the plugin sees them.
struct InputViews {
  explicit InputViews(const CudaRuntime& c) : cuda(c) {}
  InputViews(const InputViews&) = delete;
  InputViews& operator=(const InputViews&) = delete;
  ~InputViews() {
    for (void* p : device)
      if (p) cuda.free_fn(p);
  }
  const CudaRuntime& cuda;
  gsc_tensor t[kInputs] = {};
  std::vector<gsc_string> strings[kInputs];
  void* device[kInputs] = {};
  const gsc_tensor* ptrs[kInputs] = {};
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

void fail(Ending ending, std::string message) {
  reply(ending, 0, nullptr, 0, 0, std::move(message));
}

// Fills views from "in" (base, in_bytes); false after replying why not.
bool read_inputs(const WorkerState& state, const unsigned char* base, uint64_t in_bytes,
                 const WireCall& wc, InputViews& views) {
  if (const char* bad = check_call(base, in_bytes)) {
    fail(Ending::kFailedRestart, bad);
    return false;
  }
  for (int k = 0; k < kInputs; ++k) {
    const WireTensor& w = wc.inputs[k];
    if (!w.present) continue;
    gsc_tensor& t = views.t[k];
    t.dtype = w.dtype;
    t.rank = w.rank;
    t.dims = reinterpret_cast<const int64_t*>(base + w.dims_offset);
    if (w.dtype == GSC_STRING) {
      const uint64_t n = w.data_bytes / kStringEntryBytes;
      views.strings[k].resize(n);
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t e[2];
        std::memcpy(e, base + w.data_offset + kStringEntryBytes * i, sizeof e);
        views.strings[k][i] =
            gsc_string{reinterpret_cast<const char*>(base + e[0]), static_cast<int64_t>(e[1])};
      }
      t.data = views.strings[k].data();
    } else if (state.device) {
      const CudaRuntime& cuda = state.cuda;
      if (int e = cuda.malloc_fn(&views.device[k], w.data_bytes ? w.data_bytes : 1); e != 0) {
        views.device[k] = nullptr;
        reply(Ending::kReturned, GSC_RESOURCE_EXHAUSTED, nullptr, 0, 0,
              "gscheck could not allocate an input on the device: " + cuda.error(e));
        return false;
      }
      if (w.data_bytes)
        cuda.memcpy_fn(views.device[k], base + w.data_offset, w.data_bytes,
                       CudaRuntime::kHostToDevice);
      t.data = views.device[k];
    } else {
      t.data = base + w.data_offset;
    }
    views.ptrs[k] = &t;
  }
  return true;
}

// run() with the plugin's exceptions caught; false after replying that it threw.
bool run_plugin(const WorkerState& state, const gsc_call& call, gsc_result& result, int32_t& code) {
  try {
    coverage_reset();
    code = state.run(&call, &result);
    coverage_publish();
  } catch (const std::exception& e) {
    fail(Ending::kFailedRestart,
         std::string("plugin threw a C++ exception out of run(): ") + e.what());
    return false;
  } catch (...) {
    fail(Ending::kFailedRestart,
         "plugin threw a C++ exception (not a std::exception) out of run()");
    return false;
  }
  return true;
}

// Kills the children run() left behind (not init()'s); false after replying about them.
bool no_children_left(const WorkerState& state) {
  std::vector<pid_t> left;
  for (pid_t p : live_children())
    if (std::find(state.allowed_children.begin(), state.allowed_children.end(), p) ==
        state.allowed_children.end())
      left.push_back(p);
  if (left.empty()) return true;
  // By pid too: a child that left the process group with setsid() is still our child.
  for (pid_t p : left) ::kill(p, SIGKILL);
  std::string pids;
  for (pid_t p : left) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
  fail(Ending::kFailedRestart, "plugin left " + std::to_string(left.size()) +
                                   " child process(es) running after run() returned (pid " + pids +
                                   "); the worker's process group was killed");
  return false;
}

// The call on mapped inputs.
// The output's poison byte for these inputs (a scan of all of params).
uint8_t poison_for(const unsigned char* base, uint64_t in_bytes) {
  if (in_bytes < sizeof(WireCall)) return output_poison(0, GSC_STRING, nullptr, 0);
  WireCall wc;
  std::memcpy(&wc, base, sizeof wc);
  const WireTensor& params = wc.inputs[0];
  const bool inside = params.present && params.data_offset <= in_bytes &&
                      params.data_bytes <= in_bytes - params.data_offset;
  return output_poison(wc.op, params.dtype, inside ? base + params.data_offset : nullptr,
                       inside ? params.data_bytes : 0);
}

// Inputs laid out once for many calls (CallFrame::input_id != 0) stay mapped, with their poison,
// for the next call with the same id: gscheck bench times the calls, not the page faults of
// mapping a table again nor the scan for the poison. The 8 most recent are kept.
struct KeptInput {
  uint64_t id;
  void* base;
  uint64_t bytes;
  uint8_t poison;
};
std::vector<KeptInput>& kept_inputs() {
  static std::vector<KeptInput> kept;
  return kept;
}

void serve_mapped(WorkerState& state, const unsigned char* base, uint64_t in_bytes,
                  const CallFrame& frame, uint8_t poison) {
  WireCall wc;
  std::memcpy(&wc, base, sizeof wc);
  InputViews views(state.cuda);
  if (!read_inputs(state, base, in_bytes, wc, views)) return;
  Output out(state);
  out.keep_mapping = frame.input_id != 0;
  out.max_bytes = wc.max_bytes;
  out.poison = poison;
  gsc_call call{};
  call.op = wc.op;
  call.semantics = wc.semantics;
  call.params = views.ptrs[0];
  call.indices = views.ptrs[1];
  call.updates = views.ptrs[2];
  call.tensor = views.ptrs[3];
  call.shape = views.ptrs[4];
  call.axis = views.ptrs[5];
  call.batch_dims = wc.batch_dims;
  const std::string policy(reinterpret_cast<const char*>(base + wc.policy_offset),
                           wc.policy_size);  // inside: check_call
  call.bad_indices_policy = policy.c_str();
  call.alloc_output = &alloc_output;
  call.alloc_ctx = &out;
  call.max_bytes = wc.max_bytes;
  call.deadline_ns = frame.deadline_ns;
  call.set_string = &set_string;
  gsc_result result{};
  int32_t code = GSC_INTERNAL;
  if (!run_plugin(state, call, result, code)) return;
  result.message[sizeof result.message - 1] = '\0';
  std::string message(result.message);
  uint64_t strings_offset = 0, strings_bytes = 0;
  if (code == GSC_OK && !out.called)
    return fail(Ending::kFailed, "plugin returned OK without allocating its output");
  if (code == GSC_OK && !out.allocated)
    return fail(Ending::kFailed, "plugin returned OK although its output allocation was refused");
  if (out.allocated) {
    const OutputFault bad = finish_output(out, code, strings_offset, strings_bytes);
    if (bad.kind != OutputFault::Kind::kNone)
      return fail(bad.kind == OutputFault::Kind::kWroteOutside ? Ending::kCrashed : Ending::kFailed,
                  bad.why);
  }
  if (!no_children_left(state)) return;
  reply(Ending::kReturned, code, &out, strings_offset, strings_bytes, message);
}

}  // namespace

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
      const char state = process_state(pid);
      if (state != 'Z' && state != '?') out.push_back(static_cast<pid_t>(pid));
    }
    std::fclose(f);
  }
  ::closedir(d);
  return out;
}

void serve_call(WorkerState& state, const CallFrame& frame) {
  const uint64_t in_bytes = frame.in_bytes;
  if (frame.input_id) {
    auto& kept = kept_inputs();
    auto it = std::find_if(kept.begin(), kept.end(),
                           [&](const KeptInput& k) { return k.id == frame.input_id; });
    if (it == kept.end() || it->bytes != in_bytes) {
      void* in = ::mmap(nullptr, in_bytes, PROT_READ, MAP_SHARED, kInMemFd, 0);
      if (in == MAP_FAILED || in_bytes < sizeof(WireCall)) {
        fail(Ending::kFailedRestart, "worker cannot map the call's inputs");
        return;
      }
      if (kept.size() >= 8) {
        ::munmap(kept.front().base, kept.front().bytes);
        kept.erase(kept.begin());
      }
      const auto* base = static_cast<const unsigned char*>(in);
      kept.push_back({frame.input_id, in, in_bytes, poison_for(base, in_bytes)});
      it = kept.end() - 1;
    }
    const auto lo = reinterpret_cast<uintptr_t>(it->base);
    set_range(Guarded::kInputs, lo, lo + in_bytes, "its read-only inputs");
    serve_mapped(state, static_cast<const unsigned char*>(it->base), in_bytes, frame, it->poison);
    return;
  }
  void* in = ::mmap(nullptr, in_bytes, PROT_READ, MAP_SHARED, kInMemFd, 0);
  if (in == MAP_FAILED || in_bytes < sizeof(WireCall)) {
    fail(Ending::kFailedRestart, "worker cannot map the call's inputs");
    return;
  }
  struct Unmap {
    void* p;
    uint64_t n;
    ~Unmap() { ::munmap(p, n); }
  } unmap{in, in_bytes};
  const auto lo = reinterpret_cast<uintptr_t>(in);
  set_range(Guarded::kInputs, lo, lo + in_bytes, "its read-only inputs");
  const auto* base = static_cast<const unsigned char*>(in);
  serve_mapped(state, base, in_bytes, frame, poison_for(base, in_bytes));
}

void serve_call_forked(WorkerState& state, const CallFrame& frame) {
  auto* replied = static_cast<volatile int*>(
      ::mmap(nullptr, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (replied == MAP_FAILED) {
    fail(Ending::kFailed, "worker cannot map its flag page");
    return;
  }
  *replied = 0;
  pid_t pid = -1;
  for (int attempt = 0; attempt < 5 && pid < 0; ++attempt) {
    pid = ::fork();
    if (pid < 0) ::usleep(10000u << attempt);
  }
  if (pid < 0) {
    fail(Ending::kFailed, std::string("worker could not fork the call: ") + std::strerror(errno));
  } else if (pid == 0) {
    // Grandchildren orphaned by a double fork come back to this process, so the call's check
    // for leftover children sees them; and the call cannot signal the worker serving the next.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (state.seccomp) deny_signals_to_parent(state.gscheck);
    serve_call(state, frame);
    if (lost_pipes()) ::_exit(kExitLostPipes);  // its reply never reached gscheck
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
      } else if (WEXITSTATUS(st) == kExitLostPipes) {
        why =
            "plugin closed the worker's descriptors to gscheck (its command socket or result "
            "pipe) during the call";
      } else {
        why = "plugin's call process exited with status " + std::to_string(WEXITSTATUS(st)) +
              " during the call (exit() inside run()?)";
      }
      fail(Ending::kCrashed, why);
    }
  }
  ::munmap(const_cast<int*>(replied), sizeof(int));
}

}  // namespace gscheck::worker
