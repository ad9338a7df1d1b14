// Seeded sampling from the RapidCheck generators, for code outside a property: the random sweeps
// of `gscheck run`, the cuda-emu sweep test and `gscheck export`. One generator module serves all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/case.h"

namespace gscheck::gen {

/// What to sample.
struct SampleOptions {
  uint64_t seed = 1;                 ///< same seed, same cases (on the same build)
  int count = 100;                   ///< number of cases
  int size = 30;                     ///< RapidCheck size: larger means bigger shapes and more rows
  double invalid_fraction = 0.2;     ///< share of cases aimed at a validation rule
  std::vector<Op> ops;               ///< empty: every op
  std::vector<DType> dtypes;         ///< empty: every dtype the op takes on TensorFlow's CPU
  std::vector<DType> index_dtypes;   ///< empty: int32 and int64
  std::vector<Semantics> semantics;  ///< empty: both
  /// empty or both: a quarter of the cases are made kernel-level (to_kernel_api); kernel alone:
  /// every case; python alone: none.
  std::vector<Api> apis;
};

/// The case at the raw-kernel level: gather's axis=None made explicit (axis = batch_dims, as
/// Python passes it), gather_nd's batch_dims dropped (the kernel has none), api set to kernel.
void to_kernel_api(Case& c);

/// Draw opts.count cases deterministically from opts.seed. Case names record the seed and the
/// position ("sweep/<seed>/<i>/<op>") so any case can be regenerated.
std::vector<Case> sample_cases(const SampleOptions& opts);

/// The same cases one at a time, without a count (opts.count is ignored): the i-th next() is
/// sample_cases' case i. skip() moves past a case without generating it (sharded sweeps), so a
/// run can stop after any number of cases (time budgets) and be replayed with --sweep.
class Sampler {
 public:
  explicit Sampler(const SampleOptions& opts);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// Case number position(), then position() + 1; nullopt (position still advances) in the
  /// never-seen event that the generators fail on it 8 times, which sample_cases leaves out too.
  std::optional<Case> next();
  void skip();
  int64_t position() const { return position_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  int64_t position_ = 0;
};

}  // namespace gscheck::gen
