#include <algorithm>

#include "backends/backend.h"

namespace gscheck {

bool Capabilities::supports(const Case& c) const {
  auto has = [](const auto& list, auto v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  // The element dtype: params for gathers, the starting tensor or the updates for scatters.
  const std::optional<Tensor>& data =
      !is_scatter(c.op) ? c.params : (c.tensor ? c.tensor : c.updates);
  if (!data || !c.indices) return false;
  return has(ops, c.op) && has(dtypes, data->dtype()) && has(index_dtypes, c.indices->dtype()) &&
         has(semantics, c.semantics) && (has(apis, c.api) || same_at_both_apis(c));
}

}  // namespace gscheck
