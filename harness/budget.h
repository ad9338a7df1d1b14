// gscheck's own word on whether a case is over its byte budget, from the case alone: a
// backend's "resource_exhausted" is never evidence (only gscheck decides a case is over budget).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/case.h"

namespace gscheck::harness {

/// Why a backend may refuse the case for its size, in words: the nominal output is over
/// max_bytes, or its rank over kMaxRank (which no Tensor holds); nullopt where it may not.
std::optional<std::string> over_budget(const Case& c, int64_t max_bytes);

}  // namespace gscheck::harness
