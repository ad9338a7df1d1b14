// Properties of tf.scatter_nd (and the add/sub scatters it shares them with): output shape,
// adjointness with gather_nd, scatter-then-gather round trip, linearity in the updates, and
// invariance of sums under permuting the index rows.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>

#include "properties/checks.h"
#include "properties/generators.h"

namespace gscheck::props {
namespace {

const std::vector<gen::IndexStrategy> kInRangeStrategies = {
    gen::IndexStrategy::kInRange, gen::IndexStrategy::kHotKey, gen::IndexStrategy::kPermutation,
    gen::IndexStrategy::kSorted};

// An int32/int64 tensor of small values drawn by RapidCheck (sums of products cannot overflow).
Tensor small_ints(DType dt, const Shape& shape) {
  const int64_t n = shape.num_elements().value_or(0);
  const std::vector<int> v =
      *rc::gen::container<std::vector<int>>(static_cast<size_t>(n), rc::gen::inRange(-3, 4));
  Tensor t = Tensor::zeros(dt, shape, INT64_MAX).value();
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      for (int64_t i = 0; i < n; ++i) t.data_as<T>()[i] = static_cast<T>(v[static_cast<size_t>(i)]);
    } else {
      GSCHECK_CHECK(false && "small_ints takes int32 or int64");
    }
  });
  return t;
}

// Element i of an integer or real tensor as a double / int64.
double as_double(const Tensor& t, int64_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return to_float(t.data_as<T>()[i]);
    } else if constexpr (std::is_arithmetic_v<T>) {
      return static_cast<double>(t.data_as<T>()[i]);
    } else {
      GSCHECK_CHECK(false && "as_double takes a real dtype");
      return 0.0;
    }
  });
}

// Sum over all elements of a * b, wrapping in 64 bits (integer tensors).
int64_t dot(const Tensor& a, const Tensor& b) {
  uint64_t s = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i)
    s += static_cast<uint64_t>(a.int_at(i)) * static_cast<uint64_t>(b.int_at(i));
  return static_cast<int64_t>(s);
}

Case with_updates(const Case& c, Tensor updates) {
  Case d = c;
  d.updates = std::move(updates);
  return d;
}

double unit_roundoff(DType dt, bool half_in_float) {
  switch (dt) {
    case DType::kFloat16:
      return half_in_float ? std::ldexp(1.0, -24) : std::ldexp(1.0, -11);
    case DType::kBFloat16:
      return half_in_float ? std::ldexp(1.0, -24) : std::ldexp(1.0, -8);
    case DType::kFloat32:
      return std::ldexp(1.0, -24);
    case DType::kFloat64:
      return std::ldexp(1.0, -53);
    default:
      return 0.0;
  }
}

}  // namespace

void check_scatter_nd_shape_and_errors(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kScatterNd};
  check_shape_and_errors(ts, *gen::cases(k));
}

void check_scatter_nd_adjoint(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kScatterNd};
  k.dtypes = {DType::kInt32, DType::kInt64};
  k.strategies = kInRangeStrategies;
  const Case base = *gen::cases(k);
  const std::optional<Geometry> g = geometry(base);
  RC_ASSERT(g.has_value());
  const Case c = with_updates(base, small_ints(base.updates->dtype(), base.updates->shape()));
  tag_case(c);
  Case gnd;
  gnd.name = c.name + "/adjoint_gather_nd";
  gnd.op = Op::kGatherNd;
  gnd.semantics = c.semantics;
  gnd.bad_indices_policy = c.bad_indices_policy;
  gnd.params = small_ints(c.updates->dtype(), g->out_shape);
  gnd.indices = c.indices;
  for (const Target& t : ts) {
    const std::optional<Outcome> s = run_on(t, c);
    const std::optional<Outcome> gathered = run_on(t, gnd);
    if (!s || !gathered) continue;
    if (!s->ok() || !gathered->ok()) continue;  // error agreement is the differential's check
    const int64_t lhs = dot(s->value(), *gnd.params);
    const int64_t rhs = dot(*c.updates, gathered->value());
    if (lhs != rhs) {
      RC_FAIL(t.name + ": sum(scatter_nd(i, u) * p) = " + std::to_string(lhs) +
              " but sum(u * gather_nd(p, i)) = " + std::to_string(rhs));
    }
  }
}

void check_scatter_then_gather(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kScatterNd, Op::kTensorScatterUpdate};
  k.strategies = {gen::IndexStrategy::kPermutation};
  k.allow_specials = false;  // scatter_nd adds into +0.0, which turns an update of -0.0 into +0.0
  const Case c = *gen::cases(k);
  tag_case(c);
  Case gnd;
  gnd.name = c.name + "/gather_back";
  gnd.op = Op::kGatherNd;
  gnd.semantics = c.semantics;
  gnd.indices = c.indices;
  for (const Target& t : ts) {
    const std::optional<Outcome> s = run_on(t, c);
    if (!s || !s->ok()) continue;
    gnd.params = s->value();
    const std::optional<Outcome> back = run_on(t, gnd);
    if (!back) continue;
    if (!back->ok())
      RC_FAIL(t.name + ": gathering the scattered rows fails: " + outcome_text(*back));
    assert_bit_equal(t.name + " (gather_nd of scatter with distinct rows)", *c.updates,
                     back->value());
  }
}

void check_scatter_nd_linear(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kScatterNd};
  k.dtypes = {DType::kInt32, DType::kInt64};
  const Case base = *gen::cases(k);
  const DType dt = base.updates->dtype();
  const Tensor u1 = small_ints(dt, base.updates->shape());
  const Tensor u2 = small_ints(dt, base.updates->shape());
  std::vector<int64_t> sum(static_cast<size_t>(u1.num_elements()));
  for (int64_t i = 0; i < u1.num_elements(); ++i)
    sum[static_cast<size_t>(i)] = u1.int_at(i) + u2.int_at(i);
  Tensor u12 = Tensor::zeros(dt, u1.shape(), INT64_MAX).value();
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>)
      for (size_t i = 0; i < sum.size(); ++i) u12.data_as<T>()[i] = static_cast<T>(sum[i]);
  });
  const Case c1 = with_updates(base, u1), c2 = with_updates(base, u2),
             c12 = with_updates(base, u12);
  tag_case(c12);
  for (const Target& t : ts) {
    const std::optional<Outcome> s1 = run_on(t, c1), s2 = run_on(t, c2), s12 = run_on(t, c12);
    if (!s1 || !s2 || !s12) continue;
    if (s1->ok() != s12->ok() || s2->ok() != s12->ok()) {
      RC_FAIL(t.name + ": scatter_nd succeeds for some updates and fails for others: " +
              outcome_text(*s1) + " / " + outcome_text(*s2) + " / " + outcome_text(*s12));
    }
    if (!s12->ok()) continue;
    for (int64_t i = 0; i < s12->value().num_elements(); ++i) {
      const int64_t want = s1->value().int_at(i) + s2->value().int_at(i);
      if (s12->value().int_at(i) != want) {
        RC_FAIL(t.name + ": scatter_nd(u1 + u2)[" + std::to_string(i) +
                "] = " + std::to_string(s12->value().int_at(i)) +
                ", scatter_nd(u1) + scatter_nd(u2) = " + std::to_string(want));
      }
    }
  }
}

void check_scatter_add_row_permutation(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kScatterNd, Op::kTensorScatterAdd, Op::kTensorScatterSub};
  for (DType d : kAllDTypes)
    if (is_real_number(d)) k.dtypes.push_back(d);
  const Case c = *gen::cases(k);
  tag_case(c);
  const std::optional<Geometry> g = geometry(c);
  RC_ASSERT(g.has_value());
  // Permute the index rows and the update slices with them.
  std::vector<int64_t> perm(static_cast<size_t>(g->rows));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  const auto keys =
      *rc::gen::container<std::vector<uint32_t>>(perm.size(), rc::gen::arbitrary<uint32_t>());
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    return keys[static_cast<size_t>(a)] < keys[static_cast<size_t>(b)];
  });
  Case p = c;
  p.name = c.name + "/rows_permuted";
  const int64_t d = g->depth();
  for (int64_t r = 0; r < g->rows; ++r) {
    const int64_t from = perm[static_cast<size_t>(r)];
    for (int64_t j = 0; j < d; ++j) copy_element(*p.indices, r * d + j, *c.indices, from * d + j);
    for (int64_t s = 0; s < g->slice; ++s)
      copy_element(*p.updates, r * g->slice + s, *c.updates, from * g->slice + s);
  }
  // Per output element: how many terms meet there and the sum of their magnitudes.
  const int64_t out_n = g->out_shape.num_elements().value_or(0);
  std::vector<double> terms(static_cast<size_t>(out_n), 1.0),
      magnitude(static_cast<size_t>(out_n), 0.0);
  for (int64_t i = 0; i < out_n && c.tensor; ++i)
    magnitude[static_cast<size_t>(i)] = std::fabs(as_double(*c.tensor, i));
  for (int64_t r = 0; r < g->rows; ++r) {
    const std::optional<int64_t> f = tuple_flat(*g, index_row(c, *g, 0, r));
    if (!f) continue;
    for (int64_t s = 0; s < g->slice; ++s) {
      const auto o = static_cast<size_t>(*f * g->slice + s);
      terms[o] += 1;
      magnitude[o] += std::fabs(as_double(*c.updates, r * g->slice + s));
    }
  }
  for (const Target& t : ts) {
    const std::optional<Outcome> a = run_on(t, c), b = run_on(t, p);
    if (!a || !b) continue;
    if (a->ok() != b->ok() || (!a->ok() && a->error().cls != b->error().cls)) {
      RC_FAIL(t.name + ": permuting index rows changes the outcome from " + outcome_text(*a) +
              " to " + outcome_text(*b));
    }
    if (!a->ok()) continue;
    if (is_integer(c.updates->dtype())) {
      assert_bit_equal(t.name + " (rows permuted)", a->value(), b->value());
      continue;
    }
    const double u =
        unit_roundoff(c.updates->dtype(), t.backend->capabilities().accumulates_half_in_float);
    for (int64_t i = 0; i < out_n; ++i) {
      const double x = as_double(a->value(), i), y = as_double(b->value(), i);
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;
      // Both sums are within (k-1) u sum|x| of the exact one; one rounding to the dtype each.
      const auto k_i = static_cast<size_t>(i);
      const double bound =
          2.0 * ((terms[k_i] - 1) * u * magnitude[k_i] + u * std::fabs(x) + u * std::fabs(y));
      if (!(std::fabs(x - y) <= bound)) {
        RC_FAIL(t.name + ": element " + std::to_string(i) + " is " + std::to_string(x) +
                " before and " + std::to_string(y) + " after permuting rows (bound " +
                std::to_string(bound) + ")");
      }
    }
  }
}

}  // namespace gscheck::props

namespace {
using namespace gscheck::props;
RC_GTEST_PROP(ScatterNd, ShapeAndErrorsFollowFormula, ()) {
  check_scatter_nd_shape_and_errors(registry_targets());
}
RC_GTEST_PROP(ScatterNd, AdjointOfGatherNd, ()) { check_scatter_nd_adjoint(registry_targets()); }
RC_GTEST_PROP(ScatterNd, ScatterThenGatherReturnsUpdates, ()) {
  check_scatter_then_gather(registry_targets());
}
RC_GTEST_PROP(ScatterNd, LinearInUpdates, ()) { check_scatter_nd_linear(registry_targets()); }
RC_GTEST_PROP(ScatterNd, AddInvariantToRowPermutation, ()) {
  check_scatter_add_row_permutation(registry_targets());
}
}  // namespace
