// Properties of tf.tensor_scatter_nd_{update,add,sub,min,max}: output shape, tf-cpu update as
// "apply the rows in order, last wins" (bit-exact, specials included), and elements that no
// index row addresses left untouched by every scatter op (scatter_nd's start is zeros).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "properties/checks.h"
#include "properties/generators.h"

namespace gscheck::props {

void check_tensor_scatter_shape_and_errors(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kTensorScatterUpdate, Op::kTensorScatterAdd, Op::kTensorScatterSub,
           Op::kTensorScatterMin, Op::kTensorScatterMax};
  check_shape_and_errors(ts, *gen::cases(k));
}

namespace {

// tf-cpu update: the starting tensor with the rows applied in order, so a later row overwrites.
Tensor expected_update_last_wins(const Case& c, const Geometry& g) {
  Tensor want = *c.tensor;
  for (int64_t r = 0; r < g.rows; ++r) {
    const std::optional<int64_t> f = tuple_flat(g, index_row(c, g, 0, r));
    if (!f) continue;  // skipped under IGNORE
    for (int64_t s = 0; s < g.slice; ++s)
      copy_element(want, *f * g.slice + s, *c.updates, r * g.slice + s);
  }
  return want;
}

}  // namespace

void check_tensor_scatter_update_last_wins(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kTensorScatterUpdate};
  k.semantics = {Semantics::kTfCpu};
  check_bit_exact(ts, *gen::cases(k), expected_update_last_wins);
}

void check_tensor_scatter_untouched(const Targets& ts) {
  gen::Constraints k;
  k.ops = {Op::kScatterNd,        Op::kTensorScatterUpdate, Op::kTensorScatterAdd,
           Op::kTensorScatterSub, Op::kTensorScatterMin,    Op::kTensorScatterMax};
  const Case c = *gen::cases(k);
  tag_case(c);
  const std::optional<Geometry> g = geometry(c);
  RC_ASSERT(g.has_value());
  const Tensor start =
      c.tensor ? *c.tensor : Tensor::zeros(c.updates->dtype(), g->out_shape, INT64_MAX).value();
  std::vector<bool> addressed(static_cast<size_t>(g->tuples() > 0 ? g->tuples() : 0), false);
  for (int64_t r = 0; r < g->rows; ++r)
    if (const std::optional<int64_t> f = tuple_flat(*g, index_row(c, *g, 0, r)))
      addressed[static_cast<size_t>(*f)] = true;
  for (const Target& t : ts) {
    const std::optional<Outcome> got = run_on(t, c);
    if (!got || !got->ok()) continue;
    const Tensor& out = got->value();
    if (out.shape() != g->out_shape) RC_FAIL(t.name + ": output shape " + out.shape().to_string());
    for (size_t tuple = 0; tuple < addressed.size(); ++tuple) {
      if (addressed[tuple]) continue;
      for (int64_t s = 0; s < g->slice; ++s) {
        const int64_t i = static_cast<int64_t>(tuple) * g->slice + s;
        if (!element_equal(start, i, out, i)) {
          RC_FAIL(t.name + ": element " + std::to_string(i) + ", addressed by no index row, is " +
                  element_text(out, i) + ", was " + element_text(start, i));
        }
      }
    }
  }
}

}  // namespace gscheck::props

namespace {
using namespace gscheck::props;
RC_GTEST_PROP(TensorScatter, ShapeAndErrorsFollowFormula, ()) {
  check_tensor_scatter_shape_and_errors(registry_targets());
}
RC_GTEST_PROP(TensorScatter, UpdateLastWinsInRowOrder, ()) {
  check_tensor_scatter_update_last_wins(registry_targets());
}
RC_GTEST_PROP(TensorScatter, UnaddressedElementsUntouched, ()) {
  check_tensor_scatter_untouched(registry_targets());
}
}  // namespace
