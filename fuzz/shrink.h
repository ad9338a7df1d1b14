// Case-level shrinking of a failing case, after libFuzzer has minimised the bytes behind it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "core/case.h"

namespace gscheck::fuzz {

/// Shrink a case while keep(case) stays true: first flatten the index rows into one dimension,
/// then drop rows (with their updates slices) one at a time. Returns the smallest case kept; c
/// itself when keep never held for a smaller one. Cases whose shapes do not line up (the failure
/// may be the mismatch itself) are only tried as they are.
///
///   Case small = shrink_case(c, [&](const Case& s) { return still_fails(s); });
Case shrink_case(Case c, const std::function<bool(const Case&)>& keep);

/// The case with its index rows flattened (gather: indices [N]; gather_nd and scatter ops:
/// indices [N, depth] and updates [N, slice...]); nullopt when batch dims, mismatched shapes or
/// scalar indices forbid it, or when it is flat already.
std::optional<Case> flatten_rows(const Case& c);
/// Index rows of a flat case; -1 when the case is not flat.
int64_t row_count(const Case& c);
/// The flat case without index row k and its updates slice; precondition: 0 <= k < row_count(c).
Case drop_row(const Case& c, int64_t k);

}  // namespace gscheck::fuzz
