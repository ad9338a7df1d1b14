#include "harness/explain.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "compare/elements.h"
#include "compare/scatter_rows.h"
#include "core/backend.h"
#include "reference/reference.h"

namespace gscheck::harness {

using reports::Difference;
using reports::Verdict;

namespace {

// The rule the selected "follows" entries say the backend follows (each part from the first
// entry that sets it), and those entries.
reference::Departure followed_rule(const reports::KnownFailures& known,
                                   const std::vector<std::size_t>& selected,
                                   std::vector<std::size_t>& followers,
                                   reports::CaseResult::KnownLint& lint) {
  using B = reference::Departure::BadIndex;
  reference::Departure d;
  for (std::size_t i : selected) {
    const reports::KnownFailure& e = known.entries[i];
    if (e.forgives != reports::Forgive::kFollows) continue;
    bool conflict = false;
    if (e.follows.bad_index != B::kSemantics) {
      conflict = d.bad_index != B::kSemantics && d.bad_index != e.follows.bad_index;
      if (d.bad_index == B::kSemantics) d.bad_index = e.follows.bad_index;
    }
    d.wrap_negative = d.wrap_negative || e.follows.wrap_negative;
    d.flush_denormals = d.flush_denormals || e.follows.flush_denormals;
    using S = reference::Departure::MinMaxStore;
    if (e.follows.min_max_store != S::kTensorFlow) {
      conflict = conflict ||
                 (d.min_max_store != S::kTensorFlow && d.min_max_store != e.follows.min_max_store);
      if (d.min_max_store == S::kTensorFlow) d.min_max_store = e.follows.min_max_store;
    }
    d.any_order_duplicates = d.any_order_duplicates || e.follows.any_order_duplicates;
    d.one_row_copied = d.one_row_copied || e.follows.one_row_copied;
    d.canonical_nan = d.canonical_nan || e.follows.canonical_nan;
    if (e.follows.min_max_tie != reference::Departure::MinMaxTie::kKeep) {
      using T = reference::Departure::MinMaxTie;
      conflict = conflict || (d.min_max_tie != T::kKeep && d.min_max_tie != e.follows.min_max_tie);
      if (d.min_max_tie == T::kKeep) d.min_max_tie = e.follows.min_max_tie;
    }
    if (e.follows.int64_cut != reference::Departure::Int64Cut::kNone) {
      conflict = conflict || (d.int64_cut != reference::Departure::Int64Cut::kNone &&
                              d.int64_cut != e.follows.int64_cut);
      if (d.int64_cut == reference::Departure::Int64Cut::kNone) d.int64_cut = e.follows.int64_cut;
    }
    if (conflict && !followers.empty()) lint.overlaps.emplace_back(followers.front(), i);
    followers.push_back(i);
  }
  return d;
}

// The comparison reads index rows as the rule does (compare keeps its own decoding).
compare::RowRule row_rule(const reference::Departure& d) {
  using C = reference::Departure::Int64Cut;
  return {d.wrap_negative, d.int64_cut != C::kNone, d.int64_cut_after_wrap(),
          d.int64_cut == C::kLow32BitsUnsigned};
}

}  // namespace

Explanation explain(const reports::KnownFailures& known, const Evidence& ev, const Judged& j_tf,
                    const std::string& name, const std::string& file) {
  Explanation x{j_tf.verdict, {}, {}, {}, {}, {}, {}};
  const reports::CaseView view(ev.f.c, ev.want, ev.f.expect ? &*ev.f.expect : nullptr);
  std::vector<bool> selected(known.entries.size());
  for (std::size_t i = 0; i < known.entries.size(); ++i) {
    selected[i] = reports::selects(known.entries[i], view, name, file);
    if (selected[i]) x.lint.selected.push_back(i);
  }
  if (j_tf.verdict == Verdict::kPassed) {
    // Only an entry naming cases promises they fail; one selecting by what cases are allows.
    for (std::size_t i : x.lint.selected) {
      const reports::KnownFailure& e = known.entries[i];
      if (e.case_pattern != "*" && e.forgives != reports::Forgive::kFollows &&
          (e.forgives != reports::Forgive::kElements ||
           e.element_rule == reports::ElementRule::kAnyValue))
        x.entries.push_back(i);
    }
    if (!x.entries.empty()) x.verdict = Verdict::kXpass;
    return x;
  }
  if (!reports::is_failure(j_tf.verdict) || j_tf.verdict == Verdict::kMistrusted) return x;
  std::vector<int64_t> used(known.entries.size(), 0);

  // An entry that says the backend follows another rule predicts its answer: the reference runs
  // under that rule and the backend is judged against it as against TensorFlow (bit for bit,
  // within the same bounds); what still differs is left to the other entries.
  std::vector<std::size_t> followers;
  const reference::Departure rule = followed_rule(known, x.lint.selected, followers, x.lint);
  std::optional<Outcome> predicted, also_predicted;
  std::optional<Judged> j_rule;
  if (!followers.empty()) {
    using S = reference::Departure::MinMaxStore;
    reference::Options ro;
    ro.max_output_bytes = ev.max_output_bytes;
    ro.departure = rule;
    // Either store per element: both predictions, each element graded against the pair.
    if (rule.min_max_store == S::kEither) {
      ro.departure.min_max_store = S::kKept;
      also_predicted = reference::run(ev.f.c, ro);
      ro.departure.min_max_store = S::kFlushed;
    }
    predicted = reference::run(ev.f.c, ro);
    const bool over_budget =
        !predicted->ok() && predicted->error().cls == ErrorClass::kResourceExhausted;
    if (!over_budget) {
      compare::Options opts = ev.opts;
      opts.rows = row_rule(rule);
      opts.any_order = rule.any_order_duplicates;
      opts.flush_denormals = rule.flush_denormals;
      opts.canonical_nan = rule.canonical_nan;
      if (also_predicted && also_predicted->ok() && predicted->ok())
        opts.also_expected = &**also_predicted;
      // Another order each run: repeats may differ, and each must be within the bounds.
      const bool deterministic = ev.deterministic && !rule.any_order_duplicates;
      Evidence under{ev.f, nullptr, &*predicted,        ev.runs, deterministic, opts,
                     "",   "",      ev.max_output_bytes};
      j_rule = judge(under);
    }
  }
  const Judged& j = j_rule ? *j_rule : j_tf;
  // The differences left are from the prediction: which elements a row computed is its question.
  std::optional<reports::CaseView> under_view;
  if (j_rule) under_view.emplace(ev.f.c, &*predicted, nullptr, row_rule(rule));
  const std::string described = rule.describe();
  const std::string under = "the reference under " + described;
  if (j_rule && j_rule->verdict == Verdict::kPassed) {
    x.verdict = Verdict::kXfail;
    x.follows = described;
    x.entries = followers;
    // An entry naming this case as returning values nobody can predict also explains it, when
    // those values happen to be the rule's (memory nobody wrote, read as zeros this time).
    for (std::size_t i : x.lint.selected) {
      const reports::KnownFailure& e = known.entries[i];
      if (e.case_pattern != "*" && e.forgives == reports::Forgive::kElements &&
          e.element_rule == reports::ElementRule::kAnyValue)
        x.entries.push_back(i);
    }
    for (std::size_t i : x.entries) x.lint.used.emplace_back(i, 1);
    x.explained.push_back(
        {known.entries[followers.front()].id, static_cast<int64_t>(j_tf.differences.size()),
         "follows " + described + ": " + under + " agrees (" + j_rule->reason + ")"});
    return x;
  }
  if (j_rule) {
    x.reason = "follows " + described + " (known failure " + known.entries[followers.front()].id +
               "), but against " + under + ": " + j_rule->reason;
    if (!reports::is_failure(j_rule->verdict)) x.reason = j_tf.reason;
  }
  auto group = [](std::vector<reports::CaseResult::Differences>& list, const std::string& key,
                  const std::string& text) {
    for (auto& g : list)
      if (g.entry == key) {
        ++g.count;
        return;
      }
    list.push_back({key, 1, text});
  };
  for (const Difference& d : j.differences) {
    const std::vector<std::size_t> by =
        reports::explaining(known, selected, under_view ? *under_view : view, d);
    if (by.empty()) {
      // Unexplained groups are keyed by kind (entry stays "" in the report).
      auto it = std::find_if(x.unexplained.begin(), x.unexplained.end(), [&](const auto& g) {
        return g.example.rfind(std::string(reports::difference_kind_name(d.kind)) + ": ", 0) == 0;
      });
      if (it != x.unexplained.end()) {
        ++it->count;
      } else {
        x.unexplained.push_back(
            {"", 1, std::string(reports::difference_kind_name(d.kind)) + ": " + d.text});
      }
      continue;
    }
    ++used[by.front()];
    group(x.explained, known.entries[by.front()].id, d.text);
    for (std::size_t k = 1; k < by.size(); ++k) x.lint.overlaps.emplace_back(by.front(), by[k]);
  }
  for (std::size_t i = 0; i < used.size(); ++i)
    if (used[i] > 0) {
      x.entries.push_back(i);
      x.lint.used.emplace_back(i, used[i]);
    }
  if (!j.differences.empty() && x.unexplained.empty()) {
    x.verdict = Verdict::kXfail;
    x.reason.clear();
    // The followed rule is part of the explanation: it predicted what the others did not need to.
    for (std::size_t i : followers)
      if (std::find(x.entries.begin(), x.entries.end(), i) == x.entries.end()) {
        x.entries.insert(x.entries.begin(), i);
        x.lint.used.emplace_back(i, 1);
      }
  }
  return x;
}

// The injected bugs `known-failures check` tries on a case the backend got right: a known-failures
// file that would forgive one there is wider than the failures it explains.
std::vector<std::pair<std::string, Outcome>> injected_bugs(const Evidence& ev) {
  std::vector<std::pair<std::string, Outcome>> out;
  Error abort{ErrorClass::kInternal, "plugin crashed with signal 6 (Aborted) [injected]"};
  abort.unsafe = true;  // as a real crash: UNSAFE, which no entry forgives
  out.emplace_back("abort", std::move(abort));
  out.emplace_back("declined", Error{ErrorClass::kUnimplemented, "declined [injected]"});
  bool output = false;
  const auto cls = expected_error_class(ev, &output);
  out.emplace_back("wrong class",
                   Error{cls == ErrorClass::kInvalidArgument ? ErrorClass::kBadIndex
                                                             : ErrorClass::kInvalidArgument,
                         "wrong class [injected]"});
  if (cls != ErrorClass::kBadIndex)
    out.emplace_back("false bad_index",
                     Error{ErrorClass::kBadIndex, "indices[0] = 7 is not in [0, 4) [injected]"});
  const Outcome& got = ev.runs.front();
  if (got.ok() && got.value().num_elements() > 0 && got.value().dtype() != DType::kString) {
    Tensor wrong = got.value();
    visit_dtype(wrong.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = wrong.template data_as<T>();
      if constexpr (std::is_same_v<T, bool>) {
        p[0] = !p[0];
      } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        // Through float, as the half types do arithmetic (T(float) would set the bits).
        const float v = std::isnan(to_float(p[0])) ? 1000.0f : to_float(p[0]) + 1000.0f;
        if constexpr (std::is_same_v<T, Float16>)
          p[0] = float16_from_float(v);
        else
          p[0] = bfloat16_from_float(v);
      } else if constexpr (std::is_floating_point_v<T>) {
        p[0] = std::isnan(p[0]) ? T(1000) : p[0] + T(1000);
      } else if constexpr (std::is_integral_v<T>) {
        p[0] = static_cast<T>(p[0] + 1);
      } else if constexpr (!std::is_same_v<T, std::string>) {  // complex
        p[0] = T(std::isnan(p[0].real()) ? 1000 : p[0].real() + 1000, p[0].imag());
      }
    });
    out.emplace_back("wrong value", std::move(wrong));
  }
  return out;
}

namespace {

// A non-NaN element of the case's inputs of got's dtype whose bits differ from got's element at
// flat and from the expected one (want, when it is a tensor like got), or nullopt.
std::optional<std::vector<std::byte>> other_input_element(const Case& c, const Tensor& got,
                                                          const Outcome* want, int64_t flat) {
  const std::size_t size = dtype_size(got.dtype());
  const std::byte* at = got.data() + flat * static_cast<int64_t>(size);
  const std::byte* expected = want && want->ok() && (*want)->dtype() == got.dtype() &&
                                      (*want)->num_elements() == got.num_elements()
                                  ? (*want)->data() + flat * static_cast<int64_t>(size)
                                  : nullptr;
  for (const std::optional<Tensor>* in : {&c.params, &c.tensor, &c.updates}) {
    if (!*in || (*in)->dtype() != got.dtype()) continue;
    const Tensor& t = **in;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const std::byte* e = t.data() + i * static_cast<int64_t>(size);
      if (std::memcmp(e, at, size) == 0 || (expected && std::memcmp(e, expected, size) == 0))
        continue;
      if (!compare::element_is_nan(t, i)) return std::vector<std::byte>(e, e + size);
    }
  }
  return std::nullopt;
}

Tensor with_element(const Tensor& got, int64_t flat, const std::vector<std::byte>& bits) {
  Tensor out = got;
  std::memcpy(out.data() + flat * static_cast<int64_t>(bits.size()), bits.data(), bits.size());
  return out;
}

}  // namespace

std::vector<std::pair<std::string, Outcome>> injected_bugs_on_explained(const Evidence& ev) {
  std::vector<std::pair<std::string, Outcome>> out;
  const Outcome& got = ev.runs.front();
  if (!got.ok() || got->num_elements() == 0 || got->dtype() == DType::kString) return out;
  const Case& c = ev.f.c;
  if (auto bits = other_input_element(c, *got, ev.want, 0))
    out.emplace_back("wrong row where it explains", with_element(*got, 0, *bits));
  if (c.op == Op::kGather || c.op == Op::kGatherNd) return out;
  const auto rows = compare::decode_scatter_rows(c, got->shape());
  if (!rows || rows->slice_size <= 0) return out;
  std::vector<bool> touched(static_cast<std::size_t>(got->num_elements() / rows->slice_size));
  for (const auto& [slice, row] : rows->by_slice)
    if (slice >= 0 && static_cast<std::size_t>(slice) < touched.size())
      touched[static_cast<std::size_t>(slice)] = true;
  for (std::size_t s = 0; s < touched.size(); ++s) {
    if (touched[s]) continue;
    const auto flat = static_cast<int64_t>(s) * rows->slice_size;
    if (auto bits = other_input_element(c, *got, ev.want, flat))
      out.emplace_back("untouched element changed where it explains",
                       with_element(*got, flat, *bits));
    break;
  }
  return out;
}

}  // namespace gscheck::harness
