#include "compare/summation.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <vector>

namespace gscheck::compare {
namespace {

// Sums are evaluated in long double: a double is exact in it, and n doubles cannot overflow its
// range (x86-64: 15-bit exponent), so the partials below stay exact for overflowing sums too.
static_assert(LDBL_MAX_EXP > DBL_MAX_EXP + 64 && LDBL_MANT_DIG >= DBL_MANT_DIG,
              "the summation bound needs a long double wider than double");
using Wide = long double;

std::string shortest(double v) {
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// The exact sum of finite doubles (plus one extra term), rounded once to long double.
Wide wide_exact_sum(std::span<const double> terms, Wide extra = 0, bool absolute = false) {
  std::vector<Wide> partials;  // non-overlapping; their sum is exactly the sum so far
  auto add = [&](Wide x) {
    std::size_t i = 0;
    for (Wide y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const Wide hi = x + y;
      const Wide lo = y - (hi - x);
      if (lo != 0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  };
  for (double t : terms) add(absolute ? std::fabs(Wide{t}) : Wide{t});
  if (extra != 0) add(extra);
  Wide sum = 0;
  for (auto it = partials.rbegin(); it != partials.rend(); ++it) sum += *it;
  return sum;
}

// The smallest value that rounds to infinity in a binary type whose largest finite value is
// max: max + half an ulp of max (round to nearest even: the tie goes to 2^(emax+1)).
Wide overflow_threshold(double max) {
  const Wide top = std::ldexp(Wide{1}, std::ilogb(max) + 1);
  return (Wide{max} + top) / 2;
}

Wide gamma(int64_t n, double u) {
  const Wide nu = static_cast<Wide>(n) * u;
  return nu < 1 ? nu / (1 - nu) : Wide(INFINITY);
}

}  // namespace

double exact_sum(std::span<const double> terms) {
  for (double x : terms)
    if (!std::isfinite(x)) return NAN;
  return static_cast<double>(wide_exact_sum(terms));
}

bool sum_allows(const SumProblem& p, double got, std::string* expected_text) {
  bool nan = false, pos_inf = false, neg_inf = false;
  std::vector<double> finite;
  finite.reserve(p.terms.size());
  int64_t n_pos = 0, n_neg = 0;
  std::vector<double> flushed_terms;
  std::span<const double> terms = p.terms;
  if (p.flush_below > 0) {
    for (double x : p.terms)
      flushed_terms.push_back(std::fabs(x) < p.flush_below ? std::copysign(0.0, x) : x);
    terms = flushed_terms;
  }
  for (double x : terms) {
    if (std::isnan(x)) {
      nan = true;
    } else if (x == INFINITY) {
      pos_inf = true;
    } else if (x == -INFINITY) {
      neg_inf = true;
    } else {
      finite.push_back(x);
      n_pos += x > 0;
      n_neg += x < 0;
    }
  }
  const double acc_max = p.accum_max_finite > 0 ? p.accum_max_finite : p.max_finite;
  // Can some order of additions carry a partial sum past the accumulation type's range? The
  // last addition of m same-sign terms rounds once, the m-1 before it err by gamma(m-2).
  const Wide acc_limit = overflow_threshold(acc_max);
  // For two terms that is one rounding: the exact sum against the threshold, decided exactly.
  auto partial_overflows = [&](double sign, int64_t m) {
    if (m < 2) return false;
    std::vector<double> part;
    for (double x : finite)
      if (x * sign > 0) part.push_back(std::fabs(x));
    const Wide limit = acc_limit / (1 + gamma(m - 2, p.unit_roundoff));
    return wide_exact_sum(part, -limit) >= 0;
  };
  const bool can_pos_overflow = partial_overflows(1, n_pos);
  const bool can_neg_overflow = partial_overflows(-1, n_neg);
  // Orders are any summation tree (a sequential sum in any permutation, or a pairwise / segmented
  // reduction): two subtrees overflowing to opposite infinities give NaN.
  const bool both_overflow = can_pos_overflow && can_neg_overflow;

  // An infinite term, or one meeting an infinity of the other sign, decides the result.
  if (nan || (pos_inf && neg_inf)) {
    *expected_text = "nan";
    return std::isnan(got);
  }
  if (pos_inf || neg_inf) {
    // The finite terms may first overflow to the opposite infinity: then inf - inf is NaN.
    const bool nan_possible = pos_inf ? can_neg_overflow : can_pos_overflow;

    const double inf = pos_inf ? INFINITY : -INFINITY;
    *expected_text = std::string(pos_inf ? "inf" : "-inf") +
                     (nan_possible ? " or nan (the finite terms can overflow the other way)" : "");
    return got == inf || (nan_possible && std::isnan(got));
  }

  // All terms finite: a finite sum within the bound, or an overflow some order reaches.
  const int64_t k = static_cast<int64_t>(terms.size());
  const Wide exact = wide_exact_sum(terms);
  const Wide magnitude = wide_exact_sum(terms, 0, /*absolute=*/true);
  // An exact zero (all terms zero) has bound 0, so it stays an exact zero.
  Wide bound = magnitude == 0 ? 0 : gamma(k > 0 ? k - 1 : 0, p.unit_roundoff) * magnitude;
  if (p.store_roundoff > 0) bound += p.store_roundoff * (std::fabs(exact) + bound);
  if (p.flush_below > 0 && magnitude != 0) bound += Wide{p.flush_below} * (k > 1 ? k - 1 : 0);
  // With a wider accumulator the final rounding to the stored type overflows too when the
  // accumulated value can reach the stored type's threshold (else the last partial sum is it).
  const Wide store_limit = overflow_threshold(p.max_finite);
  const bool widened = p.store_roundoff > 0;
  const bool pos_overflow = can_pos_overflow || (widened && exact + bound >= store_limit);
  const bool neg_overflow = can_neg_overflow || (widened && exact - bound <= -store_limit);
  *expected_text = shortest(static_cast<double>(exact)) + " +- " +
                   shortest(static_cast<double>(bound)) + " (" + std::to_string(k) + " terms)";
  if (pos_overflow || neg_overflow)
    *expected_text += std::string(", or ") +
                      (pos_overflow && neg_overflow ? "+-inf"
                       : pos_overflow               ? "inf"
                                                    : "-inf") +
                      " by an overflow in some order";
  if (both_overflow) *expected_text += " or nan";
  if (std::isnan(got)) return both_overflow;
  if (std::isinf(got)) return got > 0 ? pos_overflow : neg_overflow;
  if (p.flush_below > 0) {
    *expected_text += ", subnormals flushed";
    if (got != 0 && std::fabs(got) < p.flush_below) return false;  // never stored
    // A result below the smallest normal is stored as a zero.
    if (got == 0 && std::fabs(exact) - bound < Wide{p.flush_below}) return true;
  }
  // |got - exact| evaluated exactly, then rounded once; the bound gets a relative slack of a few
  // double ulps for its own evaluation.
  const Wide diff = std::fabs(wide_exact_sum(terms, -Wide{got}));
  return diff <= bound * (1 + 0x1p-48L);
}

}  // namespace gscheck::compare
