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

namespace {

// splitmix64: the API level of case i, independent of the RapidCheck stream (so a sweep's Python
// cases are the ones the same seed gave before kernel-level cases existed).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<Case> sample_cases(const SampleOptions& opts) {
  Constraints c;
  c.ops = opts.ops;
  c.dtypes = opts.dtypes;
  c.index_dtypes = opts.index_dtypes;
  c.semantics = opts.semantics;
  c.allow_int16 = false;  // the contract: no index dtypes given means int32 and int64
  if (c.index_dtypes.empty()) c.index_dtypes = {DType::kInt32, DType::kInt64};
  const rc::Gen<Case> gen = mixed_cases(c, opts.invalid_fraction);

  auto wants = [&](Api a) {
    return opts.apis.empty() || std::find(opts.apis.begin(), opts.apis.end(), a) != opts.apis.end();
  };
  const bool both = wants(Api::kPython) && wants(Api::kKernel);
  const bool kernel_only = !wants(Api::kPython) && wants(Api::kKernel);
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
        // Python's batch_dims lowering of gather_nd has no kernel-level twin: it stays Python
        // unless kernel-level cases are all that is asked for.
        const bool kernel =
            kernel_only ||
            (both && mix(opts.seed * 0x100000001b3ull + static_cast<uint64_t>(i)) % 4 == 0 &&
             !(c_i.op == Op::kGatherNd && c_i.batch_dims != 0));
        if (kernel) {
          to_kernel_api(c_i);
          c_i.name += "/kernel";
        }
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
