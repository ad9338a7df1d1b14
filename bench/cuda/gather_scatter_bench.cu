// The GPU benchmark of the cuda kernels, through the same launchers the backend uses (DeviceExec
// with asynchronous launches). Each row: data made on the device (tables of ~4 GB, outputs or
// updates of 512 MiB, far past the 50-60 MB L2), two warm-up launches, then >= 5 back-to-back
// launches with a CUDA event recorded between each (no host synchronisation inside the timed
// window), the median reported. Baselines timed the same way: a device-to-device
// cudaMemcpyAsync and a plain float4 copy kernel. Bytes as in DESIGN.md:
//   gather, gather_nd: indices + 2 x output;  scatter: indices + updates + 2 x touched output
//   (touched = one slice for the hot key, else min(updates, table)).
// The hot-key bound is that minimum byte count at the better measured copy bandwidth.
// Every row has a hard cap: one probe launch is timed first, and a row whose probe exceeds an
// eighth of the cap is reported "over_cap" without further launches (probe + 2 warm-ups + 5
// samples fit the cap); the sample count (5..15) is cut to fit the cap.
// --list-json writes the rows (shapes) without a GPU, for peer_bench.py and the dry run.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuda/device_executor.cuh"
#include "cuda/gather_launch.cuh"
#include "cuda/gather_nd_launch.cuh"
#include "cuda/scatter_nd_launch.cuh"

namespace gscheck::cuda {
namespace {

constexpr const char* kUsage =
    "usage: cuda_bench [--json FILE] [--list-json FILE] [--budget-s S] [--row-cap-s S]\n"
    "                  [--filter TEXT] [--out-mib M] [--table-gb G]\n"
    "  --json FILE       write results (rewritten after every row, so a cut-short run keeps them)\n"
    "  --list-json FILE  write the rows (shapes) and exit; needs no GPU\n"
    "  --budget-s S      stop starting rows after S seconds (default 140)\n"
    "  --row-cap-s S     hard cap per row (default 4)\n"
    "  --filter TEXT     only rows whose name contains TEXT\n"
    "  --out-mib M       output / updates size per row in MiB (default 512)\n"
    "  --table-gb G      table size in GB (default 4)\n";

struct Row {
  std::string name, op, dtype, dist;
  uint64_t slice_bytes = 0;  ///< bytes per row (slice)
  uint64_t table_rows = 0;   ///< rows of params (gather) or of the output (scatter)
  uint64_t n = 0;            ///< index rows
  int depth = 1;
  uint64_t inner = 1;  ///< gather_nd: size of the second indexed dimension
  uint32_t elem = 4;
  // results
  std::string status = "not_run";
  double ms = 0, gbps = 0, bytes = 0, min_bytes = 0;
  int samples = 0;
};

uint32_t elem_size(const std::string& dt) { return dt == "float32" ? 4 : 2; }

std::vector<Row> make_rows(uint64_t out_bytes, double table_gb) {
  std::vector<Row> rows;
  const auto table_bytes = static_cast<uint64_t>(table_gb * 1e9);
  auto add = [&](Row r) {
    r.elem = elem_size(r.dtype);
    r.name = r.op + "/" + r.dtype + "/" + std::to_string(r.slice_bytes) + "B/" + r.dist;
    rows.push_back(r);
  };
  for (const char* op : {"copy_d2d", "copy_kernel"}) {
    Row r;
    r.op = op;
    r.dtype = "float32";
    r.dist = "none";
    r.slice_bytes = 16;
    r.n = out_bytes / 16;
    r.table_rows = r.n;
    add(r);
  }
  const uint64_t slices[] = {4, 64, 512, 1024, 4096, 16384};
  const char* dists[] = {"uniform", "sorted", "zipf", "hot"};
  for (const char* op : {"gather", "gather_nd"}) {
    for (const char* dt : {"float32", "bfloat16"}) {
      for (uint64_t s : slices) {
        for (const char* d : dists) {
          Row r;
          r.op = op;
          r.dtype = dt;
          r.dist = d;
          r.slice_bytes = s;
          r.n = out_bytes / s;
          r.table_rows = table_bytes / s;
          if (r.op == "gather_nd") {
            r.depth = 2;
            r.inner = 1024;
            r.table_rows = r.table_rows / r.inner * r.inner;
          }
          add(r);
        }
      }
    }
  }
  for (const char* dt : {"float32", "float16", "bfloat16"}) {
    for (uint64_t s : {uint64_t{4}, uint64_t{512}, uint64_t{4096}}) {
      for (const char* d : {"uniform", "hot"}) {
        Row r;
        r.op = "scatter_add";
        r.dtype = dt;
        r.dist = d;
        r.slice_bytes = s;
        r.n = out_bytes / s;
        r.table_rows = table_bytes / s;
        add(r);
      }
    }
  }
  for (const char* op : {"scatter_min", "scatter_max"}) {
    for (uint64_t s : {uint64_t{4}, uint64_t{512}}) {
      for (const char* d : {"uniform", "hot"}) {
        Row r;
        r.op = op;
        r.dtype = "float32";
        r.dist = d;
        r.slice_bytes = s;
        r.n = out_bytes / s;
        r.table_rows = table_bytes / s;
        add(r);
      }
    }
  }
  // The deterministic (sorted) path: a hot key is one run reduced serially per column, so its
  // row is kept small (2^20 index rows) to stay inside the per-row cap.
  for (uint64_t s : {uint64_t{4}, uint64_t{512}}) {
    for (const char* d : {"uniform", "hot"}) {
      Row r;
      r.op = "scatter_add_det";
      r.dtype = "float32";
      r.dist = d;
      r.slice_bytes = s;
      r.n = std::string(d) == "hot" ? std::min<uint64_t>(out_bytes / s, 1 << 20) : out_bytes / s;
      r.table_rows = table_bytes / s;
      add(r);
    }
  }
  for (Row& r : rows) {
    const double idx = static_cast<double>(r.n) * r.depth * 4;
    const double data = static_cast<double>(r.n) * r.slice_bytes;
    if (r.op.rfind("copy", 0) == 0) {
      r.bytes = r.min_bytes = 2 * data;
    } else if (r.op.rfind("gather", 0) == 0) {
      r.bytes = r.min_bytes = idx + 2 * data;
    } else {
      const double table = static_cast<double>(r.table_rows) * r.slice_bytes;
      const double touched =
          r.dist == "hot" ? static_cast<double>(r.slice_bytes) : std::min(data, table);
      r.bytes = r.min_bytes = idx + data + 2 * touched;
    }
  }
  return rows;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

void write_json(const std::string& path, const std::vector<Row>& rows, const std::string& device,
                double copy_gbps, bool results) {
  if (path.empty()) return;
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cuda_bench: cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "{\"device\": \"%s\", \"copy_gbps\": %.3f, \"rows\": [\n",
               json_escape(device).c_str(), copy_gbps);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "  {\"name\": \"%s\", \"op\": \"%s\", \"dtype\": \"%s\", \"dist\": \"%s\", "
                 "\"slice_bytes\": %llu, \"table_rows\": %llu, \"n\": %llu, \"depth\": %d, "
                 "\"inner\": %llu, \"bytes\": %.0f, \"min_bytes\": %.0f",
                 r.name.c_str(), r.op.c_str(), r.dtype.c_str(), r.dist.c_str(),
                 static_cast<unsigned long long>(r.slice_bytes),
                 static_cast<unsigned long long>(r.table_rows),
                 static_cast<unsigned long long>(r.n), r.depth,
                 static_cast<unsigned long long>(r.inner), r.bytes, r.min_bytes);
    if (results) {
      std::fprintf(f, ", \"status\": \"%s\", \"ms\": %.5f, \"gbps\": %.2f, \"samples\": %d",
                   json_escape(r.status).c_str(), r.ms, r.gbps, r.samples);
    }
    std::fprintf(f, "}%s\n", i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

// ---- device data

__device__ __forceinline__ uint32_t mix32(uint64_t i) {
  uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ static_cast<uint32_t>(i >> 32);
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

/// Index rows for a distribution: uniform (hash), sorted (i * rows / n), zipf (rank = rows^u - 1,
/// the continuous s = 1 law, ranks scattered by a multiplicative hash), hot (one key).
/// depth 2 splits the row into (row / inner, row % inner).
__global__ void gen_indices(int32_t* out, uint64_t n, uint64_t rows, int dist, int depth,
                            uint64_t inner) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x) {
    uint64_t r = 0;
    switch (dist) {
      case 0:
        r = mix32(i) % rows;
        break;
      case 1:
        r = static_cast<uint64_t>((static_cast<unsigned __int128>(i) * rows) / n);
        break;
      case 2: {
        const double u = mix32(i) * (1.0 / 4294967296.0);
        const uint64_t rank = static_cast<uint64_t>(pow(static_cast<double>(rows), u)) - 1;
        r = (rank * 2654435761ull) % rows;
        break;
      }
      default:
        r = rows / 2;
        break;
    }
    if (depth == 2) {
      out[2 * i] = static_cast<int32_t>(r / inner);
      out[2 * i + 1] = static_cast<int32_t>(r % inner);
    } else {
      out[i] = static_cast<int32_t>(r);
    }
  }
}

__global__ void copy_float4(const float4* __restrict__ src, float4* __restrict__ dst, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

int dist_code(const std::string& d) {
  return d == "uniform" ? 0 : d == "sorted" ? 1 : d == "zipf" ? 2 : 3;
}

struct DeviceBuffers {
  std::vector<void*> ptrs;
  ~DeviceBuffers() {
    for (void* p : ptrs) cudaFree(p);
  }
  void* get(uint64_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, std::max<uint64_t>(bytes, 256)) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    ptrs.push_back(p);
    return p;
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Time `launch` as described at the top; false (status set) on an error or over the cap.
bool time_launches(Row& r, double cap_s, const std::function<Status()>& launch) {
  cudaEvent_t probe[2];
  cudaEventCreate(&probe[0]);
  cudaEventCreate(&probe[1]);
  const auto t0 = std::chrono::steady_clock::now();
  cudaEventRecord(probe[0]);
  Status st = launch();
  cudaEventRecord(probe[1]);
  cudaError_t e = cudaEventSynchronize(probe[1]);
  float probe_ms = 0;
  cudaEventElapsedTime(&probe_ms, probe[0], probe[1]);
  cudaEventDestroy(probe[0]);
  cudaEventDestroy(probe[1]);
  if (!st.ok() || e != cudaSuccess) {
    r.status = "error: " + (st.ok() ? std::string(cudaGetErrorString(e)) : st.error().message);
    return false;
  }
  const double probe_s = std::max(seconds_since(t0), probe_ms / 1e3);
  if (probe_s * 8 > cap_s) {  // the probe, 2 warm-ups and 5 samples must fit the cap
    r.status = "over_cap";
    r.ms = probe_ms;
    r.samples = 1;
    return false;
  }
  const int samples =
      static_cast<int>(std::clamp((cap_s - 3 * probe_s) / std::max(probe_s, 1e-6), 5.0, 15.0));
  // (>= 5 samples: with probe_s * 8 <= cap_s the row stays inside its cap)
  for (int w = 0; w < 2; ++w) {
    if (auto s = launch(); !s.ok()) {
      r.status = "error: " + s.error().message;
      return false;
    }
  }
  std::vector<cudaEvent_t> ev(samples + 1);
  for (auto& x : ev) cudaEventCreate(&x);
  cudaEventRecord(ev[0]);
  for (int i = 0; i < samples; ++i) {
    (void)launch();  // launch errors surface at the synchronisation below
    cudaEventRecord(ev[i + 1]);
  }
  e = cudaEventSynchronize(ev[samples]);
  std::vector<float> ms(samples);
  for (int i = 0; i < samples; ++i) cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]);
  for (auto& x : ev) cudaEventDestroy(x);
  if (e != cudaSuccess) {
    r.status = std::string("error: ") + cudaGetErrorString(e);
    return false;
  }
  std::sort(ms.begin(), ms.end());
  r.ms = samples % 2 ? ms[samples / 2] : 0.5 * (ms[samples / 2 - 1] + ms[samples / 2]);
  r.samples = samples;
  r.gbps = r.bytes / (r.ms * 1e-3) / 1e9;
  r.status = "ok";
  return true;
}

template <class T>
void run_scatter_row(DeviceExec& ex, Row& r, const int32_t* d_idx, uint8_t* d_table,
                     const uint8_t* d_upd, uint32_t* d_dest, uint32_t* d_rows, int64_t* d_bad,
                     double cap_s) {
  ScatterPlan p;
  p.rows = static_cast<int64_t>(r.n);
  p.depth = 1;
  p.dims[0] = static_cast<int64_t>(r.table_rows);
  p.strides[0] = 1;
  p.slice = static_cast<int64_t>(r.slice_bytes / sizeof(T));
  p.out_elements = static_cast<int64_t>(r.table_rows) * p.slice;
  const bool sorted = r.op == "scatter_add_det";
  const ScatterKind kind = r.op == "scatter_min"   ? ScatterKind::kMin
                           : r.op == "scatter_max" ? ScatterKind::kMax
                                                   : ScatterKind::kAdd;
  time_launches(r, cap_s, [&]() -> Status {
    GSCHECK_RETURN_IF_ERROR((launch_scatter_dest<int32_t, uint32_t>(
        ex, p, d_idx, d_dest, sorted ? d_rows : nullptr, d_bad)));
    return apply_scatter_rows<T, uint32_t>(ex, p, kind, sorted, d_upd, d_table, d_dest, d_rows);
  });
}

int main_impl(int argc, char** argv) {
  std::string json, list_json, filter;
  double budget_s = 140, cap_s = 4, table_gb = 4;
  uint64_t out_mib = 512;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "cuda_bench: %s needs a value\n%s", a.c_str(), kUsage);
      return 2;
    }
    const std::string v = argv[++i];
    char* end = nullptr;
    const double num = std::strtod(v.c_str(), &end);
    const bool is_num = end != v.c_str() && *end == '\0' && num > 0;
    if (a == "--json") {
      json = v;
    } else if (a == "--list-json") {
      list_json = v;
    } else if (a == "--filter") {
      filter = v;
    } else if (is_num && a == "--budget-s") {
      budget_s = num;
    } else if (is_num && a == "--row-cap-s") {
      cap_s = num;
    } else if (is_num && a == "--out-mib") {
      out_mib = static_cast<uint64_t>(num);
    } else if (is_num && a == "--table-gb") {
      table_gb = num;
    } else {
      std::fprintf(stderr, "cuda_bench: bad option %s %s\n%s", a.c_str(), v.c_str(), kUsage);
      return 2;
    }
  }
  std::vector<Row> rows = make_rows(out_mib << 20, table_gb);
  if (!filter.empty()) {
    std::erase_if(rows, [&](const Row& r) {
      return r.op.rfind("copy", 0) != 0 && r.name.find(filter) == std::string::npos;
    });
  }
  if (!list_json.empty()) {
    write_json(list_json, rows, "", 0, false);
    std::printf("cuda_bench: %zu rows written to %s\n", rows.size(), list_json.c_str());
    return 0;
  }

  int sms = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "cuda_bench: no usable GPU: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 3;
  }
  sms = prop.multiProcessorCount;
  std::printf("cuda_bench on %s: %d SMs, L2 %d MB; %zu rows, cap %.1fs per row, budget %.0fs\n",
              prop.name, sms, prop.l2CacheSize >> 20, rows.size(), cap_s, budget_s);
  DeviceExec ex(sms, /*sync_launches=*/false);
  const auto t_start = std::chrono::steady_clock::now();

  // Shared buffers: the largest table, index, data and destination arrays of any row.
  uint64_t max_table = 0, max_data = 0, max_idx = 0, max_n = 0;
  for (const Row& r : rows) {
    max_table = std::max(max_table, r.table_rows * r.slice_bytes);
    max_data = std::max(max_data, r.n * r.slice_bytes);
    max_idx = std::max(max_idx, r.n * r.depth * 4);
    max_n = std::max(max_n, r.n);
  }
  DeviceBuffers bufs;
  auto* d_table = static_cast<uint8_t*>(bufs.get(max_table));
  auto* d_data = static_cast<uint8_t*>(bufs.get(max_data));
  auto* d_idx = static_cast<int32_t*>(bufs.get(max_idx));
  auto* d_dest = static_cast<uint32_t*>(bufs.get(max_n * 4));
  auto* d_rows = static_cast<uint32_t*>(bufs.get(max_n * 4));
  auto* d_bad = static_cast<int64_t*>(bufs.get(16));
  if (!d_table || !d_data || !d_idx || !d_dest || !d_rows || !d_bad) {
    std::fprintf(stderr, "cuda_bench: cannot allocate %.1f GB of device buffers\n",
                 (max_table + max_data + max_idx + 8 * max_n) / 1e9);
    return 3;
  }
  // 0x3C bytes: float32 0.0115, half 1.06, bfloat16 0.0115 (finite, no NaN paths).
  cudaMemset(d_table, 0x3C, max_table);
  cudaMemset(d_data, 0x3C, max_data);
  const int64_t bad_init[2] = {INT64_MAX, -1};
  cudaMemcpy(d_bad, bad_init, sizeof(bad_init), cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();

  double copy_gbps = 0;
  for (Row& r : rows) {
    if (seconds_since(t_start) > budget_s) {
      r.status = "skipped: budget";
      continue;
    }
    if (r.op != "copy_d2d" && r.op != "copy_kernel") {
      gen_indices<<<sms * 8, 256>>>(d_idx, r.n, r.table_rows, dist_code(r.dist), r.depth, r.inner);
      if (cudaDeviceSynchronize() != cudaSuccess) {
        r.status =
            std::string("error: index generation: ") + cudaGetErrorString(cudaGetLastError());
        continue;
      }
    }
    const uint64_t data = r.n * r.slice_bytes;
    if (r.op == "copy_d2d") {
      time_launches(r, cap_s, [&]() -> Status {
        return cuda_status(cudaMemcpyAsync(d_data, d_table, data, cudaMemcpyDeviceToDevice),
                           "cudaMemcpyAsync");
      });
    } else if (r.op == "copy_kernel") {
      time_launches(r, cap_s, [&]() -> Status {
        copy_float4<<<sms * 8, 256>>>(reinterpret_cast<const float4*>(d_table),
                                      reinterpret_cast<float4*>(d_data), data / 16);
        return cuda_status(cudaGetLastError(), "copy kernel launch");
      });
    } else if (r.op == "gather" || r.op == "gather_nd") {
      const uint64_t slice_elems = r.slice_bytes / r.elem;
      if (r.op == "gather") {
        GatherIndexMap<int32_t, uint32_t> map{d_idx, DivBy<uint32_t>(static_cast<uint32_t>(r.n)),
                                              DivBy<uint32_t>(1u),
                                              static_cast<uint32_t>(r.table_rows), d_bad};
        time_launches(r, cap_s, [&] {
          return launch_gather<uint32_t>(ex, map, d_table, d_data, r.n, slice_elems, r.elem);
        });
      } else {
        GatherNdIndexMap<int32_t, uint32_t> map{};
        map.d_indices = d_idx;
        map.depth = 2;
        map.rows_per_batch = DivBy<uint32_t>(static_cast<uint32_t>(r.n));
        map.batch_stride = 0;
        map.dims[0] = static_cast<uint32_t>(r.table_rows / r.inner);
        map.dims[1] = static_cast<uint32_t>(r.inner);
        map.strides[0] = static_cast<uint32_t>(r.inner);
        map.strides[1] = 1;
        map.d_bad = d_bad;
        time_launches(r, cap_s, [&] {
          return launch_gather<uint32_t>(ex, map, d_table, d_data, r.n, slice_elems, r.elem);
        });
      }
    } else if (r.dtype == "float32") {
      run_scatter_row<float>(ex, r, d_idx, d_table, d_data, d_dest, d_rows, d_bad, cap_s);
    } else if (r.dtype == "float16") {
      run_scatter_row<half_t>(ex, r, d_idx, d_table, d_data, d_dest, d_rows, d_bad, cap_s);
    } else {
      run_scatter_row<bf16_t>(ex, r, d_idx, d_table, d_data, d_dest, d_rows, d_bad, cap_s);
    }
    if (r.op.rfind("copy", 0) == 0 && r.status == "ok") copy_gbps = std::max(copy_gbps, r.gbps);
    std::printf("  %-40s %-10s %9.4f ms %8.1f GB/s %5.2f x copy  (%d samples)\n", r.name.c_str(),
                r.status.c_str(), r.ms, r.gbps, copy_gbps > 0 ? r.gbps / copy_gbps : 0.0,
                r.samples);
    std::fflush(stdout);
    write_json(json, rows, prop.name, copy_gbps, true);
  }
  write_json(json, rows, prop.name, copy_gbps, true);
  int ok = 0;
  for (const Row& r : rows) ok += r.status == "ok";
  std::printf("cuda_bench: %d of %zu rows measured in %.0fs\n", ok, rows.size(),
              seconds_since(t_start));
  return ok > 0 ? 0 : 1;
}

}  // namespace
}  // namespace gscheck::cuda

int main(int argc, char** argv) { return gscheck::cuda::main_impl(argc, argv); }
