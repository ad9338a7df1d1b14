// The comparator under the sweep's own cases: deliberately wrong backends (the reference with
// one corruption each) must be rejected by compare::compare_outcomes. The other properties only
// ever see correct backends, so without these a comparator that accepts too much is invisible.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <type_traits>

#include "compare/compare.h"
#include "properties/checks.h"
#include "properties/generators.h"
#include "properties/props_support.h"

namespace gscheck::props {
namespace {

enum class Wrong { kShape, kErrorClass, kFlippedBit, kUntouchedChanged };

const char* wrong_name(Wrong w) {
  switch (w) {
    case Wrong::kShape:
      return "wrong-shape";
    case Wrong::kErrorClass:
      return "wrong-class";
    case Wrong::kFlippedBit:
      return "flipped-bit";
    case Wrong::kUntouchedChanged:
      return "untouched-changed";
  }
  return "?";
}

// Element i of t with its lowest bit flipped (bool toggled, string extended).
void flip_element(Tensor& t, int64_t i) {
  if (t.dtype() == DType::kString) {
    t.strings()[static_cast<size_t>(i)] += "x";
  } else if (t.dtype() == DType::kBool) {
    auto* b = reinterpret_cast<uint8_t*>(t.data()) + i;
    *b = *b ? 0 : 1;
  } else {
    reinterpret_cast<uint8_t*>(t.data())[i * static_cast<int64_t>(dtype_size(t.dtype()))] ^= 1u;
  }
}

// Elements of the output that no in-range index row addresses (the properties' own geometry,
// not the comparator's decode).
std::vector<int64_t> unaddressed(const Case& c, const Geometry& g) {
  std::vector<bool> addressed(static_cast<size_t>(g.tuples() > 0 ? g.tuples() : 0), false);
  for (int64_t r = 0; r < g.rows; ++r)
    if (const std::optional<int64_t> f = tuple_flat(g, index_row(c, g, 0, r)))
      addressed[static_cast<size_t>(*f)] = true;
  std::vector<int64_t> out;
  for (size_t tuple = 0; tuple < addressed.size(); ++tuple)
    if (!addressed[tuple])
      for (int64_t s = 0; s < g.slice; ++s)
        out.push_back(static_cast<int64_t>(tuple) * g.slice + s);
  return out;
}

// True when element i is a NaN (either part of a complex value).
bool nan_element(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kString) return false;  // strings live in t.strings()
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = t.data_as<T>()[i];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return std::isnan(to_float(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      return std::isnan(v);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      return std::isnan(v.real()) || std::isnan(v.imag());
    } else {
      return false;
    }
  });
}

// Elements whose grading is bit for bit whatever the values: gathers; tf-cpu update and sums
// where the element is no NaN (a sum's NaN may carry any payload). min/max (NaN operands: any
// operand) and tf-gpu duplicates (several right answers) are left to the untouched corruption.
bool bit_exact_element(const Case& c, const Tensor& t, int64_t i) {
  if (!is_scatter(c.op)) return true;
  if (c.semantics != Semantics::kTfCpu) return false;
  if (c.op == Op::kTensorScatterMin || c.op == Op::kTensorScatterMax) return false;
  if (c.op == Op::kTensorScatterUpdate) return true;
  return !nan_element(t, i);
}

// The wrong backend's outcome for c, or nullopt when this corruption does not apply to it.
std::optional<Outcome> corrupt(Wrong w, const Case& c, const Outcome& ref) {
  if (w == Wrong::kErrorClass) {
    if (!ref.ok()) {
      const ErrorClass other = ref.error().cls == ErrorClass::kInvalidArgument
                                   ? ErrorClass::kBadIndex
                                   : ErrorClass::kInvalidArgument;
      return Outcome(Error{other, ref.error().message});
    }
    return Outcome(Error{ErrorClass::kInvalidArgument, "a wrong backend's error"});
  }
  if (!ref.ok()) return std::nullopt;
  Tensor t = ref.value();
  const int64_t n = t.num_elements();
  if (w == Wrong::kShape) {
    // Same bytes and element count, another shape: [2,3] -> [3,2], [n] -> [n,1].
    std::vector<int64_t> dims = t.shape().dims();
    std::vector<int64_t> rev(dims.rbegin(), dims.rend());
    if (rev != dims) {
      dims = rev;
    } else {
      dims.push_back(1);
    }
    if (static_cast<int>(dims.size()) > kMaxRank) return std::nullopt;
    return Outcome(reshaped(t, Shape(dims)));
  }
  if (n == 0) return std::nullopt;
  if (w == Wrong::kFlippedBit) {
    const auto i = *rc::gen::inRange<int64_t>(0, n);
    if (!bit_exact_element(c, t, i)) return std::nullopt;
    flip_element(t, i);
    return Outcome(std::move(t));
  }
  // kUntouchedChanged
  if (!is_scatter(c.op)) return std::nullopt;
  const std::optional<Geometry> g = geometry(c);
  if (!g) return std::nullopt;
  const std::vector<int64_t> free = unaddressed(c, *g);
  if (free.empty()) return std::nullopt;
  const int64_t i = free[*rc::gen::inRange<size_t>(0, free.size())];
  flip_element(t, i);
  return Outcome(std::move(t));
}

void check_wrong_backend(Wrong w) {
  const Case c = *gen::mixed_cases(gen::Constraints{}, w == Wrong::kErrorClass ? 0.5 : 0.0);
  tag_case(c);
  const Outcome ref = reference_outcome(c);
  const std::optional<Outcome> wrong = corrupt(w, c, ref);
  RC_CLASSIFY(wrong.has_value(), "corrupted");
  if (!wrong) return;
  // A backend without tf_messages is graded on the error class alone: the strictest contract
  // must still reject the wrong outcome, and so must the laxest.
  for (const bool messages : {true, false}) {
    compare::Options opts;
    opts.compare_messages = messages;
    const compare::Comparison v = compare::compare_outcomes(c, ref, *wrong, opts);
    if (v.pass) {
      RC_FAIL(std::string(wrong_name(w)) + " backend passed (" + v.summary +
              "); reference: " + outcome_text(ref) + ", wrong: " + outcome_text(*wrong));
    }
  }
}

}  // namespace
}  // namespace gscheck::props

namespace {
using namespace gscheck::props;
using namespace gscheck;

// min/max with NaN operands against a brute force written apart from the comparator: every
// order of the steps the semantics allows (tf-cpu: the row order; tf-gpu: each permutation, and
// either of two equal operands), each step with a NaN operand keeping either operand. The
// comparator must accept exactly the results some sequence returns, so a wrong reduction (max for
// min) fails wherever its answer is not among them.
RC_GTEST_PROP(Comparator, MinMaxNanRuleIsTheSetOfReductionResults, ()) {
  const std::vector<uint32_t> pool = {0x7fc00000u, 0xffc00001u, 0x7fa00000u, 0x00000000u,
                                      0x80000000u, 0x3f800000u, 0x40000000u, 0xc0400000u,
                                      0x7f800000u, 0xff800000u};
  const bool is_min = *rc::gen::arbitrary<bool>();
  const bool gpu = *rc::gen::arbitrary<bool>();
  const auto bits = [&] { return pool[*rc::gen::inRange<std::size_t>(0, pool.size())]; };
  const uint32_t start = bits();
  const std::size_t n = *rc::gen::inRange<std::size_t>(1, 5);
  std::vector<uint32_t> updates;
  for (std::size_t i = 0; i < n; ++i) updates.push_back(bits());
  auto f = [](uint32_t b) { return std::bit_cast<float>(b); };
  std::vector<uint32_t> results;
  auto fold = [&](const std::vector<uint32_t>& order) {
    std::vector<uint32_t> states = {start};
    for (uint32_t u : order) {
      std::vector<uint32_t> next;
      auto put = [&](uint32_t v) {
        if (std::find(next.begin(), next.end(), v) == next.end()) next.push_back(v);
      };
      for (uint32_t s : states) {
        // A NaN step keeps either operand; on tf-gpu so does a tie (+0 and -0: the atomics'
        // order decides).
        if (std::isnan(f(s)) || std::isnan(f(u)) || (gpu && f(s) == f(u))) {
          put(s);
          put(u);
        } else {
          put((is_min ? f(u) < f(s) : f(u) > f(s)) ? u : s);
        }
      }
      states = next;
    }
    for (uint32_t s : states)
      if (std::find(results.begin(), results.end(), s) == results.end()) results.push_back(s);
  };
  std::vector<std::size_t> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = i;
  do {
    std::vector<uint32_t> order;
    for (std::size_t i : perm) order.push_back(updates[i]);
    fold(order);
  } while (gpu && std::next_permutation(perm.begin(), perm.end()));
  // TensorFlow's answer: row order, a NaN step keeps the output element.
  uint32_t tf = start;
  for (uint32_t u : updates)
    if (!std::isnan(f(tf)) && !std::isnan(f(u)) && (is_min ? f(u) < f(tf) : f(u) > f(tf))) tf = u;
  Case c;
  c.name = "prop/min_max_nan";
  c.op = is_min ? Op::kTensorScatterMin : Op::kTensorScatterMax;
  c.semantics = gpu ? Semantics::kTfGpu : Semantics::kTfCpu;
  c.tensor = Tensor::from_values<float>(Shape{1}, {f(start)});
  c.indices =
      Tensor::from_values<int32_t>(Shape{static_cast<int64_t>(n), 1}, std::vector<int32_t>(n, 0));
  std::vector<float> u;
  for (uint32_t b : updates) u.push_back(f(b));
  c.updates = Tensor::from_values<float>(Shape{static_cast<int64_t>(n)}, u);
  const Tensor expected = Tensor::from_values<float>(Shape{1}, {f(tf)});
  std::vector<uint32_t> candidates = pool;
  candidates.push_back(0x7fc00123u);  // a NaN no operand has
  for (uint32_t got : candidates) {
    const bool allowed = std::find(results.begin(), results.end(), got) != results.end();
    const auto v =
        compare::compare_outcomes(c, expected, Tensor::from_values<float>(Shape{1}, {f(got)}));
    RC_ASSERT(v.pass == allowed);
  }
}

RC_GTEST_PROP(Comparator, RejectsWrongShapeWithSameElementCount, ()) {
  check_wrong_backend(Wrong::kShape);
}
RC_GTEST_PROP(Comparator, RejectsWrongErrorClass, ()) { check_wrong_backend(Wrong::kErrorClass); }
RC_GTEST_PROP(Comparator, RejectsOneFlippedBit, ()) { check_wrong_backend(Wrong::kFlippedBit); }
RC_GTEST_PROP(Comparator, RejectsOneChangedUntouchedElement, ()) {
  check_wrong_backend(Wrong::kUntouchedChanged);
}
}  // namespace
