#include "reference/reference.h"

#include "reference/ops.h"
#include "reference/validate.h"

namespace gscheck::reference {

Outcome run(const Case& c, const Options& options) {
  if (Status s = check_well_formed(c); !s.ok()) return s.error();
  if (Status s = detail::check_input_ranks(c); !s.ok()) return s.error();
  if (c.op == Op::kGather) return detail::run_gather(c, options);
  if (c.op == Op::kGatherNd) return detail::run_gather_nd(c, options);
  return detail::run_scatter_nd(c, options);
}

}  // namespace gscheck::reference
