// Naive backends with planted bugs, to show the properties catch each bug class. The naive
// backend is a plain loop over index rows built on properties/model.h; its shape validation is
// the oracle's (the bugs planted here are all in index handling, not in validation).
#pragma once

#include <memory>
#include <string_view>

#include "backends/registry.h"

namespace gscheck::props {

/// One planted bug per mutant.
enum class Bug : unsigned char {
  kNone,                 ///< the correct naive backend
  kOffByOneBounds,       ///< bounds check `idx <= n`: index n is accepted (reads the next slice)
  kNegativeIndicesWrap,  ///< Python-style wrap: -1 means n-1
  kBatchDimsIgnored,     ///< gather/gather_nd run as if batch_dims were 0
  kAxisWrongRank,        ///< gather normalises a negative axis against rank(indices)
  kAddLastWins,          ///< scatter add/sub: each row adds to the starting value, last row wins
  kOobRowToRowZero,      ///< scatter writes a skipped out-of-range row's slice into row 0
  kGatherTailUnwritten,  ///< gathers copy slices in pairs and drop an odd slice's last element
};
inline constexpr Bug kPlantedBugs[] = {
    Bug::kOffByOneBounds, Bug::kNegativeIndicesWrap, Bug::kBatchDimsIgnored,   Bug::kAxisWrongRank,
    Bug::kAddLastWins,    Bug::kOobRowToRowZero,     Bug::kGatherTailUnwritten};

/// "none", "off_by_one_bounds", ...
std::string_view bug_name(Bug bug);

/// The naive backend with the given bug ("naive" for Bug::kNone, else "mutant:<bug>").
std::unique_ptr<Backend> make_naive_backend(Bug bug);

}  // namespace gscheck::props
