// `gscheck export`: seeded random cases, each with the reference's outcome as `expect`, written as
// case files for another framework to replay (tools/tf_crosscheck.py runs them in TensorFlow).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/case.h"
#include "core/case_json.h"
#include "core/message_regex.h"
#include "core/status.h"
#include "harness/crash_guard.h"
#include "properties/sample.h"
#include "reference/reference.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/sweep_options.h"

namespace gscheck::tools {
namespace {

constexpr const char* kUsage =
    "usage: gscheck export --count N --seed S --out DIR [--include-invalid] [--size K]\n"
    "                      [--max-output-bytes B] [--numbers] [--boundary-fraction P]\n"
    "                      [--large-fraction P] [--semantics tf-cpu|tf-gpu|xla|jax]\n"
    "  Writes N seeded random cases of one semantics profile (default tf-cpu; every op, its\n"
    "  dtypes, int32/int64 indices) to DIR, each with the reference's outcome as `expect`.\n"
    "  Without --include-invalid, cases aimed at a validation rule are left out (out-of-range and\n"
    "  duplicate indices are still drawn). With it, these are the cases `gscheck run --backend\n"
    "  reference --semantics PROFILE` sweeps with the same seed, size and boundary fraction.\n"
    "  --size K             RapidCheck size, larger means bigger shapes (default 30)\n"
    "  --max-output-bytes B  the reference refuses larger outputs; such cases are not written\n"
    "                       (default 16777216)\n"
    "  --numbers            write tensor data as JSON numbers (default: base64, bit-exact)\n"
    "  --boundary-fraction P  in that share of the min/max/add/sub/scatter_nd cases, about a\n"
    "                       third of the updates and tensor elements become the dtype's boundary\n"
    "                       values: unsigned at and above 2^(bits-1), signed extremes, NaN\n"
    "                       payloads (quiet, signalling-looking, negative), signed zeros,\n"
    "                       infinities, extremes, subnormals (default 0.5, as run's sweep; 0\n"
    "                       exports the generator's data unchanged)\n"
    "  --large-fraction P   that share of the positions are large cases, 10,000 to 1,000,000\n"
    "                       output elements (default 0.015625, one in 64, as run's sweep; 0 for\n"
    "                       none)\n"
    "  Exit status: 0 written, 1 a file could not be written, 2 bad command line.\n";

struct ExportArgs {
  int count = 0;
  uint64_t seed = 0;
  std::string out;
  bool include_invalid = false;
  int size = 30;
  int64_t max_output_bytes = int64_t{16} << 20;
  TensorEncoding encoding = TensorEncoding::kBase64;
  double boundary_fraction = gen::kDefaultBoundaryFraction;
  double large_fraction = gen::kDefaultLargeFraction;
  Semantics semantics = Semantics::kTfCpu;
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
    auto f = parse_fraction_option("--boundary-fraction", *v);
    if (!f.ok()) return f.error();
    a.boundary_fraction = *f;
  }
  if (auto v = p.value("--large-fraction")) {
    auto f = parse_fraction_option("--large-fraction", *v);
    if (!f.ok()) return f.error();
    a.large_fraction = *f;
  }
  if (auto v = p.value("--semantics")) {
    const auto s = semantics_from_name(*v);
    if (!s)
      return parse_error("--semantics: unknown profile '" + *v + "' (expected " +
                         semantics_names() + ")");
    a.semantics = *s;
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
                                  {"--boundary-fraction", true},
                                  {"--large-fraction", true},
                                  {"--semantics", true}},
                                 "gscheck export", kUsage);
  if (!line.args) return line.exit_status;
  auto checked = export_args(*line.args);
  if (!checked.ok()) {
    std::fprintf(stderr, "gscheck export: %s\n%s", checked.error().message.c_str(), kUsage);
    return 2;
  }
  const ExportArgs& a = *checked;

  const gen::SampleOptions opts =
      export_sample_options(a.seed, a.count, a.size, a.include_invalid, a.boundary_fraction,
                            a.semantics, a.large_fraction);

  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) {
    std::fprintf(stderr, "gscheck export: cannot create %s: %s\n", a.out.c_str(),
                 ec.message().c_str());
    return 1;
  }

  // The sampler plants the boundary values, as it does for `gscheck run`'s sweep.
  std::vector<Case> cases = gen::sample_cases(opts);
  reference::Options ref_opts;
  ref_opts.max_output_bytes = a.max_output_bytes;
  const int width = static_cast<int>(std::to_string(cases.size()).size());
  // What regenerates a case (with the same build): the options that change sampling.
  const std::string regenerate =
      "gscheck export --seed " + std::to_string(a.seed) + " --size " + std::to_string(a.size) +
      " --count " + std::to_string(a.count) + " --boundary-fraction " +
      std::to_string(a.boundary_fraction) +
      (a.large_fraction != gen::kDefaultLargeFraction
           ? " --large-fraction " + std::to_string(a.large_fraction)
           : std::string()) +
      (a.include_invalid ? " --include-invalid" : "") +
      (a.semantics != Semantics::kTfCpu ? " --semantics " + std::string(semantics_name(a.semantics))
                                        : std::string());
  std::map<std::string, int> outcomes;  // "output" or the error class -> count
  int written = 0, refused = 0, crashed = 0;
  int boundary_cases = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    if (c.semantics != a.semantics) continue;  // sample_cases honours opts; be explicit
    boundary_cases +=
        gen::boundary_case(a.seed, static_cast<int64_t>(i), c.op, a.boundary_fraction);
    Outcome got = Error{};
    // A crash of the oracle skips that case (said, with its position) instead of ending export.
    if (auto sig = harness::run_crash_guarded([&] { got = reference::run(c, ref_opts); })) {
      std::fprintf(stderr, "gscheck export: the reference crashed with %s on case %zu (%s); %s\n",
                   harness::signal_text(*sig).c_str(), i, c.name.c_str(),
                   "not written: a bug in the reference");
      ++crashed;
      continue;
    }
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
  if (crashed) std::printf(", %d crashed the reference", crashed);
  std::printf(", %d with boundary values", boundary_cases);
  std::printf(")\n");
  return crashed ? 1 : 0;
}

}  // namespace gscheck::tools
