#include "properties/sample.h"

#include <exception>
#include <string>

#include "properties/generators.h"

namespace gscheck::gen {

std::vector<Case> sample_cases(const SampleOptions& opts) {
  Constraints c;
  c.ops = opts.ops;
  c.dtypes = opts.dtypes;
  c.index_dtypes = opts.index_dtypes;
  c.semantics = opts.semantics;
  c.allow_int16 = false;  // the contract: no index dtypes given means int32 and int64
  if (c.index_dtypes.empty()) c.index_dtypes = {DType::kInt32, DType::kInt64};
  const rc::Gen<Case> gen = mixed_cases(c, opts.invalid_fraction);

  std::vector<Case> out;
  if (opts.count <= 0) return out;
  out.reserve(static_cast<size_t>(opts.count));
  // One split per case: case i depends only on (seed, i, size, filters), never on other cases.
  rc::Random random(opts.seed);
  const int size = opts.size < 0 ? 0 : opts.size;
  for (int i = 0; i < opts.count; ++i) {
    rc::Random case_random = random.split();
    // The generators draw no filtered values, so they do not fail; a failure would be a bug in
    // them, and a new split (deterministic too) keeps the sweep going rather than crashing it.
    for (int attempt = 0; attempt < 8; ++attempt) {
      try {
        Case c_i = gen(case_random, size).value();
        c_i.name = "sweep/" + std::to_string(opts.seed) + "/" + std::to_string(i) + "/" +
                   std::string(op_name(c_i.op));
        out.push_back(std::move(c_i));
        break;
      } catch (const std::exception&) {
        case_random = case_random.split();
      }
    }
  }
  return out;
}

}  // namespace gscheck::gen
