#include "properties/mutants.h"

#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "properties/model.h"
#include "properties/props_support.h"
#include "reference/reference.h"

namespace gscheck::props {
namespace {

class NaiveBackend : public Backend {
 public:
  explicit NaiveBackend(Bug bug) : bug_(bug) {
    caps_.name = bug == Bug::kNone ? "naive" : "mutant:" + std::string(bug_name(bug));
    caps_.ops.assign(std::begin(kAllOps), std::end(kAllOps));
    caps_.dtypes.assign(std::begin(kAllDTypes), std::end(kAllDTypes));
    caps_.index_dtypes = {DType::kInt16, DType::kInt32, DType::kInt64};
    caps_.semantics = {Semantics::kTfCpu, Semantics::kTfGpu};
  }
  const Capabilities& capabilities() const override { return caps_; }

  Outcome run(const Case& c) override {
    const Case seen = as_understood(c);
    // Shape and attribute validation is the oracle's; index bounds are this backend's own.
    Outcome checked = reference::run(seen);
    if (!checked.ok() && checked.error().cls != ErrorClass::kBadIndex) return checked;
    const std::optional<Geometry> g = geometry(seen);
    if (!g) return checked;
    return is_scatter(seen.op) ? scatter(seen, *g) : gather(seen, *g);
  }

 private:
  // The case as a buggy implementation reads its attributes.
  Case as_understood(const Case& c) const {
    Case s = c;
    if (bug_ == Bug::kBatchDimsIgnored && !is_scatter(c.op) && c.batch_dims != 0) {
      if (c.op == Op::kGather && !c.axis)
        s.axis = Tensor::from_values<int64_t>(Shape{}, {c.batch_dims});
      s.batch_dims = 0;
    }
    if (bug_ == Bug::kAxisWrongRank && c.op == Op::kGather && c.axis && c.axis->rank() == 0 &&
        c.axis->int_at(0) < 0 && c.axis->int_at(0) > -1000) {
      s.axis = Tensor::from_values<int64_t>(Shape{}, {c.axis->int_at(0) + c.indices->rank()});
    }
    return s;
  }

  // The index as this backend resolves it; nullopt when it counts as out of range.
  std::optional<int64_t> resolve(int64_t v, int64_t n) const {
    if (bug_ == Bug::kNegativeIndicesWrap && v < 0 && v >= -n) v += n;
    const bool in = v >= 0 && (bug_ == Bug::kOffByOneBounds ? v <= n : v < n);
    return in ? std::optional<int64_t>(v) : std::nullopt;
  }
  std::optional<int64_t> resolve_row(const Geometry& g, const std::vector<int64_t>& row) const {
    int64_t flat = 0;
    for (size_t k = 0; k < row.size(); ++k) {
      const std::optional<int64_t> v = resolve(row[k], g.column_dims[k]);
      if (!v) return std::nullopt;
      flat = flat * g.column_dims[k] + *v;
    }
    return flat;
  }
  // tf-cpu raises unless the policy is IGNORE; tf-gpu only when it is ERROR.
  static bool raises(const Case& c) {
    const std::optional<BadIndicesPolicy> p = bad_indices_policy_from_name(c.bad_indices_policy);
    if (c.semantics == Semantics::kTfCpu) return p != BadIndicesPolicy::kIgnore;
    return p == BadIndicesPolicy::kError;
  }

  Outcome gather(const Case& c, const Geometry& g) const {
    Expected<Tensor> made = Tensor::zeros(c.params->dtype(), g.out_shape);
    if (!made.ok()) return made.error();
    Tensor out = std::move(made.value());
    // Poison: an element the copy forgets to write shows up.
    if (out.dtype() == DType::kString) {
      for (auto& s : out.strings()) s = "\xa5<unwritten>";
    } else {
      std::memset(out.data(), 0xa5, out.byte_size());
    }
    const Tensor zero = Tensor::zeros(out.dtype(), Shape{1}).value();
    const int64_t params_n = c.params->num_elements();
    const int64_t tuples = g.tuples();
    const int64_t copied = bug_ == Bug::kGatherTailUnwritten ? g.slice - g.slice % 2 : g.slice;
    // gather looks at no index when the outer or inner size is 0 (TensorFlow's lazy checks).
    const bool lazy = c.op == Op::kGather && (g.batches * g.outer == 0 || g.slice == 0);
    for (int64_t b = 0; b < g.batches; ++b)
      for (int64_t r = 0; r < g.rows; ++r) {
        const std::optional<int64_t> f = resolve_row(g, index_row(c, g, b, r));
        if (!f && raises(c) && !lazy)
          return bad_index("index row " + std::to_string(b * g.rows + r) + " out of range");
        for (int64_t o = 0; o < g.outer; ++o)
          for (int64_t s = 0; s < copied; ++s) {
            const int64_t dst = c.op == Op::kGather ? ((b * g.outer + o) * g.rows + r) * g.slice + s
                                                    : (b * g.rows + r) * g.slice + s;
            const int64_t src = !f ? -1
                                : c.op == Op::kGather
                                    ? ((b * g.outer + o) * g.column_dims[0] + *f) * g.slice + s
                                    : (b * tuples + *f) * g.slice + s;
            if (src < 0 || src >= params_n) {
              copy_element(out, dst, zero, 0);  // a skipped row, or a read past the end
            } else {
              copy_element(out, dst, *c.params, src);
            }
          }
      }
    return out;
  }

  Outcome scatter(const Case& c, const Geometry& g) const {
    Tensor out;
    if (c.tensor) {
      out = *c.tensor;
    } else {
      Expected<Tensor> z = Tensor::zeros(c.updates->dtype(), g.out_shape);
      if (!z.ok()) return z.error();
      out = std::move(z.value());
    }
    const Tensor start = out;
    const int64_t out_n = out.num_elements();
    std::optional<int64_t> last_bad;
    for (int64_t r = 0; r < g.rows; ++r) {
      std::optional<int64_t> f = resolve_row(g, index_row(c, g, 0, r));
      if (!f) {
        if (raises(c)) last_bad = r;
        if (bug_ != Bug::kOobRowToRowZero || g.tuples() == 0) continue;
        f = 0;
      }
      for (int64_t s = 0; s < g.slice; ++s) {
        const int64_t i = *f * g.slice + s;
        if (i >= out_n) continue;  // the off-by-one mutant's write past the end, dropped
        apply(c.op, out, start, i, *c.updates, r * g.slice + s);
      }
    }
    if (last_bad) return bad_index("index row " + std::to_string(*last_bad) + " out of range");
    return out;
  }

  void apply(Op op, Tensor& out, const Tensor& start, int64_t i, const Tensor& upd,
             int64_t j) const {
    if (op == Op::kTensorScatterUpdate) {
      copy_element(out, i, upd, j);
      return;
    }
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T& o = out.data_as<T>()[i];
      const T acc = bug_ == Bug::kAddLastWins ? start.data_as<T>()[i] : o;
      const T u = upd.data_as<T>()[j];
      if constexpr (std::is_same_v<T, bool>) {
        o = acc || u;  // bool add is OR
      } else if constexpr (std::is_same_v<T, std::string>) {
        o = acc + u;  // string add concatenates
      } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        const float a = to_float(acc), b = to_float(u), cur = to_float(o);
        if (op == Op::kTensorScatterMin || op == Op::kTensorScatterMax) {
          // Pick an operand, never a recomputed value: a NaN keeps its payload.
          if (op == Op::kTensorScatterMin ? b < cur : b > cur) o = u;
        } else {
          const float r = op == Op::kTensorScatterSub ? a - b : a + b;
          if constexpr (std::is_same_v<T, Float16>) {
            o = float16_from_float(r);
          } else {
            o = bfloat16_from_float(r);
          }
        }
      } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;  // wrap, as TensorFlow's kernels do
        if (op == Op::kTensorScatterMin) {
          o = u < o ? u : o;
        } else if (op == Op::kTensorScatterMax) {
          o = u > o ? u : o;
        } else if (op == Op::kTensorScatterSub) {
          o = static_cast<T>(static_cast<U>(static_cast<U>(acc) - static_cast<U>(u)));
        } else {
          o = static_cast<T>(static_cast<U>(static_cast<U>(acc) + static_cast<U>(u)));
        }
      } else if constexpr (std::is_floating_point_v<T>) {
        if (op == Op::kTensorScatterMin) {
          o = u < o ? u : o;
        } else if (op == Op::kTensorScatterMax) {
          o = u > o ? u : o;
        } else {
          o = op == Op::kTensorScatterSub ? acc - u : acc + u;
        }
      } else {  // complex: add and sub only
        o = op == Op::kTensorScatterSub ? acc - u : acc + u;
      }
    });
  }

  Bug bug_;
  Capabilities caps_;
};

}  // namespace

std::string_view bug_name(Bug bug) {
  constexpr std::array<std::string_view, 8> names = {"none",
                                                     "off_by_one_bounds",
                                                     "negative_indices_wrap",
                                                     "batch_dims_ignored",
                                                     "axis_wrong_rank",
                                                     "add_last_wins",
                                                     "oob_row_to_row_zero",
                                                     "gather_tail_unwritten"};
  return names[static_cast<size_t>(bug)];
}

std::unique_ptr<Backend> make_naive_backend(Bug bug) { return std::make_unique<NaiveBackend>(bug); }

}  // namespace gscheck::props
