#include "properties/sample.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

#include "properties/generators.h"

namespace gscheck::gen {

void to_kernel_api(Case& c) {
  if (c.op == Op::kGather && !c.axis) {
    const int64_t b = c.batch_dims;
    c.axis = b >= std::numeric_limits<int32_t>::min() && b <= std::numeric_limits<int32_t>::max()
                 ? Tensor::from_values<int32_t>(Shape{}, {static_cast<int32_t>(b)})
                 : Tensor::from_values<int64_t>(Shape{}, {b});
  }
  if (c.op == Op::kGatherNd) c.batch_dims = 0;
  c.api = Api::kKernel;
}

struct Sampler::State {
  uint64_t seed;
  int size;
  rc::Gen<Case> gen;
  rc::Random random;
  bool both;         // Python and kernel-level cases: a quarter are made kernel-level
  bool kernel_only;  // every case kernel-level
  double boundary_fraction;
  double large_fraction;
};

namespace {

// splitmix64: the API level of case i, independent of the RapidCheck stream (so a sweep's Python
// cases are the ones the same seed gave before kernel-level cases existed).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

Constraints constraints_of(const SampleOptions& opts) {
  Constraints c;
  c.ops = opts.ops;
  c.dtypes = opts.dtypes;
  c.index_dtypes = opts.index_dtypes;
  c.semantics = opts.semantics;
  c.allow_int16 = false;  // the contract: no index dtypes given means int32 and int64
  c.limit_fraction = kLimitFraction;
  if (c.index_dtypes.empty()) c.index_dtypes = {DType::kInt32, DType::kInt64};
  return c;
}

// Boundary values of an element type (see put_boundary_values): the generator's self-describing
// data (base + flat index) never reaches them.
template <class T>
std::vector<T> boundary_values() {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
    return {};
  } else if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    if constexpr (std::is_unsigned_v<T>) {
      const T half = static_cast<T>(T{1} << (8 * sizeof(T) - 1));
      return {0,
              1,
              L::max(),
              static_cast<T>(L::max() - 1),
              half,
              static_cast<T>(half + 1),
              static_cast<T>(half - 1)};
    } else {
      return {L::min(), static_cast<T>(L::min() + 1), L::max(), static_cast<T>(L::max() - 1), -1, 0,
              1};
    }
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using L = std::numeric_limits<T>;
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const U inf = std::bit_cast<U>(L::infinity());
    const U quiet = static_cast<U>(sizeof(T) == 4 ? 0x00400000ull : 0x0008000000000000ull);
    const U sign = U{1} << (8 * sizeof(T) - 1);
    return {T(0),
            -T(0),
            L::infinity(),
            -L::infinity(),
            L::max(),
            -L::max(),
            L::min(),
            L::denorm_min(),
            -L::denorm_min(),
            std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(L::min()) - 1)),  // largest subnormal
            std::bit_cast<T>(static_cast<U>(inf | quiet | 0x123)),
            std::bit_cast<T>(static_cast<U>(inf | 0x2a)),  // quiet bit clear: signalling-looking
            std::bit_cast<T>(static_cast<U>(sign | inf | quiet | 0x5)),
            T(1),
            T(-1)};
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    const bool half = std::is_same_v<T, Float16>;
    // +0, -0, +inf, -inf, max, -max, min normal, min subnormal, -min subnormal, largest
    // subnormal, quiet NaN, signalling-looking NaN, negative NaN (with payloads), 1, -1.
    const std::vector<uint16_t> bits =
        half ? std::vector<uint16_t>{0x0000, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x0400, 0x0001,
                                     0x8001, 0x03ff, 0x7e12, 0x7c15, 0xfe05, 0x3c00, 0xbc00}
             : std::vector<uint16_t>{0x0000, 0x8000, 0x7f80, 0xff80, 0x7f7f, 0xff7f, 0x0080, 0x0001,
                                     0x8001, 0x007f, 0x7fc3, 0x7f85, 0xffc5, 0x3f80, 0xbf80};
    std::vector<T> out;
    for (uint16_t b : bits) out.push_back(T{b});
    return out;
  } else {  // complex: each part from the real type's values
    using R = typename T::value_type;
    std::vector<T> out;
    const std::vector<R> parts = boundary_values<R>();
    for (std::size_t i = 0; i < parts.size(); ++i)
      out.push_back(T(parts[i], parts[(i * 5 + 3) % parts.size()]));
    return out;
  }
}

bool wants(const SampleOptions& opts, Api a) {
  return opts.apis.empty() || std::find(opts.apis.begin(), opts.apis.end(), a) != opts.apis.end();
}

}  // namespace

namespace {
uint64_t boundary_hash(uint64_t seed, int64_t position) {
  return mix(mix(seed ^ 0xb0a4da21u) + static_cast<uint64_t>(position));
}
}  // namespace

bool boundary_case(uint64_t seed, int64_t position, Op op, double boundary_fraction) {
  return takes_boundary_values(op) &&
         static_cast<double>(boundary_hash(seed, position) >> 11) * 0x1.0p-53 < boundary_fraction;
}

namespace {
uint64_t large_hash(uint64_t seed, int64_t position) {
  return mix(mix(seed ^ 0x1a46e0c5u) + static_cast<uint64_t>(position));
}
}  // namespace

bool large_case(uint64_t seed, int64_t position, double large_fraction) {
  return static_cast<double>(large_hash(seed, position) >> 11) * 0x1.0p-53 < large_fraction;
}

bool make_large(Case& c, uint64_t salt) {
  const std::optional<Tensor>& data = c.op == Op::kGather || c.op == Op::kGatherNd ? c.params
                                      : c.op == Op::kScatterNd                     ? c.updates
                                                                                   : c.tensor;
  if (!data || !c.indices) return false;
  const DType dt = data->dtype(), it = c.indices->dtype();
  const std::vector<DType> takes = op_dtypes(c.op);
  if (std::find(takes.begin(), takes.end(), dt) == takes.end() ||
      (it != DType::kInt32 && it != DType::kInt64))
    return false;
  std::mt19937_64 rng(salt);
  auto uniform = [&](int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  int64_t elements = static_cast<int64_t>(std::pow(10.0, 4.0 + 2.0 * u));
  const int64_t width = dt == DType::kString ? 8 : static_cast<int64_t>(dtype_size(dt));
  elements = std::min<int64_t>(elements, (int64_t{8} << 20) / width);
  if (dt == DType::kString) elements = std::min<int64_t>(elements, 20000);
  static constexpr int64_t kSlices[] = {1, 2, 3, 7, 16, 64};
  const int64_t slice = kSlices[rng() % std::size(kSlices)];
  const int64_t rows = std::max<int64_t>(1, elements / slice);  // index rows or output rows
  auto index_tensor = [&](Shape shape, const std::vector<int64_t>& bound) {
    std::vector<int64_t> v(static_cast<std::size_t>(shape.num_elements().value_or(0)));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = uniform(0, bound[i % bound.size()] - 1);
    if (it == DType::kInt64) return Tensor::from_values<int64_t>(std::move(shape), v);
    return Tensor::from_values<int32_t>(std::move(shape), std::vector<int32_t>(v.begin(), v.end()));
  };
  const auto base = static_cast<int64_t>(rng() % 1000);
  c.batch_dims = 0;
  switch (c.op) {
    case Op::kGather: {
      const int64_t n = uniform(2, 4096);
      c.params = self_describing(dt, Shape{n, slice}, base, rng(), Specials::kAll);
      c.indices = index_tensor(Shape{rows}, {n});
      c.axis = Tensor::from_values<int32_t>(Shape{}, {0});
      break;
    }
    case Op::kGatherNd: {
      const int64_t a = uniform(1, 64), b = uniform(1, 64);
      c.params = self_describing(dt, Shape{a, b, slice}, base, rng(), Specials::kAll);
      c.indices = index_tensor(Shape{rows, 2}, {a, b});
      break;
    }
    default: {  // the scatters: an output [rows, slice] written by n index rows
      const Specials specials = c.op == Op::kTensorScatterUpdate ? Specials::kAll
                                : c.op == Op::kTensorScatterMin || c.op == Op::kTensorScatterMax
                                    ? Specials::kNoSignedZero
                                    : Specials::kArithmeticSafe;
      const int64_t n = uniform(1, rows);
      c.indices = index_tensor(Shape{n, 1}, {rows});
      c.updates = self_describing(dt, Shape{n, slice}, base + 7, rng(), specials);
      if (c.op == Op::kScatterNd) {
        c.shape = it == DType::kInt64
                      ? Tensor::from_values<int64_t>(Shape{2}, {rows, slice})
                      : Tensor::from_values<int32_t>(
                            Shape{2}, {static_cast<int32_t>(rows), static_cast<int32_t>(slice)});
      } else {
        c.tensor = self_describing(dt, Shape{rows, slice}, base, rng(), specials);
      }
    }
  }
  return true;
}

bool takes_boundary_values(Op op) {
  return op == Op::kScatterNd || op == Op::kTensorScatterAdd || op == Op::kTensorScatterSub ||
         op == Op::kTensorScatterMin || op == Op::kTensorScatterMax;
}

void put_boundary_values(Tensor& t, uint64_t salt) {
  std::mt19937_64 rng(salt);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
      const std::vector<T> values = boundary_values<T>();
      T* d = t.data_as<T>();
      for (int64_t i = 0; i < t.num_elements(); ++i)
        if (rng() % 3 == 0) d[i] = values[rng() % values.size()];
    }
  });
}

Sampler::Sampler(const SampleOptions& opts)
    : state_(new State{opts.seed, opts.size < 0 ? 0 : opts.size,
                       mixed_cases(constraints_of(opts), opts.invalid_fraction),
                       rc::Random(opts.seed),
                       wants(opts, Api::kPython) && wants(opts, Api::kKernel),
                       !wants(opts, Api::kPython) && wants(opts, Api::kKernel),
                       opts.boundary_fraction, opts.large_fraction}) {}

Sampler::~Sampler() = default;

// One split per case: case i depends only on (seed, i, size, filters), never on other cases.
void Sampler::skip() {
  state_->random.split();
  ++position_;
}

std::optional<Case> Sampler::next() {
  State& s = *state_;
  rc::Random case_random = s.random.split();
  const int64_t i = position_++;
  // The generators draw no filtered values, so they do not fail; a failure would be a bug in
  // them, and a new split (deterministic too) keeps the sweep going rather than crashing it.
  for (int attempt = 0; attempt < 8; ++attempt) {
    try {
      Case c = s.gen(case_random, s.size).value();
      c.name = "sweep/" + std::to_string(s.seed) + "/" + std::to_string(i) + "/" +
               std::string(op_name(c.op));
      // Large tensors from (seed, i) alone, as the boundary values: other positions keep their
      // cases whatever the share.
      if (large_case(s.seed, i, s.large_fraction) && make_large(c, mix(large_hash(s.seed, i) ^ 3)))
        c.name += "/large";
      // Boundary values from (seed, i) alone, like the API level: the RapidCheck stream, and so
      // every case's shapes, indices and attributes, is the one a fraction of 0 gives.
      if (boundary_case(s.seed, i, c.op, s.boundary_fraction)) {
        const uint64_t b = boundary_hash(s.seed, i);
        if (c.updates) put_boundary_values(*c.updates, mix(b ^ 1));
        if (c.tensor) put_boundary_values(*c.tensor, mix(b ^ 2));
      }
      // Python's batch_dims lowering of gather_nd has no kernel-level twin: it stays Python
      // unless kernel-level cases are all that is asked for.
      const bool kernel =
          s.kernel_only ||
          (s.both && mix(s.seed * 0x100000001b3ull + static_cast<uint64_t>(i)) % 4 == 0 &&
           !(c.op == Op::kGatherNd && c.batch_dims != 0));
      if (kernel) {
        to_kernel_api(c);
        c.name += "/kernel";
      }
      return c;
    } catch (const std::exception&) {
      case_random = case_random.split();
    }
  }
  return std::nullopt;
}

std::vector<Case> sample_cases(const SampleOptions& opts) {
  std::vector<Case> out;
  if (opts.count <= 0) return out;
  out.reserve(static_cast<size_t>(opts.count));
  Sampler sampler(opts);
  for (int i = 0; i < opts.count; ++i) {
    if (auto c = sampler.next()) out.push_back(std::move(*c));
  }
  return out;
}

}  // namespace gscheck::gen
