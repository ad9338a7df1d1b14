// cuda-emu against the reference over seeded random cases, and over the golden corpus.
#include <gtest/gtest.h>

#include <complex>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <type_traits>

#include "cuda/cuda_backends.h"
#include "tests/cuda/sweep_differential.h"

namespace gscheck::cuda {
namespace {

using testing::sweep_against_reference;

class CudaEmuSweep : public ::testing::TestWithParam<Op> {};

// In race mode where the build has it (docs/cuda.md): every launch's threads interleaved at each
// device access, and a data race fails the case. GSCHECK_RACE=0 runs it without, to compare.
bool sweep_in_race_mode() {
  const char* e = std::getenv("GSCHECK_RACE");
  return race_mode_available() && !(e && std::string(e) == "0");
}

TEST_P(CudaEmuSweep, AgreesWithTheReference) {
  for (bool det : {false, true}) {
    auto b =
        make_cuda_emu_backend(2, KernelOptions{.deterministic = det, .race = sweep_in_race_mode()});
    for (int size : {10, 40, 100}) {
      gen::SampleOptions opts;
      opts.seed = 1000 + static_cast<uint64_t>(GetParam()) * 10 + static_cast<uint64_t>(size);
      opts.count = 200;
      opts.dtypes = b->capabilities().dtypes;  // spend the sweep on claimed dtypes
      opts.size = size;
      opts.ops = {GetParam()};
      const auto n = sweep_against_reference(*b, gen::sample_cases(opts));
      std::cout << b->capabilities().name << " " << op_name(GetParam()) << " size " << size << ": "
                << n.compared << " compared (" << n.errors << " errors), " << n.not_claimed
                << " not claimed, " << n.failed << " failed\n";
      EXPECT_EQ(n.failed, 0);
      // The sweep must mostly run claimed cases, valid and invalid ones.
      EXPECT_GT(n.compared, opts.count / 4) << "not claimed: " << n.not_claimed;
      EXPECT_GT(n.compared - n.errors, 0);
    }
  }
}

// Warp-synchronous mode: each warp's lanes in lock step, so the atomic path's fold of equal
// destinations, the packed half-pair and the float4 reductions run as the GPU runs them. A small
// grid (max_blocks 4: 1,024 threads) keeps many rows per warp, so equal destinations meet.
TEST_P(CudaEmuSweep, WarpSynchronousAgreesWithTheReference) {
  for (uint32_t max_blocks : {0u, 4u}) {
    auto b = make_cuda_emu_backend(2, KernelOptions{.max_blocks = max_blocks, .warp_sync = true});
    for (int size : {10, 40, 100}) {
      gen::SampleOptions opts;
      opts.seed = 5000 + static_cast<uint64_t>(GetParam()) * 10 + static_cast<uint64_t>(size);
      opts.count = 200;
      opts.dtypes = b->capabilities().dtypes;
      opts.size = size;
      opts.ops = {GetParam()};
      const auto n = sweep_against_reference(*b, gen::sample_cases(opts));
      std::cout << b->capabilities().name << " max_blocks " << max_blocks << " "
                << op_name(GetParam()) << " size " << size << ": " << n.compared << " compared ("
                << n.errors << " errors), " << n.failed << " failed\n";
      EXPECT_EQ(n.failed, 0);
      EXPECT_GT(n.compared - n.errors, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaEmuSweep, ::testing::ValuesIn(kAllOps),
                         [](const auto& info) { return std::string(op_name(info.param)); });

TEST(CudaEmuGolden, EveryClaimedGoldenCasePasses) {
  auto files = list_case_files({GSCHECK_SOURCE_DIR "/corpus/golden"});
  ASSERT_TRUE(files.ok()) << files.error().message;
  auto b = make_cuda_emu_backend(2);
  const compare::Options opts = compare::options_for(b->capabilities());
  int checked = 0;
  for (const std::string& path : *files) {
    auto f = load_case_file(path);
    if (!f.ok() && f.error().cls == ErrorClass::kResourceExhausted) continue;  // trap cases
    ASSERT_TRUE(f.ok()) << f.error().message;
    if (!f->expect) continue;
    // Messages are graded only where the backend promises TensorFlow's text.
    if (!f->expect->error_class || !compare::messages_graded(opts, *f->expect->error_class))
      f->expect->error_regex.reset();
    const Outcome got = b->run(f->c);
    if (!got.ok() && got.error().cls == ErrorClass::kUnimplemented) continue;
    ++checked;
    const compare::Comparison v = compare::check_expect(f->c, *f->expect, got, opts);
    EXPECT_TRUE(v.pass) << path << ": " << v.summary;
  }
  EXPECT_GT(checked, 0) << "no golden case was claimed by cuda-emu";
}

}  // namespace
}  // namespace gscheck::cuda

namespace gscheck::cuda {
namespace {

// Self-describing data: element i holds a small exactly representable value of its dtype.
Tensor described(DType dt, Shape s, int64_t salt) {
  Tensor t = Tensor::zeros(dt, std::move(s)).value();
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data_as<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const int64_t v = (i * 37 + salt) % 1999 - 999;
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = (v & 1) != 0;
      } else if constexpr (std::is_same_v<T, Float16>) {
        p[i] = float16_from_float(static_cast<float>(v) / 8);
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        p[i] = bfloat16_from_float(static_cast<float>(v % 255));
      } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                           std::is_same_v<T, std::complex<double>>) {
        p[i] = T(static_cast<double>(v), static_cast<double>(-v) / 4);
      } else if constexpr (std::is_arithmetic_v<T>) {
        p[i] = static_cast<T>(v);
      }
    }
  });
  return t;
}

Tensor random_indices(DType dt, Shape s, int64_t limit, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor t = Tensor::zeros(dt, std::move(s)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    // Mostly in range with duplicates; about 5% just outside on either side.
    const uint64_t r = rng() % 100;
    const int64_t v = r < 3   ? -1 - static_cast<int64_t>(rng() % 3)
                      : r < 5 ? limit + static_cast<int64_t>(rng() % 3)
                              : static_cast<int64_t>(rng() % static_cast<uint64_t>(limit));
    if (dt == DType::kInt32) {
      t.data_as<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      t.data_as<int64_t>()[i] = v;
    }
  }
  return t;
}

// The generator's cases are small; these cover every thread mapping (per element, sub-warp,
// warp, block per row) for every claimed dtype against the reference.
TEST(CudaEmuPaths, EveryMappingAndDtypeAgreesWithTheReference) {
  auto b = make_cuda_emu_backend(2, KernelOptions{.deterministic = false, .max_blocks = 5});
  std::vector<Case> cases;
  uint64_t seed = 1;
  for (DType dt : b->capabilities().dtypes) {
    for (DType it : {DType::kInt32, DType::kInt64}) {
      for (int64_t slice : {1, 3, 8, 40, 300, 1500}) {
        for (Semantics sem : {Semantics::kTfGpu, Semantics::kTfCpu}) {
          const int64_t rows = 6;
          const Tensor params = described(dt, Shape{rows, slice}, static_cast<int64_t>(seed));
          Case g;
          g.op = Op::kGather;
          g.semantics = sem;
          g.params = params;
          g.indices = random_indices(it, Shape{9}, rows, seed++);
          g.axis = Tensor::from_values<int32_t>(Shape{}, {0});
          cases.push_back(g);
          Case nd;
          nd.op = Op::kGatherNd;
          nd.semantics = sem;
          nd.params = params;
          nd.indices = random_indices(it, Shape{3, 3, 1}, rows, seed++);
          cases.push_back(nd);
          for (Op op : {Op::kTensorScatterUpdate, Op::kTensorScatterAdd, Op::kTensorScatterMax,
                        Op::kScatterNd}) {
            Case s;
            s.op = op;
            s.semantics = sem;
            s.indices = random_indices(it, Shape{12, 1}, rows, seed++);
            s.updates = described(dt, Shape{12, slice}, static_cast<int64_t>(seed));
            if (op == Op::kScatterNd) {
              s.shape = Tensor::from_values<int64_t>(Shape{2}, {rows, slice});
            } else {
              s.tensor = params;
            }
            cases.push_back(s);
          }
        }
      }
    }
  }
  for (auto& c : cases) c.name = std::string(op_name(c.op)) + "/paths";
  const auto n = testing::sweep_against_reference(*b, cases);
  EXPECT_EQ(n.failed, 0);
  EXPECT_GT(n.compared, static_cast<int>(cases.size()) * 3 / 4);
}

}  // namespace
}  // namespace gscheck::cuda
