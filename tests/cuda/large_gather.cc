// One gather whose output has 2^K elements (K = 31 by default: the 64-bit offset path), run on a
// kernel backend and checked element by element on the host, with a checksum of the output and
// of the expected output printed. Used by scripts/gpu_check.sh on the GPU (K = 31) and in its dry
// run on cuda-emu (small K).
//   usage: cuda_large_gather [--backend cuda|cuda-det|cuda-emu] [--log2-elements K]
// Exit status: 0 every element matches, 1 a mismatch or a backend error, 2 bad command line.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "cuda/cuda_backends.h"

namespace {

using gscheck::Backend;

constexpr int64_t kSliceElems = 64;  // 128-byte float16 rows: the sub-warp rows kernel
constexpr int64_t kTableRows = 1 << 16;

uint16_t param_bits(uint64_t row, uint64_t col) {
  uint64_t h = (row * 0x9E3779B97F4A7C15ull) ^ (col * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  return static_cast<uint16_t>(h & 0x3BFF);  // finite halves; never the 0xA5A5-style poisons
}

int64_t index_of(uint64_t r) {
  return static_cast<int64_t>((r * 2654435761ull + 12345) % kTableRows);
}

// Order-sensitive 64-bit checksum of 16-bit words.
struct Checksum {
  uint64_t v = 0x84222325CBF29CE4ull;
  void add(uint16_t w, uint64_t pos) { v += (static_cast<uint64_t>(w) + 1) * (2 * pos + 1); }
};

int usage(const char* why) {
  std::fprintf(stderr,
               "cuda_large_gather: %s\nusage: cuda_large_gather [--backend cuda|cuda-det|cuda-emu] "
               "[--log2-elements K]   (K in 12..31, default 31)\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name = "cuda";
  int log2_elements = 31;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage("one gather over 2^K output elements, checked on the host");
      return 0;
    }
    if (i + 1 >= argc) return usage(("missing value after " + a).c_str());
    const std::string v = argv[++i];
    if (a == "--backend") {
      backend_name = v;
    } else if (a == "--log2-elements") {
      char* end = nullptr;
      const long k = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || k < 12 || k > 31)
        return usage(("--log2-elements takes 12..31, not " + v).c_str());
      log2_elements = static_cast<int>(k);
    } else {
      return usage(("unknown option " + a).c_str());
    }
  }
  std::unique_ptr<Backend> backend;
  if (backend_name == "cuda-emu") {
    backend = gscheck::cuda::make_cuda_emu_backend(0);
  } else if (backend_name == "cuda" || backend_name == "cuda-det") {
    auto b = gscheck::cuda::make_cuda_backend(
        gscheck::cuda::KernelOptions{.deterministic = backend_name == "cuda-det"});
    if (!b.ok()) {
      std::fprintf(stderr, "cuda_large_gather: %s\n", b.error().message.c_str());
      return 1;
    }
    backend = std::move(*b);
  } else {
    return usage(("unknown backend " + backend_name).c_str());
  }

  const int64_t out_elements = int64_t{1} << log2_elements;
  const int64_t n_idx = out_elements / kSliceElems;
  const auto t0 = std::chrono::steady_clock::now();
  gscheck::Case c;
  c.name = "large_gather_2^" + std::to_string(log2_elements);
  c.op = gscheck::Op::kGather;
  c.semantics = gscheck::Semantics::kTfGpu;
  auto params = gscheck::Tensor::uninitialized(gscheck::DType::kFloat16,
                                               gscheck::Shape({kTableRows, kSliceElems}));
  auto indices = gscheck::Tensor::uninitialized(gscheck::DType::kInt64, gscheck::Shape({n_idx}));
  if (!params.ok() || !indices.ok()) {
    std::fprintf(stderr, "cuda_large_gather: cannot allocate the inputs\n");
    return 1;
  }
  auto* p = reinterpret_cast<uint16_t*>(params->data());
  for (int64_t r = 0; r < kTableRows; ++r)
    for (int64_t j = 0; j < kSliceElems; ++j) p[r * kSliceElems + j] = param_bits(r, j);
  auto* ix = reinterpret_cast<int64_t*>(indices->data());
  for (int64_t r = 0; r < n_idx; ++r) ix[r] = index_of(static_cast<uint64_t>(r));
  c.params = std::move(*params);
  c.indices = std::move(*indices);
  c.axis = gscheck::Tensor::from_values<int32_t>(gscheck::Shape({}), {0});

  const auto t1 = std::chrono::steady_clock::now();
  const gscheck::Outcome got = backend->run(c);
  const auto t2 = std::chrono::steady_clock::now();
  if (!got.ok()) {
    std::fprintf(stderr, "cuda_large_gather: %s failed: %s\n", backend_name.c_str(),
                 got.error().message.c_str());
    return 1;
  }
  if (got->num_elements() != out_elements) {
    std::fprintf(stderr, "cuda_large_gather: output has %lld elements, want %lld\n",
                 static_cast<long long>(got->num_elements()), static_cast<long long>(out_elements));
    return 1;
  }
  const auto* o = reinterpret_cast<const uint16_t*>(got->data());
  Checksum sum_got, sum_want;
  int64_t mismatches = 0, first_bad = -1;
  for (int64_t r = 0; r < n_idx; ++r) {
    const uint16_t* want_row = p + index_of(static_cast<uint64_t>(r)) * kSliceElems;
    for (int64_t j = 0; j < kSliceElems; ++j) {
      const uint64_t pos = static_cast<uint64_t>(r * kSliceElems + j);
      sum_got.add(o[pos], pos);
      sum_want.add(want_row[j], pos);
      if (o[pos] != want_row[j]) {
        if (first_bad < 0) first_bad = static_cast<int64_t>(pos);
        ++mismatches;
      }
    }
  }
  const auto t3 = std::chrono::steady_clock::now();
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf(
      "large gather on %s: %lld float16 elements (2^%d, %.2f GiB out), %lld rows of %lld\n"
      "  checksum got %016llx want %016llx, mismatches %lld",
      backend_name.c_str(), static_cast<long long>(out_elements), log2_elements,
      static_cast<double>(out_elements) * 2 / (1 << 30), static_cast<long long>(n_idx),
      static_cast<long long>(kSliceElems), static_cast<unsigned long long>(sum_got.v),
      static_cast<unsigned long long>(sum_want.v), static_cast<long long>(mismatches));
  if (first_bad >= 0) std::printf(" (first at element %lld)", static_cast<long long>(first_bad));
  std::printf(
      "\n  inputs %.2fs, backend run %.2fs (uploads, kernel, copy back, guard check), "
      "host check %.2fs\n",
      secs(t0, t1), secs(t1, t2), secs(t2, t3));
  return mismatches == 0 && sum_got.v == sum_want.v ? 0 : 1;
}
