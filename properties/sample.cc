#include "properties/sample.h"

#include <exception>
#include <string>

#include "properties/generators.h"

namespace gscheck::gen {

struct SampleStream::State {
  rc::Gen<Case> gen;
  rc::Random random;
  SampleOptions opts;
  int next = 0;
};

SampleStream::SampleStream(const SampleOptions& opts) {
  Constraints c;
  c.ops = opts.ops;
  c.dtypes = opts.dtypes;
  c.index_dtypes = opts.index_dtypes;
  c.semantics = opts.semantics;
  c.allow_int16 = false;  // the contract: no index dtypes given means int32 and int64
  if (c.index_dtypes.empty()) c.index_dtypes = {DType::kInt32, DType::kInt64};
  s_ = std::make_unique<State>(
      State{mixed_cases(c, opts.invalid_fraction), rc::Random(opts.seed), opts, 0});
}
SampleStream::~SampleStream() = default;

std::optional<Case> SampleStream::next() {
  State& s = *s_;
  // One split per case: case i depends only on (seed, i, size, filters), never on other cases.
  while (s.next < s.opts.count) {
    const int i = s.next++;
    rc::Random case_random = s.random.split();
    const int size = s.opts.size < 0 ? 0 : s.opts.size;
    // The generators draw no filtered values, so they do not fail; a failure would be a bug in
    // them, and a new split (deterministic too) keeps the sweep going rather than crashing it.
    for (int attempt = 0; attempt < 8; ++attempt) {
      try {
        Case c_i = s.gen(case_random, size).value();
        c_i.name = "sweep/" + std::to_string(s.opts.seed) + "/" + std::to_string(i) + "/" +
                   std::string(op_name(c_i.op));
        return c_i;
      } catch (const std::exception&) {
        case_random = case_random.split();
      }
    }
  }
  return std::nullopt;
}

std::vector<Case> sample_cases(const SampleOptions& opts) {
  std::vector<Case> out;
  if (opts.count <= 0) return out;
  out.reserve(static_cast<size_t>(opts.count));
  SampleStream stream(opts);
  while (auto c = stream.next()) out.push_back(std::move(*c));
  return out;
}

}  // namespace gscheck::gen
