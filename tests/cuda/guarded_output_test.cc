// Poison and redzones: deliberately broken kernels must be caught as kInternal errors naming
// the offset.
#include "cuda/guarded_output.h"

#include <gtest/gtest.h>

#include <vector>

#include "cuda/emu_executor.h"
#include "cuda/portability.h"

namespace gscheck::cuda {
namespace {

// Writes out[i] = i for i in [first, last) (a correct kernel when first = 0, last = n).
struct FillKernel {
  uint32_t* out;
  int64_t first;
  int64_t last;
  int64_t skip;  // element left unwritten (-1: none)
  void operator()(const ThreadIndex& t) const {
    for (int64_t i = first + static_cast<int64_t>(t.global()); i < last;
         i += static_cast<int64_t>(t.total())) {
      if (i != skip) out[i] = static_cast<uint32_t>(i);
    }
  }
};

Status run_fill(EmuExec& ex, int64_t n, int64_t first, int64_t last, int64_t skip,
                std::optional<uint8_t> poison) {
  auto g = GuardedOutput<EmuExec>::create(ex, n * 4, poison);
  if (!g.ok()) return g.error();
  FillKernel k{reinterpret_cast<uint32_t*>(g->data()), first, last, skip};
  GSCHECK_RETURN_IF_ERROR(ex.launch(k, static_cast<uint64_t>(last - first), 64));
  std::vector<uint8_t> host(n * 4);
  return g->finish(ex, host.data(), 4);
}

TEST(GuardedOutput, CorrectKernelPasses) {
  EmuExec ex(2);
  EXPECT_TRUE(run_fill(ex, 1000, 0, 1000, -1, 0xA5).ok());
}

TEST(GuardedOutput, WritePastTheEndIsCaught) {
  EmuExec ex(2);
  Status s = run_fill(ex, 1000, 0, 1001, -1, 0xA5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().cls, ErrorClass::kInternal);
  EXPECT_NE(s.error().message.find("byte offset 4000"), std::string::npos) << s.error().message;
}

TEST(GuardedOutput, WriteBeforeTheStartIsCaught) {
  EmuExec ex(2);
  Status s = run_fill(ex, 100, -2, 100, -1, std::nullopt);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().cls, ErrorClass::kInternal);
  EXPECT_NE(s.error().message.find("byte offset -8 before"), std::string::npos)
      << s.error().message;
}

TEST(GuardedOutput, UnwrittenElementIsCaught) {
  EmuExec ex(2);
  Status s = run_fill(ex, 1000, 0, 1000, 637, 0xA5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().cls, ErrorClass::kInternal);
  EXPECT_NE(s.error().message.find("element 637 (byte offset 2548)"), std::string::npos)
      << s.error().message;
  // Without poison (scatter outputs start defined) the same gap is not an error.
  EXPECT_TRUE(run_fill(ex, 1000, 0, 1000, 637, std::nullopt).ok());
}

TEST(GuardedOutput, PoisonAvoidsPatternsPresentInTheSource) {
  std::vector<uint8_t> src(64, 0xA5);  // 0xA5A5A5A5 occurs as an element
  auto p = choose_poison(src.data(), src.size(), 4);
  ASSERT_TRUE(p.has_value());
  EXPECT_NE(*p, 0xA5);
  std::vector<uint8_t> bytes(256);
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(i);
  EXPECT_FALSE(choose_poison(bytes.data(), bytes.size(), 1).has_value());  // all 256 occur
  bytes.resize(200);
  auto q = choose_poison(bytes.data(), bytes.size(), 1);
  ASSERT_TRUE(q.has_value());
  EXPECT_GE(*q, 200);
}

}  // namespace
}  // namespace gscheck::cuda
