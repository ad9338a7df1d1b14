#include "properties/generators.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

namespace gscheck::gen {
namespace {

// ---------------------------------------------------------------------------------------------
// Small helpers

uint64_t mix(uint64_t x) {  // splitmix64 finaliser: positions and choices derived from a salt
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t mix(uint64_t salt, uint64_t a, uint64_t b = 0) { return mix(mix(salt ^ mix(a)) + b); }

// A uniform choice in [0, n) that never shrinks: it fixes a case's class.
int choose(int n) {
  return *rc::gen::noShrink(rc::gen::resize(rc::kNominalSize, rc::gen::inRange<int>(0, n)));
}
template <class T>
T choose_from(const std::vector<T>& v) {
  return v[static_cast<size_t>(choose(static_cast<int>(v.size())))];
}
// Uniform in [lo, hi] whatever the size, shrinking toward lo (ranks, counts).
int64_t uniform_shrinking(int64_t lo, int64_t hi) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<int64_t>(lo, hi + 1));
}
// Grows with RapidCheck's size, shrinking toward lo (dimensions, offsets).
int64_t sized(int64_t lo, int64_t hi) { return *rc::gen::inRange<int64_t>(lo, hi + 1); }
uint64_t salt_pick() {
  return *rc::gen::noShrink(rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<uint64_t>()));
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    if (p > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
    p *= d;
  }
  return p;
}

std::vector<int64_t> cat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

std::pair<int64_t, int64_t> index_range(DType dt) {
  return visit_dtype(dt, [](auto tag) -> std::pair<int64_t, int64_t> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) < 8) {
      return {std::numeric_limits<T>::min(), std::numeric_limits<T>::max()};
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return {std::is_signed_v<T> ? std::numeric_limits<int64_t>::min() : 0,
              std::numeric_limits<int64_t>::max()};
    } else {
      return {0, 0};
    }
  });
}

// An integer tensor of dtype dt holding values (clamped into the dtype's range).
Tensor int_tensor(DType dt, const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t = Tensor::zeros(dt, shape, std::numeric_limits<int64_t>::max()).value();
  GSCHECK_CHECK(static_cast<int64_t>(values.size()) == t.num_elements());
  const auto [lo, hi] = index_range(dt);
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* out = t.data_as<T>();
      for (size_t i = 0; i < values.size(); ++i)
        out[i] = static_cast<T>(std::clamp(values[i], lo, hi));
    } else {
      GSCHECK_CHECK(false && "int_tensor needs an integer dtype");
    }
  });
  return t;
}

// ---------------------------------------------------------------------------------------------
// Special float values

template <class T>
T special_value(Specials set, uint64_t h) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>);
  // Bit patterns, per dtype: quiet NaNs with payloads of both signs, -0.0, +inf, -inf.
  struct Bits {
    uint64_t nan_a, nan_b, neg_zero, pos_inf, neg_inf;
  };
  constexpr Bits bits = [] {
    if constexpr (std::is_same_v<T, float>)
      return Bits{0x7fc00123u, 0xffc54321u, 0x80000000u, 0x7f800000u, 0xff800000u};
    else if constexpr (std::is_same_v<T, double>)
      return Bits{0x7ff8000000000abcULL, 0xfff80000deadbeefULL, 0x8000000000000000ULL,
                  0x7ff0000000000000ULL, 0xfff0000000000000ULL};
    else if constexpr (std::is_same_v<T, Float16>)
      return Bits{0x7e15u, 0xfe2au, 0x8000u, 0x7c00u, 0xfc00u};
    else
      return Bits{0x7fc5u, 0xffe1u, 0x8000u, 0x7f80u, 0xff80u};
  }();
  uint64_t pattern = 0;
  switch (set) {
    case Specials::kNone:
    case Specials::kAll: {
      const uint64_t all[] = {bits.nan_a, bits.nan_b, bits.neg_zero, bits.pos_inf, bits.neg_inf};
      pattern = all[h % 5];
      break;
    }
    case Specials::kArithmeticSafe:
      pattern = h % 2 ? bits.neg_zero : bits.pos_inf;
      break;
    case Specials::kNoSignedZero: {
      const uint64_t some[] = {bits.nan_a, bits.nan_b, bits.pos_inf, bits.neg_inf};
      pattern = some[h % 4];
      break;
    }
  }
  T out;
  if constexpr (sizeof(T) == 8) {
    std::memcpy(&out, &pattern, 8);
  } else if constexpr (sizeof(T) == 4) {
    const auto p = static_cast<uint32_t>(pattern);
    std::memcpy(&out, &p, 4);
  } else {
    out.bits = static_cast<uint16_t>(pattern);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Kinds and plans

// Everything about a case that never shrinks: its class.
struct Kind {
  Op op = Op::kGather;
  DType dtype = DType::kFloat32;
  DType index_dtype = DType::kInt32;
  Semantics semantics = Semantics::kTfCpu;
  IndexStrategy strategy = IndexStrategy::kInRange;
  std::string policy;
  bool specials = false;
  bool allow_zero = false;
  int axis_form = 0;  // gather: 0 positive, 1 negative, 2 None
  bool negative_batch_dims = false;
  uint64_t salt = 0;
};

std::vector<Op> ops_of(const Constraints& c) {
  return c.ops.empty() ? std::vector<Op>(std::begin(kAllOps), std::end(kAllOps)) : c.ops;
}

std::vector<DType> dtypes_of(Op op, const Constraints& c) {
  const std::vector<DType> takes = op_dtypes(op);
  if (c.dtypes.empty()) return takes;
  std::vector<DType> both;
  for (DType d : c.dtypes)
    if (std::find(takes.begin(), takes.end(), d) != takes.end()) both.push_back(d);
  // None taken: draw the requested ones anyway; the op then reports them unsupported.
  return both.empty() ? c.dtypes : both;
}

Kind draw_kind(const Constraints& c, const std::vector<Op>& ops) {
  Kind k;
  k.op = choose_from(ops);
  k.dtype = choose_from(dtypes_of(k.op, c));
  k.semantics = c.semantics.empty() ? (choose(2) ? Semantics::kTfGpu : Semantics::kTfCpu)
                                    : choose_from(c.semantics);
  if (!c.index_dtypes.empty()) {
    k.index_dtype = choose_from(c.index_dtypes);
  } else {
    k.index_dtype = choose(2) ? DType::kInt64 : DType::kInt32;
    if (c.allow_int16 && k.op == Op::kGather && k.semantics == Semantics::kTfCpu && choose(8) == 0)
      k.index_dtype = DType::kInt16;
  }
  k.strategy = c.strategies.empty() ? choose_from(std::vector<IndexStrategy>(
                                          std::begin(kAllStrategies), std::end(kAllStrategies)))
                                    : choose_from(c.strategies);
  if (k.op != Op::kGather) {
    if (!c.policies.empty()) {
      k.policy = choose_from(c.policies);
    } else {
      const int r = choose(20);  // "" 50%, IGNORE 25%, ERROR 15%, DEFAULT 10%
      k.policy = r < 10 ? "" : r < 15 ? "IGNORE" : r < 18 ? "ERROR" : "DEFAULT";
    }
    if (k.semantics == Semantics::kJax) k.policy.clear();  // JAX has no such attribute
  }
  k.specials = c.allow_specials && (is_floating(k.dtype) || is_complex(k.dtype)) && choose(2);
  k.allow_zero = c.allow_empty && choose(8) == 0;
  k.axis_form = choose(c.allow_axis_none ? 3 : 2);
  k.negative_batch_dims = choose(3) == 0;
  k.salt = salt_pick();
  return k;
}

// Shapes of a well-formed case, as groups of dimensions:
//   gather:     params = B A [n] K, indices = B M,        out = B A M K
//   gather_nd:  params = B D K,     indices = B M [d],    out = B M K
//   scatter:    out    = D K,       indices = M [d],      updates = M K
struct Plan {
  Kind k;
  std::vector<int64_t> B, A, N, K, M, D;
  int64_t depth = 0;  // gather_nd / scatter; gather uses one column
  std::vector<int64_t> indices_values;

  std::vector<int64_t> params_dims() const {
    return k.op == Op::kGather ? cat({&B, &A, &N, &K}) : cat({&B, &D, &K});
  }
  std::vector<int64_t> indices_dims() const {
    std::vector<int64_t> d = cat({&B, &M});
    if (k.op != Op::kGather) d.push_back(depth);
    return d;
  }
  std::vector<int64_t> out_dims() const {
    if (k.op == Op::kGather) return cat({&B, &A, &M, &K});
    if (k.op == Op::kGatherNd) return cat({&B, &M, &K});
    return cat({&D, &K});
  }
  std::vector<int64_t> updates_dims() const { return cat({&M, &K}); }
  // The dimension each index column addresses.
  const std::vector<int64_t>& column_dims() const { return k.op == Op::kGather ? N : D; }
  int64_t batches() const { return product(B); }
  int64_t rows_per_batch() const { return product(M); }
};

int64_t draw_dim(const Kind& k, int64_t max_dim) {
  const int64_t lo = k.allow_zero ? 0 : 1;
  // One dim in five is 0/1 (or 1/2) whatever the size: the degenerate shapes that break kernels.
  if (choose(5) == 0) return lo + uniform_shrinking(0, 1);
  return sized(lo, std::max<int64_t>(lo + 1, max_dim));
}

void draw_group(const Kind& k, std::vector<int64_t>& g, int64_t count, int64_t max_dim) {
  g.clear();
  for (int64_t i = 0; i < count; ++i) g.push_back(draw_dim(k, max_dim));
}

// Halve the largest dimension of an over-budget tensor until every tensor fits.
void fit_budget(Plan& p, int64_t budget) {
  for (int guard = 0; guard < 10000; ++guard) {
    std::vector<std::vector<std::vector<int64_t>*>> tensors;
    if (p.k.op == Op::kGather) {
      tensors = {{&p.B, &p.A, &p.N, &p.K}, {&p.B, &p.M}, {&p.B, &p.A, &p.M, &p.K}};
    } else if (p.k.op == Op::kGatherNd) {
      tensors = {{&p.B, &p.D, &p.K}, {&p.B, &p.M}, {&p.B, &p.M, &p.K}};
    } else {
      tensors = {{&p.D, &p.K}, {&p.M}, {&p.M, &p.K}};
    }
    bool changed = false;
    for (auto& groups : tensors) {
      std::vector<int64_t> dims;
      for (auto* g : groups) dims.insert(dims.end(), g->begin(), g->end());
      int64_t cols =
          (p.k.op != Op::kGather && groups.back() == &p.M) ? std::max<int64_t>(1, p.depth) : 1;
      if (product(dims) <= budget / cols) continue;
      int64_t* largest = nullptr;
      for (auto* g : groups)
        for (int64_t& d : *g)
          if (d > 1 && (!largest || d > *largest)) largest = &d;
      if (!largest) continue;
      *largest /= 2;
      changed = true;
      break;
    }
    if (!changed) return;
  }
}

Plan draw_plan(const Kind& k, const Constraints& c) {
  Plan p;
  p.k = k;
  const int64_t budget = std::max(64, c.max_elements);
  auto max_dim_for = [&](int64_t ndims) {
    const double root = std::pow(static_cast<double>(budget), 1.0 / std::max<int64_t>(1, ndims));
    return std::clamp<int64_t>(static_cast<int64_t>(root * 1.5) + 1, 2, 512);
  };
  if (k.op == Op::kGather) {
    const int64_t rp = uniform_shrinking(c.require_batch_dims ? 2 : 1, 7);
    const int64_t b = c.gather_axis_zero     ? 0
                      : c.require_batch_dims ? uniform_shrinking(1, rp - 1)
                      : c.allow_batch_dims   ? uniform_shrinking(0, rp - 1)
                                             : 0;
    const int64_t axis =
        (k.axis_form == 2 || c.gather_axis_zero) ? b : b + uniform_shrinking(0, rp - 1 - b);
    const int64_t m = uniform_shrinking(0, std::min<int64_t>(7 - b, 8 - rp));
    const int64_t nd = rp + m;
    const int64_t md = max_dim_for(nd);
    draw_group(k, p.B, b, md);
    draw_group(k, p.A, axis - b, md);
    draw_group(k, p.N, 1, md);
    draw_group(k, p.K, rp - 1 - axis, md);
    draw_group(k, p.M, m, md);
  } else if (k.op == Op::kGatherNd) {
    const int64_t rp = uniform_shrinking(c.require_batch_dims ? 2 : 1, 7);
    const int64_t b = c.require_batch_dims ? uniform_shrinking(1, std::min<int64_t>(rp - 1, 5))
                      : c.allow_batch_dims ? uniform_shrinking(0, std::min<int64_t>(rp - 1, 5))
                                           : 0;
    p.depth = uniform_shrinking(0, rp - b);
    const int64_t kk = rp - b - p.depth;
    const int64_t m = uniform_shrinking(0, std::min<int64_t>(6 - b, 7 - b - kk));
    const int64_t md = max_dim_for(rp + m);
    draw_group(k, p.B, b, md);
    draw_group(k, p.D, p.depth, md);
    draw_group(k, p.K, kk, md);
    draw_group(k, p.M, m, md);
  } else {
    const int64_t r = uniform_shrinking(1, 7);
    p.depth = uniform_shrinking(1, r);
    const int64_t kk = r - p.depth;
    // At least one outer dim: non-empty rank-1 indices always fail for scatter ops.
    const int64_t m = uniform_shrinking(1, std::min<int64_t>(6, 7 - kk));
    const int64_t md = max_dim_for(r + m);
    draw_group(k, p.D, p.depth, md);
    draw_group(k, p.K, kk, md);
    draw_group(k, p.M, m, md);
  }
  fit_budget(p, budget);
  if (k.strategy == IndexStrategy::kPermutation) {
    // Distinct rows need rows per batch <= number of addressable rows.
    const int64_t addressable = product(p.column_dims());
    for (int guard = 0; guard < 1000 && p.rows_per_batch() > addressable; ++guard) {
      auto it = std::max_element(p.M.begin(), p.M.end());
      if (it == p.M.end()) break;
      *it = (addressable == 0 || *it == 1) ? 0 : *it / 2;
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Index values

struct IndexMaker {
  const Plan& p;
  int64_t tmin, tmax;

  // In range, offset from the lower or upper boundary (side drawn from the position).
  int64_t in_range(uint64_t pos, uint64_t raw, int64_t n) const {
    if (n <= 0) return static_cast<int64_t>(raw % 4);  // nothing is in range: an empty dim
    const auto off = static_cast<int64_t>(raw % static_cast<uint64_t>(n));
    return (mix(p.k.salt, pos, 1) & 1) ? n - 1 - off : off;
  }
  // Out of range: n + r, -1 - r, -n-1 - r, or the index type's min or max.
  int64_t out_of_range(uint64_t pos, uint64_t raw, int64_t n) const {
    const int64_t r = static_cast<int64_t>(raw % 1024);
    switch (mix(p.k.salt, pos, 2) % 6) {
      case 0:
      case 1:
        return n + r;
      case 2:
        return -1 - r;
      case 3:
        return -n - 1 - r;
      case 4:
        return tmin;
      default:
        return tmax;
    }
  }
};

void draw_indices(Plan& p) {
  const std::vector<int64_t>& cols_n = p.column_dims();
  const auto cols = static_cast<int64_t>(cols_n.size());
  const int64_t batches = p.batches();
  const int64_t rows = p.rows_per_batch();
  const int64_t total_rows = batches * rows;
  const int64_t count = total_rows * cols;
  p.indices_values.assign(static_cast<size_t>(count), 0);
  if (count == 0) return;
  const auto [tmin, tmax] = index_range(p.k.index_dtype);
  IndexMaker m{p, tmin, tmax};
  const uint64_t salt = p.k.salt;
  auto at = [&](int64_t row, int64_t col) -> int64_t& {
    return p.indices_values[static_cast<size_t>(row * cols + col)];
  };
  // Offsets grow with size and shrink toward 0, i.e. toward the boundary of their side.
  auto raws = [&](int64_t n) {
    return *rc::gen::container<std::vector<uint32_t>>(static_cast<size_t>(n),
                                                      rc::gen::inRange<uint32_t>(0, 1u << 20));
  };
  switch (p.k.strategy) {
    case IndexStrategy::kInRange:
    case IndexStrategy::kSorted:
    case IndexStrategy::kSparseOob: {
      const std::vector<uint32_t> raw = raws(count);
      for (int64_t r = 0; r < total_rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          at(r, c) =
              m.in_range(static_cast<uint64_t>(r * cols + c),
                         raw[static_cast<size_t>(r * cols + c)], cols_n[static_cast<size_t>(c)]);
      if (p.k.strategy == IndexStrategy::kSorted) {
        for (int64_t b = 0; b < batches; ++b) {
          std::vector<std::vector<int64_t>> rs;
          for (int64_t r = 0; r < rows; ++r)
            rs.emplace_back(&at(b * rows + r, 0), &at(b * rows + r, 0) + cols);
          std::sort(rs.begin(), rs.end());
          for (int64_t r = 0; r < rows; ++r)
            std::copy(rs[static_cast<size_t>(r)].begin(), rs[static_cast<size_t>(r)].end(),
                      &at(b * rows + r, 0));
        }
      }
      if (p.k.strategy == IndexStrategy::kSparseOob) {
        const auto forced = static_cast<int64_t>(salt % static_cast<uint64_t>(total_rows));
        for (int64_t r = 0; r < total_rows; ++r) {
          if (r != forced && mix(salt, static_cast<uint64_t>(r), 5) % 16 != 0) continue;
          const auto c = static_cast<int64_t>(mix(salt, static_cast<uint64_t>(r), 6) %
                                              static_cast<uint64_t>(cols));
          const uint64_t pos = static_cast<uint64_t>(r * cols + c);
          at(r, c) = m.out_of_range(pos, raw[pos], cols_n[static_cast<size_t>(c)]);
        }
      }
      break;
    }
    case IndexStrategy::kBoundary: {
      const auto forced = static_cast<uint64_t>(salt % static_cast<uint64_t>(count));
      for (int64_t pos = 0; pos < count; ++pos) {
        const int64_t n = cols_n[static_cast<size_t>(pos % cols)];
        const auto u = static_cast<uint64_t>(pos);
        const bool oob = u == forced || mix(salt, u, 3) % 2 == 0;
        p.indices_values[static_cast<size_t>(pos)] =
            oob ? m.out_of_range(u, 0, n) : ((mix(salt, u, 1) & 1) ? n - 1 : 0);
      }
      break;
    }
    case IndexStrategy::kHotKey: {
      const std::vector<uint32_t> key = raws(cols);
      const std::vector<uint32_t> raw = raws(count);
      for (int64_t r = 0; r < total_rows; ++r) {
        const bool cold = mix(salt, static_cast<uint64_t>(r), 4) % 4 == 0;
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t n = cols_n[static_cast<size_t>(c)];
          at(r, c) = cold ? m.in_range(static_cast<uint64_t>(r * cols + c),
                                       raw[static_cast<size_t>(r * cols + c)], n)
                          : m.in_range(static_cast<uint64_t>(c), key[static_cast<size_t>(c)], n);
        }
      }
      break;
    }
    case IndexStrategy::kPermutation: {
      const int64_t addressable = product(cols_n);
      for (int64_t b = 0; b < batches; ++b) {
        uint64_t state = mix(salt, static_cast<uint64_t>(b), 7);
        auto next = [&] { return state = mix(state); };
        std::vector<int64_t> flat;
        if (addressable <= 4 * rows + 64) {
          flat.resize(static_cast<size_t>(addressable));
          std::iota(flat.begin(), flat.end(), int64_t{0});
          for (int64_t i = 0; i < std::min(rows, addressable); ++i) {
            const auto j =
                i + static_cast<int64_t>(next() % static_cast<uint64_t>(addressable - i));
            std::swap(flat[static_cast<size_t>(i)], flat[static_cast<size_t>(j)]);
          }
        } else {
          std::set<int64_t> seen;
          while (static_cast<int64_t>(flat.size()) < rows) {
            const auto f = static_cast<int64_t>(next() % static_cast<uint64_t>(addressable));
            if (seen.insert(f).second) flat.push_back(f);
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          // Beyond the addressable rows (only with an empty dim) repeat: the case is empty.
          int64_t f =
              flat.empty() ? 0 : flat[static_cast<size_t>(r % static_cast<int64_t>(flat.size()))];
          for (int64_t c = cols - 1; c >= 0; --c) {
            const int64_t n = std::max<int64_t>(1, cols_n[static_cast<size_t>(c)]);
            at(b * rows + r, c) = f % n;
            f /= n;
          }
        }
      }
      break;
    }
  }
}

Specials specials_for(const Kind& k, bool is_updates) {
  if (!k.specials) return Specials::kNone;
  if (!is_updates) {
    // Starting tensors of add/sub take part in arithmetic: keep them NaN-free too.
    return (k.op == Op::kTensorScatterAdd || k.op == Op::kTensorScatterSub)
               ? Specials::kArithmeticSafe
               : Specials::kAll;
  }
  switch (k.op) {
    case Op::kTensorScatterUpdate:
      return Specials::kAll;
    case Op::kTensorScatterMin:
    case Op::kTensorScatterMax:
      return Specials::kNoSignedZero;
    default:
      return Specials::kArithmeticSafe;
  }
}

DType shape_dtype(DType index_dtype) {
  return index_dtype == DType::kInt32 || index_dtype == DType::kInt64 ? index_dtype : DType::kInt32;
}

Case build(const Plan& p) {
  const Kind& k = p.k;
  Case c;
  c.op = k.op;
  c.semantics = k.semantics;
  c.name = std::string(op_name(k.op)) + "/" + std::string(strategy_name(k.strategy));
  c.bad_indices_policy = k.policy;
  c.indices = int_tensor(k.index_dtype, Shape(p.indices_dims()), p.indices_values);
  if (!is_scatter(k.op)) {
    c.params = self_describing(k.dtype, Shape(p.params_dims()), 0, k.salt, specials_for(k, false));
    const auto b = static_cast<int64_t>(p.B.size());
    const int64_t ri = c.indices->rank();
    c.batch_dims = (k.op == Op::kGather && k.negative_batch_dims && k.axis_form != 2) ? b - ri : b;
    if (k.op == Op::kGather && k.axis_form != 2) {
      const int64_t rp = c.params->rank();
      const auto axis = static_cast<int64_t>(p.B.size() + p.A.size());
      const int64_t value = k.axis_form == 1 ? axis - rp : axis;
      c.axis = int_tensor(shape_dtype(k.index_dtype), Shape{}, {value});
    }
  } else {
    const Shape out(p.out_dims());
    const int64_t base = is_tensor_scatter(k.op) ? out.num_elements().value_or(0) : 1;
    c.updates = self_describing(k.dtype, Shape(p.updates_dims()), base, mix(k.salt, 11),
                                specials_for(k, true));
    if (k.op == Op::kScatterNd) {
      c.shape = int_tensor(shape_dtype(k.index_dtype), Shape{out.rank()}, out.dims());
    } else {
      c.tensor = self_describing(k.dtype, out, 0, k.salt, specials_for(k, false));
    }
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Invalid cases: one small construction per rule, the rest of the case valid.

struct InvalidBuilder {
  Kind k;
  InvalidRule rule;

  Shape shape(int64_t rank, int64_t lo = 1, int64_t hi = 4) const {
    std::vector<int64_t> d;
    for (int64_t i = 0; i < rank; ++i) d.push_back(sized(lo, hi));
    return Shape(std::move(d));
  }
  Tensor data(const Shape& s, int64_t base = 0) const {
    return self_describing(k.dtype, s, base, k.salt);
  }
  // Index rows of zeros: in range for every non-empty dimension.
  Tensor zeros_idx(const Shape& s, DType dt) const {
    return int_tensor(dt, s,
                      std::vector<int64_t>(static_cast<size_t>(s.num_elements().value_or(0)), 0));
  }
  Tensor zeros_idx(const Shape& s) const { return zeros_idx(s, k.index_dtype); }
  static std::vector<int64_t> tail(const Shape& s, int from) {
    return {s.dims().begin() + std::min(from, s.rank()), s.dims().end()};
  }
  int64_t small_offset() const { return sized(0, 3); }

  Case gather() const {
    Case c;
    Shape params = shape(uniform_shrinking(1, 3));
    Shape indices = shape(uniform_shrinking(0, 2));
    bool axis_none = false;
    int64_t axis = 0;
    int64_t b = 0;
    DType axis_dt = shape_dtype(k.index_dtype);
    DType idx_dt = k.index_dtype;
    Shape axis_shape{};
    switch (rule) {
      case InvalidRule::kParamsScalar:
        params = Shape{};
        axis_none = choose(2) != 0;
        break;
      case InvalidRule::kAxisNotScalar:
        axis_shape = Shape{uniform_shrinking(1, 2)};
        break;
      case InvalidRule::kAxisInt64Max:
        axis = std::numeric_limits<int64_t>::max();
        axis_dt = DType::kInt64;
        break;
      case InvalidRule::kAxisOutOfRange: {
        const int64_t rp = params.rank();
        const int form = choose(3);
        axis = form == 0   ? rp + small_offset()
               : form == 1 ? -rp - 1 - small_offset()
                           : std::numeric_limits<int64_t>::min();
        axis_dt = DType::kInt64;
        break;
      }
      case InvalidRule::kBatchDimsOutOfRange: {
        const int64_t ri = indices.rank();
        b = (ri + 1 + small_offset()) * (choose(2) ? 1 : -1);
        axis = -1;  // a constant axis 0 would make Python drop batch_dims
        break;
      }
      case InvalidRule::kBatchDimsVsParamsRank: {
        // batch_dims within [-ri, ri] but not below rank(params).
        indices = Shape(cat({&params.dims(), &shape(uniform_shrinking(0, 2)).dims()}));
        b = params.rank();
        axis = -1;
        break;
      }
      case InvalidRule::kBatchDimsAboveAxis: {
        params = shape(uniform_shrinking(2, 4));
        b = uniform_shrinking(1, params.rank() - 1);
        std::vector<int64_t> lead(params.dims().begin(), params.dims().begin() + b);
        const Shape more = shape(uniform_shrinking(0, 2));
        indices = Shape(cat({&lead, &more.dims()}));
        axis = b - 1 - params.rank();  // negative: normalises to b - 1, never the constant 0
        break;
      }
      case InvalidRule::kBatchShapeMismatch: {
        params = shape(uniform_shrinking(2, 4));
        const Shape more = shape(uniform_shrinking(0, 2));
        std::vector<int64_t> lead = {params.dim(0) + 1 + small_offset()};
        indices = Shape(cat({&lead, &more.dims()}));
        b = 1;
        axis = 1;
        break;
      }
      case InvalidRule::kAxisDimTooLarge:
        // Zero elements, so nothing is allocated; the dim alone overflows int32 indexing.
        params = Shape{int64_t{1} << 31, 0};
        idx_dt = DType::kInt32;
        axis_dt = DType::kInt32;
        break;
      case InvalidRule::kUnsupportedIndexDtype: {
        const std::vector<DType> bad = {DType::kInt8, DType::kUInt8, DType::kUInt16, DType::kUInt32,
                                        DType::kUInt64};
        idx_dt = choose_from(bad);
        break;
      }
      default:
        GSCHECK_CHECK(false && "rule does not apply to gather");
    }
    c.params = data(params);
    c.indices = zeros_idx(indices, idx_dt);
    if (!axis_none) {
      c.axis = int_tensor(
          axis_dt, axis_shape,
          std::vector<int64_t>(static_cast<size_t>(axis_shape.num_elements().value()), axis));
    }
    c.batch_dims = b;
    return c;
  }

  Case gather_nd() const {
    Case c;
    Shape params = shape(uniform_shrinking(1, 3));
    const Shape outer = shape(uniform_shrinking(0, 2));
    int64_t depth = uniform_shrinking(0, params.rank());
    Shape indices;
    int64_t b = 0;
    DType idx_dt = k.index_dtype;
    std::string policy = k.policy;
    auto rows_then_depth = [&](const Shape& o, int64_t d) {
      std::vector<int64_t> dims = o.dims();
      dims.push_back(d);
      return Shape(std::move(dims));
    };
    indices = rows_then_depth(outer, depth);
    switch (rule) {
      case InvalidRule::kParamsScalar:
        params = Shape{};
        indices = rows_then_depth(outer, uniform_shrinking(0, 1));
        break;
      case InvalidRule::kIndicesScalar:
        indices = Shape{};
        break;
      case InvalidRule::kDepthAboveRank:
        indices =
            rows_then_depth(outer, params.rank() + 1 + uniform_shrinking(0, 6 - params.rank()));
        break;
      case InvalidRule::kTooManyIndexRows:
        // 2^16 * (2^15 + r) rows of depth 0: too many rows, zero elements.
        indices = Shape{int64_t{1} << 16, (int64_t{1} << 15) + small_offset(), 0};
        break;
      case InvalidRule::kParamsEmptyWithRows: {
        params = shape(params.rank(), 1, 4);
        params.dims()[static_cast<size_t>(choose(params.rank()))] = 0;
        indices =
            rows_then_depth(shape(uniform_shrinking(1, 2)), uniform_shrinking(0, params.rank()));
        break;
      }
      case InvalidRule::kDepthAbove7:
        params = shape(8, 1, 2);
        indices = rows_then_depth(shape(uniform_shrinking(1, 2)), 8);
        break;
      case InvalidRule::kBatchDimsOutOfRange:
        b = -1 - small_offset();
        break;
      case InvalidRule::kBatchDimsVsParamsRank: {
        // rank(indices) > batch_dims = rank(params).
        const Shape more = shape(1);
        indices = Shape(cat({&params.dims(), &more.dims()}));
        indices.dims().back() = 0;
        b = params.rank();
        break;
      }
      case InvalidRule::kBatchDimsVsIndicesRank: {
        indices = rows_then_depth(shape(uniform_shrinking(0, 1)), 1);
        const Shape more = shape(uniform_shrinking(1, 2));
        params = Shape(cat({&indices.dims(), &more.dims()}));
        b = indices.rank();
        break;
      }
      case InvalidRule::kBadPolicy: {
        const std::vector<std::string> bad = {"BOGUS", "ignore", "IGNORE ", "Error"};
        policy = choose_from(bad);
        break;
      }
      case InvalidRule::kUnsupportedIndexDtype: {
        const std::vector<DType> bad = {DType::kInt8, DType::kUInt8, DType::kUInt16, DType::kUInt32,
                                        DType::kUInt64};
        idx_dt = choose_from(bad);
        break;
      }
      default:
        GSCHECK_CHECK(false && "rule does not apply to gather_nd");
    }
    c.params = data(params);
    c.indices = zeros_idx(indices, idx_dt);
    c.batch_dims = b;
    c.bad_indices_policy = policy;
    return c;
  }

  Case scatter() const {
    Case c;
    Shape out = shape(uniform_shrinking(1, 3));
    int64_t depth = uniform_shrinking(1, out.rank());
    Shape outer = shape(uniform_shrinking(1, 2));
    DType idx_dt = k.index_dtype;
    DType dt = k.dtype;
    DType shape_dt = shape_dtype(k.index_dtype);
    std::string policy = k.policy;
    auto with_depth = [](const Shape& o, int64_t d) {
      std::vector<int64_t> dims = o.dims();
      dims.push_back(d);
      return Shape(std::move(dims));
    };
    Shape indices = with_depth(outer, depth);
    auto matching_updates = [&]() {
      const std::vector<int64_t> inner = tail(out, static_cast<int>(depth));
      return Shape(cat({&outer.dims(), &inner}));
    };
    Shape updates = matching_updates();
    std::optional<Shape> shape_tensor_shape;  // scatter_nd: the shape tensor's own shape
    std::vector<int64_t> shape_values = out.dims();
    switch (rule) {
      case InvalidRule::kIndicesScalar:
        indices = Shape{};
        updates = shape(1);
        break;
      case InvalidRule::kUpdatesScalar:
        updates = Shape{};
        break;
      case InvalidRule::kTensorScalar:
        out = Shape{};
        break;
      case InvalidRule::kNegativeShapeDim:
        shape_values[static_cast<size_t>(choose(out.rank()))] = -1 - small_offset();
        break;
      case InvalidRule::kShapeTooManyElements:
        // Zero index rows keep every tensor empty; only the shape's product overflows.
        out = Shape{int64_t{1} << 32, int64_t{1} << 32, 1 + small_offset()};
        shape_values = out.dims();
        depth = 1;
        outer = Shape{0};
        indices = with_depth(outer, depth);
        updates = matching_updates();
        break;
      case InvalidRule::kEmptyShapeVector:
        shape_values.clear();
        indices = with_depth(outer, 1);
        updates = outer;
        break;
      case InvalidRule::kShapeNotVector:
        shape_tensor_shape = Shape{1, out.rank()};
        break;
      case InvalidRule::kEmptyOutputWithRows:
        out.dims()[static_cast<size_t>(choose(out.rank()))] = 0;
        updates = matching_updates();
        break;
      case InvalidRule::kOuterMismatch:
        updates.dims()[static_cast<size_t>(choose(outer.rank()))] += 1 + small_offset();
        break;
      case InvalidRule::kInnerMismatch:
        if (updates.rank() == outer.rank()) {  // no inner dims: add one the output lacks
          updates.dims().push_back(2 + small_offset());
        } else {
          updates.dims().back() += 1 + small_offset();
        }
        break;
      case InvalidRule::kUpdatesRankTooSmall:
        outer = shape(uniform_shrinking(2, 3));
        indices = with_depth(outer, depth);
        updates = Shape(std::vector<int64_t>(
            outer.dims().begin(), outer.dims().begin() + uniform_shrinking(0, outer.rank() - 2)));
        break;
      case InvalidRule::kDepthZero:
        depth = 0;
        indices = with_depth(outer, 0);
        updates = matching_updates();
        break;
      case InvalidRule::kDepthAbove7:
        out = shape(8, 1, 2);
        shape_values = out.dims();
        depth = 8;
        indices = with_depth(outer, depth);
        updates = matching_updates();
        break;
      case InvalidRule::kDepthAboveRank:
        depth = out.rank() + 1 + uniform_shrinking(0, 6 - out.rank());
        indices = with_depth(outer, depth);
        updates = outer;
        break;
      case InvalidRule::kRank1Indices:
        outer = Shape{};
        indices = Shape{depth};
        updates = matching_updates();
        break;
      case InvalidRule::kBadPolicy: {
        const std::vector<std::string> bad = {"BOGUS", "ignore", "IGNORE ", "Error"};
        policy = choose_from(bad);
        break;
      }
      case InvalidRule::kUnsupportedDtype: {
        std::vector<DType> bad;
        const std::vector<DType> takes = op_dtypes(k.op);
        for (DType d : kAllDTypes)
          if (std::find(takes.begin(), takes.end(), d) == takes.end()) bad.push_back(d);
        GSCHECK_CHECK(!bad.empty());
        dt = choose_from(bad);
        break;
      }
      case InvalidRule::kUnsupportedIndexDtype: {
        const std::vector<DType> bad = {DType::kInt8, DType::kInt16, DType::kUInt8, DType::kUInt32,
                                        DType::kUInt64};
        idx_dt = choose_from(bad);
        break;
      }
      default:
        GSCHECK_CHECK(false && "rule does not apply to scatter ops");
    }
    if (rule != InvalidRule::kNegativeShapeDim && rule != InvalidRule::kEmptyShapeVector &&
        rule != InvalidRule::kShapeTooManyElements && rule != InvalidRule::kDepthAbove7)
      shape_values = out.dims();
    c.indices = zeros_idx(indices, idx_dt);
    c.updates = self_describing(dt, updates, 1, mix(k.salt, 11));
    if (k.op == Op::kScatterNd) {
      const Shape st =
          shape_tensor_shape.value_or(Shape{static_cast<int64_t>(shape_values.size())});
      c.shape = int_tensor(shape_dt, st, shape_values);
    } else {
      c.tensor = self_describing(dt, out, 0, k.salt);
    }
    c.bad_indices_policy = policy;
    return c;
  }

  Case build() const {
    Case c = k.op == Op::kGather ? gather() : k.op == Op::kGatherNd ? gather_nd() : scatter();
    c.op = k.op;
    c.semantics = k.semantics;
    c.name = std::string(op_name(k.op)) + "/invalid/" + std::string(invalid_rule_name(rule));
    return c;
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API

std::string_view strategy_name(IndexStrategy s) {
  constexpr std::array<std::string_view, 6> names = {"in_range",    "boundary", "hot_key",
                                                     "permutation", "sorted",   "sparse_oob"};
  return names[static_cast<size_t>(s)];
}

std::string_view invalid_rule_name(InvalidRule r) {
  constexpr std::array<std::string_view, 30> names = {"params_scalar",
                                                      "indices_scalar",
                                                      "updates_scalar",
                                                      "tensor_scalar",
                                                      "axis_not_scalar",
                                                      "axis_int64_max",
                                                      "axis_out_of_range",
                                                      "batch_dims_out_of_range",
                                                      "batch_dims_vs_params_rank",
                                                      "batch_dims_vs_indices_rank",
                                                      "batch_dims_above_axis",
                                                      "batch_shape_mismatch",
                                                      "axis_dim_too_large",
                                                      "too_many_index_rows",
                                                      "params_empty_with_rows",
                                                      "depth_above_rank",
                                                      "depth_above_7",
                                                      "depth_zero",
                                                      "rank1_indices",
                                                      "negative_shape_dim",
                                                      "shape_too_many_elements",
                                                      "empty_shape_vector",
                                                      "shape_not_vector",
                                                      "empty_output_with_rows",
                                                      "outer_mismatch",
                                                      "inner_mismatch",
                                                      "updates_rank_too_small",
                                                      "bad_policy",
                                                      "unsupported_dtype",
                                                      "unsupported_index_dtype"};
  static_assert(names.size() == static_cast<size_t>(InvalidRule::kUnsupportedIndexDtype) + 1);
  return names[static_cast<size_t>(r)];
}

std::vector<InvalidRule> invalid_rules_for(Op op) {
  using R = InvalidRule;
  switch (op) {
    case Op::kGather:
      return {R::kParamsScalar,         R::kAxisNotScalar,       R::kAxisInt64Max,
              R::kAxisOutOfRange,       R::kBatchDimsOutOfRange, R::kBatchDimsVsParamsRank,
              R::kBatchDimsAboveAxis,   R::kBatchShapeMismatch,  R::kAxisDimTooLarge,
              R::kUnsupportedIndexDtype};
    case Op::kGatherNd:
      return {R::kParamsScalar,        R::kIndicesScalar,         R::kDepthAboveRank,
              R::kTooManyIndexRows,    R::kParamsEmptyWithRows,   R::kDepthAbove7,
              R::kBatchDimsOutOfRange, R::kBatchDimsVsParamsRank, R::kBatchDimsVsIndicesRank,
              R::kBadPolicy,           R::kUnsupportedIndexDtype};
    case Op::kScatterNd:
      return {R::kIndicesScalar,        R::kUpdatesScalar,
              R::kNegativeShapeDim,     R::kShapeTooManyElements,
              R::kEmptyShapeVector,     R::kShapeNotVector,
              R::kOuterMismatch,        R::kInnerMismatch,
              R::kUpdatesRankTooSmall,  R::kDepthZero,
              R::kDepthAbove7,          R::kDepthAboveRank,
              R::kRank1Indices,         R::kBadPolicy,
              R::kUnsupportedIndexDtype};
    case Op::kTensorScatterUpdate:
      return {R::kTensorScalar,  R::kIndicesScalar, R::kEmptyOutputWithRows,
              R::kOuterMismatch, R::kInnerMismatch, R::kUpdatesRankTooSmall,
              R::kDepthZero,     R::kDepthAbove7,   R::kDepthAboveRank,
              R::kRank1Indices,  R::kBadPolicy,     R::kUnsupportedIndexDtype};
    default: {
      std::vector<InvalidRule> rules = invalid_rules_for(Op::kTensorScatterUpdate);
      rules.push_back(R::kUnsupportedDtype);
      return rules;
    }
  }
}

std::vector<DType> op_dtypes(Op op) {
  std::vector<DType> out;
  for (DType d : kAllDTypes) {
    bool takes = true;
    switch (op) {
      case Op::kGather:
      case Op::kGatherNd:
      case Op::kScatterNd:
      case Op::kTensorScatterUpdate:
        break;
      case Op::kTensorScatterAdd:
      case Op::kTensorScatterSub:
        takes = is_real_number(d) || is_complex(d);
        break;
      case Op::kTensorScatterMin:
      case Op::kTensorScatterMax:
        takes = is_real_number(d);
        break;
    }
    if (takes) out.push_back(d);
  }
  return out;
}

Tensor self_describing(DType dt, const Shape& shape, int64_t base, uint64_t salt,
                       Specials specials) {
  Tensor t = Tensor::zeros(dt, shape, std::numeric_limits<int64_t>::max()).value();
  const int64_t n = t.num_elements();
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = t.data_as<T>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = base + i;
      const uint64_t h = mix(salt, static_cast<uint64_t>(i), 9);
      const bool special = specials != Specials::kNone && h % 8 == 0;
      if constexpr (std::is_same_v<T, bool>) {
        out[i] = (v & 1) != 0;
      } else if constexpr (std::is_same_v<T, std::string>) {
        out[i] = std::to_string(v);
      } else if constexpr (std::is_integral_v<T>) {
        out[i] = static_cast<T>(v);  // wraps for narrow types: still names the element mod 2^k
      } else if constexpr (std::is_same_v<T, Float16>) {
        out[i] = special ? special_value<Float16>(specials, h >> 8)
                         : float16_from_float(static_cast<float>(v));
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        out[i] = special ? special_value<BFloat16>(specials, h >> 8)
                         : bfloat16_from_float(static_cast<float>(v));
      } else if constexpr (std::is_floating_point_v<T>) {
        out[i] = special ? special_value<T>(specials, h >> 8) : static_cast<T>(v);
      } else {  // complex
        using R = typename T::value_type;
        const R re = special ? special_value<R>(specials, h >> 8) : static_cast<R>(v);
        out[i] = T(re, -static_cast<R>(v));
      }
    }
  });
  return t;
}

// A case at an index-type limit (Constraints::limit_fraction): n is the index dtype's max (every
// check is "> max", so accepted) or one more (refused where TensorFlow checks that size).
Case limit_case(Kind k) {
  const bool cpu_int16 =
      k.index_dtype == DType::kInt16 && k.semantics == Semantics::kTfCpu && !is_scatter(k.op);
  if (k.index_dtype == DType::kInt16 && !cpu_int16) k.index_dtype = DType::kInt32;
  const int64_t max =
      cpu_int16 ? std::numeric_limits<int16_t>::max() : std::numeric_limits<int32_t>::max();
  // scatter_nd's shape has the indices' dtype, so int32 cannot say 2^31.
  const bool past = choose(2) && !(k.op == Op::kScatterNd && k.index_dtype == DType::kInt32);
  const int64_t n = max + (past ? 1 : 0);
  const bool dense = cpu_int16;  // 32,768 elements at most: real data
  const std::vector<int64_t> picks = {0, n - 1, n / 2};
  Case c;
  c.op = k.op;
  c.semantics = k.semantics;
  c.name = std::string(op_name(k.op)) + "/limit_dim";
  c.bad_indices_policy = k.policy;
  if (k.op == Op::kGather) {
    c.params = self_describing(k.dtype, dense ? Shape{n} : Shape{n, 0}, 0, k.salt);
    c.indices = int_tensor(k.index_dtype, Shape{3}, picks);
    c.axis = int_tensor(DType::kInt32, Shape{}, {0});
  } else if (k.op == Op::kGatherNd) {
    // Dense: params' element count at the limit; else a slice of n elements and no row.
    c.params = self_describing(k.dtype, dense ? Shape{n} : Shape{0, n}, 0, k.salt);
    c.indices = dense ? int_tensor(k.index_dtype, Shape{3, 1}, picks)
                      : int_tensor(k.index_dtype, Shape{0, 1}, {});
  } else {
    // Dim 0 of n over no element: no row is a no-op, a row meets the empty-output check.
    const int64_t rows = choose(2);
    const Shape out{n, 0};
    c.indices = int_tensor(k.index_dtype, Shape{rows, 1}, std::vector<int64_t>(rows, n - 1));
    c.updates = self_describing(k.dtype, Shape{rows, 0}, 1, k.salt);
    if (k.op == Op::kScatterNd) {
      c.shape = int_tensor(k.index_dtype, Shape{2}, out.dims());
    } else {
      c.tensor = self_describing(k.dtype, out, 0, k.salt);
    }
  }
  return c;
}

rc::Gen<Case> cases(Constraints c) {
  const int limit_per_mille =
      static_cast<int>(std::clamp(c.limit_fraction, 0.0, 1.0) * 1000.0 + 0.5);
  return rc::gen::exec([c, limit_per_mille] {
    if (limit_per_mille > 0 && choose(1000) < limit_per_mille)
      return limit_case(draw_kind(c, ops_of(c)));
    Plan p = draw_plan(draw_kind(c, ops_of(c)), c);
    draw_indices(p);
    return build(p);
  });
}

rc::Gen<Case> invalid_cases(Constraints c) {
  return rc::gen::exec([c] {
    // Ops with at least one rule; all have some, but a dtype filter may empty unsupported_dtype.
    Kind k = draw_kind(c, ops_of(c));
    std::vector<InvalidRule> rules = invalid_rules_for(k.op);
    InvalidBuilder b{k, choose_from(rules)};
    return b.build();
  });
}

rc::Gen<Case> mixed_cases(Constraints c, double invalid_fraction) {
  const int per_mille = static_cast<int>(std::clamp(invalid_fraction, 0.0, 1.0) * 1000.0 + 0.5);
  return rc::gen::exec(
      [c, per_mille] { return choose(1000) < per_mille ? *invalid_cases(c) : *cases(c); });
}

std::string describe(const Case& c) {
  std::ostringstream os;
  auto tensor = [&](const char* name, const std::optional<Tensor>& t) {
    if (!t) return;
    os << ' ' << name << '=' << dtype_name(t->dtype()) << t->shape().to_string();
    if (is_integer(t->dtype()) && t->num_elements() <= 16) {
      os << '{';
      for (int64_t i = 0; i < t->num_elements(); ++i) os << (i ? "," : "") << t->int_at(i);
      os << '}';
    }
  };
  os << c.name << ": " << op_name(c.op) << ' ' << semantics_name(c.semantics);
  tensor("params", c.params);
  tensor("tensor", c.tensor);
  tensor("indices", c.indices);
  tensor("updates", c.updates);
  tensor("shape", c.shape);
  if (c.op == Op::kGather) {
    if (c.axis)
      tensor("axis", c.axis);
    else
      os << " axis=None";
  }
  if (c.batch_dims != 0) os << " batch_dims=" << c.batch_dims;
  if (!c.bad_indices_policy.empty()) os << " bad_indices_policy=\"" << c.bad_indices_policy << '"';
  return os.str();
}

}  // namespace gscheck::gen

namespace gscheck {
void showValue(const Case& c, std::ostream& os) { os << gen::describe(c); }
}  // namespace gscheck
