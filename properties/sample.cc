#include "properties/sample.h"

#include <exception>
#include <string>

#include "properties/generators.h"

namespace gscheck::gen {

struct Sampler::State {
  uint64_t seed;
  int size;
  rc::Gen<Case> gen;
  rc::Random random;
};

namespace {

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

}  // namespace

Sampler::Sampler(const SampleOptions& opts)
    : state_(new State{opts.seed, opts.size < 0 ? 0 : opts.size,
                       mixed_cases(constraints_of(opts), opts.invalid_fraction),
                       rc::Random(opts.seed)}) {}

Sampler::~Sampler() = default;

// One split per case: case i depends only on (seed, i, size, filters), never on other cases.
void Sampler::skip() {
  state_->random.split();
  ++position_;
}

std::optional<Case> Sampler::next() {
  rc::Random case_random = state_->random.split();
  const int64_t i = position_++;
  // The generators draw no filtered values, so they do not fail; a failure would be a bug in
  // them, and a new split (deterministic too) keeps the sweep going rather than crashing it.
  for (int attempt = 0; attempt < 8; ++attempt) {
    try {
      Case c = state_->gen(case_random, state_->size).value();
      c.name = "sweep/" + std::to_string(state_->seed) + "/" + std::to_string(i) + "/" +
               std::string(op_name(c.op));
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
