#include "cuda/kernel_backend.h"

#include <algorithm>
#include <iterator>

#include "cuda/kernel_table.h"

namespace gscheck::cuda {
Capabilities kernel_capabilities(std::string name, bool deterministic) {
  Capabilities caps;
  caps.name = std::move(name);
  caps.ops.assign(std::begin(kAllOps), std::end(kAllOps));
  caps.dtypes.assign(std::begin(kKernelDTypes), std::end(kKernelDTypes));
  caps.index_dtypes.assign(std::begin(kKernelIndexDTypes), std::end(kKernelIndexDTypes));
  caps.semantics = {Semantics::kTfCpu, Semantics::kTfGpu};
  caps.deterministic = deterministic;
  // Checked mode quotes TensorFlow's bad-index text; validation texts are cuda's own
  // (docs/cuda.md).
  caps.tf_messages = false;
  caps.tf_bad_index_messages = true;
  caps.accumulates_half_in_float = false;  // every add rounds to the half type, as TF's CPU does
  return caps;
}

Status admit_case(const Capabilities& caps, const Case& c, RunConfig* cfg) {
  GSCHECK_RETURN_IF_ERROR(check_well_formed(c));
  // The contract check every caller shares; what follows is this backend's own validation.
  GSCHECK_RETURN_IF_ERROR(admit(caps, c));
  const Tensor& data = is_scatter(c.op) ? *c.updates : *c.params;
  if (c.tensor && c.tensor->dtype() != c.updates->dtype()) {
    return invalid_argument("tensor is " + std::string(dtype_name(c.tensor->dtype())) +
                            " but updates are " + std::string(dtype_name(c.updates->dtype())));
  }
  // TensorFlow registers no kernel for these (the kernel lookup fails before any check).
  if (!tf_has_kernel(c.op, data.dtype())) {
    return Error{ErrorClass::kUnsupported, std::string(op_name(c.op)) + " has no kernel for " +
                                               std::string(dtype_name(data.dtype()))};
  }
  if (c.op == Op::kGatherNd) {  // Python checks batch_dims before TensorFlow finds a kernel
    int64_t batch = 0;
    GSCHECK_RETURN_IF_ERROR(check_gather_nd_batch_dims(c, &batch));
  }
  const std::string& policy = c.bad_indices_policy;
  const std::optional<BadIndicesPolicy> known = bad_indices_policy_from_name(policy);
  if (!known) {
    // GatherNd's kernels are registered only for the known values, so TensorFlow finds no
    // kernel; the scatter kernels accept any string and reject it when constructed.
    if (c.op == Op::kGatherNd) {
      return Error{ErrorClass::kUnsupported,
                   "gather_nd has no kernel for bad_indices_policy=\"" + policy + "\""};
    }
    return invalid_argument("Unknown bad indices handling attribute: " + policy);
  }
  // tf-cpu raises unless the policy is IGNORE; tf-gpu raises only when ERROR is asked for.
  cfg->checked = c.semantics == Semantics::kTfCpu ? *known != BadIndicesPolicy::kIgnore
                                                  : *known == BadIndicesPolicy::kError;
  return {};
}

}  // namespace gscheck::cuda
