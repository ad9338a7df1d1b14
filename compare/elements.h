// Element-level helpers for comparisons: printing, bitwise equality, multi-indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace gscheck::compare {

/// Element i printed for people: shortest round-trip decimals, "-0", "inf", NaN with its bits
/// ("nan(0x7fc00001)"), complex as "(re, im)", strings quoted with non-printable bytes as \xNN.
std::string format_element(const Tensor& t, int64_t i);

/// Element i of a typed buffer printed as format_element does.
template <class T>
std::string format_value(const T& v);

/// Bitwise equality of two elements of the same type (NaN payloads and -0.0 distinguished).
template <class T>
bool same_bits(const T& a, const T& b);

/// Whether element i is a NaN (either part of a complex); false for other dtypes.
bool element_is_nan(const Tensor& t, int64_t i);

/// The multi-index of flat position i in a row-major tensor of this shape.
std::vector<int64_t> unravel(const Shape& shape, int64_t i);

/// "[1,0,2]".
std::string format_index(const std::vector<int64_t>& index);

}  // namespace gscheck::compare

#include "compare/elements_inl.h"
