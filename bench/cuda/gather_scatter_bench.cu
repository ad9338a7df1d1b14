// GPU benchmarks of the gather and scatter kernels (DESIGN.md matrix): slices of 4 B, 64 B,
// 512 B and 4 KB; indices uniform, sorted, permutation, Zipf, one hot key and 1% out of range;
// an L2-sized table and a multi-GB table; one table over 2^31 elements (64-bit offsets). Every
// result reports GB/s of bytes moved and its ratio to a device-to-device copy measured in the
// same run. Data stays on the device; only kernels are timed (CUDA events).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/device_executor.cuh"
#include "cuda/gather.cuh"
#include "cuda/scatter_nd.cuh"

namespace gscheck::cuda {
namespace {

enum class Dist { kUniform, kSorted, kPermutation, kZipf, kHotKey, kOob1 };
const char* dist_name(Dist d) {
  switch (d) {
    case Dist::kUniform:
      return "uniform";
    case Dist::kSorted:
      return "sorted";
    case Dist::kPermutation:
      return "permutation";
    case Dist::kZipf:
      return "zipf";
    case Dist::kHotKey:
      return "hotkey";
    case Dist::kOob1:
      return "oob1pct";
  }
  return "?";
}

/// Output (or updates) bytes per benchmark: past the L2, small enough that the whole matrix
/// (index generation on the host included) fits the 150 s gpu_check.sh gives it.
constexpr uint64_t kStreamBytes = uint64_t{64} << 20;
/// Table sizes: one that fits the 50-60 MB L2 of H100/H200, one of several GB.
constexpr uint64_t kL2TableBytes = uint64_t{16} << 20;
constexpr uint64_t kBigTableBytes = uint64_t{4} << 30;

bool check(cudaError_t e, benchmark::State& state, const char* what) {
  if (e == cudaSuccess) return true;
  state.SkipWithError((std::string(what) + ": " + cudaGetErrorString(e)).c_str());
  return false;
}

/// Device buffers reused across benchmarks (allocation is not what we measure).
struct DeviceArena {
  std::map<std::string, std::pair<void*, uint64_t>> bufs;
  void* get(const std::string& key, uint64_t bytes) {
    auto it = bufs.find(key);
    if (it != bufs.end() && it->second.second >= bytes) return it->second.first;
    if (it != bufs.end()) {
      cudaFree(it->second.first);
      bufs.erase(it);
    }
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
    bufs[key] = {p, bytes};
    return p;
  }
};
DeviceArena& arena() {
  static DeviceArena a;
  return a;
}

std::vector<int32_t> make_indices(Dist d, uint64_t n, uint64_t table_rows) {
  std::mt19937_64 rng(42);
  std::vector<int32_t> v(n);
  const auto rows = static_cast<int64_t>(std::min<uint64_t>(table_rows, INT32_MAX));
  std::uniform_int_distribution<int64_t> uni(0, rows - 1);
  switch (d) {
    case Dist::kUniform:
    case Dist::kSorted:
      for (auto& x : v) x = static_cast<int32_t>(uni(rng));
      if (d == Dist::kSorted) std::sort(v.begin(), v.end());
      break;
    case Dist::kPermutation:
      for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(i % rows);
      std::shuffle(v.begin(), v.end(), rng);
      break;
    case Dist::kZipf: {
      // Zipf(s = 1.1) by inverse CDF over the first min(rows, 2^20) ranks, then scattered.
      const int64_t k = std::min<int64_t>(rows, 1 << 20);
      std::vector<double> cdf(k);
      double acc = 0;
      for (int64_t i = 0; i < k; ++i)
        cdf[i] = acc += 1.0 / std::pow(static_cast<double>(i + 1), 1.1);
      std::uniform_real_distribution<double> u(0, acc);
      for (auto& x : v) {
        const int64_t r = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
        x = static_cast<int32_t>((r * 2654435761LL) % rows);
      }
      break;
    }
    case Dist::kHotKey:
      std::fill(v.begin(), v.end(), static_cast<int32_t>(rows / 2));
      break;
    case Dist::kOob1:
      for (auto& x : v) x = static_cast<int32_t>(rng() % 100 == 0 ? rows + 7 : uni(rng));
      break;
  }
  return v;
}

/// GB/s of a device-to-device copy of kStreamBytes, measured once per run: the baseline.
double copy_gbps() {
  static double gbps = [] {
    void* a = arena().get("copy_a", kStreamBytes);
    void* b = arena().get("copy_b", kStreamBytes);
    if (!a || !b) return 0.0;
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    cudaMemcpy(b, a, kStreamBytes, cudaMemcpyDeviceToDevice);  // warm up
    cudaEventRecord(s);
    for (int i = 0; i < 20; ++i) cudaMemcpy(b, a, kStreamBytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms = 0;
    cudaEventElapsedTime(&ms, s, e);
    cudaEventDestroy(s);
    cudaEventDestroy(e);
    return 20 * 2.0 * kStreamBytes / (ms * 1e-3) / 1e9;  // read + write
  }();
  return gbps;
}

void BM_DeviceCopy(benchmark::State& state) {
  const double gbps = copy_gbps();
  if (gbps == 0) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  void* a = arena().get("copy_a", kStreamBytes);
  void* b = arena().get("copy_b", kStreamBytes);
  for (auto _ : state) {
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    cudaEventRecord(s);
    cudaMemcpy(b, a, kStreamBytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms = 0;
    cudaEventElapsedTime(&ms, s, e);
    state.SetIterationTime(ms * 1e-3);
    cudaEventDestroy(s);
    cudaEventDestroy(e);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * kStreamBytes));
  state.counters["vs_copy"] = 1.0;
}

/// Time fn() with CUDA events per iteration; bytes = bytes moved per call.
template <class F>
void time_kernel(benchmark::State& state, uint64_t bytes, F fn) {
  cudaEvent_t s, e;
  if (!check(cudaEventCreate(&s), state, "cudaEventCreate") ||
      !check(cudaEventCreate(&e), state, "cudaEventCreate")) {
    return;
  }
  for (auto _ : state) {
    cudaEventRecord(s);
    const Status st = fn();
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    if (!st.ok()) {
      state.SkipWithError(st.error().message.c_str());
      break;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, s, e);
    state.SetIterationTime(ms * 1e-3);
  }
  cudaEventDestroy(s);
  cudaEventDestroy(e);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(bytes) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["copy_GBps"] = copy_gbps();
}

int sm_count() {
  static int sms = [] {
    int n = 0;
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0);
    return n;
  }();
  return sms;
}

/// Table [table_rows, slice] of float, gather rows by indices: out [n, slice].
template <class Off>
void BM_Gather(benchmark::State& state, uint64_t slice_bytes, Dist dist, uint64_t table_bytes) {
  const uint64_t slice = slice_bytes / 4;
  const uint64_t table_rows = table_bytes / slice_bytes;
  const uint64_t n = kStreamBytes / slice_bytes;
  auto* d_params = static_cast<uint8_t*>(arena().get("params", table_bytes));
  auto* d_out = static_cast<uint8_t*>(arena().get("out", kStreamBytes));
  auto* d_idx = static_cast<int32_t*>(arena().get("indices", n * 4));
  auto* d_bad = static_cast<int64_t*>(arena().get("bad", 16));
  if (!d_params || !d_out || !d_idx || !d_bad) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  if (!check(cudaMemset(d_params, 0x3c, table_bytes), state, "cudaMemset")) return;
  const auto h_idx = make_indices(dist, n, table_rows);
  if (!check(cudaMemcpy(d_idx, h_idx.data(), n * 4, cudaMemcpyHostToDevice), state, "cudaMemcpy")) {
    return;
  }
  DeviceExec ex(sm_count());
  GatherIndexMap<int32_t, Off> map{d_idx, static_cast<Off>(n), Off{1}, static_cast<Off>(table_rows),
                                   d_bad};
  const uint64_t bytes = n * 4 + 2 * kStreamBytes;  // DESIGN.md: indices + 2 * out_bytes
  time_kernel(state, bytes,
              [&] { return launch_gather<Off>(ex, map, d_params, d_out, n, slice, 4); });
  state.counters["vs_copy"] = benchmark::Counter(static_cast<double>(bytes) / 1e9 / copy_gbps(),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

/// tensor_scatter_nd_add of [n, slice] float updates into a [table_rows, slice] table.
void BM_ScatterAdd(benchmark::State& state, uint64_t slice_bytes, Dist dist, uint64_t table_bytes,
                   bool sorted) {
  using Off = uint32_t;
  const uint64_t slice = slice_bytes / 4;
  const uint64_t table_rows = table_bytes / slice_bytes;
  const uint64_t n = kStreamBytes / slice_bytes;
  auto* d_out = static_cast<uint8_t*>(arena().get("params", table_bytes));
  auto* d_upd = static_cast<uint8_t*>(arena().get("out", kStreamBytes));
  auto* d_idx = static_cast<int32_t*>(arena().get("indices", n * 4));
  auto* d_bad = static_cast<int64_t*>(arena().get("bad", 16));
  if (!d_out || !d_upd || !d_idx || !d_bad) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  if (!check(cudaMemset(d_upd, 0, kStreamBytes), state, "cudaMemset")) return;
  const auto h_idx = make_indices(dist, n, table_rows);
  if (!check(cudaMemcpy(d_idx, h_idx.data(), n * 4, cudaMemcpyHostToDevice), state, "cudaMemcpy")) {
    return;
  }
  DeviceExec ex(sm_count());
  auto dest = ex.alloc(n * sizeof(Off));
  auto rows = ex.alloc(n * sizeof(Off));
  if (!dest.ok() || !rows.ok()) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  ScatterPlan p;
  p.rows = static_cast<int64_t>(n);
  p.depth = 1;
  p.dims[0] = static_cast<int64_t>(table_rows);
  p.strides[0] = 1;
  p.slice = static_cast<int64_t>(slice);
  p.out_elements = static_cast<int64_t>(table_rows * slice);
  ScatterDestKernel<int32_t, Off> dk{};
  dk.d_indices = d_idx;
  dk.depth = 1;
  dk.dims[0] = static_cast<Off>(table_rows);
  dk.strides[0] = 1;
  dk.rows = static_cast<Off>(n);
  dk.invalid = static_cast<Off>(table_rows);
  dk.d_dest = reinterpret_cast<Off*>(dest->get());
  dk.d_rows = reinterpret_cast<Off*>(rows->get());
  dk.d_bad = d_bad;
  // DESIGN.md: out_bytes + upd_bytes + indices bytes (+ out_bytes read back by the adds).
  const uint64_t touched = std::min<uint64_t>(table_bytes, kStreamBytes);
  const uint64_t bytes = 2 * touched + kStreamBytes + n * 4;
  time_kernel(state, bytes, [&]() -> Status {
    GSCHECK_RETURN_IF_ERROR(ex.launch(dk, n, ScatterPolicy::kBlockThreads));
    return apply_scatter_rows<float, Off>(ex, p, ScatterKind::kAdd, sorted, d_upd, d_out, *dest,
                                          *rows);
  });
  state.counters["vs_copy"] = benchmark::Counter(static_cast<double>(bytes) / 1e9 / copy_gbps(),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  benchmark::RegisterBenchmark("copy/d2d", BM_DeviceCopy)->UseManualTime()->Iterations(20);
  const Dist dists[] = {Dist::kUniform, Dist::kSorted, Dist::kPermutation,
                        Dist::kZipf,    Dist::kHotKey, Dist::kOob1};
  for (uint64_t slice : {4, 64, 512, 4096}) {
    for (Dist d : dists) {
      for (auto [tname, tbytes] : {std::pair{"l2", kL2TableBytes}, {"big", kBigTableBytes}}) {
        const std::string suffix =
            "/slice" + std::to_string(slice) + "B/" + dist_name(d) + "/" + tname;
        benchmark::RegisterBenchmark(("gather" + suffix).c_str(), BM_Gather<uint32_t>, slice, d,
                                     tbytes)
            ->UseManualTime()
            ->Iterations(10);
        benchmark::RegisterBenchmark(("scatter_add" + suffix).c_str(), BM_ScatterAdd, slice, d,
                                     tbytes, false)
            ->UseManualTime()
            ->Iterations(5);
      }
    }
  }
  // Heavy duplicates: the deterministic (sorted) path against atomics.
  for (Dist d : {Dist::kHotKey, Dist::kZipf}) {
    benchmark::RegisterBenchmark(
        (std::string("scatter_add_sorted/slice4B/") + dist_name(d) + "/l2").c_str(), BM_ScatterAdd,
        uint64_t{4}, d, kL2TableBytes, true)
        ->UseManualTime()
        ->Iterations(5);
  }
  // A table over 2^31 elements: 64-bit offsets (8.6 GB of float).
  benchmark::RegisterBenchmark("gather64/slice64B/uniform/over2pow31", BM_Gather<uint64_t>,
                               uint64_t{64}, Dist::kUniform,
                               (uint64_t{1} << 33) + (uint64_t{1} << 22))
      ->UseManualTime()
      ->Iterations(10);
}

}  // namespace
}  // namespace gscheck::cuda

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "cuda_bench: no usable GPU; nothing to measure\n");
    return 2;
  }
  gscheck::cuda::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
