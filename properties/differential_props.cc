// Differential property: every backend of the registry gives the reference's outcome under the
// semantics it claims, for valid and invalid cases, judged by the compare module.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "compare/compare.h"
#include "properties/checks.h"
#include "properties/generators.h"

namespace gscheck::props {

void check_differential(const Targets& ts) {
  gen::Constraints k;
  k.limit_fraction = 1.0 / 32;  // as the sampler: sizes at the index-type limits
  const Case c = *gen::mixed_cases(k, 0.2);
  tag_case(c);
  const Outcome ref = reference_outcome(c);
  for (const Target& t : ts) {
    if (t.name == "reference") continue;  // the oracle against itself proves nothing
    const std::optional<Outcome> got = run_on(t, c);
    if (!got) continue;
    const compare::Comparison v =
        compare::compare_outcomes(c, ref, *got, compare::options_for(t.backend->capabilities()));
    if (!v.pass) {
      note_failure("Differential.EveryBackendMatchesReference", t.name, c, ref);
      RC_FAIL(t.name + ": " + v.summary + " (reference: " + outcome_text(ref) + ")");
    }
  }
}

const std::vector<PropertyDef>& all_properties() {
  static const std::vector<PropertyDef> defs = {
      {"Differential.EveryBackendMatchesReference", check_differential},
      {"Gather.ShapeAndErrorsFollowFormula", check_gather_shape_and_errors},
      {"Gather.BitExactEveryElementWritten", check_gather_bit_exact},
      {"Gather.Axis0IsGatherNdDepth1", check_gather_axis0_is_gather_nd},
      {"Gather.BatchDimsIsPerBatchLoop", check_gather_batch_dims_loop},
      {"GatherNd.ShapeAndErrorsFollowFormula", check_gather_nd_shape_and_errors},
      {"GatherNd.BitExactEveryElementWritten", check_gather_nd_bit_exact},
      {"GatherNd.BatchDimsIsPerBatchLoop", check_gather_nd_batch_dims_loop},
      {"ScatterNd.ShapeAndErrorsFollowFormula", check_scatter_nd_shape_and_errors},
      {"ScatterNd.AdjointOfGatherNd", check_scatter_nd_adjoint},
      {"ScatterNd.ScatterThenGatherReturnsUpdates", check_scatter_then_gather},
      {"ScatterNd.LinearInUpdates", check_scatter_nd_linear},
      {"ScatterNd.AddInvariantToRowPermutation", check_scatter_add_row_permutation},
      {"TensorScatter.ShapeAndErrorsFollowFormula", check_tensor_scatter_shape_and_errors},
      {"TensorScatter.UpdateLastWinsInRowOrder", check_tensor_scatter_update_last_wins},
      {"TensorScatter.UnaddressedElementsUntouched", check_tensor_scatter_untouched},
  };
  return defs;
}

}  // namespace gscheck::props

namespace {
using namespace gscheck::props;
RC_GTEST_PROP(Differential, EveryBackendMatchesReference, ()) {
  check_differential(registry_targets());
}
}  // namespace
