// What a differing output element means in the case's own terms: which index row it came from,
// what TensorFlow's rule reads there, and which input element (if any) the backend's value is.
// Its own small decoding of the op's shapes, not the reference's: a triage line that disagrees
// with the reference shows a bug in one of them instead of hiding it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/tensor.h"

namespace gscheck::compare {

/// One line for people, or "" when the case's shapes do not decode (a case whose expected
/// output does not have the op's shape). For the element at `index` of the output `got`:
///   gather, gather_nd: "from indices[2] = [7]: out of range (params dim 0 is 4); got 10 =
///     params[3,1] (the clamped row)";
///   scatters: "slice [1] is written by index rows 0, 3; got 5 = updates[3,2]".
/// The value search compares bits, so it names a position only when the value is unique enough
/// to be telling: self-describing inputs (each element its own value) make it exact; a zero is
/// said as "zero", a value in no input as "in no input (memory the backend never wrote?)".
std::string triage_element(const Case& c, const Tensor& got, const std::vector<int64_t>& index);

/// Whether element flat of got is, bit for bit, an element of the case's params, tensor or
/// updates (the same search, stopping at the first match): known failures' `input_element`.
bool is_input_element(const Case& c, const Tensor& got, int64_t flat);

}  // namespace gscheck::compare
