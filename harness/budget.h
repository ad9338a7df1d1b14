// gscheck's own word on whether a case is over its byte budget, from the case alone: a
// backend's "resource_exhausted" is never evidence (only gscheck decides a case is over budget).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/case.h"

namespace gscheck::harness {

/// The bytes the case's output would take by shape arithmetic alone, before any of TensorFlow's
/// checks (an invalid case has a shape too: gather_nd's rows times its slice), saturating at
/// UINT64_MAX; 0 where no shape can be read (a missing input, an axis out of range, a negative
/// dim). Elements of a string output count 16 bytes (one wire entry, no text).
uint64_t nominal_output_bytes(const Case& c);

/// Why a backend may refuse the case for its size, in words: the nominal output is over
/// max_bytes, or its rank over kMaxRank (which no Tensor holds); nullopt where it may not.
std::optional<std::string> over_budget(const Case& c, int64_t max_bytes);

}  // namespace gscheck::harness
