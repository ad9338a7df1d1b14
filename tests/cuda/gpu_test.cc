// The real kernels on a GPU: the same differential sweep as cuda-emu, plus bit-for-bit
// agreement with cuda-emu on data-movement ops. Skips with the reason when no GPU is usable,
// unless GSCHECK_REQUIRE_GPU=1 (scripts/gpu_check.sh sets it): then no GPU is a failure, so a
// driver problem on the GPU machine cannot read as success.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "cuda/cuda_backends.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/sweep_differential.h"

namespace gscheck::cuda {
namespace {

bool gpu_required() {
  const char* v = std::getenv("GSCHECK_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::unique_ptr<Backend> gpu_or_skip_reason(const KernelOptions& options, std::string* reason) {
  auto b = make_cuda_backend(options);
  if (!b.ok()) {
    *reason = b.error().message;
    return nullptr;
  }
  return std::move(*b);
}

// Skip (or, with GSCHECK_REQUIRE_GPU=1, fail) the test when no GPU is usable.
#define GPU_OR_SKIP(var, options)                                                           \
  std::string why_##var;                                                                    \
  auto var = gpu_or_skip_reason(options, &why_##var);                                       \
  if (!var) {                                                                               \
    if (gpu_required()) FAIL() << "GSCHECK_REQUIRE_GPU=1 but no usable GPU: " << why_##var; \
    GTEST_SKIP() << "no usable GPU: " << why_##var;                                         \
  }

TEST(CudaGpu, SweepAgreesWithTheReference) {
  GPU_OR_SKIP(b, KernelOptions{});
  for (Op op : kAllOps) {
    gen::SampleOptions opts;
    opts.seed = 77 + static_cast<uint64_t>(op);
    opts.count = 200;
    opts.size = 60;
    opts.ops = {op};
    const auto n = testing::sweep_against_reference(*b, gen::sample_cases(opts));
    EXPECT_EQ(n.failed, 0) << op_name(op);
    EXPECT_GT(n.compared, 0) << op_name(op);
  }
}

TEST(CudaGpu, GathersMatchCudaEmuBitForBit) {
  GPU_OR_SKIP(b, KernelOptions{});
  auto emu = make_cuda_emu_backend(2);
  gen::SampleOptions opts;
  opts.seed = 5;
  opts.count = 300;
  opts.size = 80;
  opts.ops = {Op::kGather, Op::kGatherNd};
  int compared = 0;
  for (const Case& c : gen::sample_cases(opts)) {
    const Outcome g = b->run(c);
    const Outcome e = emu->run(c);
    ASSERT_EQ(g.ok(), e.ok()) << c.name;
    if (g.ok()) {
      EXPECT_TRUE(g->bit_equal(*e)) << c.name;
      ++compared;
    } else {
      EXPECT_EQ(g.error().cls, e.error().cls) << c.name;
    }
  }
  EXPECT_GT(compared, 0);
}

TEST(CudaGpu, DeterministicVariantIsRepeatable) {
  GPU_OR_SKIP(b, KernelOptions{.deterministic = true});
  gen::SampleOptions opts;
  opts.seed = 9;
  opts.count = 100;
  opts.size = 80;
  opts.ops = {Op::kScatterNd, Op::kTensorScatterAdd, Op::kTensorScatterUpdate};
  for (const Case& c : gen::sample_cases(opts)) {
    const Outcome first = b->run(c);
    const Outcome second = b->run(c);
    ASSERT_EQ(first.ok(), second.ok()) << c.name;
    if (first.ok()) {
      EXPECT_TRUE(first->bit_equal(*second)) << c.name;
    }
  }
}

// The sorted path applies rows in row order on both sides: cuda-det and cuda-emu-det must agree
// bit for bit on every scatter op (sums included).
TEST(CudaGpu, DeterministicScatterMatchesCudaEmuDetBitForBit) {
  GPU_OR_SKIP(b, KernelOptions{.deterministic = true});
  auto emu = make_cuda_emu_backend(2, KernelOptions{.deterministic = true});
  gen::SampleOptions opts;
  opts.seed = 21;
  opts.count = 200;
  opts.size = 80;
  opts.ops = {Op::kScatterNd,        Op::kTensorScatterAdd, Op::kTensorScatterSub,
              Op::kTensorScatterMin, Op::kTensorScatterMax, Op::kTensorScatterUpdate};
  int compared = 0;
  for (const Case& c : gen::sample_cases(opts)) {
    const Outcome g = b->run(c);
    const Outcome e = emu->run(c);
    ASSERT_EQ(g.ok(), e.ok()) << c.name;
    if (g.ok()) {
      EXPECT_TRUE(g->bit_equal(*e)) << c.name;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
}

// Hot keys on the atomic path: min and max do not depend on the order of updates, so the reduce
// kernel's carried units, warp folding and CAS loops must give cuda-emu's result exactly, NaN
// updates ignored, for float32 (widths 4, 2, 1), float16 and bfloat16.
TEST(CudaGpu, HotKeyMinMaxMatchCudaEmu) {
  GPU_OR_SKIP(b, KernelOptions{});
  auto emu = make_cuda_emu_backend(2);
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (int slice : {4, 2, 3, 64}) {
      const int rows = 20000;
      std::vector<int32_t> idx(rows);
      for (int r = 0; r < rows; ++r) idx[r] = r % 97 == 0 ? r % 3 : 1;  // mostly one key
      auto upd = Tensor::zeros(dt, {rows, slice}).value();
      auto start = Tensor::zeros(dt, {3, slice}).value();
      // start 150 sits inside the updates' range [1, 200], so both min and max move it
      for (int64_t i = 0; i < start.num_elements(); ++i) {
        if (dt == DType::kFloat32) start.data_as<float>()[i] = 150;
        if (dt == DType::kFloat16) start.data_as<Float16>()[i] = float16_from_float(150);
        if (dt == DType::kBFloat16) start.data_as<BFloat16>()[i] = bfloat16_from_float(150);
      }
      for (int64_t i = 0; i < upd.num_elements(); ++i) {
        const float v = i % 331 == 5 ? NAN : static_cast<float>(1 + (i * 7919) % 200);
        if (dt == DType::kFloat32) upd.data_as<float>()[i] = v;
        if (dt == DType::kFloat16) upd.data_as<Float16>()[i] = float16_from_float(v);
        if (dt == DType::kBFloat16) upd.data_as<BFloat16>()[i] = bfloat16_from_float(v);
      }
      for (Op op : {Op::kTensorScatterMin, Op::kTensorScatterMax}) {
        Case c = testing::tensor_scatter_case(op, start, testing::ints<int32_t>({rows, 1}, idx),
                                              upd, Semantics::kTfGpu);
        const Outcome g = b->run(c);
        const Outcome e = emu->run(c);
        ASSERT_TRUE(g.ok() && e.ok()) << op_name(op);
        EXPECT_TRUE(g->bit_equal(*e)) << op_name(op) << " " << dtype_name(dt) << " slice " << slice;
      }
    }
  }
}

}  // namespace
}  // namespace gscheck::cuda
