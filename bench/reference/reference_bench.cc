// Throughput of the reference on tables far larger than the caches, against two baselines
// measured in the same run: one memcpy of the output bytes, and a bare loop of one memcpy per
// row over the same indices. Bytes are counted as DESIGN.md says; all three benchmarks of one
// op and slice size count the same bytes, so their GB/s ratio is their time ratio.
//
// Run (Release build): reference_bench --benchmark_repetitions=5
//                        --benchmark_report_aggregates_only=true
// GSCHECK_BENCH_TABLE_MIB sets the table size (default 1024; scatter outputs use half of it).
// The reference returns a new tensor per call, so it pays the first touch of fresh output pages
// (glibc maps large blocks per allocation). The baselines write into a buffer that stays warm;
// per_row_fresh is the per-row loop into a fresh buffer per call (allocated and hinted for huge
// pages exactly as the reference's outputs), the like-for-like floor.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/case.h"
#include "reference/reference.h"
#include "reference/validate.h"

namespace gscheck {
namespace {

constexpr int64_t kOutBytes = int64_t{64} << 20;  // bytes gathered (or scattered) per call
constexpr int64_t kSliceBytes[] = {4, 64, 512, 4096};

int64_t table_bytes() {
  const char* env = std::getenv("GSCHECK_BENCH_TABLE_MIB");
  const int64_t mib = env ? std::atoll(env) : 1024;
  return (mib > 0 ? mib : 1024) << 20;
}

enum class Kind { kGather, kGatherNd, kScatterNd, kTensorScatterAdd };

// One op at one slice size: the case the reference runs and the raw buffers the baselines use.
// Only one fixture lives at a time, so the tables are allocated once per (op, slice size).
struct Fixture {
  Kind kind;
  int64_t slice_bytes = 0;
  int64_t rows = 0;  // rows of the table
  int64_t n = 0;     // index rows
  Case c;
  std::vector<std::byte> scratch;  // the baselines' output
  int64_t bytes = 0;               // bytes counted per call

  const std::byte* table() const {
    return kind == Kind::kTensorScatterAdd ? c.tensor->data()
           : kind == Kind::kScatterNd      ? nullptr
                                           : c.params->data();
  }
  const int32_t* indices() const { return c.indices->data_as<int32_t>(); }
};

Tensor filled(Shape shape) {
  Tensor t = Tensor::uninitialized(DType::kFloat32, std::move(shape), INT64_MAX).value();
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<float>(i & 0xffffff);
  return t;
}

Fixture& fixture(Kind kind, int64_t slice_bytes) {
  static std::unique_ptr<Fixture> f;
  if (f && f->kind == kind && f->slice_bytes == slice_bytes) return *f;
  f.reset();  // free the previous tables first
  f = std::make_unique<Fixture>();
  f->kind = kind;
  f->slice_bytes = slice_bytes;
  const bool scatter = kind == Kind::kScatterNd || kind == Kind::kTensorScatterAdd;
  const int64_t elems = slice_bytes / 4;
  f->rows = (scatter ? table_bytes() / 2 : table_bytes()) / slice_bytes;
  f->n = kOutBytes / slice_bytes;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(f->rows - 1));
  const bool nd = kind != Kind::kGather;
  Tensor indices = Tensor::uninitialized(DType::kInt32, nd ? Shape{f->n, 1} : Shape{f->n}).value();
  for (int64_t i = 0; i < f->n; ++i) indices.data_as<int32_t>()[i] = pick(rng);
  f->c.indices = std::move(indices);
  const int64_t index_bytes = f->n * 4;
  switch (kind) {
    case Kind::kGather:
    case Kind::kGatherNd:
      f->c.op = kind == Kind::kGather ? Op::kGather : Op::kGatherNd;
      f->c.params = filled(Shape{f->rows, elems});
      f->bytes = index_bytes + 2 * kOutBytes;  // DESIGN.md: gather
      f->scratch.resize(static_cast<size_t>(kOutBytes));
      break;
    case Kind::kScatterNd:
      f->c.op = Op::kScatterNd;
      f->c.updates = filled(Shape{f->n, elems});
      f->c.shape = Tensor::from_values<int64_t>(Shape{2}, {f->rows, elems});
      f->bytes = f->rows * slice_bytes + kOutBytes + index_bytes;  // out + updates + indices
      f->scratch.resize(static_cast<size_t>(f->rows * slice_bytes));
      break;
    case Kind::kTensorScatterAdd:
      f->c.op = Op::kTensorScatterAdd;
      f->c.tensor = filled(Shape{f->rows, elems});
      f->c.updates = filled(Shape{f->n, elems});
      f->bytes = 2 * f->rows * slice_bytes + kOutBytes + index_bytes;  // + the input tensor read
      f->scratch.resize(static_cast<size_t>(f->rows * slice_bytes));
      break;
  }
  return *f;
}

void finish(benchmark::State& state, const Fixture& f) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * f.bytes);
  state.counters["slice_bytes"] = static_cast<double>(f.slice_bytes);
}

void bm_reference(benchmark::State& state, Kind kind) {
  Fixture& f = fixture(kind, state.range(0));
  reference::Options opts;
  opts.max_output_bytes = INT64_MAX;
  for (auto _ : state) {
    Outcome o = reference::run(f.c, opts);
    if (!o.ok()) {
      state.SkipWithError(o.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(o->data());
  }
  finish(state, f);
}

void bm_memcpy(benchmark::State& state, Kind kind) {
  Fixture& f = fixture(kind, state.range(0));
  const std::byte* src = kind == Kind::kScatterNd ? f.c.updates->data() : f.table();
  const int64_t out_bytes = static_cast<int64_t>(f.scratch.size());
  // scatter_nd has no input table: copy the updates repeatedly to fill the output bytes.
  const int64_t chunk = kind == Kind::kScatterNd ? kOutBytes : out_bytes;
  for (auto _ : state) {
    for (int64_t off = 0; off < out_bytes; off += chunk) {
      std::memcpy(f.scratch.data() + off, src,
                  static_cast<size_t>(std::min(chunk, out_bytes - off)));
    }
    benchmark::ClobberMemory();
  }
  finish(state, f);
}

// One memcpy per row into `out` (for scatters: initialise out first, zeros or the tensor).
void per_row_pass(const Fixture& f, std::byte* out) {
  const int32_t* ix = f.indices();
  const size_t slice = static_cast<size_t>(f.slice_bytes);
  switch (f.kind) {
    case Kind::kGather:
    case Kind::kGatherNd: {
      const std::byte* table = f.table();
      for (int64_t i = 0; i < f.n; ++i) std::memcpy(out + i * slice, table + ix[i] * slice, slice);
      break;
    }
    case Kind::kScatterNd:
    case Kind::kTensorScatterAdd: {
      if (f.kind == Kind::kScatterNd) {
        std::memset(out, 0, f.scratch.size());
      } else {
        std::memcpy(out, f.table(), f.scratch.size());
      }
      const std::byte* upd = f.c.updates->data();
      for (int64_t i = 0; i < f.n; ++i) std::memcpy(out + ix[i] * slice, upd + i * slice, slice);
      break;
    }
  }
}

void bm_per_row(benchmark::State& state, Kind kind) {
  Fixture& f = fixture(kind, state.range(0));
  for (auto _ : state) {
    per_row_pass(f, f.scratch.data());
    benchmark::ClobberMemory();
  }
  finish(state, f);
}

void bm_per_row_fresh(benchmark::State& state, Kind kind) {
  Fixture& f = fixture(kind, state.range(0));
  const size_t bytes = f.scratch.size();
  for (auto _ : state) {
    std::byte* out = static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    advise_huge_pages(out, bytes);
    per_row_pass(f, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
    std::free(out);
  }
  finish(state, f);
}

void register_all() {
  const std::pair<Kind, const char*> ops[] = {{Kind::kGather, "gather"},
                                              {Kind::kGatherNd, "gather_nd"},
                                              {Kind::kScatterNd, "scatter_nd"},
                                              {Kind::kTensorScatterAdd, "tensor_scatter_nd_add"}};
  for (const auto& [kind, name] : ops) {
    for (int64_t s : kSliceBytes) {
      const std::string base = std::string(name) + "/";
      const auto k = kind;
      benchmark::RegisterBenchmark((base + "reference").c_str(),
                                   [k](benchmark::State& st) { bm_reference(st, k); })
          ->Arg(s)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark((base + "memcpy").c_str(),
                                   [k](benchmark::State& st) { bm_memcpy(st, k); })
          ->Arg(s)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark((base + "per_row").c_str(),
                                   [k](benchmark::State& st) { bm_per_row(st, k); })
          ->Arg(s)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark((base + "per_row_fresh").c_str(),
                                   [k](benchmark::State& st) { bm_per_row_fresh(st, k); })
          ->Arg(s)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace gscheck

int main(int argc, char** argv) {
  gscheck::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
