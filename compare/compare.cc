#include "compare/compare.h"

#include <cfloat>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

#include "compare/elements.h"
#include "compare/scatter_rows.h"
#include "compare/summation.h"
#include "compare/triage.h"
#include "core/message_regex.h"

namespace gscheck::compare {
namespace {

std::string describe(const Tensor& t) {
  return "a " + std::string(dtype_name(t.dtype())) + " " + t.shape().to_string() + " tensor";
}
std::string describe(const Error& e) {
  return "error " + std::string(error_class_name(e.cls)) + ": " + e.message;
}

// The classes whose text a tf_messages contract promises: TensorFlow's kernels write these
// messages; an unsupported dtype's text is the kernel registry's, and unimplemented, internal and
// resource_exhausted are the harness's own words.
bool text_promised(ErrorClass cls) {
  return cls == ErrorClass::kInvalidArgument || cls == ErrorClass::kBadIndex;
}

Comparison pass(std::string summary) {
  Comparison v;
  v.pass = true;
  v.summary = std::move(summary);
  return v;
}
Comparison fail(std::string summary) {
  Comparison v;
  v.summary = std::move(summary);
  return v;
}

// Counts how each element was accepted, and collects the first mismatches.
class Tally {
 public:
  Tally(const Shape& shape, const Options& opts) : shape_(shape), opts_(opts) {}
  enum Kind { kExact, kUntouched, kSetValued, kBounded, kOperand, kNumKinds };
  void accept(Kind k, int64_t count = 1) { counts_[k] += count; }
  void reject(int64_t i, std::string expected, std::string got, bool nan_admissible = false) {
    ++v_.mismatch_count;
    if (static_cast<int>(v_.mismatches.size()) < opts_.max_mismatches)
      v_.mismatches.push_back({unravel(shape_, i), std::move(expected), std::move(got), {}});
    if (v_.elements.size() < kMaxElementDiffs) {
      v_.elements.push_back({i, nan_admissible});
    } else {
      v_.elements_complete = false;
    }
  }
  Comparison finish(int64_t n) && {
    v_.pass = v_.mismatch_count == 0;
    if (!v_.pass) {
      const Mismatch& m = v_.mismatches.front();
      v_.summary = std::to_string(v_.mismatch_count) + " of " + std::to_string(n) +
                   " elements differ; first at " + format_index(m.index) + ": expected " +
                   m.expected + ", got " + m.got;
      return std::move(v_);
    }
    if (counts_[kExact] == n) {
      v_.summary = "bit-exact (" + std::to_string(n) + " elements)";
      return std::move(v_);
    }
    static constexpr const char* kNames[] = {
        "bit-exact", "untouched", "one of the colliding updates",
        "within the summation-order bound",
        "an operand (NaN, signed zero) or a NaN of another payload"};
    std::string s = "matches:";
    bool first = true;
    for (int k = 0; k < kNumKinds; ++k) {
      if (!counts_[k]) continue;
      s += (first ? " " : ", ") + std::to_string(counts_[k]) + " " + kNames[k];
      first = false;
    }
    v_.summary = s;
    return std::move(v_);
  }

 private:
  const Shape& shape_;
  const Options& opts_;
  Comparison v_;
  int64_t counts_[kNumKinds] = {};
};

template <class T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <class T>
constexpr bool kIsComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// The component type: float for complex64, the type itself otherwise.
template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return to_float(v);
  } else {
    return static_cast<double>(v);
  }
}

template <class T>
bool is_nan(const T& v) {
  if constexpr (kIsFloat<T>) {
    return std::isnan(as_double(v));
  } else {
    return false;
  }
}

// A sum's NaN carries whatever payload the hardware makes (a GPU returns its canonical NaN), so
// sums compare NaN with NaN regardless of payload, part by part for complex; data movement stays
// bit-exact.
template <class T>
bool same_up_to_nan_payload(const T& a, const T& b) {
  if constexpr (kIsComplex<T>) {
    return same_up_to_nan_payload(a.real(), b.real()) && same_up_to_nan_payload(a.imag(), b.imag());
  } else if constexpr (kIsFloat<T>) {
    return (is_nan(a) && is_nan(b)) || std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return false;
  }
}

// Unit roundoff and largest finite value of a float type.
template <class T>
double unit_roundoff() {
  if constexpr (std::is_same_v<T, Float16>) return 0x1p-11;
  if constexpr (std::is_same_v<T, BFloat16>) return 0x1p-8;
  if constexpr (std::is_same_v<T, float>) return 0x1p-24;
  return 0x1p-53;
}
template <class T>
double max_finite() {
  if constexpr (std::is_same_v<T, Float16>) return 65504.0;
  if constexpr (std::is_same_v<T, BFloat16>) return 0x1.fep127;
  if constexpr (std::is_same_v<T, float>) return FLT_MAX;
  return DBL_MAX;
}

// A string made of prefix followed by the parts in some order (string adds on tf-gpu).
bool is_concatenation_in_some_order(std::string_view got, std::vector<std::string_view>& parts,
                                    std::vector<bool>& used, std::size_t left) {
  if (left == 0) return got.empty();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (used[i] || got.substr(0, parts[i].size()) != parts[i]) continue;
    // Equal parts are interchangeable: try only the first unused one of each value.
    bool seen = false;
    for (std::size_t j = 0; j < i && !seen; ++j) seen = !used[j] && parts[j] == parts[i];
    if (seen) continue;
    used[i] = true;
    if (is_concatenation_in_some_order(got.substr(parts[i].size()), parts, used, left - 1))
      return true;
    used[i] = false;
  }
  return false;
}

// The results a min (or max) reduction of one element may return: the output element first, then
// the updates; a step with a NaN operand may keep either operand (CPU std::min, vector paths and
// GPU atomics differ), one without takes the strictly smaller (larger) value. Row order (tf-cpu)
// is simulated; any order (tf-gpu) gives: every NaN operand, every update (a NaN kept and then
// replaced), and every operand equal to the extreme of the non-NaN ones (+0/-0 ties). Never a
// third value, and never an operand no order of steps returns (docs/spec_notes.md).
template <class T, class Update>
void min_max_results(bool is_min, bool any_order, const T& start, std::size_t n,
                     const Update& update, std::vector<T>& out) {
  out.clear();
  auto add = [&](const T& v) {
    for (const T& a : out)
      if (same_bits(a, v)) return;
    out.push_back(v);
  };
  auto better = [&](const T& a, const T& b) {  // a replaces b
    return is_min ? as_double(a) < as_double(b) : as_double(a) > as_double(b);
  };
  if (!any_order) {
    std::vector<T> next;
    out.push_back(start);
    for (std::size_t h = 0; h < n; ++h) {
      const T& u = update(h);
      next.clear();
      for (const T& s : out) {
        auto put = [&](const T& v) {
          for (const T& a : next)
            if (same_bits(a, v)) return;
          next.push_back(v);
        };
        if (is_nan(s) || is_nan(u)) {
          put(s);
          put(u);
        } else {
          put(better(u, s) ? u : s);
        }
      }
      out.swap(next);
    }
    return;
  }
  bool any_nan = is_nan(start);
  std::optional<double> extreme;
  auto consider = [&](const T& v) {
    if (is_nan(v)) return;
    const double x = as_double(v);
    if (!extreme || (is_min ? x < *extreme : x > *extreme)) extreme = x;
  };
  consider(start);
  for (std::size_t h = 0; h < n; ++h) {
    any_nan = any_nan || is_nan(update(h));
    consider(update(h));
  }
  if (is_nan(start) || (extreme && as_double(start) == *extreme)) add(start);
  for (std::size_t h = 0; h < n; ++h) {
    const T& u = update(h);
    if (is_nan(u) || any_nan || (extreme && as_double(u) == *extreme)) add(u);
  }
}

// Compare a scatter output element by element with the rules of its op.
template <class T>
void compare_scatter(const Case& c, const ScatterRows& rows, const Tensor& expected_t,
                     const Tensor& got_t, const Options& opts, Tally& tally) {
  const T* expected = expected_t.data_as<T>();
  const T* got = got_t.data_as<T>();
  const T* also = opts.also_expected && opts.also_expected->dtype() == got_t.dtype() &&
                          opts.also_expected->shape() == got_t.shape()
                      ? opts.also_expected->data_as<T>()
                      : nullptr;
  const T* updates = c.updates->data_as<T>();
  const T* start = is_tensor_scatter(c.op) ? c.tensor->data_as<T>() : nullptr;
  const int64_t n = got_t.num_elements();
  const int64_t slice_size = rows.slice_size;
  const bool subtracts = c.op == Op::kTensorScatterSub;
  const bool adds = c.op == Op::kScatterNd || c.op == Op::kTensorScatterAdd || subtracts;
  const bool min_max = c.op == Op::kTensorScatterMin || c.op == Op::kTensorScatterMax;
  // XLA leaves the order unspecified; a known failure's rule may say the backend does too.
  const bool any_order = c.semantics != Semantics::kTfCpu || opts.any_order;

  auto exact = [&](int64_t e) {
    if (same_bits(got[e], expected[e])) {
      tally.accept(Tally::kExact);
    } else {
      tally.reject(e, format_value(expected[e]), format_value(got[e]));
    }
  };

  std::size_t p = 0;
  std::vector<double> terms, imag_terms;
  std::vector<T> allowed;
  for (int64_t e = 0; e < n; ++e) {
    const int64_t slice = e / slice_size, j = e % slice_size;
    while (p < rows.by_slice.size() && rows.by_slice[p].first < slice) ++p;
    std::size_t q = p;
    while (q < rows.by_slice.size() && rows.by_slice[q].first == slice) ++q;
    const std::span<const std::pair<int64_t, int64_t>> hits(rows.by_slice.data() + p, q - p);
    auto update = [&](std::size_t h) -> const T& {
      return updates[hits[h].second * slice_size + j];
    };

    if (hits.empty()) {  // no row addresses it: the starting value, bit for bit
      const T zero{};
      const T& s = start ? start[e] : zero;
      if (same_bits(got[e], s)) {
        tally.accept(Tally::kUntouched);
      } else {
        tally.reject(e, format_value(s) + " (untouched)", format_value(got[e]));
      }
      continue;
    }
    // Colliding rows on tf-gpu: more than one right answer (judged below).
    const bool several_answers =
        any_order && hits.size() >= 2 && (c.op == Op::kTensorScatterUpdate || adds);
    if (!several_answers &&
        (same_bits(got[e], expected[e]) || (also && same_bits(got[e], also[e])))) {
      tally.accept(Tally::kExact);
      continue;
    }
    if (adds && !several_answers && same_up_to_nan_payload(got[e], expected[e])) {
      tally.accept(Tally::kOperand);  // a NaN sum with another payload
      continue;
    }

    if (min_max) {
      if constexpr (kIsFloat<T>) {
        bool nan = start && is_nan(start[e]);
        for (std::size_t h = 0; h < hits.size(); ++h) nan = nan || is_nan(update(h));
        if (nan || any_order) {
          min_max_results(c.op == Op::kTensorScatterMin, any_order, start[e], hits.size(), update,
                          allowed);
          auto in = [&](const T& v) {
            for (const T& a : allowed)
              if (same_bits(a, v)) return true;
            return false;
          };
          bool nan_allowed = false;
          std::string set = "one of {";
          for (std::size_t k = 0; k < allowed.size(); ++k) {
            nan_allowed = nan_allowed || is_nan(allowed[k]);
            set += (k ? ", " : "") + format_value(allowed[k]);
          }
          set += "}";
          // The expected value itself is not judged: a corpus/tf file records TensorFlow's own
          // result (the bfloat16 canonical NaN), which the reference does not copy.
          if (same_bits(got[e], expected[e])) {
            tally.accept(Tally::kExact);
          } else if (in(got[e])) {
            tally.accept(Tally::kOperand);
          } else {
            tally.reject(e, set, format_value(got[e]), nan_allowed);
          }
          continue;
        }
      }
      exact(e);
      continue;
    }
    if (!any_order || hits.size() < 2) {  // row order, or a single row: one result
      exact(e);
      continue;
    }
    // Rules with more than one right answer. The expected value must itself be one of them (a
    // wrong reference or golden file shows up here), and got must be one.
    auto judge = [&](auto allowed, Tally::Kind kind) {
      std::string why;
      const bool expected_ok = allowed(expected[e], /*strict=*/true, &why);
      if (!expected_ok) {
        tally.reject(
            e,
            "a possible result; the expected " + format_value(expected[e]) + " is not one: " + why,
            format_value(got[e]));
        return;
      }
      if (same_bits(got[e], expected[e]) || allowed(got[e], /*strict=*/false, &why)) {
        tally.accept(same_bits(got[e], expected[e]) ? Tally::kExact : kind);
      } else {
        tally.reject(e, why, format_value(got[e]));
      }
    };
    if (c.op == Op::kTensorScatterUpdate) {
      judge(
          [&](const T& v, bool, std::string* why) {
            *why = "one of {";
            bool found = false;
            for (std::size_t h = 0; h < hits.size(); ++h) {
              found = found || same_bits(v, update(h));
              *why += (h ? ", " : "") + format_value(update(h));
            }
            *why += "}";
            return found;
          },
          Tally::kSetValued);
      continue;
    }
    if (!adds) {
      exact(e);
      continue;
    }
    // add/sub with duplicates in any order. The terms are the starting value (tensor_scatter;
    // scatter_nd starts from zero, and adding to zero is exact) and each update, negated for sub.
    if constexpr (kIsFloat<T> || kIsComplex<T>) {
      auto collect = [&](auto part, std::vector<double>& out) {
        out.clear();
        if (start) out.push_back(part(start[e]));
        for (std::size_t h = 0; h < hits.size(); ++h)
          out.push_back(subtracts ? -part(update(h)) : part(update(h)));
      };
      using R = typename RealOf<T>::type;
      if constexpr (kIsComplex<T>) {
        collect([](const T& v) { return static_cast<double>(v.real()); }, terms);
        collect([](const T& v) { return static_cast<double>(v.imag()); }, imag_terms);
      } else {
        collect([](const T& v) { return as_double(v); }, terms);
      }
      // strict: the dtype's own bound, which TensorFlow's row order meets; otherwise the
      // backend's (float32 accumulation of half types when it says so).
      judge(
          [&](const T& v, bool strict, std::string* why) {
            SumProblem problem;
            const bool widened = !strict && opts.half_accumulated_in_float &&
                                 (std::is_same_v<R, Float16> || std::is_same_v<R, BFloat16>);
            problem.unit_roundoff = widened ? 0x1p-24 : unit_roundoff<R>();
            problem.store_roundoff = widened ? unit_roundoff<R>() : 0;
            problem.max_finite = max_finite<R>();
            problem.accum_max_finite = widened ? FLT_MAX : 0;
            if (opts.flush_denormals && !std::is_same_v<R, Float16>)
              problem.flush_below = std::is_same_v<R, double> ? DBL_MIN : FLT_MIN;
            if constexpr (kIsComplex<T>) {
              std::string why_im;
              problem.terms = terms;
              bool ok = sum_allows(problem, static_cast<double>(v.real()), why);
              problem.terms = imag_terms;
              ok = sum_allows(problem, static_cast<double>(v.imag()), &why_im) && ok;
              *why = "(" + *why + ", " + why_im + ")";
              return ok;
            } else {
              problem.terms = terms;
              return sum_allows(problem, as_double(v), why);
            }
          },
          Tally::kBounded);
    } else if constexpr (std::is_same_v<T, std::string>) {
      judge(
          [&](const std::string& v, bool, std::string* why) {
            *why = "the updates concatenated in some order";
            const std::string prefix = start ? start[e] : std::string();
            if (std::string_view(v).substr(0, prefix.size()) != prefix) return false;
            std::vector<std::string_view> parts;
            for (std::size_t h = 0; h < hits.size(); ++h) parts.push_back(update(h));
            std::vector<bool> used(parts.size(), false);
            return is_concatenation_in_some_order(std::string_view(v).substr(prefix.size()), parts,
                                                  used, parts.size());
          },
          Tally::kSetValued);
    } else {
      exact(e);  // integers wrap and bool adds are OR: every order gives the same bits
    }
  }
}

Comparison compare_tensors(const Case& c, const Tensor& expected, const Tensor& got,
                           const Options& opts) {
  if (expected.dtype() != got.dtype() || expected.shape() != got.shape())
    return fail("expected " + describe(expected) + ", got " + describe(got));
  Tally tally(got.shape(), opts);
  const int64_t n = got.num_elements();
  if (!is_scatter(c.op) && got.bit_equal(expected)) {
    tally.accept(Tally::kExact, n);
    return std::move(tally).finish(n);
  }
  // nan=canonical: the inputs' NaNs as the backend stores them (a copy, only under that rule).
  std::optional<Case> canonical;
  if (opts.canonical_nan && is_scatter(c.op)) {
    canonical = c;
    if (canonical->tensor) canonicalize_nans(*canonical->tensor);
    if (canonical->updates) canonicalize_nans(*canonical->updates);
  }
  const Case& c_in = canonical ? *canonical : c;
  std::optional<ScatterRows> rows;
  if (is_scatter(c.op)) rows = decode_scatter_rows(c, got.shape(), opts.rows);
  const bool start_ok = !is_tensor_scatter(c.op) || (c.tensor && c.tensor->dtype() == got.dtype() &&
                                                     c.tensor->shape() == got.shape());
  const bool updates_ok = c.updates && c.updates->dtype() == got.dtype();
  visit_dtype(got.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (rows && start_ok && updates_ok) {
      compare_scatter<T>(c_in, *rows, expected, got, opts, tally);
      return;
    }
    // Gathers, and scatters whose inputs do not decode: bit for bit.
    const T* e = expected.data_as<T>();
    const T* g = got.data_as<T>();
    for (int64_t i = 0; i < n; ++i) {
      if (same_bits(g[i], e[i])) {
        tally.accept(Tally::kExact);
      } else {
        tally.reject(i, format_value(e[i]), format_value(g[i]));
      }
    }
  });
  return std::move(tally).finish(n);
}

}  // namespace

namespace {

// The smallest normal of a float type's parts (float for complex64).
template <class R>
double smallest_normal() {
  if constexpr (std::is_same_v<R, Float16>) return 0x1p-14;
  if constexpr (std::is_same_v<R, BFloat16> || std::is_same_v<R, float>) return 0x1p-126;
  return 0x1p-1022;
}

template <class T>
std::pair<double, double> parts_of(const T& v) {
  if constexpr (kIsComplex<T>) {
    return {as_double(v.real()), as_double(v.imag())};
  } else {
    return {as_double(v), 0.0};
  }
}

}  // namespace

bool has_subnormal_input(const Case& c) {
  bool found = false;
  for (const std::optional<Tensor>* in : {&c.params, &c.tensor, &c.updates}) {
    if (!*in || found) continue;
    visit_dtype((*in)->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloat<T> || kIsComplex<T>) {
        using R = typename RealOf<T>::type;
        const double tiny = smallest_normal<R>();
        auto subnormal = [&](double x) { return x != 0 && std::fabs(x) < tiny; };
        const T* p = (*in)->template data_as<T>();
        for (int64_t i = 0, n = (*in)->num_elements(); i < n && !found; ++i) {
          const auto [re, im] = parts_of(p[i]);
          found = subnormal(re) || subnormal(im);
        }
      }
    });
  }
  return found;
}

bool flush_explains(const Tensor& expected, const Tensor& got, int64_t flat, bool subnormal_input) {
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) return false;
  if (flat < 0 || flat >= got.num_elements()) return false;
  bool explained = false;
  visit_dtype(got.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T> || kIsComplex<T>) {
      using R = typename RealOf<T>::type;
      const double tiny = smallest_normal<R>();
      const T& e = expected.data_as<T>()[flat];
      const T& g = got.data_as<T>()[flat];
      if (same_bits(e, g)) return;
      auto subnormal = [&](double x) { return x != 0 && std::fabs(x) < tiny; };
      // Part p in the stored type: widening to double quiets a signalling NaN (float16 0x7c15
      // and 0x7e15 widen alike), so NaN bits are compared before widening.
      auto stored = [](const T& v, int p) -> R {
        if constexpr (kIsComplex<T>) {
          return p == 0 ? v.real() : v.imag();
        } else {
          return v;
        }
      };
      // A NaN part must keep its bits: other NaN bits are a NaN rule's to explain, not a flush's.
      auto part_explained = [&](int p, double x, double y) {
        if (std::isnan(x) || std::isnan(y)) return same_bits(stored(e, p), stored(g, p));
        if (x == y && std::signbit(x) == std::signbit(y)) return true;  // this part agrees
        if (x == y) return subnormal_input;  // +0 and -0: DAZ reads a negative subnormal as -0
        return std::fabs(x - y) <= tiny && (subnormal_input || subnormal(x) || subnormal(y));
      };
      const auto [er, ei] = parts_of(e);
      const auto [gr, gi] = parts_of(g);
      explained = part_explained(0, er, gr) && part_explained(1, ei, gi);
    }
  });
  return explained;
}

bool only_flushed_subnormals(const Case& c, const Tensor& expected, const Tensor& got) {
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) return false;
  const bool subnormal_input = has_subnormal_input(c);
  bool differs = false;
  const std::size_t size = dtype_size(got.dtype());
  const bool strings = got.dtype() == DType::kString;
  for (int64_t i = 0, n = got.num_elements(); i < n; ++i) {
    if (strings) return false;
    if (std::memcmp(expected.data() + i * size, got.data() + i * size, size) == 0) continue;
    differs = true;
    if (!flush_explains(expected, got, i, subnormal_input)) return false;
  }
  return differs;
}

namespace {
// Each kept mismatch told in the case's terms (compare/triage.h).
Comparison triaged(const Case& c, const Tensor& got, Comparison v) {
  for (Mismatch& m : v.mismatches) m.triage = triage_element(c, got, m.index);
  return v;
}
}  // namespace

Comparison compare_outcomes(const Case& c, const Outcome& expected, const Outcome& got,
                            const Options& opts) {
  if (!expected.ok() && !got.ok()) {
    const Error& e = expected.error();
    const Error& g = got.error();
    if (e.cls != g.cls) return fail("expected " + describe(e) + "; got " + describe(g));
    if (messages_graded(opts, e.cls) && !e.accepts(g.message))
      return fail("same error class " + std::string(error_class_name(e.cls)) +
                  " but the message differs: expected \"" + e.message + "\"" +
                  (e.alternatives.empty()
                       ? ""
                       : " (or one of " + std::to_string(e.alternatives.size()) + " others)") +
                  ", got \"" + g.message + "\"");
    return pass("error " + std::string(error_class_name(e.cls)) +
                (messages_graded(opts, e.cls) ? " with the same message" : ""));
  }
  if (!expected.ok())
    return fail("expected " + describe(expected.error()) + "; got " + describe(*got));
  if (!got.ok()) return fail("expected " + describe(*expected) + "; got " + describe(got.error()));
  return triaged(c, *got, compare_tensors(c, *expected, *got, opts));
}

bool messages_graded(const Options& opts, ErrorClass cls) {
  return (opts.compare_messages && text_promised(cls)) ||
         (opts.compare_bad_index_messages && cls == ErrorClass::kBadIndex);
}

Options options_for(const Capabilities& caps) {
  Options o;
  o.compare_messages = caps.tf_messages;
  o.compare_bad_index_messages = caps.tf_messages || caps.tf_bad_index_messages;
  o.half_accumulated_in_float = caps.accumulates_half_in_float;
  return o;
}

Comparison check_expect(const Case& c, const Expect& expect, const Outcome& got,
                        const Options& opts) {
  if (expect.output) {
    if (!got.ok())
      return fail("expected " + describe(*expect.output) + "; got " + describe(got.error()));
    return triaged(c, *got, compare_tensors(c, *expect.output, *got, opts));  // no copy
  }
  if (!expect.error_class) return fail("the expect block names neither an output nor an error");
  const std::string want =
      "error " + std::string(error_class_name(*expect.error_class)) +
      (expect.error_regex ? " matching /" + excerpt(*expect.error_regex) + "/" : "");
  if (got.ok()) return fail("expected " + want + "; got " + describe(*got));
  const Error& g = got.error();
  if (g.cls != *expect.error_class) return fail("expected " + want + "; got " + describe(g));
  if (expect.error_regex) {
    const auto re = MessageRegex::compile(*expect.error_regex);
    if (!re.ok()) return fail("expect.error.message: " + re.error().message);
    if (!re->search(g.message))
      return fail("expected " + want + "; got message \"" + excerpt(g.message, 400) + "\"");
  }
  return pass(want);
}

}  // namespace gscheck::compare
