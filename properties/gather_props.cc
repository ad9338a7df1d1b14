// Properties of tf.gather: output shape, bit-exact self-describing data, axis 0 as gather_nd,
// batch_dims as a loop over batches. Each runs on every backend of the registry.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/checks.h"
#include "properties/generators.h"

namespace gscheck::props {
namespace {

gen::Constraints gather_only() {
  gen::Constraints k;
  k.ops = {Op::kGather};
  return k;
}

// The property's own expectation: out[b, o, r, s] = params[b, o, idx, s]; 0 where idx is out of
// range (tf-gpu). Only called when the reference succeeded.
Tensor expected_gather(const Case& c, const Geometry& g) {
  Tensor out = Tensor::zeros(c.params->dtype(), g.out_shape, INT64_MAX).value();
  const int64_t n = g.column_dims[0];
  for (int64_t b = 0; b < g.batches; ++b)
    for (int64_t r = 0; r < g.rows; ++r) {
      const int64_t idx = index_row(c, g, b, r)[0];
      if (idx < 0 || idx >= n) continue;
      for (int64_t o = 0; o < g.outer; ++o)
        for (int64_t s = 0; s < g.slice; ++s)
          copy_element(out, ((b * g.outer + o) * g.rows + r) * g.slice + s, *c.params,
                       ((b * g.outer + o) * n + idx) * g.slice + s);
    }
  return out;
}

}  // namespace

void check_gather_shape_and_errors(const Targets& ts) {
  check_shape_and_errors(ts, *gen::cases(gather_only()));
}

void check_gather_bit_exact(const Targets& ts) {
  check_bit_exact(ts, *gen::cases(gather_only()), expected_gather);
}

void check_gather_axis0_is_gather_nd(const Targets& ts) {
  gen::Constraints k = gather_only();
  k.gather_axis_zero = true;
  k.allow_empty = false;  // gather_nd refuses rows into an empty params where gather does not
  k.index_dtypes = {DType::kInt32, DType::kInt64};  // gather_nd has no int16 kernel
  const Case c = *gen::cases(k);
  tag_case(c);
  Case nd;
  nd.name = c.name + "/as_gather_nd";
  nd.op = Op::kGatherNd;
  nd.semantics = c.semantics;
  nd.params = c.params;
  std::vector<int64_t> dims = c.indices->shape().dims();
  dims.push_back(1);
  nd.indices = reshaped(*c.indices, Shape(dims));
  for (const Target& t : ts) {
    const std::optional<Outcome> a = run_on(t, c);
    const std::optional<Outcome> b = run_on(t, nd);
    if (!a || !b) continue;
    if (!same_outcome(*a, *b)) {
      RC_FAIL(t.name + ": gather(axis=0) gives " + outcome_text(*a) + ", gather_nd depth 1 gives " +
              outcome_text(*b));
    }
  }
}

void check_gather_batch_dims_loop(const Targets& ts) {
  gen::Constraints k = gather_only();
  k.require_batch_dims = true;
  const Case c = *gen::cases(k);
  // Within one batch the axis counts from the batch's own first dim.
  check_batch_dims_loop(ts, c, [](Case& one, const Geometry& g) {
    one.axis = Tensor::from_values<int64_t>(Shape{}, {g.axis - g.batch_dims});
  });
}

}  // namespace gscheck::props

namespace {
using namespace gscheck::props;
RC_GTEST_PROP(Gather, ShapeAndErrorsFollowFormula, ()) {
  check_gather_shape_and_errors(registry_targets());
}
RC_GTEST_PROP(Gather, BitExactEveryElementWritten, ()) {
  check_gather_bit_exact(registry_targets());
}
RC_GTEST_PROP(Gather, Axis0IsGatherNdDepth1, ()) {
  check_gather_axis0_is_gather_nd(registry_targets());
}
RC_GTEST_PROP(Gather, BatchDimsIsPerBatchLoop, ()) {
  check_gather_batch_dims_loop(registry_targets());
}
}  // namespace
