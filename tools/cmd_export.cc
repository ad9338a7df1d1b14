// `gscheck export`: seeded random cases, each with the reference's outcome as `expect`, written as
// case files for another framework to replay (tools/tf_crosscheck.py runs them in TensorFlow).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/case.h"
#include "core/case_json.h"
#include "core/message_regex.h"
#include "core/status.h"
#include "properties/sample.h"
#include "reference/reference.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace gscheck::tools {
namespace {

constexpr const char* kUsage =
    "usage: gscheck export --count N --seed S --out DIR [--include-invalid] [--size K]\n"
    "                      [--max-output-bytes B] [--numbers] [--boundary-fraction P]\n"
    "  Writes N seeded random tf-cpu cases (every op, TF CPU dtypes, int32/int64 indices) to DIR,\n"
    "  each with the reference's outcome as `expect`. Without --include-invalid, cases aimed at a\n"
    "  validation rule are left out (out-of-range and duplicate indices are still drawn).\n"
    "  --size K             RapidCheck size, larger means bigger shapes (default 30)\n"
    "  --max-output-bytes B  the reference refuses larger outputs; such cases are not written\n"
    "                       (default 16777216)\n"
    "  --numbers            write tensor data as JSON numbers (default: base64, bit-exact)\n"
    "  --boundary-fraction P  in that share of the min/max/add/sub/scatter_nd cases, about a\n"
    "                       third of the updates and tensor elements become the dtype's boundary\n"
    "                       values: unsigned at and above 2^(bits-1), signed extremes, NaN\n"
    "                       payloads, signed zeros, infinities, extremes, subnormals (default "
    "0.5;\n"
    "                       0 exports the generator's data unchanged)\n"
    "  Exit status: 0 written, 1 a file could not be written, 2 bad command line.\n";

struct ExportArgs {
  int count = 0;
  uint64_t seed = 0;
  std::string out;
  bool include_invalid = false;
  int size = 30;
  int64_t max_output_bytes = int64_t{16} << 20;
  TensorEncoding encoding = TensorEncoding::kBase64;
  double boundary_fraction = 0.5;
};

// The command line, or a kParse error naming what is wrong. --help is handled by the caller.
Expected<ExportArgs> export_args(const ParsedArgs& p) {
  ExportArgs a;
  if (!p.positional.empty()) return parse_error("unexpected argument '" + p.positional[0] + "'");
  for (const char* required : {"--count", "--seed", "--out"})
    if (!p.has(required)) return parse_error(std::string(required) + " is required");
  auto count = parse_int_option("--count", *p.value("--count"), 0, 100000000);
  if (!count.ok()) return count.error();
  a.count = static_cast<int>(*count);
  auto seed = parse_int_option("--seed", *p.value("--seed"), 0, INT64_MAX);
  if (!seed.ok()) return seed.error();
  a.seed = static_cast<uint64_t>(*seed);
  a.out = *p.value("--out");
  if (a.out.empty()) return parse_error("--out needs a folder");
  if (auto v = p.value("--size")) {
    auto n = parse_int_option("--size", *v, 0, 1000);
    if (!n.ok()) return n.error();
    a.size = static_cast<int>(*n);
  }
  if (auto v = p.value("--max-output-bytes")) {
    auto n = parse_int_option("--max-output-bytes", *v, 1, INT64_MAX);
    if (!n.ok()) return n.error();
    a.max_output_bytes = *n;
  }
  if (auto v = p.value("--boundary-fraction")) {
    char* end = nullptr;
    const double f = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || *end != '\0' || !(f >= 0 && f <= 1))
      return parse_error("--boundary-fraction needs a number in [0, 1], got '" + *v + "'");
    a.boundary_fraction = f;
  }
  a.include_invalid = p.has("--include-invalid");
  if (p.has("--numbers")) a.encoding = TensorEncoding::kNumbers;
  return a;
}

// "000042_gather_nd.json": sorted by position, the op visible in a listing.
std::string file_name(int index, int width, Op op) {
  std::string n = std::to_string(index);
  return std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(n.size()))),
                     '0') +
         n + "_" + std::string(op_name(op)) + ".json";
}

// Boundary values of an element type: where orderings through a wider or signed type, NaN
// handling and rounding go wrong. The generator's self-describing data (base + flat index) never
// reaches them.
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
    const U quiet = static_cast<U>(sizeof(T) == 4 ? 0x7fc00000ull : 0x7ff8000000000000ull);
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
            std::bit_cast<T>(static_cast<U>(quiet | 0x123)),
            std::bit_cast<T>(static_cast<U>(sign | quiet | 0x5)),
            T(1),
            T(-1)};
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    const bool half = std::is_same_v<T, Float16>;
    // +0, -0, +inf, -inf, max, -max, min normal, min subnormal, -min subnormal, NaN payloads, 1.
    const std::vector<uint16_t> bits =
        half ? std::vector<uint16_t>{0x0000, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0xfbff,
                                     0x0400, 0x0001, 0x8001, 0x7e12, 0xfe05, 0x3c00}
             : std::vector<uint16_t>{0x0000, 0x8000, 0x7f80, 0xff80, 0x7f7f, 0xff7f,
                                     0x0080, 0x0001, 0x8001, 0x7fc3, 0xffc5, 0x3f80};
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

// About a third of the elements of t become boundary values (deterministic in rng).
void put_boundary_values(Tensor& t, std::mt19937_64& rng) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::vector<T> values = boundary_values<T>();
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
      if (values.empty()) return;
      T* d = t.data_as<T>();
      for (int64_t i = 0; i < t.num_elements(); ++i)
        if (rng() % 3 == 0) d[i] = values[rng() % values.size()];
    }
  });
}

bool takes_boundary_values(Op op) {
  return op == Op::kScatterNd || op == Op::kTensorScatterAdd || op == Op::kTensorScatterSub ||
         op == Op::kTensorScatterMin || op == Op::kTensorScatterMax;
}

}  // namespace

int cmd_export(const std::vector<std::string>& args) {
  auto line = parse_command_line(args,
                                 {{"--count", true},
                                  {"--seed", true},
                                  {"--out", true},
                                  {"--include-invalid", false},
                                  {"--size", true},
                                  {"--max-output-bytes", true},
                                  {"--numbers", false},
                                  {"--boundary-fraction", true}},
                                 "gscheck export", kUsage);
  if (!line.args) return line.exit_status;
  auto checked = export_args(*line.args);
  if (!checked.ok()) {
    std::fprintf(stderr, "gscheck export: %s\n%s", checked.error().message.c_str(), kUsage);
    return 2;
  }
  const ExportArgs& a = *checked;

  gen::SampleOptions opts;
  opts.seed = a.seed;
  opts.count = a.count;
  opts.size = a.size;
  opts.invalid_fraction = a.include_invalid ? 0.2 : 0.0;
  opts.semantics = {Semantics::kTfCpu};  // TensorFlow's CPU kernels are what other tools replay

  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) {
    std::fprintf(stderr, "gscheck export: cannot create %s: %s\n", a.out.c_str(),
                 ec.message().c_str());
    return 1;
  }

  std::vector<Case> cases = gen::sample_cases(opts);
  // Boundary values for the element operations that compare or add (seeded like the sampling).
  std::mt19937_64 rng(a.seed ^ 0x9e3779b97f4a7c15ull);
  int boundary_cases = 0;
  for (Case& c : cases) {
    const bool pick = std::uniform_real_distribution<double>(0, 1)(rng) < a.boundary_fraction;
    if (!pick || !takes_boundary_values(c.op)) continue;
    if (c.updates) put_boundary_values(*c.updates, rng);
    if (c.tensor) put_boundary_values(*c.tensor, rng);
    ++boundary_cases;
  }
  reference::Options ref_opts;
  ref_opts.max_output_bytes = a.max_output_bytes;
  const int width = static_cast<int>(std::to_string(cases.size()).size());
  // What regenerates a case (with the same build): the options that change sampling.
  const std::string regenerate = "gscheck export --seed " + std::to_string(a.seed) + " --size " +
                                 std::to_string(a.size) + " --count " + std::to_string(a.count) +
                                 " --boundary-fraction " + std::to_string(a.boundary_fraction) +
                                 (a.include_invalid ? " --include-invalid" : "");
  std::map<std::string, int> outcomes;  // "output" or the error class -> count
  int written = 0, refused = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    if (c.semantics != Semantics::kTfCpu) continue;  // sample_cases honours opts; be explicit
    Outcome got = reference::run(c, ref_opts);
    CaseFile f;
    f.c = c;
    f.description =
        regenerate + ", case " + std::to_string(i) + "; expect is the reference's outcome";
    Expect e;
    if (got.ok()) {
      e.output = std::move(got).value();
      ++outcomes["output"];
    } else {
      const Error& err = got.error();
      if (err.cls == ErrorClass::kResourceExhausted) {
        ++refused;  // over --max-output-bytes: nothing another framework could confirm
        continue;
      }
      e.error_class = err.cls;
      e.error_regex = error_message_regex(err);  // every text TF may write
      ++outcomes[std::string(error_class_name(err.cls))];
    }
    f.expect = std::move(e);
    const std::string path =
        (std::filesystem::path(a.out) / file_name(static_cast<int>(i), width, c.op)).string();
    Status st = save_case_file(path, f, a.encoding);
    if (!st.ok()) {
      std::fprintf(stderr, "gscheck export: %s\n", st.error().message.c_str());
      return 1;
    }
    ++written;
  }
  std::printf("gscheck export: %d case files in %s (seed %llu", written, a.out.c_str(),
              static_cast<unsigned long long>(a.seed));
  for (const auto& [k, n] : outcomes) std::printf(", %s %d", k.c_str(), n);
  if (refused) std::printf(", %d over --max-output-bytes skipped", refused);
  std::printf(", %d with boundary values", boundary_cases);
  std::printf(")\n");
  return 0;
}

}  // namespace gscheck::tools
