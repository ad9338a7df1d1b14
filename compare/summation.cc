#include "compare/summation.h"

#include <charconv>
#include <cmath>
#include <vector>

namespace gscheck::compare {
namespace {

std::string shortest(double v) {
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

double exact_sum(std::span<const double> terms) {
  // Non-overlapping partials whose sum is exactly the sum of the terms seen so far.
  std::vector<double> partials;
  for (double x : terms) {
    std::size_t i = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  }
  double sum = 0;
  for (auto it = partials.rbegin(); it != partials.rend(); ++it) sum += *it;
  return sum;
}

bool sum_allows(const SumProblem& p, double got, std::string* expected_text) {
  bool nan = false, pos_inf = false, neg_inf = false;
  double pos = 0, neg = 0;  // sums of the positive and negative terms, for overflow
  for (double x : p.terms) {
    if (std::isnan(x))
      nan = true;
    else if (x == INFINITY)
      pos_inf = true;
    else if (x == -INFINITY)
      neg_inf = true;
    else if (x > 0)
      pos += x;
    else
      neg += x;
  }
  // Non-finite terms decide the result whatever the order.
  if (nan || (pos_inf && neg_inf)) {
    *expected_text = "nan";
    return std::isnan(got);
  }
  if (pos_inf || neg_inf) {
    *expected_text = pos_inf ? "inf" : "-inf";
    return got == (pos_inf ? INFINITY : -INFINITY);
  }
  const int64_t k = static_cast<int64_t>(p.terms.size());
  const double exact = exact_sum(p.terms);
  if (!std::isfinite(exact)) {  // float64 terms whose exact sum leaves the double range
    *expected_text = "an overflow to +-inf";
    return std::isinf(got) && (got > 0 ? pos > p.max_finite : -neg > p.max_finite);
  }
  std::vector<double> abs_terms;
  abs_terms.reserve(p.terms.size());
  for (double x : p.terms) abs_terms.push_back(std::fabs(x));
  double magnitude = exact_sum(abs_terms);
  const double nu = static_cast<double>(k > 0 ? k - 1 : 0) * p.unit_roundoff;
  const double gamma = nu < 1 ? nu / (1 - nu) : INFINITY;
  double bound = gamma * magnitude;
  if (!std::isfinite(magnitude)) {
    // sum |x_i| leaves the double range (e.g. max and -max, whose sum is finite): scale it
    // down, so the bound gamma * sum |x_i| stays finite where it is representable.
    for (double& x : abs_terms) x = std::ldexp(x, -64);
    magnitude = exact_sum(abs_terms);
    bound = std::ldexp(gamma * magnitude, 64);
  }
  if (p.store_roundoff > 0) bound += p.store_roundoff * (std::fabs(exact) + bound);
  *expected_text =
      shortest(exact) + " +- " + shortest(bound) + " (" + std::to_string(k) + " terms)";
  if (std::isnan(got)) return false;
  if (std::isinf(got)) {
    // Some order of additions overflows when the positive (negative) terms alone exceed the
    // largest finite value of the stored type.
    return got > 0 ? pos > p.max_finite : -neg > p.max_finite;
  }
  // |got - exact| evaluated exactly, then rounded once; the bound gets a relative slack of a few
  // double ulps for its own evaluation.
  std::vector<double> all(p.terms.begin(), p.terms.end());
  all.push_back(-got);
  const double diff = std::fabs(exact_sum(all));
  return diff <= bound * (1 + 0x1p-48);
}

}  // namespace gscheck::compare
