// Properties of the summation-order bound (compare/summation.h): every order of additions of
// the terms, in the accumulation type, gives a result sum_allows admits. Terms are drawn to
// overflow and to be non-finite (the fuzzers' false positives came from such terms), and an
// exact zero must stay an exact zero.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "compare/summation.h"

namespace gscheck::compare {
namespace {

// A term of type T: mostly extremes, infinities, NaN and zeros, sometimes an ordinary value.
template <class T>
rc::Gen<T> gen_term() {
  using L = std::numeric_limits<T>;
  return rc::gen::oneOf(
      rc::gen::element<T>(L::max(), -L::max(), L::infinity(), -L::infinity(), L::quiet_NaN(), T(0),
                          -T(0), L::max() / 2, -L::max() / 2, L::denorm_min(), T(1), T(-1)),
      rc::gen::map(rc::gen::inRange(-1000000, 1000000), [](int v) { return T(v) / T(64); }),
      rc::gen::map(rc::gen::inRange(-1000, 1000), [](int v) { return L::max() / T(1000) * T(v); }));
}

// Adds the terms in an order drawn by RapidCheck: random pairs are combined until one value is
// left, which covers sequential sums in any permutation and every summation tree.
template <class T, class Add = std::plus<T>>
T sum_in_some_order(std::vector<T> values, Add add = {}) {
  while (values.size() > 1) {
    const auto i = *rc::gen::inRange<std::size_t>(0, values.size());
    std::swap(values[i], values.back());
    const T a = values.back();
    values.pop_back();
    const auto j = *rc::gen::inRange<std::size_t>(0, values.size());
    values[j] = add(values[j], a);  // in T: float sums round to float
  }
  return values.empty() ? T(0) : values[0];
}

template <class T>
void check_every_order_admitted(double u) {
  const auto terms =
      *rc::gen::resize(8, rc::gen::nonEmpty(rc::gen::container<std::vector<T>>(gen_term<T>())));
  std::vector<double> wide(terms.begin(), terms.end());
  SumProblem p;
  p.terms = wide;
  p.unit_roundoff = u;
  p.max_finite = static_cast<double>(std::numeric_limits<T>::max());
  std::string why;
  for (int order = 0; order < 4; ++order) {
    const T got = sum_in_some_order(terms);
    RC_ASSERT(sum_allows(p, static_cast<double>(got), &why));
  }
  // The bound's text is always a real description (no "nan" bound for finite terms).
  RC_ASSERT(why.find("+- nan") == std::string::npos);
  RC_ASSERT(why.find("+- -nan") == std::string::npos);
}

RC_GTEST_PROP(Summation, EveryOrderOfDoubleTermsIsAdmitted, ()) {
  check_every_order_admitted<double>(0x1p-53);
}

RC_GTEST_PROP(Summation, EveryOrderOfFloatTermsIsAdmitted, ()) {
  check_every_order_admitted<float>(0x1p-24);
}

// Zeros sum to zero in every order: nothing else is admitted.
RC_GTEST_PROP(Summation, ExactZeroStaysExactZero, ()) {
  const auto terms =
      *rc::gen::nonEmpty(rc::gen::container<std::vector<double>>(rc::gen::element(0.0, -0.0)));
  SumProblem p{terms, 0x1p-53, 0, DBL_MAX};
  std::string why;
  RC_ASSERT(sum_allows(p, 0.0, &why));
  RC_ASSERT(!sum_allows(p, std::numeric_limits<double>::denorm_min(), &why));
  RC_ASSERT(!sum_allows(p, -std::numeric_limits<double>::denorm_min(), &why));
  RC_ASSERT(!sum_allows(p, INFINITY, &why));
  RC_ASSERT(!sum_allows(p, NAN, &why));
}

// Finite terms that cannot overflow never admit NaN or an infinity.
RC_GTEST_PROP(Summation, SmallFiniteTermsAdmitNoNonFiniteResult, ()) {
  const auto ints =
      *rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(rc::gen::inRange(-1000000, 1000000)));
  std::vector<double> terms;
  for (int v : ints) terms.push_back(v / 8.0);
  SumProblem p{terms, 0x1p-53, 0, DBL_MAX};
  std::string why;
  RC_ASSERT(!sum_allows(p, NAN, &why));
  RC_ASSERT(!sum_allows(p, INFINITY, &why));
  RC_ASSERT(!sum_allows(p, -INFINITY, &why));
}

// The shapes the fuzzers stopped on (scatter_nd_fuzz, tensor_scatter_fuzz; complex128 parts).
TEST(Summation, OverflowBeforeAnInfinityMayGiveNan) {
  const double terms[] = {DBL_MAX, DBL_MAX, -INFINITY};
  SumProblem p{terms, 0x1p-53, 0, DBL_MAX};
  std::string why;
  EXPECT_TRUE(sum_allows(p, NAN, &why));        // row order: (max + max) + -inf
  EXPECT_TRUE(sum_allows(p, -INFINITY, &why));  // (max + -inf) + max
  EXPECT_FALSE(sum_allows(p, INFINITY, &why));
  EXPECT_FALSE(sum_allows(p, 0.0, &why));
  EXPECT_EQ(why, "-inf or nan (the finite terms can overflow the other way)");
  // One finite term cannot overflow: only -inf.
  const double one[] = {DBL_MAX, -INFINITY};
  p.terms = one;
  EXPECT_FALSE(sum_allows(p, NAN, &why));
  EXPECT_TRUE(sum_allows(p, -INFINITY, &why));
}

TEST(Summation, CancellingExtremesHaveAFiniteBound) {
  const double terms[] = {-DBL_MAX, 0.0, DBL_MAX};
  SumProblem p{terms, 0x1p-53, 0, DBL_MAX};
  std::string why;
  EXPECT_TRUE(sum_allows(p, 0.0, &why));
  EXPECT_EQ(why.find("nan"), std::string::npos) << why;
  EXPECT_FALSE(sum_allows(p, NAN, &why));
  EXPECT_FALSE(sum_allows(p, INFINITY, &why));  // one positive term: no overflow
  EXPECT_FALSE(sum_allows(p, -INFINITY, &why));
  // Two positive extremes can overflow before the negative one is added.
  const double two[] = {DBL_MAX, DBL_MAX, -DBL_MAX};
  p.terms = two;
  EXPECT_TRUE(sum_allows(p, INFINITY, &why));
  EXPECT_TRUE(sum_allows(p, DBL_MAX, &why));
  EXPECT_FALSE(sum_allows(p, -INFINITY, &why));
}

TEST(Summation, OverflowThresholdIsExactForTwoTerms) {
  // max + half an ulp rounds to inf (ties to even); just below it stays max.
  const double half_ulp = std::ldexp(1.0, 1023 - 53);
  const double at[] = {DBL_MAX, half_ulp};
  const double below[] = {DBL_MAX, std::nextafter(half_ulp, 0.0)};
  std::string why;
  SumProblem p{at, 0x1p-53, 0, DBL_MAX};
  EXPECT_EQ(DBL_MAX + half_ulp, INFINITY);
  EXPECT_TRUE(sum_allows(p, INFINITY, &why));
  p.terms = below;
  EXPECT_EQ(DBL_MAX + std::nextafter(half_ulp, 0.0), DBL_MAX);
  EXPECT_FALSE(sum_allows(p, INFINITY, &why));
  EXPECT_TRUE(sum_allows(p, DBL_MAX, &why));
}

// arithmetic=flush_denormals: x86's FTZ and DAZ read a subnormal operand as a zero of its sign
// and store a subnormal result as one; every order of such additions must be admitted.
float ftz(float x) { return std::fabs(x) < FLT_MIN ? std::copysign(0.0f, x) : x; }

RC_GTEST_PROP(Summation, EveryFlushToZeroOrderIsAdmitted, ()) {
  const auto near_min_normal = rc::gen::map(rc::gen::inRange(-40, 40), [](int v) {
    return static_cast<float>(v) * FLT_MIN / 8;  // subnormals, normals and zeros around FLT_MIN
  });
  const auto terms = *rc::gen::resize(8, rc::gen::nonEmpty(rc::gen::container<std::vector<float>>(
                                             rc::gen::oneOf(near_min_normal, gen_term<float>()))));
  std::vector<double> wide(terms.begin(), terms.end());
  SumProblem p{wide, 0x1p-24, 0, FLT_MAX};
  p.flush_below = FLT_MIN;
  std::string why;
  for (int order = 0; order < 4; ++order) {
    const float got =
        sum_in_some_order(terms, [](float x, float y) { return ftz(ftz(x) + ftz(y)); });
    RC_ASSERT(sum_allows(p, static_cast<double>(ftz(got)), &why));
  }
}

TEST(Summation, FlushToZeroStoresNoSubnormal) {
  // Two subnormal terms (as TF-XLA's scatter_nd summed them, sweep seed 1, position 4562): the
  // flushed sum is +0, and the subnormal IEEE sum is no possible result.
  const double terms[] = {0x1p-149, 0x1p-149};
  SumProblem p{terms, 0x1p-24, 0, FLT_MAX};
  std::string why;
  EXPECT_TRUE(sum_allows(p, 0x1p-148, &why));
  EXPECT_FALSE(sum_allows(p, 0.0, &why));
  p.flush_below = FLT_MIN;
  EXPECT_TRUE(sum_allows(p, 0.0, &why));
  EXPECT_FALSE(sum_allows(p, 0x1p-148, &why));
  EXPECT_NE(why.find("subnormals flushed"), std::string::npos) << why;
  // Normal terms keep their bound.
  const double normal[] = {1.0, 2.0};
  p.terms = normal;
  EXPECT_TRUE(sum_allows(p, 3.0, &why));
  EXPECT_FALSE(sum_allows(p, 0.0, &why));
}

}  // namespace
}  // namespace gscheck::compare
