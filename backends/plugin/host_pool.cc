// The gscheck side of vendor plugins: a pool of gscheck-worker processes, one per job, each
// loading the plugin once. The plugin never runs in this process. Calls go over a pipe as small
// frames; tensors go through memfds (wire.h). The process itself is host_process.h's, the
// marshalling host_codec.h's.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "backends/plugin/host_codec.h"
#include "backends/plugin/host_process.h"
#include "backends/plugin/host_sandbox.h"
#include "backends/plugin/host_text.h"
#include "backends/plugin_backend.h"
#include "gscheck/plugin.h"

namespace gscheck {
namespace {

namespace w = worker;
using plugin::after;
using plugin::Clock;
using plugin::Frame;
using plugin::sanitize;
using plugin::span;
using plugin::Wait;

// The C enums mirror the C++ ones value for value; a reorder on either side must fail to build.
static_assert(GSC_BOOL == static_cast<int>(DType::kBool));
static_assert(GSC_FLOAT16 == static_cast<int>(DType::kFloat16));
static_assert(GSC_STRING == static_cast<int>(DType::kString));
static_assert(GSC_GATHER == static_cast<int>(Op::kGather));
static_assert(GSC_TENSOR_SCATTER_MAX == static_cast<int>(Op::kTensorScatterMax));
static_assert(GSC_TF_CPU == static_cast<int>(Semantics::kTfCpu));
static_assert(GSC_TF_GPU == static_cast<int>(Semantics::kTfGpu));
static_assert(GSC_XLA == static_cast<int>(Semantics::kXla));
static_assert(GSC_JAX == static_cast<int>(Semantics::kJax));
static_assert(w::kMaxRank == kMaxRank);

Error internal(std::string msg) { return Error{ErrorClass::kInternal, std::move(msg)}; }

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g s", s);
  return b;
}

struct Contract {
  w::WireContract c{};
  std::string name;
};

// A case's inputs laid out in a sealed "in" memfd once, for many calls of it (prepare()); its
// indices and updates are written again before each call, by gscheck alone (`writable`).
struct LaidOutCall {
  int fd = -1;
  uint64_t bytes = 0;
  plugin::WritableInputs writable;
  uint64_t id = next_id();  // CallFrame::input_id
  static uint64_t next_id() {
    static std::atomic<uint64_t> last{0};
    return ++last;
  }
  LaidOutCall() = default;
  LaidOutCall(const LaidOutCall&) = delete;
  LaidOutCall& operator=(const LaidOutCall&) = delete;
  ~LaidOutCall() {
    if (fd >= 0) ::close(fd);
  }
};

// One worker of the pool: its process, started, and calls through it.
class Worker {
 public:
  // Starts the worker and waits until the plugin is loaded and initialised.
  Expected<Contract> start(const std::string& plugin, const PluginOptions& opt) {
    opt_ = opt;
    if (auto s = proc_.spawn(plugin, opt); !s.empty()) return internal(s);
    Contract contract;
    bool hello = false;
    const auto deadline = after(opt.load_timeout_seconds);
    for (;;) {
      Frame f;
      const Wait got = proc_.wait_frame(deadline, f);
      if (got == Wait::kTimeout) {
        proc_.kill_group();
        return internal("plugin " + plugin + " did not finish loading within " +
                        seconds(opt.load_timeout_seconds) + " (its constructor, " +
                        (hello ? "init()" : "gscheck_plugin_v2()/gscheck_plugin_v1()") +
                        " did not return); the worker was killed" + proc_.log().tail());
      }
      if (got != Wait::kFrame) {
        const std::string why = proc_.death_reason(got);
        return internal("plugin " + plugin + " failed while loading: " + why + proc_.log().tail());
      }
      if (f.type == w::Msg::kHello && f.payload.size() >= sizeof(w::WireContract)) {
        std::memcpy(&contract.c, f.payload.data(), sizeof contract.c);
        contract.name = sanitize(f.payload.substr(sizeof(w::WireContract)));
        hello = true;
      } else if (f.type == w::Msg::kLoadError) {
        proc_.stop();
        return parse_error(sanitize(f.payload) + proc_.log().tail());
      } else if (f.type == w::Msg::kReady && hello) {
        // Loaded and initialised: from here the worker may grow by about what its calls need
        // (the output, inputs it copies, scratch), as RLIMIT_AS allows (worker_main.cc).
        const auto budget = static_cast<uint64_t>(std::max<int64_t>(opt.max_output_bytes, 0));
        proc_.cap_memory(budget > (uint64_t{1} << 58) ? budget : 4 * budget + (uint64_t{1} << 30));
        return contract;
      } else {
        proc_.kill_group();
        return internal("plugin worker sent an unexpected message while loading");
      }
    }
  }

  bool alive() const { return proc_.alive(); }
  /// The last call failed on a frame left over from an earlier call (not its own fault).
  bool stale() const { return stale_; }
  void stop() { proc_.stop(); }

  // One call; a failure that leaves the worker suspect kills it (alive() turns false). `sealed`:
  // the case's inputs laid out and sealed already (prepare()), else they are written here.
  Outcome call(const Case& c, const LaidOutCall* sealed = nullptr, double* took = nullptr) {
    const uint32_t id = ++calls_;
    stale_ = false;
    const double timeout = opt_.timeout_seconds > 0 ? opt_.timeout_seconds : 0;
    // Default deadline: 10 s plus 1 s per 64 MiB of inputs; the output may add its share once,
    // up to the byte budget's, so no frame can stretch a call past 10 s + (inputs + budget)'s.
    const double seconds_allowed =
        timeout > 0 ? timeout : 10.0 + plugin::input_bytes(c) / double(w::kBytesPerSecond);
    auto deadline = after(seconds_allowed);
    double allowed = seconds_allowed;
    bool extended = false;
    int in_fd = sealed ? sealed->fd : -1;
    uint64_t in_bytes = sealed ? sealed->bytes : 0;
    const std::string written =
        sealed ? "" : plugin::write_inputs(c, opt_.max_output_bytes, in_fd, in_bytes);
    const w::CallFrame msg{
        in_bytes,
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count(),
        sealed ? sealed->id : 0};
    const int64_t tasks_before = opt_.no_work_past_call ? proc_.tasks() : -1;
    // A runtime makes its thread pools at its first call of a kind (XLA, oneDNN, ONNX Runtime,
    // LiteRT, PyTorch all do): the first call of each prepared input on this worker is its
    // warm-up, untimed (gscheck bench checks every set before timing), and may leave threads.
    // Later calls may not leave more than the warm-ups did.
    const bool warm_up = sealed && warmed_.insert(sealed->id).second;
    const auto sent_at = Clock::now();
    const bool sent = written.empty() && proc_.send(w::Msg::kCall, id, &msg, sizeof msg, in_fd);
    if (!sealed && in_fd >= 0) ::close(in_fd);  // the worker holds its own reference
    if (!written.empty()) {
      proc_.kill_group();
      return internal(written);
    }
    if (!sent) {
      stale_ = true;  // it died between calls: not this case's doing, which runs again
      return internal("plugin worker is gone before the call: " + proc_.death_reason(Wait::kEof) +
                      proc_.log().tail());
    }
    std::string fault;
    for (;;) {
      Frame f;
      const Wait got = proc_.wait_frame(deadline, f);
      if (got == Wait::kTimeout) {
        proc_.kill_group();
        return internal("plugin timed out after " + seconds(allowed) +
                        (timeout > 0 ? " (--timeout)" : " (the default for this case's bytes)") +
                        " and its worker's process group was killed" + proc_.log().tail());
      }
      if (got != Wait::kFrame) {
        const std::string why = proc_.death_reason(got);
        return internal(why + (fault.empty() ? "" : ": " + fault) + proc_.log().tail());
      }
      if (f.call_id != id) {
        // Only the plugin writes frames out of turn (the worker answers each call once, in
        // order): this call's answer can no longer be told from a forgery. A frame of an
        // earlier call means the fault is that call's: this one is retried on a fresh worker.
        stale_ = f.call_id < id;
        proc_.kill_group();
        return internal("plugin worker sent a frame for call " + std::to_string(f.call_id) +
                        " during call " + std::to_string(id) +
                        " (desynchronised: the plugin wrote into gscheck's result pipe?); its "
                        "process group was killed" +
                        proc_.log().tail());
      }
      if (f.type == w::Msg::kAllocated && f.payload.size() == 8) {
        uint64_t bytes = 0;
        std::memcpy(&bytes, f.payload.data(), 8);
        if (timeout <= 0 && !extended) {
          extended = true;
          const auto budget = static_cast<uint64_t>(std::max<int64_t>(opt_.max_output_bytes, 0));
          const double more = std::min(bytes, budget) / double(w::kBytesPerSecond);
          allowed += more;
          deadline += span(more);
        }
      } else if (f.type == w::Msg::kFault) {
        fault = sanitize(f.payload);
      } else if (f.type == w::Msg::kResult) {
        if (took) *took = std::chrono::duration<double>(Clock::now() - sent_at).count();
        plugin::Decoded d = plugin::read_result(f.payload, fault, proc_.out_mem(),
                                                opt_.max_output_bytes, proc_.log());
        if (d.restart) {
          proc_.kill_group();
        } else if (!sealed) {
          // A prepared call (gscheck bench) keeps the pages for the next one: a timed call
          // should not pay for faulting in zeroed pages that the run before gave back.
          plugin::release_pages(proc_.out_mem());
        }
        if (tasks_before >= 0 && alive()) {
          // Work the call started and left running would finish off gscheck's clock.
          const int64_t after = proc_.tasks();
          if (warm_up) {
            high_water_ = std::max(high_water_, after);
          } else if (after > std::max(tasks_before, high_water_)) {
            proc_.kill_group();
            return internal(
                "work left running past the call: the worker ran " + std::to_string(tasks_before) +
                " processes and threads when the call began and " + std::to_string(after) +
                " when it answered (its warm-up calls left " + std::to_string(high_water_) +
                "); its process group was killed" + proc_.log().tail());
          }
        }
        return std::move(d.outcome);
      } else {
        proc_.kill_group();
        return internal("plugin worker sent an unexpected message during the call" +
                        proc_.log().tail());
      }
    }
  }

 private:
  PluginOptions opt_;
  plugin::WorkerProcess proc_;
  uint32_t calls_ = 0;
  bool stale_ = false;
  std::unordered_set<uint64_t> warmed_;  // prepared inputs this worker has run once
  int64_t high_water_ = 0;               // the most tasks a warm-up call left
};

template <class E>
std::vector<E> from_mask(uint64_t mask, int count) {
  std::vector<E> out;
  for (int i = 0; i < count; ++i)
    if (mask & (uint64_t{1} << i)) out.push_back(static_cast<E>(i));
  return out;
}

class PluginBackend final : public Backend {
 public:
  PluginBackend(std::string path, Capabilities caps, PluginOptions opt,
                std::unique_ptr<Worker> first, const unsigned char* coverage)
      : path_(std::move(path)), caps_(std::move(caps)), opt_(opt), coverage_(coverage) {
    idle_.push_back(std::move(first));
    live_ = 1;
  }
  ~PluginBackend() override {
    stop_workers();
    if (coverage_) ::munmap(const_cast<unsigned char*>(coverage_), w::kCoverageBytes);
    if (opt_.coverage_memfd >= 0) ::close(opt_.coverage_memfd);
  }
  std::span<const uint8_t> coverage() const override {
    if (!coverage_) return {};
    w::CoverageHeader h{};
    std::memcpy(&h, coverage_, sizeof h);
    if (h.magic != w::kMagic || h.registered == 0) return {};
    return {coverage_ + sizeof h, std::min<uint64_t>(h.written, w::kCoverageCounters)};
  }
  std::span<const CoverageCompare> coverage_compares() const override {
    static_assert(sizeof(CoverageCompare) == 32 && alignof(CoverageCompare) <= 8 &&
                  w::kCoverageComparesAt % 8 == 0);
    if (!coverage_) return {};
    w::CoverageHeader h{};
    std::memcpy(&h, coverage_, sizeof h);
    if (h.magic != w::kMagic) return {};
    return {reinterpret_cast<const CoverageCompare*>(coverage_ + w::kCoverageComparesAt),
            std::min<uint64_t>(h.compares, w::kCoverageCompares)};
  }

 private:
  void stop_workers() {
    // Stop the workers in parallel: each may take a moment in finalize().
    std::vector<std::thread> stops;
    for (auto& wk : idle_) {
      try {
        stops.emplace_back([&wk] { wk->stop(); });
      } catch (const std::system_error&) {
        wk->stop();  // no thread to spare (a pids or thread limit): this one in turn
      }
    }
    for (auto& t : stops) t.join();
  }

 public:
  const Capabilities& capabilities() const override { return caps_; }

  Outcome run(const Case& c) override {
    if (Status admitted = admit(caps_, c); !admitted.ok()) return admitted.error();
    return run_on_worker(c, nullptr, nullptr);
  }

  std::function<TimedOutcome()> prepare(const Case& c) override {
    const auto answer = [](Outcome o) { return [o = std::move(o)] { return TimedOutcome{o, 0}; }; };
    if (Status admitted = admit(caps_, c); !admitted.ok()) return answer(admitted.error());
    auto in = std::make_shared<LaidOutCall>();
    if (std::string e =
            plugin::write_inputs(c, opt_.max_output_bytes, in->fd, in->bytes, &in->writable);
        !e.empty())
      return answer(internal(e));
    return [this, &c, in] {
      // The indices and updates of c as they are now (gscheck bench draws them afresh for each
      // timed call), outside the clock.
      if (std::string e = plugin::rewrite_inputs(c, in->writable); !e.empty())
        return TimedOutcome{internal(e), 0};
      double took = 0;
      Outcome o = run_on_worker(c, in.get(), &took);
      return TimedOutcome{std::move(o), took};
    };
  }

 private:
  // `took`: where to put the time from sending the call to its result frame.
  Outcome run_on_worker(const Case& c, const LaidOutCall* in, double* took) {
    std::unique_ptr<Worker> wk;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !idle_.empty() || live_ < opt_.jobs; });
      if (!idle_.empty()) {
        wk = std::move(idle_.back());
        idle_.pop_back();
      } else {
        ++live_;
      }
    }
    for (int attempt = 0;; ++attempt) {
      if (!wk) {
        // A fresh worker, after a failed call or for one more job.
        wk = std::make_unique<Worker>();
        auto started = wk->start(path_, opt_);
        if (!started.ok()) {
          give_back(nullptr);
          return internal("cannot start a fresh plugin worker: " + started.error().message);
        }
      }
      Outcome o = wk->call(c, in, took);
      if (wk->stale() && attempt == 0) {
        wk.reset();  // its group is dead; the case runs again on a fresh worker
        continue;
      }
      if (!o.ok() && !wk->alive()) {
        Error e = o.error();
        e.lost_worker = true;
        e.unsafe = true;  // a crash, a hang, the memory cap, a write outside its output
        o = std::move(e);
      }
      give_back(wk->alive() ? std::move(wk) : nullptr);
      return o;
    }
  }

  void give_back(std::unique_ptr<Worker> wk) {
    {
      std::lock_guard lock(mu_);
      if (wk) {
        idle_.push_back(std::move(wk));
      } else {
        --live_;
      }
    }
    cv_.notify_one();
  }

  std::string path_;
  Capabilities caps_;
  PluginOptions opt_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Worker>> idle_;
  int live_ = 0;
  const unsigned char* coverage_ = nullptr;  // the counters' memfd, mapped read-only
};

// The memfd the workers publish the plugin's coverage counters in (wire.h), and gscheck's
// read-only mapping of it; {-1, nullptr} when it cannot be made.
std::pair<int, const unsigned char*> coverage_memfd() {
  const int fd = ::memfd_create("gscheck-coverage", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return {-1, nullptr};
  if (::ftruncate(fd, static_cast<off_t>(w::kCoverageBytes)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    ::close(fd);
    return {-1, nullptr};
  }
  void* p = ::mmap(nullptr, w::kCoverageBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    return {-1, nullptr};
  }
  return {fd, static_cast<const unsigned char*>(p)};
}

// The declared contract as Capabilities; errors name the plugin.
Expected<Capabilities> capabilities_of(const std::string& path, const w::WireContract& p) {
  Capabilities caps;
  caps.name = "plugin:" + path;
  caps.ops = from_mask<Op>(p.ops, static_cast<int>(std::size(kAllOps)));
  caps.dtypes = from_mask<DType>(p.dtypes, static_cast<int>(std::size(kAllDTypes)));
  caps.index_dtypes = from_mask<DType>(p.index_dtypes, static_cast<int>(std::size(kAllDTypes)));
  constexpr int kSemanticsCount = static_cast<int>(std::size(kAllSemantics));
  if (p.semantics >> kSemanticsCount)
    return parse_error("plugin " + path + ": its contract claims semantics mask " +
                       std::to_string(p.semantics) + "; only bits 0-" +
                       std::to_string(kSemanticsCount - 1) + " exist (" + semantics_names() + ")");
  caps.semantics = from_mask<Semantics>(p.semantics, kSemanticsCount);
  caps.deterministic = p.deterministic != 0;
  caps.tf_messages = p.tf_messages != 0;
  caps.accumulates_half_in_float = p.half_in_float != 0;
  if (p.flags & GSC_DEVICE_POINTERS)  // no string tensors on the device
    std::erase(caps.dtypes, DType::kString);
  // The optional API-level hook (gscheck_plugin_api, read by the worker): kernel-level plugins
  // say so; the rest implement Python's API.
  if (p.api != GSC_API_PYTHON && p.api != GSC_API_KERNEL)
    return parse_error("plugin " + path + ": gscheck_plugin_api() returned " +
                       std::to_string(p.api) + " (expected GSC_API_PYTHON or GSC_API_KERNEL)");
  caps.apis = {p.api == GSC_API_KERNEL ? Api::kKernel : Api::kPython};
  caps.containment = plugin::containment();
  std::string no_cgroup;
  const std::string cgroup = plugin::WorkerCgroup::offered(no_cgroup);
  caps.containment += ", " + (cgroup.empty() ? no_cgroup : cgroup);
  caps.containment += (p.sandbox & w::kSandboxSeccomp) ? ", seccomp" : ", no seccomp filter";
  return caps;
}

}  // namespace

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

Expected<std::unique_ptr<Backend>> make_plugin_backend(const std::string& path,
                                                       const PluginOptions& options) {
  if (options.jobs < 1) return parse_error("plugin: --jobs must be at least 1");
  // A bare file name would make dlopen search the library path; plugins are named by path.
  std::string where = path.find('/') == std::string::npos ? "./" + path : path;
  if (char* abs = ::realpath(where.c_str(), nullptr)) {
    where = abs;
    std::free(abs);
  } else {
    return parse_error("cannot load plugin " + path + ": " + std::strerror(errno));
  }
  PluginOptions opt = options;
  const unsigned char* coverage = nullptr;
  if (opt.coverage) {
    std::tie(opt.coverage_memfd, coverage) = coverage_memfd();
    if (!coverage)
      return internal(std::string("cannot make the coverage memory: ") + std::strerror(errno));
  }
  const auto release_coverage = [&] {
    if (coverage) ::munmap(const_cast<unsigned char*>(coverage), w::kCoverageBytes);
    if (opt.coverage_memfd >= 0) ::close(opt.coverage_memfd);
  };
  auto first = std::make_unique<Worker>();
  auto contract = first->start(where, opt);
  if (!contract.ok()) {
    release_coverage();
    const std::string& m = contract.error().message;
    return parse_error(m.starts_with("cannot load plugin") || m.starts_with("plugin ")
                           ? m
                           : "cannot load plugin " + path + ": " + m);
  }
  auto caps = capabilities_of(path, contract->c);
  if (!caps.ok()) {
    release_coverage();
    return caps.error();
  }
  if (!options.name.empty()) caps->name = options.name;
  caps->replay_flags = options.replay_flags;
  if (caps->containment.starts_with("process group only"))  // only with --unsafe-no-sandbox
    caps->containment +=
        "; --unsafe-no-sandbox: the worker sees and may write what gscheck may, keeps its "
        "capabilities and can reach processes outside its group";
  for (std::size_t i = 0; i < options.writable.size(); ++i)
    caps->containment +=
        (i ? ", " : "; writable by the worker (--worker-writable): ") + options.writable[i];
  return std::unique_ptr<Backend>(
      new PluginBackend(where, std::move(*caps), opt, std::move(first), coverage));
}

}  // namespace gscheck
