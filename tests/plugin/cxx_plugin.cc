// ABI v2 plugins in C++ (mode chosen with GSC_TEST_<MODE>): a thread pool started in init(), a
// C++ exception escaping run(), string outputs whose memory is gone when run() returns, a string
// of claimed size 2^40, an init() that fails. Each is a tf.gather of a vector (float32, or
// string for the string modes) with int32 indices under tf-gpu; params[0] == 13 (or "13")
// triggers the misbehaviour.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "gscheck/plugin.h"

namespace {

#if defined(GSC_TEST_THREAD_POOL)
// A fixed pool, as TensorFlow's Eigen pool or OpenMP keep one: created once in init().
class Pool {
 public:
  explicit Pool(int n) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs f(0..n-1) on the pool and waits.
  void parallel_for(int n, const std::function<void(int)>& f) {
    std::unique_lock l(mu_);
    job_ = &f;
    next_ = 0;
    count_ = n;
    done_ = 0;
    ++generation_;
    cv_.notify_all();
    finished_.wait(l, [&] { return done_ == count_; });
    job_ = nullptr;
  }

 private:
  void loop() {
    uint64_t seen = 0;
    std::unique_lock l(mu_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || (generation_ != seen && next_ < count_); });
      if (stop_) return;
      while (next_ < count_) {
        const int i = next_++;
        const auto* f = job_;
        l.unlock();
        (*f)(i);
        l.lock();
        if (++done_ == count_) finished_.notify_all();
      }
      seen = generation_;
    }
  }
  std::mutex mu_;
  std::condition_variable cv_, finished_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  int next_ = 0, count_ = 0, done_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};
Pool* g_pool = nullptr;
int g_inits = 0;

int32_t init(gsc_result*) {
  ++g_inits;
  g_pool = new Pool(4);
  return GSC_OK;
}
void finalize() {
  delete g_pool;
  g_pool = nullptr;
  if (const char* marker = std::getenv("GSC_TEST_FINALIZE_MARKER")) {
    if (FILE* f = std::fopen(marker, "a")) {
      std::fprintf(f, "finalized after %d init\n", g_inits);
      std::fclose(f);
    }
  }
}
#elif defined(GSC_TEST_INIT_FAIL)
int32_t init(gsc_result* r) {
  std::snprintf(r->message, sizeof r->message, "no license for this machine");
  return GSC_INTERNAL;
}
#endif

#if defined(GSC_TEST_STRINGS) || defined(GSC_TEST_STRINGS_UNMAPPED) || \
    defined(GSC_TEST_STRING_HUGE)
constexpr int32_t kElement = GSC_STRING;
#else
constexpr int32_t kElement = GSC_FLOAT32;
#endif

int32_t run(const gsc_call* call, gsc_result* result) {
  const gsc_tensor* params = call->params;
  const gsc_tensor* indices = call->indices;
  if (call->op != GSC_GATHER || params->rank != 1 || indices->rank != 1 || call->batch_dims != 0) {
    std::snprintf(result->message, sizeof result->message, "only a vector gather");
    return GSC_UNIMPLEMENTED;
  }
  const auto* idx = static_cast<const int32_t*>(indices->data);
  const int64_t n = indices->dims[0];
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < 0 || idx[i] >= params->dims[0]) {
      std::snprintf(result->message, sizeof result->message, "bad index");
      return GSC_UNIMPLEMENTED;
    }
  void* out = call->alloc_output(call->alloc_ctx, kElement, 1, &indices->dims[0]);
  if (!out) return GSC_RESOURCE_EXHAUSTED;
  if constexpr (kElement == GSC_STRING) {
    const auto* in = static_cast<const gsc_string*>(params->data);
    const bool trigger = params->dims[0] > 0 && std::string(in[0].data, in[0].size) == "13";
    for (int64_t i = 0; i < n; ++i) {
      // A temporary: gone when this iteration ends, long before run() returns.
      std::string value(in[idx[i]].data, static_cast<std::size_t>(in[idx[i]].size));
#if defined(GSC_TEST_STRING_HUGE)
      if (trigger) {
        // Claims 2^40 bytes: the budget refuses it instead of a std::bad_alloc in gscheck.
        const int32_t code = call->set_string(call->alloc_ctx, i, value.data(), int64_t{1} << 40);
        std::snprintf(result->message, sizeof result->message, "set_string gave %d", code);
        return code == GSC_RESOURCE_EXHAUSTED ? GSC_RESOURCE_EXHAUSTED : GSC_INTERNAL;
      }
#elif defined(GSC_TEST_STRINGS_UNMAPPED)
      if (trigger) {
        // Assigns the element itself, then makes the memory unreadable before returning (an
        // ABI breach; PROT_NONE rather than munmap, so nothing else can be mapped there).
        const long page = ::sysconf(_SC_PAGESIZE);
        void* m = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        std::memcpy(m, value.data(), std::min<std::size_t>(value.size(), page));
        static_cast<gsc_string*>(out)[i] = gsc_string{static_cast<const char*>(m), 1};
        ::mprotect(m, page, PROT_NONE);
        continue;
      }
#endif
      (void)trigger;
      if (call->set_string(call->alloc_ctx, i, value.data(), static_cast<int64_t>(value.size())) !=
          GSC_OK)
        return GSC_INTERNAL;
    }
    return GSC_OK;
  } else {
    const auto* in = static_cast<const float*>(params->data);
    auto* o = static_cast<float*>(out);
#if defined(GSC_TEST_THROW)
    if (params->dims[0] > 0 && in[0] == 13.0f) {
      std::fprintf(stderr, "hostile: about to throw\n");
      throw std::bad_alloc();
    }
#endif
#if defined(GSC_TEST_THREAD_POOL)
    // Every element on a pool thread.
    g_pool->parallel_for(static_cast<int>(n), [&](int i) { o[i] = in[idx[i]]; });
#else
    for (int64_t i = 0; i < n; ++i) o[i] = in[idx[i]];
#endif
    return GSC_OK;
  }
}

}  // namespace

extern "C" const gsc_plugin_v2* gscheck_plugin_v2(void) {
  static const gsc_plugin_v2 plugin = [] {
    gsc_plugin_v2 p{};
    p.abi_version = GSCHECK_PLUGIN_ABI_V2;
    p.name = "cxx-test";
    p.ops = 1u << GSC_GATHER;
    p.dtypes = 1ull << kElement;
    p.index_dtypes = 1u << GSC_INT32;
    p.semantics = 1u << GSC_TF_GPU;
    p.deterministic = 1;
    p.run = run;
#if defined(GSC_TEST_THREAD_POOL)
    p.init = init;
    p.finalize = finalize;
#elif defined(GSC_TEST_INIT_FAIL)
    p.init = init;
#endif
    return p;
  }();
  return &plugin;
}
