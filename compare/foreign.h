// Output elements that are in no input: where every element of an op's output is a copy, a
// value that is no input element, not zero and not a NaN standing for an input's NaN was never
// written by the op (the worker's poison) or was read outside the inputs (memory nobody gave the
// backend). Such an output is unsafe whatever rule the backend follows; a known-failures entry
// cannot make it green. Its own scan of values, sharing no index math with anything.
#pragma once

#include <cstdint>
#include <optional>

#include "core/case.h"
#include "core/tensor.h"

namespace gscheck::compare {

/// The flat index of the first element of `got` that no input of `c` holds bit for bit, that is
/// not zero (either sign: zero-filling rules write it) and that is not a NaN while an input holds
/// one (a runtime may quiet or canonicalise a NaN it copies). Only for the ops whose elements are
/// all copies (gather, gather_nd: params; tensor_scatter_nd_update, min and max: tensor and
/// updates, a flush-to-zero min or max storing a zero) and an output of the inputs' dtype;
/// nullopt otherwise, or when every element is accounted for, or when the inputs hold more than
/// 2^22 elements (not searched).
std::optional<int64_t> first_foreign_element(const Case& c, const Tensor& got);

}  // namespace gscheck::compare
