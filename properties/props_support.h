// Shared machinery of the property tests: the backends they run on, class tags, element
// comparison, and persisting a failing differential case under corpus/regressions/.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "backends/registry.h"
#include "core/case.h"
#include "properties/model.h"

namespace gscheck::props {

/// A backend the properties check, with its registry name.
struct Target {
  std::string name;
  Backend* backend = nullptr;
};
using Targets = std::vector<Target>;

/// Every backend of the registry (gscheck::backend_names), created once per process. Backends
/// that cannot be created here (no GPU) are skipped with a note on stderr.
const Targets& registry_targets();

/// The oracle's outcome.
Outcome reference_outcome(const Case& c);
/// Run c on t; nullopt when the backend does not claim the case (or answers unimplemented).
std::optional<Outcome> run_on(const Target& t, const Case& c);

/// Tag the case for RapidCheck's distribution table and count it in this test's class table.
void tag_case(const Case& c);
/// Print and clear the per-class counts gathered since the last call.
void print_class_table(std::ostream& os);

/// Bitwise equality of element i of a and element j of b (same dtype; strings by value).
bool element_equal(const Tensor& a, int64_t i, const Tensor& b, int64_t j);
/// Copy element j of src into element i of dst (same dtype).
void copy_element(Tensor& dst, int64_t i, const Tensor& src, int64_t j);
/// Element i as text, for failure messages.
std::string element_text(const Tensor& t, int64_t i);
/// Bitwise equality of two outcomes: both tensors bit-equal, or both errors of one class.
bool same_outcome(const Outcome& a, const Outcome& b);
/// One line describing an outcome.
std::string outcome_text(const Outcome& o);

/// Remember a failing case (the last one recorded during a test is the shrunk one).
void note_failure(std::string_view property, const std::string& backend, const Case& c,
                  const Outcome& expected);
/// Save the remembered case as a regression (harness::save_regression, into
/// harness::regressions_dir()), print its path and replay command, and forget it. Returns the path,
/// or nullopt if none was pending.
std::optional<std::string> flush_regression();

}  // namespace gscheck::props

namespace gscheck::props {

/// Output shape follows the op's formula, and errors happen exactly when the reference's do
/// (same class), on every target claiming c.
void check_shape_and_errors(const Targets& ts, const Case& c);
/// Fail unless got is bit-identical to want, naming the first differing element.
void assert_bit_equal(const std::string& who, const Tensor& want, const Tensor& got);
/// A copy of t's elements [which*n, (which+1)*n) as a tensor of the given shape, n = numel/parts.
Tensor block(const Tensor& t, int64_t parts, int64_t which, const Shape& shape);
/// t with new_shape (same element count), e.g. indices with a trailing depth-1 dim.
Tensor reshaped(const Tensor& t, const Shape& new_shape);

/// Every element of c's output on every target (and on the reference) is bit-identical to
/// expected(c, geometry); cases the reference refuses are left to the other properties.
void check_bit_exact(const Targets& ts, const Case& c,
                     const std::function<Tensor(const Case&, const Geometry&)>& expected);
/// c (a gather or gather_nd with batch_dims > 0) gives, on every target, the same error class
/// as a loop over its batches, or the loop's outputs joined. Each batch's case gets c's op,
/// semantics, a name after c's and the batch's params and indices; per_batch adds the op's own
/// fields (given c's geometry).
void check_batch_dims_loop(const Targets& ts, const Case& c,
                           const std::function<void(Case&, const Geometry&)>& per_batch);

}  // namespace gscheck::props
