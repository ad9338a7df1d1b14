// cuda-emu race mode against the real kernels: no race may be reported, and the results must
// match the reference. The mutants cuda_race_plain_add_rmw and cuda_race_plain_store
// (tools/mutants.json: the scatter add's atomic as a plain read-modify-write, update's atomic
// store as a plain store) must fail these tests, which is how race mode itself is checked.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "compare/compare.h"
#include "core/case_json.h"
#include "cuda/cuda_backends.h"
#include "properties/sample.h"
#include "reference/reference.h"

namespace gscheck::cuda {
namespace {

// tf-gpu op of `rows` index rows all addressing element 1 of a float32 [4] (or [4, slice]).
Case colliding_scatter(const std::string& op, int rows, int slice = 1) {
  nlohmann::json indices = nlohmann::json::array(), updates = nlohmann::json::array();
  for (int r = 0; r < rows; ++r) {
    indices.push_back(1);
    for (int j = 0; j < slice; ++j) updates.push_back(r + 1);
  }
  std::vector<int> tensor_shape = {4}, updates_shape = {rows};
  if (slice > 1) {
    tensor_shape.push_back(slice);
    updates_shape.push_back(slice);
  }
  const nlohmann::json j = {
      {"gscheck_case", 1},
      {"name", "race/" + op},
      {"op", op},
      {"semantics", "tf-gpu"},
      {"inputs",
       {{"tensor", {{"dtype", "float32"}, {"shape", tensor_shape}, {"fill", 0}}},
        {"indices", {{"dtype", "int32"}, {"shape", {rows, 1}}, {"data", indices}}},
        {"updates", {{"dtype", "float32"}, {"shape", updates_shape}, {"data", updates}}}}}};
  auto f = case_file_from_json(j);
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f->c;
}

TEST(RaceMode, IsAvailableInThisBuild) {
  if (!race_mode_available()) GTEST_SKIP() << "race mode unavailable (sanitizer build)";
  auto b = make_cuda_emu_backend(1, {.race = true});
  EXPECT_EQ(b->capabilities().name, "cuda-emu-race");
}

TEST(RaceMode, CollidingAtomicAddAndUpdate) {
  if (!race_mode_available()) GTEST_SKIP() << "race mode unavailable (sanitizer build)";
  auto race = make_cuda_emu_backend(1, {.race = true, .race_seed = 7});
  for (const char* op : {"tensor_scatter_nd_add", "tensor_scatter_nd_update"}) {
    const Case c = colliding_scatter(op, 64);
    const Outcome got = race->run(c);
    // The real kernels use atomics: no race, and the result is one TF allows.
    ASSERT_TRUE(got.ok()) << op << ": " << got.error().message;
    const auto v = compare::compare_outcomes(c, reference::run(c), got,
                                             compare::options_for(race->capabilities()));
    EXPECT_TRUE(v.pass) << op << ": " << v.summary;
  }
}

TEST(RaceMode, PlantedRacesAreInvisibleWithoutIt) {
  // One worker thread runs the grid's threads one after another: no update is ever lost, so
  // plain cuda-emu passes even with the race mutants planted. This is why race mode exists.
  auto plain = make_cuda_emu_backend(1);
  for (const char* op : {"tensor_scatter_nd_add", "tensor_scatter_nd_update"}) {
    const Case c = colliding_scatter(op, 64);
    const Outcome got = plain->run(c);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_TRUE(compare::compare_outcomes(c, reference::run(c), got,
                                          compare::options_for(plain->capabilities()))
                    .pass);
  }
}

TEST(RaceMode, RefusesCasesTooLargeToShadow) {
  if (!race_mode_available()) GTEST_SKIP() << "race mode unavailable (sanitizer build)";
  auto race = make_cuda_emu_backend(1, {.race = true});
  // 10M index rows and float32 updates, 80 MB: more device memory than race mode tracks
  // (64 MiB), so outside its declared budget (UNIMPLEMENTED in a run), not a 2 GB shadow.
  const nlohmann::json j = {
      {"gscheck_case", 1},
      {"name", "race/too_big"},
      {"op", "scatter_nd"},
      {"semantics", "tf-gpu"},
      {"inputs",
       {{"indices", {{"dtype", "int32"}, {"shape", {10000000, 1}}, {"fill", 0}}},
        {"updates", {{"dtype", "float32"}, {"shape", {10000000}}, {"fill", 1}}},
        {"shape", {{"dtype", "int32"}, {"shape", {1}}, {"data", {4}}}}}}};
  auto f = case_file_from_json(j, int64_t{1} << 30);
  ASSERT_TRUE(f.ok()) << f.error().message;
  const Outcome got = race->run(f->c);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().cls, ErrorClass::kUnimplemented) << got.error().message;
  EXPECT_NE(got.error().message.find("are over the backend's own budget of 33554432 bytes"),
            std::string::npos)
      << got.error().message;
  EXPECT_EQ(race->capabilities().max_case_bytes, int64_t{32} << 20);
}

// The sweep of tf-gpu scatter cases: the real kernels report no race at all.
TEST(RaceMode, SweepOfScatterCases) {
  if (!race_mode_available()) GTEST_SKIP() << "race mode unavailable (sanitizer build)";
  auto race = make_cuda_emu_backend(1, {.race = true});
  gen::SampleOptions so;
  so.seed = 20261201;
  so.count = 400;
  so.ops = {Op::kTensorScatterAdd, Op::kTensorScatterUpdate, Op::kScatterNd};
  so.dtypes = {DType::kFloat32, DType::kInt32, DType::kFloat64};
  so.semantics = {Semantics::kTfGpu};
  int races = 0, ran = 0;
  for (const Case& c : gen::sample_cases(so)) {
    const Outcome got = race->run(c);
    ++ran;
    const bool raced = !got.ok() && got.error().message.starts_with("race mode: data race in ");
    races += raced;
    EXPECT_FALSE(raced) << c.name << ": " << got.error().message;
  }
  std::cout << ran << " tf-gpu scatter cases, " << races << " with a race reported\n";
}

}  // namespace
}  // namespace gscheck::cuda
