// cuda-emu against the reference over seeded random cases, and over the golden corpus.
#include <gtest/gtest.h>

#include <iostream>

#include "cuda/cuda_backends.h"
#include "tests/cuda/sweep_differential.h"

namespace gscheck::cuda {
namespace {

using testing::sweep_against_reference;

class CudaEmuSweep : public ::testing::TestWithParam<Op> {};

TEST_P(CudaEmuSweep, AgreesWithTheReference) {
  for (bool det : {false, true}) {
    auto b = make_cuda_emu_backend(2, KernelOptions{.deterministic = det});
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
    if (!b->capabilities().tf_messages) f->expect->error_regex.reset();
    const Outcome got = b->run(f->c);
    if (!got.ok() && got.error().cls == ErrorClass::kUnimplemented) continue;
    ++checked;
    const compare::Verdict v = compare::check_expect(f->c, *f->expect, got, opts);
    EXPECT_TRUE(v.pass) << path << ": " << v.summary;
  }
  EXPECT_GT(checked, 0) << "no golden case was claimed by cuda-emu";
}

}  // namespace
}  // namespace gscheck::cuda
