// `gscheck run`'s sweep and `gscheck export` draw from one sampler: the sweep sees the boundary
// values export writes (subnormals, NaN payloads, signed zeros, integer and index extremes), and
// with equal options the two streams are the same cases, input for input.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "backends/reference_backend.h"
#include "core/case_json.h"
#include "reference/reference.h"
#include "tools/sweep_options.h"

namespace gscheck::tools {
namespace {

// The whole case, bit for bit (base64 tensors), as a case file writes it.
std::string text_of(const Case& c) {
  CaseFile f;
  f.c = c;
  return case_file_to_json(f, TensorEncoding::kBase64).dump();
}

template <class U>
U bits_at(const Tensor& t, int64_t i, int part = 0) {
  U u;
  std::memcpy(&u, t.data() + (i * (is_complex(t.dtype()) ? 2 : 1) + part) * sizeof(U), sizeof u);
  return u;
}

// What each float element is, named by kind ("float32 subnormal", "bfloat16 signalling NaN").
// exp_bits/man_bits describe the format; classified from the bits alone, not from the sampler's
// own list, so a value the sampler stops drawing makes the test fail.
void classify(const std::string& type, uint64_t b, int exp_bits, int man_bits,
              std::map<std::string, int>& seen) {
  const uint64_t man = b & ((uint64_t{1} << man_bits) - 1);
  const uint64_t exp = (b >> man_bits) & ((uint64_t{1} << exp_bits) - 1);
  const bool neg = (b >> (exp_bits + man_bits)) & 1;
  const uint64_t exp_max = (uint64_t{1} << exp_bits) - 1;
  if (exp == 0 && man != 0) {
    ++seen[type + " subnormal"];
    if (man == 1) ++seen[type + (neg ? " -min subnormal" : " min subnormal")];
    if (man == (uint64_t{1} << man_bits) - 1) ++seen[type + " largest subnormal"];
  }
  if (exp == 0 && man == 0 && neg) ++seen[type + " -0"];
  if (exp == 1 && man == 0 && !neg) ++seen[type + " min normal"];
  if (exp == exp_max && man == 0) ++seen[type + (neg ? " -inf" : " +inf")];
  if (exp == exp_max - 1 && man == (uint64_t{1} << man_bits) - 1) ++seen[type + " max"];
  if (exp == exp_max && man != 0) {
    const bool quiet = (man >> (man_bits - 1)) & 1;
    if (!quiet) ++seen[type + " signalling NaN"];
    if (quiet && (man & ((uint64_t{1} << (man_bits - 1)) - 1)) != 0)
      ++seen[type + " quiet NaN with payload"];
    if (neg) ++seen[type + " negative NaN"];
  }
}

void count_elements(const Tensor& t, std::map<std::string, int>& seen) {
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DType::kFloat16:
        classify("float16", bits_at<uint16_t>(t, i), 5, 10, seen);
        break;
      case DType::kBFloat16:
        classify("bfloat16", bits_at<uint16_t>(t, i), 8, 7, seen);
        break;
      case DType::kFloat32:
        classify("float32", bits_at<uint32_t>(t, i), 8, 23, seen);
        break;
      case DType::kFloat64:
        classify("float64", bits_at<uint64_t>(t, i), 11, 52, seen);
        break;
      case DType::kComplex64:
        for (int part = 0; part < 2; ++part)
          classify("complex64 part", bits_at<uint32_t>(t, i, part), 8, 23, seen);
        break;
      case DType::kComplex128:
        for (int part = 0; part < 2; ++part)
          classify("complex128 part", bits_at<uint64_t>(t, i, part), 11, 52, seen);
        break;
      case DType::kInt32:
        if (t.int_at(i) == std::numeric_limits<int32_t>::min()) ++seen["int32 min"];
        if (t.int_at(i) == std::numeric_limits<int32_t>::max()) ++seen["int32 max"];
        if (t.int_at(i) == -1) ++seen["int32 -1"];
        break;
      case DType::kInt64:
        if (t.int_at(i) == std::numeric_limits<int64_t>::min()) ++seen["int64 min"];
        if (t.int_at(i) == std::numeric_limits<int64_t>::max()) ++seen["int64 max"];
        break;
      case DType::kUInt64:
        if (bits_at<uint64_t>(t, i) == std::numeric_limits<uint64_t>::max()) ++seen["uint64 max"];
        if (bits_at<uint64_t>(t, i) == uint64_t{1} << 63) ++seen["uint64 2^63"];
        break;
      default:
        break;
    }
  }
}

void count_indices(const Tensor& t, std::map<std::string, int>& seen) {
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int64_t v = t.int_at(i);
    if (t.dtype() == DType::kInt64 && v == std::numeric_limits<int64_t>::min())
      ++seen["index int64 min"];
    if (t.dtype() == DType::kInt64 && v == std::numeric_limits<int64_t>::max())
      ++seen["index int64 max"];
    if (t.dtype() == DType::kInt32 && v == std::numeric_limits<int32_t>::min())
      ++seen["index int32 min"];
    if (t.dtype() == DType::kInt32 && v == std::numeric_limits<int32_t>::max())
      ++seen["index int32 max"];
  }
}

std::map<std::string, int> census(const std::vector<Case>& cases) {
  std::map<std::string, int> seen;
  for (const Case& c : cases) {
    if (c.updates) count_elements(*c.updates, seen);
    if (c.tensor) count_elements(*c.tensor, seen);
    if (c.indices) count_indices(*c.indices, seen);
  }
  return seen;
}

// The reference claims everything: run's sweep on it is the sampler's unfiltered stream.
gen::SampleOptions reference_sweep(uint64_t seed, int count, double fraction,
                                   std::optional<Semantics> only = std::nullopt) {
  return run_sweep_options(make_reference_backend()->capabilities(), seed, count, 30, fraction,
                           only);
}

TEST(RunSweep, DrawsBoundaryValuesAndIndexExtremes) {
  const std::vector<Case> cases = gen::sample_cases(reference_sweep(1, 3000, 0.5));
  const std::map<std::string, int> seen = census(cases);
  for (const char* kind : {"float16 min subnormal",
                           "float16 -min subnormal",
                           "float16 largest subnormal",
                           "float16 -0",
                           "float16 +inf",
                           "float16 -inf",
                           "float16 max",
                           "float16 min normal",
                           "float16 signalling NaN",
                           "float16 quiet NaN with payload",
                           "float16 negative NaN",
                           "bfloat16 min subnormal",
                           "bfloat16 -min subnormal",
                           "bfloat16 largest subnormal",
                           "bfloat16 -0",
                           "bfloat16 signalling NaN",
                           "bfloat16 negative NaN",
                           "bfloat16 max",
                           "float32 min subnormal",
                           "float32 -min subnormal",
                           "float32 largest subnormal",
                           "float32 -0",
                           "float32 +inf",
                           "float32 -inf",
                           "float32 max",
                           "float32 min normal",
                           "float32 signalling NaN",
                           "float32 quiet NaN with payload",
                           "float32 negative NaN",
                           "float64 min subnormal",
                           "float64 largest subnormal",
                           "float64 -0",
                           "float64 signalling NaN",
                           "float64 negative NaN",
                           "complex64 part subnormal",
                           "complex64 part signalling NaN",
                           "complex128 part subnormal",
                           "complex128 part -0",
                           "int32 min",
                           "int32 max",
                           "int32 -1",
                           "int64 min",
                           "int64 max",
                           "uint64 max",
                           "uint64 2^63",
                           "index int64 min",
                           "index int64 max",
                           "index int32 min",
                           "index int32 max"})
    EXPECT_GT(seen.count(kind) ? seen.at(kind) : 0, 0) << kind << " never drawn";

  // Without boundary values the generator's data has no subnormals or signalling NaNs: the
  // sampler is what puts them there. Shapes, indices and attributes stay as they were.
  const std::vector<Case> plain = gen::sample_cases(reference_sweep(1, 3000, 0));
  const std::map<std::string, int> plain_seen = census(plain);
  for (const char* kind : {"float32 subnormal", "float16 subnormal", "bfloat16 subnormal",
                           "float64 subnormal", "float32 signalling NaN"})
    EXPECT_EQ(plain_seen.count(kind), 0u) << kind;
  EXPECT_EQ(plain_seen.at("index int64 min"), seen.at("index int64 min"));
  ASSERT_EQ(plain.size(), cases.size());
  int changed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &a = cases[i], &b = plain[i];
    ASSERT_EQ(a.name, b.name);
    ASSERT_TRUE(a.indices && b.indices ? a.indices->bit_equal(*b.indices)
                                       : a.indices.has_value() == b.indices.has_value())
        << a.name;
    if (a.updates) {
      ASSERT_EQ(a.updates->shape(), b.updates->shape()) << a.name;
    }
    if (a.params) {
      ASSERT_TRUE(a.params->bit_equal(*b.params)) << a.name;  // gather: copies
    }
    const bool differs = text_of(a) != text_of(b);
    changed += differs;
    if (differs) {
      EXPECT_TRUE(gen::takes_boundary_values(a.op) &&
                  gen::boundary_case(1, static_cast<int64_t>(i), a.op, 0.5))
          << a.name;
    }
  }
  EXPECT_GT(changed, 600);  // about 900: half the cases of five of the eight ops
}

// One position in 64 is a large case (10,000 to 1,000,000 output elements): the generator's own
// budget never draws 10,000, so a one-element error in a large output would go unseen. The
// other positions are the cases a share of 0 gives.
TEST(RunSweep, DrawsLargeOutputsInAFixedShare) {
  gen::SampleOptions with = reference_sweep(1, 3000, 0.5), without = with;
  without.large_fraction = 0;
  const std::vector<Case> cases = gen::sample_cases(with), plain = gen::sample_cases(without);
  ASSERT_EQ(cases.size(), plain.size());
  int large = 0, computed = 0, over_100k = 0, refused = 0;
  int64_t largest_plain = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const bool named = cases[i].name.find("/large") != std::string::npos;
    const bool drawn = gen::large_case(1, static_cast<int64_t>(i), 1.0 / 64);
    ASSERT_TRUE(!named || drawn) << cases[i].name;
    refused += drawn && !named;  // a dtype the op takes no kernel for: the case stays invalid
    if (!named) {
      ASSERT_EQ(text_of(cases[i]), text_of(plain[i])) << cases[i].name;
      const Outcome o = reference::run(plain[i]);
      if (o.ok()) largest_plain = std::max(largest_plain, o->num_elements());
      continue;
    }
    ++large;
    const Outcome o = reference::run(cases[i]);
    if (!o.ok()) continue;  // a dtype or policy the op refuses: still that class of case
    ++computed;
    EXPECT_GE(o->num_elements(), 10000) << cases[i].name;
    EXPECT_LE(o->num_elements(), 1000000) << cases[i].name;
    if (o->dtype() != DType::kString) {
      EXPECT_LE(o->num_elements() * static_cast<int64_t>(dtype_size(o->dtype())), int64_t{8} << 20)
          << cases[i].name;
    }
    over_100k += o->num_elements() >= 100000;
  }
  EXPECT_GE(large, 3000 / 128);
  EXPECT_LE(large, 3000 / 32);
  EXPECT_GE(computed, large * 3 / 4);
  EXPECT_LE(refused, large / 4);
  EXPECT_GT(over_100k, 0);
  EXPECT_LT(largest_plain, 10000);  // what the large cases add
}

// export --semantics xla|jax: the reference's run with --semantics of that profile, case for
// case, so XLA-hosted runtimes get replayable case files of their own profile too.
TEST(RunSweep, ExportOfEveryProfileIsRunsSweepOfIt) {
  for (Semantics s : {Semantics::kTfGpu, Semantics::kXla, Semantics::kJax}) {
    const std::vector<Case> run = gen::sample_cases(reference_sweep(5, 200, 0.5, s));
    const std::vector<Case> exported =
        gen::sample_cases(export_sample_options(5, 200, 30, /*include_invalid=*/true, 0.5, s));
    ASSERT_EQ(run.size(), exported.size());
    for (size_t i = 0; i < run.size(); ++i) {
      ASSERT_EQ(exported[i].semantics, s) << exported[i].name;
      ASSERT_EQ(text_of(run[i]), text_of(exported[i])) << run[i].name;
    }
  }
}

TEST(RunSweep, SameCasesAsExportForTheSameOptions) {
  for (uint64_t seed : {1u, 7u}) {
    // export --include-invalid: run's invalid fraction; tf-cpu: export's semantics.
    const std::vector<Case> run =
        gen::sample_cases(reference_sweep(seed, 400, 0.5, Semantics::kTfCpu));
    const std::vector<Case> exported =
        gen::sample_cases(export_sample_options(seed, 400, 30, /*include_invalid=*/true, 0.5));
    ASSERT_EQ(run.size(), exported.size());
    for (size_t i = 0; i < run.size(); ++i) {
      ASSERT_EQ(run[i].name, exported[i].name);
      ASSERT_EQ(text_of(run[i]), text_of(exported[i])) << run[i].name;
    }
    // Export without --include-invalid: the choice "aimed at a validation rule or not" is still
    // drawn, so case i is run's case i wherever that is valid, and a valid case where run's is
    // invalid (which the reference rejects; the redrawn case may differ in API level too).
    const std::vector<Case> valid_only =
        gen::sample_cases(export_sample_options(seed, 400, 30, false, 0.5));
    int same = 0;
    for (size_t i = 0; i < run.size(); ++i) {
      // A large case takes the op and dtypes drawn there and new tensors: where run drew an
      // invalid case, its large case is valid and export's comes from the redrawn valid one.
      if (gen::large_case(seed, static_cast<int64_t>(i), gen::kDefaultLargeFraction)) continue;
      if (text_of(run[i]) == text_of(valid_only[i])) {
        ++same;
      } else {
        EXPECT_FALSE(reference::run(run[i]).ok()) << run[i].name << " is valid but was redrawn";
      }
    }
    EXPECT_GT(same, 400 * 6 / 10);
    EXPECT_LT(same, 400 * 95 / 100);
    // Run's default sweep on the reference draws tf-gpu, xla and jax cases too: where it does,
    // export has the tf-cpu case with the same inputs (the semantics is drawn apart from
    // everything else; a jax case only drops its bad_indices_policy, which JAX does not have).
    const std::vector<Case> all = gen::sample_cases(reference_sweep(seed, 400, 0.5));
    int other = 0;
    for (size_t i = 0; i < run.size(); ++i) {
      Case c = all[i];
      Case cpu = run[i];
      other += c.semantics != Semantics::kTfCpu;
      if (c.semantics == Semantics::kJax) {  // the drawn policy was cleared, a rule's was not
        cpu.bad_indices_policy.clear();
        c.bad_indices_policy.clear();
      }
      c.semantics = Semantics::kTfCpu;
      EXPECT_EQ(text_of(c), text_of(cpu)) << c.name;
    }
    EXPECT_GT(other, 400 / 2);  // three of the four semantics
    EXPECT_LT(other, 400 * 9 / 10);
  }
}

}  // namespace
}  // namespace gscheck::tools
