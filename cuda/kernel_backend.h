// The Backend shared by cuda and cuda-emu: capability checks, validation, dispatch to the op
// launchers of one executor.
#pragma once

#include <algorithm>
#include <string>
#include <utility>

#include "core/backend.h"
#include "cuda/ops.h"
#include "cuda/validate.h"

namespace gscheck::cuda {

/// What the kernels implement; name and deterministic flag differ per variant.
Capabilities kernel_capabilities(std::string name, bool deterministic);

/// The checks every run starts with: well-formed, claimed by caps, a TensorFlow kernel exists
/// for the op and dtype, a known bad_indices_policy. Fills cfg from semantics and policy.
Status admit_case(const Capabilities& caps, const Case& c, RunConfig* cfg);

template <Executor Exec>
class KernelBackend final : public Backend {
 public:
  KernelBackend(Capabilities caps, Exec exec, bool deterministic,
                int64_t max_bytes = kDefaultMaxCaseBytes)
      : caps_(std::move(caps)),
        exec_(std::move(exec)),
        deterministic_(deterministic),
        max_bytes_(max_bytes) {}

  const Capabilities& capabilities() const override { return caps_; }

  Outcome run(const Case& c) override {
    RunConfig cfg;
    GSCHECK_RETURN_IF_ERROR(admit_case(caps_, c, &cfg));
    // tf-cpu applies scatter rows in order; the deterministic variant always does.
    cfg.sorted_scatter = deterministic_ || c.semantics == Semantics::kTfCpu;
    switch (c.op) {
      case Op::kGather: {
        auto p = validate_gather(c, max_bytes_);
        if (!p.ok()) return p.error();
        return run_gather(exec_, c, *p, cfg);
      }
      case Op::kGatherNd: {
        auto p = validate_gather_nd(c, max_bytes_);
        if (!p.ok()) return p.error();
        return run_gather_nd(exec_, c, *p, cfg);
      }
      default: {
        auto p = validate_scatter(c, max_bytes_);
        if (!p.ok()) return p.error();
        return run_scatter_nd(exec_, c, *p, cfg);
      }
    }
  }

  Exec& exec() { return exec_; }

 private:
  Capabilities caps_;
  Exec exec_;
  bool deterministic_;
  int64_t max_bytes_;  ///< the output budget (--max-bytes)
};

}  // namespace gscheck::cuda
