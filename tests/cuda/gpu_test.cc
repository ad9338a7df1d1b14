// The real kernels on a GPU: the same differential sweep as cuda-emu, plus bit-for-bit
// agreement with cuda-emu on data-movement ops. Skips with the reason when no GPU is usable,
// unless GSCHECK_REQUIRE_GPU=1 (scripts/gpu_check.sh sets it): then no GPU is a failure, so a
// driver problem on the GPU machine cannot read as success.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "cuda/cuda_backends.h"
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

}  // namespace
}  // namespace gscheck::cuda
