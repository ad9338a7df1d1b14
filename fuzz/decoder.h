// Byte -> case decoder for the libFuzzer targets: any byte string decodes to a well-formed case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/case.h"

namespace gscheck::fuzz {

/// The op families, one fuzz target each (tensor_scatter covers tensor_scatter_nd_{update..max}).
enum class Family : unsigned char { kGather, kGatherNd, kScatterNd, kTensorScatter };
inline constexpr Family kAllFamilies[] = {Family::kGather, Family::kGatherNd, Family::kScatterNd,
                                          Family::kTensorScatter};

/// "gather", "gather_nd", "scatter_nd", "tensor_scatter" (the target names without "_fuzz").
std::string_view family_name(Family f);
/// Inverse of family_name; nullopt for an unknown name.
std::optional<Family> family_from_name(std::string_view name);

/// Size limits that keep one execution in the microseconds. Every input tensor of a decoded case
/// has at most 8 * max(max_elements, max_output_elements) elements (index rows up to 8 wide).
struct DecodeLimits {
  int64_t max_dim = 5;                 ///< most dims are 1..max_dim; a rare "wide" dim is 2*max_dim
  int64_t max_elements = 256;          ///< per input tensor
  int64_t max_output_elements = 1024;  ///< for the op's output when the case is valid
};

/// Decode fuzzer bytes into a case of the family.
///
/// Total and deterministic: every byte string, the empty one included, gives a case that passes
/// check_well_formed, and the same bytes give the same case. Most cases are valid (indices in
/// range, shapes that match); a minority of choices, biased towards boundaries, break one of
/// TensorFlow's checks on purpose: index values 0, n-1, n, -1 and the index dtype's min/max,
/// duplicate rows, axis/batch_dims at and beyond their extremes, every bad_indices_policy (and an
/// unknown one), mismatched shapes, every semantics profile, every dtype and the int16/int32/int64
/// index dtypes (rarely another integer dtype). Exhausted input reads as zeros, which the decoder
/// maps to the plain choice, so short inputs give simple valid cases.
///
///   Case c = decode_case(Family::kGatherNd, data, size);
Case decode_case(Family family, const uint8_t* data, std::size_t size,
                 const DecodeLimits& limits = {});

}  // namespace gscheck::fuzz
