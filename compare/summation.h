// The summation-order bound for float add/sub with duplicate indices (spec: "Comparing
// outcomes"): a sum of k terms in any order differs from the exact sum by at most
// gamma(k-1) * sum|x_i|, gamma(n) = n*u / (1 - n*u) (Higham, Accuracy and Stability, 4.2).
// Non-finite results follow IEEE 754 in every order (any permutation, any summation tree): a
// partial sum may overflow to +-inf, and an infinity meeting the other infinity (a term or an
// overflowed partial sum) is NaN.
#pragma once

#include <span>
#include <string>

namespace gscheck::compare {

/// The exact sum of doubles, correctly rounded within one ulp (Shewchuk's partials, as in
/// Python's math.fsum), +-inf when it leaves the double range. NaN if a term is not finite.
double exact_sum(std::span<const double> terms);

/// Terms of one element, the dtype's unit roundoff u (of the accumulation type), and the unit
/// roundoff of the stored type when it is narrower than the accumulation type (0 otherwise: the
/// final rounding of the accumulated sum to the stored type is then added to the bound).
struct SumProblem {
  std::span<const double> terms;
  double unit_roundoff = 0;
  double store_roundoff = 0;
  double max_finite = 0;  ///< the stored type's largest finite value (for overflow)
  /// The accumulation type's largest finite value when it is wider than the stored type (half
  /// types summed in float); 0: the same as max_finite.
  double accum_max_finite = 0;
  /// Flush-to-zero and denormals-are-zero (a known failure's arithmetic=flush_denormals): terms
  /// of magnitude below it (the smallest normal) read as zeros, and any partial sum below it may
  /// be stored as a zero, so each of the k - 1 additions may lose up to it and no result is
  /// subnormal. 0: IEEE arithmetic.
  double flush_below = 0;
};

/// True when got is a possible result of adding the terms in some order; why (for reports) in
/// *expected_text: "3.5 +- 1.2e-07 (3 terms)", "nan", "inf or nan", ...
bool sum_allows(const SumProblem& p, double got, std::string* expected_text);

}  // namespace gscheck::compare
