// Seeded sampling from the RapidCheck generators, for code outside a property: the random sweeps
// of `gscheck run`, the cuda-emu sweep test and `gscheck export`. One generator module serves all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/case.h"

namespace gscheck::gen {

/// The share of boundary-value cases `gscheck run`'s sweep and `gscheck export` draw by default.
inline constexpr double kDefaultBoundaryFraction = 0.5;
/// The share of valid cases `gscheck run`'s sweep and `gscheck export` draw at an index-type
/// limit (Constraints::limit_fraction). 0 for now: a nonzero share redraws every seeded sweep,
/// and the shipped known-failures files and the cross-check's expectations were made from
/// today's draws; properties.differential draws them (1/32), the golden corpus holds them.
inline constexpr double kLimitFraction = 0.0;

/// The share of sweep positions drawn as large cases (10,000 to 1,000,000 output elements, at
/// most 8 MiB): a one-element error in a large output, and the paths a kernel takes only at size
/// (grid-stride loops, vector tails, many blocks), show in a default run. 1/64: a 200-case
/// runtime sweep draws about 3, a 2,000-case one about 31.
inline constexpr double kDefaultLargeFraction = 1.0 / 64;

/// What to sample.
struct SampleOptions {
  uint64_t seed = 1;                 ///< same seed, same cases (on the same build)
  int count = 100;                   ///< number of cases
  int size = 30;                     ///< RapidCheck size: larger means bigger shapes and more rows
  double invalid_fraction = 0.2;     ///< share of cases aimed at a validation rule
  std::vector<Op> ops;               ///< empty: every op
  std::vector<DType> dtypes;         ///< empty: every dtype the op takes on TensorFlow's CPU
  std::vector<DType> index_dtypes;   ///< empty: int32 and int64
  std::vector<Semantics> semantics;  ///< empty: tf-cpu and tf-gpu (xla, jax when listed)
  /// empty or both: a quarter of the cases are made kernel-level (to_kernel_api); kernel alone:
  /// every case; python alone: none.
  std::vector<Api> apis;
  /// In that share of the cases of the ops that take boundary values (takes_boundary_values),
  /// about a third of the updates and tensor elements become boundary values: the generator's
  /// self-describing data never reaches them. Drawn apart from the RapidCheck stream, so 0 gives
  /// the generator's cases unchanged and any fraction leaves shapes, indices and attributes alone.
  double boundary_fraction = kDefaultBoundaryFraction;
  /// In that share of the positions (drawn from the seed and position alone) the case keeps its
  /// op, dtypes, index dtype, semantics, API level and policy but gets large tensors (make_large).
  double large_fraction = kDefaultLargeFraction;
};

/// Whether sweep position `position` of `seed` is drawn large.
bool large_case(uint64_t seed, int64_t position, double large_fraction);

/// Replaces c's tensors by large ones drawn from salt: gather params [R, C] by a vector of R-range
/// indices, gather_nd params [A, B, C] by [N, 2] rows, scatters a tensor (or shape) [R, C] by
/// [N, 1] rows with updates [N, C]; the output has 10,000 to 1,000,000 elements (20,000 for
/// strings), at most 8 MiB; indices in range, duplicates as uniform draws give them; data
/// self-describing (specials as the op allows). False, c unchanged, where its dtypes are not
/// ones the op takes or its indices are not int32 or int64 (an invalid case stays invalid).
bool make_large(Case& c, uint64_t salt);

/// The ops whose element values are compared or added (scatter_nd, tensor_scatter_nd_add, _sub,
/// _min, _max): where orderings through a wider or signed type, NaN handling and rounding go
/// wrong. Copies (gather, update) keep self-describing data, which names a wrongly read element.
bool takes_boundary_values(Op op);

/// Whether sweep position `position` of `seed`, a case of op, gets boundary values.
bool boundary_case(uint64_t seed, int64_t position, Op op, double boundary_fraction);

/// About a third of t's elements become boundary values of its dtype, at positions and with
/// values drawn from salt (deterministic). Floats (float16, bfloat16, float32, float64; complex
/// per part): +0, -0, +inf, -inf, max, -max, min normal, min, -min and largest subnormal, quiet,
/// signalling-looking and negative NaNs with payloads, 1, -1. Signed integers: min, min+1, max,
/// max-1, -1, 0, 1. Unsigned: 0, 1, max, max-1, 2^(bits-1) and its neighbours (orderings through
/// a signed type). Bool and string tensors are left alone.
void put_boundary_values(Tensor& t, uint64_t salt);

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
