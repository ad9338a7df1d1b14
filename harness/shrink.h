// Shrinking a failing case to the smallest one that still fails the same way. One shrinker for
// every backend: `gscheck run` and `eval` (CaseChecker), the fuzz targets (fuzz/harness.cc).
// Each step is one smaller case, consistent by construction: rows and slices leave every input
// that holds them together, batch_dims and axis keep naming the same dimensions, and the data
// that is kept keeps its values (self-describing data still names where an element came from).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/case.h"

namespace gscheck::harness {

/// One step of the shrinker (see smaller_cases for the order they are tried in).
struct ShrinkStep {
  enum Kind : unsigned char {
    kFlatten,     ///< merge the index row dimensions into one
    kErase,       ///< remove elements [begin, begin + count) of a dimension group
    kSqueeze,     ///< remove a dimension group of size 1
    kTrim,        ///< remove the last element of an indexed dimension (indices left as they are)
    kIndexValue,  ///< set one index element to value (nearer 0)
  };
  Kind kind = kErase;
  int group = 0;  ///< into the case's dimension groups (kErase, kSqueeze, kTrim)
  int64_t begin = 0, count = 0;
  int64_t element = 0, value = 0;  ///< kIndexValue
};

/// The steps that make c smaller, in the order the shrinker tries them: flatten, then whole
/// blocks of rows and slices (halves before single ones), squeezes, trims of indexed
/// dimensions, and last the index values (to 0, then halfway). Where c's shapes do not line up
/// (the failure may be the mismatch itself) only index values are tried.
std::vector<ShrinkStep> shrink_steps(const Case& c);
/// c after one step; nullopt when the step does not apply to c.
std::optional<Case> apply_step(const Case& c, const ShrinkStep& s);

struct ShrinkLimits {
  double seconds = 5;  ///< wall time for the whole shrink; <= 0: no limit
  int64_t max_tries = 1 << 20;
};

struct ShrinkStats {
  int64_t tried = 0;  ///< smaller cases tried (each one call of keep)
  int64_t kept = 0;   ///< steps taken
  double seconds = 0;
  bool limited = false;  ///< stopped by a limit before every step had been tried
};

struct Shrunk {
  Case c;
  ShrinkStats stats;
};

/// Greedy shrinking: take the first step whose case keep() accepts, start over from it, until no
/// step is accepted or a limit is reached. keep() is never called on c itself. Every step makes
/// the case strictly smaller (fewer elements, else lower rank, else smaller index values), so it
/// ends.
///
///   Shrunk s = shrink_case(c, [&](const Case& t) { return fails_the_same_way(t); }, {});
Shrunk shrink_case(Case c, const std::function<bool(const Case&)>& keep, ShrinkLimits limits);

}  // namespace gscheck::harness
