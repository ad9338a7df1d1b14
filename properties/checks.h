// The property bodies, each a function of the backends it checks, so that the gtest properties
// run them on the registry and the mutant test runs them on planted-bug backends.
#pragma once

#include <vector>

#include "properties/props_support.h"

namespace gscheck::props {

/// A property body: draws its case(s) with RapidCheck and asserts on every target.
using Check = void (*)(const Targets&);
struct PropertyDef {
  const char* name;
  Check check;
};

// differential_props.cc
void check_differential(const Targets& ts);
// gather_props.cc
void check_gather_shape_and_errors(const Targets& ts);
void check_gather_bit_exact(const Targets& ts);
void check_gather_axis0_is_gather_nd(const Targets& ts);
void check_gather_batch_dims_loop(const Targets& ts);
// gather_nd_props.cc
void check_gather_nd_shape_and_errors(const Targets& ts);
void check_gather_nd_bit_exact(const Targets& ts);
void check_gather_nd_batch_dims_loop(const Targets& ts);
// scatter_nd_props.cc
void check_scatter_nd_shape_and_errors(const Targets& ts);
void check_scatter_nd_adjoint(const Targets& ts);
void check_scatter_then_gather(const Targets& ts);
void check_scatter_nd_linear(const Targets& ts);
void check_scatter_add_row_permutation(const Targets& ts);
// tensor_scatter_props.cc
void check_tensor_scatter_shape_and_errors(const Targets& ts);
void check_tensor_scatter_update_last_wins(const Targets& ts);
void check_tensor_scatter_untouched(const Targets& ts);

/// Every property above, by name.
const std::vector<PropertyDef>& all_properties();

}  // namespace gscheck::props
