#include "fuzz/decoder.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <bit>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gscheck::fuzz {
namespace {

// Element dtypes, the most informative first: exhausted input (all zeros) picks float32.
constexpr DType kElementDTypes[] = {
    DType::kFloat32,   DType::kInt32,      DType::kInt64,  DType::kFloat64,
    DType::kFloat16,   DType::kBFloat16,   DType::kBool,   DType::kString,
    DType::kComplex64, DType::kComplex128, DType::kInt8,   DType::kInt16,
    DType::kUInt8,     DType::kUInt16,     DType::kUInt32, DType::kUInt64};
static_assert(std::size(kElementDTypes) == std::size(kAllDTypes));

// Index dtypes TensorFlow registers, weighted; the last slot draws from the ones it rejects.
// int16 is rarer: only gathers on CPU take it, so scatter cases with it are all "unsupported".
constexpr DType kIndexDTypes[] = {DType::kInt32, DType::kInt32, DType::kInt32, DType::kInt64,
                                  DType::kInt64, DType::kInt64, DType::kInt16};
constexpr DType kOtherIntegerDTypes[] = {DType::kInt8, DType::kUInt8, DType::kUInt16,
                                         DType::kUInt32, DType::kUInt64};

constexpr Op kTensorScatterOps[] = {Op::kTensorScatterUpdate, Op::kTensorScatterAdd,
                                    Op::kTensorScatterSub, Op::kTensorScatterMin,
                                    Op::kTensorScatterMax};

// "" is TensorFlow's default; lower-case "ignore" is the typo TensorFlow rejects.
constexpr std::string_view kPolicies[] = {
    "", "", "",        "",        "",      "",       "",       "",
    "", "", "DEFAULT", "DEFAULT", "ERROR", "IGNORE", "IGNORE", "ignore"};

constexpr int kNumSpecials = 12;

template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

int64_t product(const std::vector<int64_t>& dims, std::size_t begin = 0,
                std::size_t end = SIZE_MAX) {
  int64_t p = 1;
  for (std::size_t i = begin; i < std::min(end, dims.size()); ++i) p *= dims[i];
  return p;
}

// Element i of a self-describing fill, and small integers for ties and cancellations.
template <class T>
T from_int(int64_t v) {
  if constexpr (std::is_same_v<T, bool>) {
    return (v & 1) != 0;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return std::to_string(v);
  } else if constexpr (std::is_same_v<T, Float16>) {
    return float16_from_float(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bfloat16_from_float(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    return T(static_cast<R>(v), -static_cast<R>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Boundary values of each element type: signed zeros, NaNs (with a payload), infinities,
// extremes, denormals; integer min/max; strings past the small-string buffer.
template <class T>
T special(int k) {
  if constexpr (std::is_same_v<T, bool>) {
    return (k & 1) != 0;
  } else if constexpr (std::is_same_v<T, std::string>) {
    static const std::array<std::string, kNumSpecials> kStrings = {
        "",
        "a",
        "b",
        "ab",
        "a string longer than any small-string buffer",
        "\xc3\xa9",
        std::string("\0z", 2),
        "0",
        "-1",
        "\t\n\"\\",
        "aa",
        "z"};
    return kStrings[static_cast<std::size_t>(k)];
  } else if constexpr (std::is_same_v<T, Float16>) {
    static constexpr uint16_t kBits[kNumSpecials] = {0x0000, 0x8000, 0x3c00, 0xbc00,
                                                     0x7e00, 0xfe00, 0x7c00, 0xfc00,
                                                     0x7bff, 0xfbff, 0x0001, 0x7d01};
    return Float16{kBits[k]};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    static constexpr uint16_t kBits[kNumSpecials] = {0x0000, 0x8000, 0x3f80, 0xbf80,
                                                     0x7fc0, 0xffc0, 0x7f80, 0xff80,
                                                     0x7f7f, 0xff7f, 0x0001, 0x7fa1};
    return BFloat16{kBits[k]};
  } else if constexpr (std::is_floating_point_v<T>) {
    using L = std::numeric_limits<T>;
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    // A signalling NaN with a payload: a copy that quiets or drops it shows up bitwise.
    const Bits snan = static_cast<Bits>(sizeof(T) == 4 ? 0x7fa00001ull : 0x7ff4000000000001ull);
    const T values[kNumSpecials] = {T(0),          -T(0),           T(1),
                                    T(-1),         L::quiet_NaN(),  -L::quiet_NaN(),
                                    L::infinity(), -L::infinity(),  L::max(),
                                    L::lowest(),   L::denorm_min(), std::bit_cast<T>(snan)};
    return values[k];
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    return T(special<R>(k), special<R>((k + 5) % kNumSpecials));
  } else {
    using L = std::numeric_limits<T>;
    const T values[kNumSpecials] = {T(0),
                                    T(1),
                                    static_cast<T>(-1),
                                    L::min(),
                                    L::max(),
                                    static_cast<T>(L::min() + 1),
                                    static_cast<T>(L::max() - 1),
                                    T(2),
                                    static_cast<T>(L::max() / 2),
                                    static_cast<T>(L::min() / 2),
                                    T(3),
                                    T(7)};
    return values[k];
  }
}

int64_t index_min(DType dt) {
  return visit_dtype(dt, [](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (kIsInt<T>) return static_cast<int64_t>(std::numeric_limits<T>::min());
    GSCHECK_CHECK(false && "index dtype must be an integer type");
    return 0;
  });
}

int64_t index_max(DType dt) {
  return visit_dtype(dt, [](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    // uint64's max wraps to -1 here and back to the max when stored.
    if constexpr (kIsInt<T>) return static_cast<int64_t>(std::numeric_limits<T>::max());
    GSCHECK_CHECK(false && "index dtype must be an integer type");
    return 0;
  });
}

// An integer tensor holding values (converted to dt, wrapping where they do not fit).
Tensor int_tensor(DType dt, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Tensor t = Tensor::zeros(dt, Shape(std::move(dims)), INT64_MAX).value();
  GSCHECK_CHECK(static_cast<int64_t>(values.size()) == t.num_elements());
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsInt<T>) {
      T* p = t.data_as<T>();
      for (std::size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
    } else {
      GSCHECK_CHECK(false && "int_tensor needs an integer dtype");
    }
  });
  return t;
}

class Decoder {
 public:
  Decoder(const uint8_t* data, std::size_t size, const DecodeLimits& limits)
      : fdp_(data, size), lim_(limits) {}

  Case gather();
  Case gather_nd();
  Case scatter_nd();
  Case tensor_scatter();
  // Decided last, from what the op left: one case in four is the raw kernel (GatherV2,
  // GatherNd, ...), never on exhausted input, so short inputs stay Python-level cases.
  bool kernel_level() { return rare(4); }

 private:
  // A choice in [0, n); exhausted input gives 0, so choice 0 is always the plain one.
  int pick(int n) { return n <= 1 ? 0 : fdp_.ConsumeIntegralInRange<int>(0, n - 1); }
  bool flag() { return fdp_.ConsumeBool(); }
  // A one-in-n event, never taken on exhausted input.
  bool rare(int n) { return pick(n) == n - 1; }

  // TensorFlow's two semantics three times in four (what cuda-emu and the C plugins claim), xla
  // and jax one time in eight each (the reference alone, or a backend that declares them).
  Semantics semantics() {
    const int sel = pick(8);
    if (sel == 6) return Semantics::kXla;
    if (sel == 7) return Semantics::kJax;
    return sel % 2 ? Semantics::kTfGpu : Semantics::kTfCpu;
  }
  DType element_dtype() { return kElementDTypes[pick(std::size(kElementDTypes))]; }
  DType index_dtype() {
    if (rare(16)) return kOtherIntegerDTypes[pick(std::size(kOtherIntegerDTypes))];
    return kIndexDTypes[pick(std::size(kIndexDTypes))];
  }
  std::string policy() { return std::string(kPolicies[pick(std::size(kPolicies))]); }
  // Rank 1..7, and rank 0 (which every op rejects for params/output) one time in eight.
  int rank_1_to_7_or_0() { return (pick(8) + 1) % 8; }

  // rank dims, each mostly 1..max_dim, one in 16 zero (empty tensors skip most of an op), one
  // in 16 wide; the running product never exceeds budget (a dim is clamped to budget / product
  // so far).
  std::vector<int64_t> dims(int rank, int64_t budget) {
    std::vector<int64_t> d;
    int64_t prod = 1;
    for (int i = 0; i < rank; ++i) {
      const int sel = pick(16);
      int64_t v = sel <= 13 ? 1 + sel % lim_.max_dim : sel == 14 ? 0 : 2 * lim_.max_dim;
      if (prod > 0) v = std::min(v, std::max<int64_t>(budget, 0) / prod);
      d.push_back(v);
      prod *= v;
    }
    return d;
  }

  // One index into a dimension of size n, biased to the boundaries.
  int64_t index_value(int64_t n, DType index_dt) {
    const int sel = pick(16);
    if (sel < 10) return n > 0 ? fdp_.ConsumeIntegralInRange<int64_t>(0, n - 1) : 0;
    switch (sel) {
      case 10:
        return 0;
      case 11:
        return n - 1;
      case 12:
        return n;
      case 13:
        return -1;
      case 14:
        return index_min(index_dt);
      default:
        return index_max(index_dt);
    }
  }

  // An index tensor of the given dims whose rows (of width depth) address dims bound(0..depth-1);
  // some rows repeat the previous row to make duplicates.
  template <class Bound>
  Tensor indices(DType dt, std::vector<int64_t> dims, int64_t depth, Bound bound) {
    const int64_t total = product(dims);
    std::vector<int64_t> values(static_cast<std::size_t>(total));
    const int64_t width = std::max<int64_t>(depth, 1);
    for (int64_t row = 0; row * width < total; ++row) {
      const bool duplicate = row > 0 && rare(5);
      for (int64_t j = 0; j < width && row * width + j < total; ++j) {
        const auto at = static_cast<std::size_t>(row * width + j);
        values[at] =
            duplicate ? values[at - static_cast<std::size_t>(width)] : index_value(bound(j), dt);
      }
    }
    return int_tensor(dt, std::move(dims), values);
  }

  // A data tensor: self-describing (1 + flat index), small integers, boundary values or raw
  // fuzzer bytes.
  Tensor data(DType dt, std::vector<int64_t> dims) {
    Tensor t = Tensor::zeros(dt, Shape(std::move(dims)), INT64_MAX).value();
    const int mode = pick(4);
    visit_dtype(dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = t.data_as<T>();
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        switch (mode) {
          case 0:
            p[i] = from_int<T>(i + 1);
            break;
          case 1:
            p[i] = from_int<T>(pick(5) - 2);
            break;
          case 2:
            p[i] = special<T>(pick(kNumSpecials));
            break;
          default:
            p[i] = raw<T>();
            break;
        }
      }
    });
    return t;
  }

  template <class T>
  T raw() {
    if constexpr (std::is_same_v<T, bool>) {
      return flag();  // any other byte in a bool is undefined behaviour, not a test
    } else if constexpr (std::is_same_v<T, std::string>) {
      std::string s = fdp_.ConsumeRandomLengthString(12);
      for (char& ch : s) ch = static_cast<char>(0x20 + static_cast<unsigned char>(ch) % 95);
      return s;
    } else {
      std::vector<uint8_t> bytes = fdp_.ConsumeBytes<uint8_t>(sizeof(T));
      bytes.resize(sizeof(T), 0);
      T v;
      std::memcpy(static_cast<void*>(&v), bytes.data(), sizeof(T));
      return v;
    }
  }

  struct ScatterShapes {
    std::vector<int64_t> out;      // the output (and tensor) shape
    std::vector<int64_t> indices;  // outer dims + [depth]
    std::vector<int64_t> updates;  // outer dims + out[depth:], possibly broken on purpose
    int64_t depth = 0;
    // The bound of index component j: out[j], or 1 where j is past the output rank.
    int64_t bound(int64_t j) const {
      return static_cast<std::size_t>(j) < out.size() ? out[static_cast<std::size_t>(j)] : 1;
    }
  };
  ScatterShapes scatter_shapes();

  // Every op's decoding begins the same way: the op, then its semantics.
  Case start(Op op) {
    Case c;
    c.op = op;
    c.semantics = semantics();
    return c;
  }

  FuzzedDataProvider fdp_;
  DecodeLimits lim_;
};

Case Decoder::gather() {
  Case c = start(Op::kGather);
  const DType dt = element_dtype();
  const DType index_dt = index_dtype();
  const int rp = rank_1_to_7_or_0();
  const std::vector<int64_t> pd = dims(rp, lim_.max_elements);

  // The canonical batch_dims b and axis a of a valid case: 0 <= b <= a < rp.
  const int b = (rp > 1 && rare(4)) ? 1 + pick(rp - 1) : 0;
  const int a = rp > 0 ? b + pick(rp - b) : 0;
  const int extra = std::min(pick(4), 7 - b);  // indices dims after the batch dims
  const int ri = b + extra;

  std::vector<int64_t> id(pd.begin(), pd.begin() + b);
  if (b > 0 && rare(8)) id[static_cast<std::size_t>(pick(b))] += 1;  // batch dims disagree
  const int64_t n = rp > 0 ? pd[static_cast<std::size_t>(a)] : 1;
  const int64_t outer_inner = rp > 0 ? product(pd, 0, a) * product(pd, a + 1) : 1;
  const int64_t budget = std::min(lim_.max_output_elements / std::max<int64_t>(outer_inner, 1),
                                  lim_.max_elements / std::max<int64_t>(product(id), 1));
  for (int64_t d : dims(extra, budget)) id.push_back(d);

  c.params = data(dt, pd);
  c.indices = indices(index_dt, id, 1, [n](int64_t) { return n; });

  // How the axis is written: as is, negative, None, out of range, extreme, or not a scalar.
  const DType axis_dt = flag() ? DType::kInt64 : DType::kInt32;
  const int axis_sel = pick(16);
  if (axis_sel <= 6) {
    c.axis = int_tensor(axis_dt, {}, {a});
  } else if (axis_sel <= 9) {
    c.axis = int_tensor(axis_dt, {}, {a - rp});
  } else if (axis_sel <= 11) {
    c.axis = std::nullopt;  // Python's axis=None: axis = batch_dims
  } else if (axis_sel == 12) {
    c.axis = int_tensor(axis_dt, {}, {rp});
  } else if (axis_sel == 13) {
    c.axis = int_tensor(axis_dt, {}, {-rp - 1});
  } else if (axis_sel == 14) {
    c.axis = int_tensor(axis_dt, {}, {flag() ? index_max(axis_dt) : index_min(axis_dt)});
  } else {
    c.axis = int_tensor(axis_dt, {1}, {a});
  }

  // How batch_dims is written: as is, negative, or past either end of [-ri, ri].
  if (b > 0) {
    c.batch_dims = flag() ? b - ri : b;
  } else {
    const int bsel = pick(16);
    c.batch_dims = bsel <= 12   ? 0
                   : bsel == 13 ? ri + 1
                   : bsel == 14 ? -ri - 1
                                : (flag() ? INT64_MAX : INT64_MIN);
  }
  return c;
}

Case Decoder::gather_nd() {
  Case c = start(Op::kGatherNd);
  const DType dt = element_dtype();
  const DType index_dt = index_dtype();
  const int rp = rank_1_to_7_or_0();
  const std::vector<int64_t> pd = dims(rp, lim_.max_elements);

  const int b = (rp > 1 && rare(4)) ? 1 + pick(rp - 1) : 0;
  const int max_depth = rp - b;
  const int depth_sel = pick(16);
  const int depth = depth_sel < 12    ? (max_depth > 0 ? 1 + pick(max_depth) : 0)
                    : depth_sel == 12 ? 0
                    : depth_sel == 13 ? max_depth + 1
                    : depth_sel == 14 ? 8
                                      : max_depth;

  std::vector<int64_t> id(pd.begin(), pd.begin() + b);
  if (b > 0 && rare(8)) id[static_cast<std::size_t>(pick(b))] += 1;
  const bool scalar_indices = b == 0 && rare(16);
  if (!scalar_indices) {
    const int64_t batch = std::max<int64_t>(product(id), 1);
    const int64_t slice = std::max<int64_t>(product(pd, static_cast<std::size_t>(b + depth)), 1);
    const int64_t budget = std::min(lim_.max_output_elements / (batch * slice),
                                    lim_.max_elements / (batch * std::max(depth, 1)));
    for (int64_t d : dims(pick(4), budget)) id.push_back(d);
    id.push_back(depth);
  }
  c.params = data(dt, pd);
  c.indices = indices(index_dt, id, scalar_indices ? 1 : depth, [&](int64_t j) {
    const auto dim = static_cast<std::size_t>(b + j);
    return dim < pd.size() ? pd[dim] : 1;
  });

  if (b > 0) {
    c.batch_dims = b;
  } else {
    const int bsel = pick(16);
    c.batch_dims = bsel <= 13 ? 0 : bsel == 14 ? -1 : static_cast<int64_t>(id.size());
  }
  c.bad_indices_policy = policy();
  return c;
}

Decoder::ScatterShapes Decoder::scatter_shapes() {
  ScatterShapes s;
  const int r = rank_1_to_7_or_0();
  s.out = dims(r, lim_.max_output_elements);
  const int depth_sel = pick(16);
  s.depth = depth_sel < 12    ? (r > 0 ? 1 + pick(r) : 1)
            : depth_sel == 12 ? 0
            : depth_sel == 13 ? r + 1
            : depth_sel == 14 ? 8
                              : r;
  const int64_t slice = product(s.out, static_cast<std::size_t>(std::min<int64_t>(s.depth, r)));
  // Mostly one outer dim (a list of rows); none makes rank-1 indices, which TF rejects.
  static constexpr int kOuterRanks[] = {1, 1, 1, 1, 1, 0, 2, 3};
  const int outer_rank = kOuterRanks[pick(8)];
  const int64_t budget =
      lim_.max_elements / std::max<int64_t>(std::max<int64_t>(slice, s.depth), 1);
  const std::vector<int64_t> outer = dims(outer_rank, budget);

  s.indices = outer;
  s.indices.push_back(s.depth);
  s.updates = outer;
  for (std::size_t i = static_cast<std::size_t>(std::min<int64_t>(s.depth, r)); i < s.out.size();
       ++i) {
    s.updates.push_back(s.out[i]);
  }
  const int upd_sel = pick(16);
  if (upd_sel == 14 && !s.updates.empty()) {
    s.updates.pop_back();
  } else if (upd_sel == 15 && !s.updates.empty()) {
    s.updates[static_cast<std::size_t>(pick(static_cast<int>(s.updates.size())))] += 1;
  }
  return s;
}

Case Decoder::scatter_nd() {
  Case c = start(Op::kScatterNd);
  const DType dt = element_dtype();
  const DType index_dt = index_dtype();
  const ScatterShapes s = scatter_shapes();
  c.indices = indices(index_dt, s.indices, s.depth, [&](int64_t j) { return s.bound(j); });
  c.updates = data(dt, s.updates);

  // The shape input: as is, with a negative dim, not a vector, or overflowing int64.
  const DType shape_dt = flag() ? DType::kInt64 : DType::kInt32;
  const int shape_sel = pick(16);
  const int64_t r = static_cast<int64_t>(s.out.size());
  if (shape_sel == 13 && r > 0) {
    std::vector<int64_t> v = s.out;
    v[static_cast<std::size_t>(pick(static_cast<int>(r)))] = -1;
    c.shape = int_tensor(shape_dt, {r}, v);
  } else if (shape_sel == 14) {
    c.shape = int_tensor(shape_dt, {1, r}, s.out);
  } else if (shape_sel == 15) {
    std::vector<int64_t> v = s.out;
    v.resize(std::max<std::size_t>(v.size(), 2));
    v[0] = v[1] = int64_t{1} << 62;
    c.shape = int_tensor(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
  } else {
    c.shape = int_tensor(shape_dt, {r}, s.out);
  }
  c.bad_indices_policy = policy();
  return c;
}

Case Decoder::tensor_scatter() {
  Case c = start(kTensorScatterOps[pick(std::size(kTensorScatterOps))]);
  const DType dt = element_dtype();
  const DType index_dt = index_dtype();
  const ScatterShapes s = scatter_shapes();
  c.indices = indices(index_dt, s.indices, s.depth, [&](int64_t j) { return s.bound(j); });
  c.tensor = data(dt, s.out);
  c.updates = data(dt, s.updates);
  c.bad_indices_policy = policy();
  return c;
}

constexpr std::string_view kFamilyNames[] = {"gather", "gather_nd", "scatter_nd", "tensor_scatter"};

}  // namespace

std::string_view family_name(Family f) { return kFamilyNames[static_cast<std::size_t>(f)]; }

std::optional<Family> family_from_name(std::string_view name) {
  for (Family f : kAllFamilies)
    if (family_name(f) == name) return f;
  return std::nullopt;
}

Case decode_case(Family family, const uint8_t* data, std::size_t size, const DecodeLimits& limits) {
  Decoder d(data, size, limits);
  Case c;
  switch (family) {
    case Family::kGather:
      c = d.gather();
      break;
    case Family::kGatherNd:
      c = d.gather_nd();
      break;
    case Family::kScatterNd:
      c = d.scatter_nd();
      break;
    case Family::kTensorScatter:
      c = d.tensor_scatter();
      break;
  }
  c.name = std::string(op_name(c.op)) + "/fuzz";
  if (d.kernel_level()) {
    // What Python passes to the kernel: gather's axis=None as axis = batch_dims; the GatherNd
    // kernel has no batch_dims (Python's reshape lowers it). The other rules (a constant axis 0
    // keeps batch_dims) are the kernel's own and the reference applies them.
    if (c.op == Op::kGather && !c.axis) {
      const bool fits = c.batch_dims >= std::numeric_limits<int32_t>::min() &&
                        c.batch_dims <= std::numeric_limits<int32_t>::max();
      c.axis = fits ? Tensor::from_values<int32_t>(Shape{}, {static_cast<int32_t>(c.batch_dims)})
                    : Tensor::from_values<int64_t>(Shape{}, {c.batch_dims});
    }
    if (c.op == Op::kGatherNd) c.batch_dims = 0;
    c.api = Api::kKernel;
    c.name += "/kernel";
  }
  return c;
}

}  // namespace gscheck::fuzz
