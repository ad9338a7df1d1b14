// What `gscheck run`'s sweep and `gscheck export` ask the sampler for, in one place: both draw from
// gen::Sampler, so with equal options they see equal cases (tests/tools/sweep_export_test.cc).
#pragma once

#include <cstdint>
#include <optional>

#include "backends/registry.h"
#include "properties/sample.h"

namespace gscheck::tools {

/// `gscheck run`'s sweep on a backend: the ops, dtypes, index dtypes, semantics and API levels it
/// claims, so the sweep is spent on cases it is graded on; `only` (--semantics) narrows the
/// semantics further. Invalid cases are always drawn (their errors are graded too). A backend
/// claiming every op and dtype with tf-cpu and tf-gpu (cuda-emu) gets the unfiltered stream: the
/// generator draws from a full list as it draws from an empty one. The reference also claims xla
/// and jax, so its sweep draws all four.
inline gen::SampleOptions run_sweep_options(const Capabilities& caps, uint64_t seed, int64_t count,
                                            int size, double boundary_fraction,
                                            std::optional<Semantics> only = std::nullopt,
                                            double large_fraction = gen::kDefaultLargeFraction) {
  gen::SampleOptions so;
  so.seed = seed;
  so.count = static_cast<int>(count);
  so.size = size;
  so.boundary_fraction = boundary_fraction;
  so.large_fraction = large_fraction;
  so.ops = caps.ops;
  so.dtypes = caps.dtypes;
  so.semantics = caps.semantics;
  if (only) so.semantics = {*only};  // the caller checks that the backend claims it
  so.apis = caps.apis;
  for (DType dt : caps.index_dtypes)
    if (dt == DType::kInt32 || dt == DType::kInt64) so.index_dtypes.push_back(dt);
  return so;
}

/// `gscheck export`'s cases: one semantics profile (tf-cpu by default: TensorFlow's CPU kernels
/// are what other tools replay; xla and jax for XLA-hosted runtimes), every op and dtype,
/// int32/int64 indices, both API levels; invalid cases only with --include-invalid. The same as
/// run_sweep_options for the reference backend with --semantics PROFILE when include_invalid is
/// true (the same invalid fraction, 0.2); without it the stream differs.
inline gen::SampleOptions export_sample_options(
    uint64_t seed, int count, int size, bool include_invalid, double boundary_fraction,
    Semantics semantics = Semantics::kTfCpu, double large_fraction = gen::kDefaultLargeFraction) {
  gen::SampleOptions so;
  so.large_fraction = large_fraction;
  so.seed = seed;
  so.count = count;
  so.size = size;
  so.invalid_fraction = include_invalid ? gen::SampleOptions{}.invalid_fraction : 0.0;
  so.semantics = {semantics};
  so.boundary_fraction = boundary_fraction;
  return so;
}

}  // namespace gscheck::tools
