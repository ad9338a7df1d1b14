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
  check_bit_exact(ts, *gen::cases(gather_nd_only()), expected_gather_nd);
}

void check_gather_nd_batch_dims_loop(const Targets& ts) {
  gen::Constraints k = gather_nd_only();
  k.require_batch_dims = true;
  const Case c = *gen::cases(k);
  check_batch_dims_loop(
      ts, c, [&c](Case& one, const Geometry&) { one.bad_indices_policy = c.bad_indices_policy; });
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
