#include "harness/budget.h"

#include <algorithm>

namespace gscheck::harness {

std::optional<std::string> over_budget(const Case& c, int64_t max_bytes) {
  if (const int64_t rank = nominal_output_rank(c); rank > kMaxRank)
    return "its output would have rank " + std::to_string(rank) + ", over gscheck's " +
           std::to_string(kMaxRank);
  const uint64_t bytes = nominal_output_bytes(c);
  if (bytes > static_cast<uint64_t>(std::max<int64_t>(max_bytes, 0)))
    return "its output would take " + std::to_string(bytes) + " bytes, over --max-bytes " +
           std::to_string(max_bytes);
  return std::nullopt;
}

}  // namespace gscheck::harness
