#include "properties/sample.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <string>

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
  if (c.index_dtypes.empty()) c.index_dtypes = {DType::kInt32, DType::kInt64};
  return c;
}

bool wants(const SampleOptions& opts, Api a) {
  return opts.apis.empty() || std::find(opts.apis.begin(), opts.apis.end(), a) != opts.apis.end();
}

}  // namespace

Sampler::Sampler(const SampleOptions& opts)
    : state_(new State{opts.seed, opts.size < 0 ? 0 : opts.size,
                       mixed_cases(constraints_of(opts), opts.invalid_fraction),
                       rc::Random(opts.seed),
                       wants(opts, Api::kPython) && wants(opts, Api::kKernel),
                       !wants(opts, Api::kPython) && wants(opts, Api::kKernel)}) {}

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
