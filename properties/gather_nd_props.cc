// Properties of tf.gather_nd: output shape, bit-exact self-describing data (whole rows zeroed
// where tf-gpu or IGNORE skip a bad row), batch_dims as a loop over batches.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/checks.h"
#include "properties/generators.h"

namespace gscheck::props {
namespace {

gen::Constraints gather_nd_only() {
  gen::Constraints k;
  k.ops = {Op::kGatherNd};
  return k;
}

// out[b, r, s] = params[b, tuple(r), s]; a row with a bad coordinate is all zeros.
Tensor expected_gather_nd(const Case& c, const Geometry& g) {
  Tensor out = Tensor::zeros(c.params->dtype(), g.out_shape, INT64_MAX).value();
  const int64_t tuples = g.tuples();
  for (int64_t b = 0; b < g.batches; ++b)
    for (int64_t r = 0; r < g.rows; ++r) {
      const std::optional<int64_t> f = tuple_flat(g, index_row(c, g, b, r));
      if (!f) continue;
      for (int64_t s = 0; s < g.slice; ++s)
        copy_element(out, (b * g.rows + r) * g.slice + s, *c.params,
                     (b * tuples + *f) * g.slice + s);
    }
  return out;
}

}  // namespace

void check_gather_nd_shape_and_errors(const Targets& ts) {
  check_shape_and_errors(ts, *gen::cases(gather_nd_only()));
}

void check_gather_nd_bit_exact(const Targets& ts) {
  const Case c = *gen::cases(gather_nd_only());
  tag_case(c);
  const Outcome ref = reference_outcome(c);
  if (!ref.ok()) return;  // errors are the shape property's and the differential's business
  const std::optional<Geometry> g = geometry(c);
  RC_ASSERT(g.has_value());
  const Tensor want = expected_gather_nd(c, *g);
  assert_bit_equal("reference", want, ref.value());
  for (const Target& t : ts) {
    const std::optional<Outcome> got = run_on(t, c);
    if (!got) continue;
    if (!got->ok()) RC_FAIL(t.name + ": " + outcome_text(*got));
    assert_bit_equal(t.name, want, got->value());
  }
}

void check_gather_nd_batch_dims_loop(const Targets& ts) {
  gen::Constraints k = gather_nd_only();
  k.require_batch_dims = true;
  const Case c = *gen::cases(k);
  tag_case(c);
  const std::optional<Geometry> g = geometry(c);
  RC_ASSERT(g.has_value());
  const auto bd = static_cast<std::ptrdiff_t>(g->batch_dims);
  const auto& pd = c.params->shape().dims();
  const auto& id = c.indices->shape().dims();
  const Shape sub_params(std::vector<int64_t>(pd.begin() + bd, pd.end()));
  const Shape sub_indices(std::vector<int64_t>(id.begin() + bd, id.end()));
  for (const Target& t : ts) {
    const std::optional<Outcome> whole = run_on(t, c);
    if (!whole) continue;
    Tensor joined = Tensor::zeros(c.params->dtype(), g->out_shape, INT64_MAX).value();
    std::optional<Error> failed;
    bool unclaimed = false;
    int64_t at = 0;
    for (int64_t b = 0; b < g->batches; ++b) {
      Case one;
      one.name = c.name + "/batch_" + std::to_string(b);
      one.op = Op::kGatherNd;
      one.semantics = c.semantics;
      one.bad_indices_policy = c.bad_indices_policy;
      one.params = block(*c.params, g->batches, b, sub_params);
      one.indices = block(*c.indices, g->batches, b, sub_indices);
      const std::optional<Outcome> part = run_on(t, one);
      if (!part) {
        unclaimed = true;
        break;
      }
      if (!part->ok()) {
        failed = part->error();
        break;
      }
      for (int64_t i = 0; i < part->value().num_elements(); ++i)
        copy_element(joined, at++, part->value(), i);
    }
    if (unclaimed) continue;
    if (whole->ok() != !failed.has_value() || (failed && whole->error().cls != failed->cls)) {
      RC_FAIL(t.name + ": batched gather_nd gives " + outcome_text(*whole) +
              ", the per-batch loop " +
              (failed ? "fails: " + failed->message : std::string("succeeds")));
    }
    if (whole->ok()) assert_bit_equal(t.name + " (per-batch loop)", joined, whole->value());
  }
}

}  // namespace gscheck::props

namespace {
using namespace gscheck::props;
RC_GTEST_PROP(GatherNd, ShapeAndErrorsFollowFormula, ()) {
  check_gather_nd_shape_and_errors(registry_targets());
}
RC_GTEST_PROP(GatherNd, BitExactEveryElementWritten, ()) {
  check_gather_nd_bit_exact(registry_targets());
}
RC_GTEST_PROP(GatherNd, BatchDimsIsPerBatchLoop, ()) {
  check_gather_nd_batch_dims_loop(registry_targets());
}
}  // namespace
