#include "fuzz/decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace gscheck::fuzz {
namespace {

std::vector<uint8_t> random_bytes(std::mt19937& rng, std::size_t max_len) {
  std::uniform_int_distribution<std::size_t> len(0, max_len);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> v(len(rng));
  for (auto& b : v) b = static_cast<uint8_t>(byte(rng));
  return v;
}

Case decode(Family f, const std::vector<uint8_t>& bytes, const DecodeLimits& limits = {}) {
  return decode_case(f, bytes.data(), bytes.size(), limits);
}

std::vector<const std::optional<Tensor>*> inputs_of(const Case& c) {
  return {&c.params, &c.indices, &c.updates, &c.tensor, &c.shape, &c.axis};
}

bool same_case(const Case& a, const Case& b) {
  if (a.name != b.name || a.op != b.op || a.semantics != b.semantics || a.api != b.api ||
      a.batch_dims != b.batch_dims || a.bad_indices_policy != b.bad_indices_policy) {
    return false;
  }
  const auto ta = inputs_of(a), tb = inputs_of(b);
  for (std::size_t i = 0; i < ta.size(); ++i) {
    if (ta[i]->has_value() != tb[i]->has_value()) return false;
    if (ta[i]->has_value() && !(*ta[i])->bit_equal(**tb[i])) return false;
  }
  return true;
}

// The tensor whose shape drives an index column: params for gathers, the output for scatters.
std::vector<int64_t> indexed_dims(const Case& c) {
  if (c.params) return c.params->shape().dims();
  if (c.tensor) return c.tensor->shape().dims();
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < c.shape->num_elements(); ++i) dims.push_back(c.shape->int_at(i));
  return dims;
}

TEST(FuzzDecoder, EveryInputGivesAWellFormedSmallCase) {
  std::mt19937 rng(1);
  const DecodeLimits limits;
  const int64_t cap = 8 * std::max(limits.max_elements, limits.max_output_elements);
  for (Family f : kAllFamilies) {
    for (int i = 0; i < 3000; ++i) {
      const auto bytes = random_bytes(rng, 400);
      const Case c = decode(f, bytes);
      const Status st = check_well_formed(c);
      ASSERT_TRUE(st.ok()) << family_name(f) << " input " << i << ": " << st.error().message;
      for (const auto* t : inputs_of(c)) {
        if (*t) {
          EXPECT_LE((*t)->num_elements(), cap) << family_name(f) << " input " << i;
        }
      }
    }
  }
}

TEST(FuzzDecoder, SameBytesGiveTheSameCase) {
  std::mt19937 rng(2);
  for (Family f : kAllFamilies) {
    for (int i = 0; i < 200; ++i) {
      const auto bytes = random_bytes(rng, 200);
      EXPECT_TRUE(same_case(decode(f, bytes), decode(f, bytes))) << family_name(f);
    }
  }
}

TEST(FuzzDecoder, EmptyInputIsThePlainValidCase) {
  const Case g = decode(Family::kGather, {});
  EXPECT_EQ(g.op, Op::kGather);
  EXPECT_EQ(g.semantics, Semantics::kTfCpu);
  EXPECT_EQ(g.params->dtype(), DType::kFloat32);
  EXPECT_EQ(g.params->shape(), Shape({1}));
  EXPECT_EQ(g.params->data_as<float>()[0], 1.0f);  // self-describing: 1 + flat index
  EXPECT_EQ(g.indices->dtype(), DType::kInt32);
  EXPECT_EQ(g.indices->shape(), Shape({}));
  EXPECT_EQ(g.indices->int_at(0), 0);
  ASSERT_TRUE(g.axis.has_value());
  EXPECT_EQ(g.axis->int_at(0), 0);
  EXPECT_EQ(g.batch_dims, 0);

  const Case s = decode(Family::kTensorScatter, {});
  EXPECT_EQ(s.op, Op::kTensorScatterUpdate);
  EXPECT_EQ(s.tensor->shape(), Shape({1}));
  EXPECT_EQ(s.indices->shape(), Shape({1, 1}));
  EXPECT_EQ(s.updates->shape(), Shape({1}));
  EXPECT_EQ(s.bad_indices_policy, "");

  const Case sn = decode(Family::kScatterNd, {});
  EXPECT_EQ(sn.shape->shape(), Shape({1}));
  EXPECT_EQ(sn.shape->int_at(0), 1);
}

TEST(FuzzDecoder, SmallerLimitsGiveSmallerTensors) {
  std::mt19937 rng(3);
  DecodeLimits tight;
  tight.max_dim = 2;
  tight.max_elements = 8;
  tight.max_output_elements = 8;
  for (Family f : kAllFamilies) {
    for (int i = 0; i < 1000; ++i) {
      const Case c = decode(f, random_bytes(rng, 200), tight);
      for (const auto* t : inputs_of(c)) {
        if (*t && t != &c.shape && t != &c.axis) {
          EXPECT_LE((*t)->num_elements(), 8 * 8) << family_name(f) << (*t)->shape().to_string();
        }
      }
    }
  }
}

// Random bytes must reach the whole advertised space; each check names what was never drawn.
TEST(FuzzDecoder, ReachesEveryDtypeRankPolicyAndBoundary) {
  std::mt19937 rng(4);
  for (Family f : kAllFamilies) {
    std::set<DType> dtypes, index_dtypes;
    std::set<int> ranks;
    std::set<Semantics> semantics;
    std::set<std::string> policies;
    std::set<Op> ops;
    bool minus_one = false, equals_dim = false, dtype_min = false, dtype_max = false;
    bool duplicate_rows = false, in_range_case = false;
    for (int i = 0; i < 20000; ++i) {
      const Case c = decode(f, random_bytes(rng, 600));
      const Tensor& data = c.params ? *c.params : *c.updates;
      dtypes.insert(data.dtype());
      index_dtypes.insert(c.indices->dtype());
      ranks.insert(c.params   ? c.params->rank()
                   : c.tensor ? c.tensor->rank()
                              : static_cast<int>(c.shape->num_elements()));
      semantics.insert(c.semantics);
      policies.insert(c.bad_indices_policy);
      ops.insert(c.op);

      const Tensor& idx = *c.indices;
      const std::vector<int64_t> dims = indexed_dims(c);
      const int64_t depth = c.op == Op::kGather || idx.rank() == 0 ? 1 : idx.shape().dims().back();
      const int64_t first_dim = c.op == Op::kGather ? -1 : c.batch_dims;
      bool all_in_range = idx.num_elements() > 0;
      for (int64_t e = 0; e < idx.num_elements(); ++e) {
        const int64_t v = idx.int_at(e);
        minus_one |= v == -1;
        dtype_min |= idx.dtype() == DType::kInt16 && v == INT16_MIN;
        dtype_max |= idx.dtype() == DType::kInt64 && v == INT64_MAX;
        if (c.op != Op::kGather && depth > 0 && first_dim >= 0) {
          const auto dim = static_cast<std::size_t>(first_dim + e % depth);
          if (dim < dims.size()) {
            equals_dim |= v == dims[dim];
            all_in_range &= v >= 0 && v < dims[dim];
          }
        }
        if (is_scatter(c.op) && depth > 0 && e >= depth && e % depth == 0) {
          bool same = true;
          for (int64_t j = 0; j < depth && e + j < idx.num_elements(); ++j)
            same &= idx.int_at(e + j) == idx.int_at(e + j - depth);
          duplicate_rows |= same;
        }
      }
      in_range_case |= all_in_range;
    }
    const std::string name(family_name(f));
    EXPECT_EQ(dtypes.size(), std::size(kAllDTypes)) << name;
    for (DType dt : {DType::kInt16, DType::kInt32, DType::kInt64})
      EXPECT_TRUE(index_dtypes.count(dt)) << name << " never drew " << dtype_name(dt);
    for (int r = 0; r <= 7; ++r) EXPECT_TRUE(ranks.count(r)) << name << " never drew rank " << r;
    EXPECT_EQ(semantics.size(), std::size(kAllSemantics)) << name;
    EXPECT_TRUE(minus_one) << name;
    EXPECT_TRUE(dtype_min) << name;
    EXPECT_TRUE(dtype_max) << name;
    if (f == Family::kGather) {
      EXPECT_EQ(policies.size(), 1u) << "gather has no bad_indices_policy";
    } else {
      EXPECT_EQ(policies, (std::set<std::string>{"", "DEFAULT", "ERROR", "IGNORE", "ignore"}))
          << name;
      EXPECT_TRUE(equals_dim) << name << " never drew an index equal to its dimension";
      EXPECT_TRUE(in_range_case) << name << " never drew a case with every index in range";
    }
    if (f == Family::kScatterNd || f == Family::kTensorScatter) {
      EXPECT_TRUE(duplicate_rows) << name << " never drew a duplicate index row";
    }
    if (f == Family::kTensorScatter) {
      EXPECT_EQ(ops.size(), 5u);
    }
  }
}

// A quarter of the inputs are raw-kernel cases, shaped as Python would pass them.
TEST(FuzzDecoder, ReachesKernelLevelCasesOfEveryFamily) {
  std::mt19937 rng(7);
  for (Family f : kAllFamilies) {
    int kernel = 0, python = 0;
    for (int i = 0; i < 2000; ++i) {
      const Case c = decode(f, random_bytes(rng, 256));
      if (c.api == Api::kKernel) {
        ++kernel;
        EXPECT_TRUE(c.name.ends_with("/kernel")) << c.name;
        if (c.op == Op::kGather) {
          EXPECT_TRUE(c.axis.has_value()) << c.name;
        }
        if (c.op == Op::kGatherNd) {
          EXPECT_EQ(c.batch_dims, 0) << c.name;
        }
      } else {
        ++python;
      }
    }
    EXPECT_GT(kernel, 200) << family_name(f);
    EXPECT_GT(python, 1000) << family_name(f);
  }
  EXPECT_EQ(decode(Family::kGather, {}).api, Api::kPython);  // exhausted input: Python level
}

TEST(FuzzDecoder, GatherReachesAxisAndBatchDimsExtremes) {
  std::mt19937 rng(5);
  bool axis_none = false, axis_negative = false, axis_not_scalar = false, axis_int64_max = false;
  bool batch_positive = false, batch_negative = false, batch_int64_min = false;
  for (int i = 0; i < 20000; ++i) {
    const Case c = decode(Family::kGather, random_bytes(rng, 300));
    if (!c.axis) {
      axis_none = true;
    } else if (c.axis->rank() > 0) {
      axis_not_scalar = true;
    } else {
      axis_negative |= c.axis->int_at(0) < 0;
      axis_int64_max |= c.axis->int_at(0) == INT64_MAX;
    }
    batch_positive |= c.batch_dims > 0;
    batch_negative |= c.batch_dims < 0;
    batch_int64_min |= c.batch_dims == INT64_MIN;
  }
  EXPECT_TRUE(axis_none);
  EXPECT_TRUE(axis_negative);
  EXPECT_TRUE(axis_not_scalar);
  EXPECT_TRUE(axis_int64_max);
  EXPECT_TRUE(batch_positive);
  EXPECT_TRUE(batch_negative);
  EXPECT_TRUE(batch_int64_min);
}

}  // namespace
}  // namespace gscheck::fuzz
