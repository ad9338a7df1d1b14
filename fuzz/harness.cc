#include "fuzz/harness.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/plugin_backend.h"
#include "backends/registry.h"
#include "compare/compare.h"
#include "core/case_json.h"
#include "harness/checker.h"
#include "harness/regression.h"
#include "harness/shrink.h"
#include "reference/reference.h"
#include "reports/known_failures.h"

#ifndef GSCHECK_FUZZ_REPLAY
#define GSCHECK_FUZZ_REPLAY "gscheck_fuzz_replay"
#endif

namespace gscheck::fuzz {
namespace {

struct Entry {
  std::string name;
  std::unique_ptr<Backend> backend;
  compare::Options options;
};

// $GSCHECK_FUZZ_BACKEND: a vendor's backend (plugin:PATH, or python:MODULE through the Python
// host $GSCHECK_PYTHON_PLUGIN), fuzzed alone in one contained worker, with its own coverage.
const char* vendor_spec() {
  const char* spec = std::getenv("GSCHECK_FUZZ_BACKEND");
  return spec && *spec ? spec : nullptr;
}

Expected<std::unique_ptr<Backend>> make_vendor_backend(const std::string& spec) {
  PluginOptions opt;
  opt.jobs = 1;
  opt.coverage = true;
  opt.timeout_seconds = 10;
  opt.name = spec;
  // Where fuzzing runs unprivileged without user namespaces, the run says so (containment).
  if (const char* u = std::getenv("GSCHECK_UNSAFE_NO_SANDBOX")) opt.unsafe_no_sandbox = *u == '1';
  if (spec.starts_with("plugin:")) return make_plugin_backend(spec.substr(7), opt);
  if (spec.starts_with("python:")) {
    const char* host = std::getenv("GSCHECK_PYTHON_PLUGIN");
    if (!host || !*host)
      return parse_error("GSCHECK_FUZZ_BACKEND=" + spec +
                         ": set $GSCHECK_PYTHON_PLUGIN to libgscheck_python_plugin.so "
                         "(scripts/fuzz.sh does)");
    ::setenv("GSCHECK_PYTHON_MODULE", spec.substr(7).c_str(), 1);
    return make_plugin_backend(host, opt);
  }
  return parse_error("GSCHECK_FUZZ_BACKEND=" + spec + ": expected plugin:PATH or python:MODULE");
}

// $GSCHECK_FUZZ_KNOWN_FAILURES (scripts/fuzz.sh --known-failures): what a vendor's backend is
// known to do otherwise; a mismatch every difference of which an entry explains is no finding.
const reports::KnownFailures* known_failures() {
  static const std::optional<reports::KnownFailures> known =
      []() -> std::optional<reports::KnownFailures> {
    const char* path = std::getenv("GSCHECK_FUZZ_KNOWN_FAILURES");
    if (!path || !*path) return std::nullopt;
    auto k = reports::load_known_failures(path);
    if (!k.ok()) {
      std::fprintf(stderr, "gscheck fuzz: %s\n", k.error().message.c_str());
      std::exit(2);
    }
    return std::move(k).value();
  }();
  return known ? &*known : nullptr;
}

// The registry's backends other than the reference, made once per process; or the vendor's.
std::vector<Entry>& backends() {
  static std::vector<Entry> all = [] {
    std::vector<Entry> v;
    if (const char* spec = vendor_spec()) {
      known_failures();  // a bad file ends the run before any input
      auto made = make_vendor_backend(spec);
      if (!made.ok()) {
        std::fprintf(stderr, "gscheck fuzz: %s\n", made.error().message.c_str());
        std::exit(2);
      }
      Entry e{spec, std::move(made.value()), {}};
      e.options = compare::options_for(e.backend->capabilities());
      std::fprintf(stderr, "gscheck fuzz: checking backend %s (%s)\n", spec,
                   e.backend->capabilities().containment.c_str());
      v.push_back(std::move(e));
      return v;
    }
    for (const std::string& name : backend_names()) {
      if (name == "reference") continue;
      auto made = make_backend(name);
      if (!made.ok()) {
        std::fprintf(stderr, "gscheck fuzz: backend %s unavailable: %s\n", name.c_str(),
                     made.error().message.c_str());
        continue;
      }
      Entry e{name, std::move(made.value()), {}};
      e.options = compare::options_for(e.backend->capabilities());
      v.push_back(std::move(e));
    }
    if (v.empty()) {
      std::fprintf(stderr,
                   "gscheck fuzz: no backend besides the reference; only its crashes count\n");
    }
    for (const Entry& e : v) {
      std::fprintf(stderr, "gscheck fuzz: checking backend %s\n", e.name.c_str());
    }
    return v;
  }();
  return all;
}

Backend& reference_backend() {
  static std::unique_ptr<Backend> ref = std::move(make_backend("reference").value());
  return *ref;
}

std::string& write_case_path() {
  static std::string path = [] {
    const char* env = std::getenv("GSCHECK_FUZZ_WRITE_CASE");
    return std::string(env ? env : "");
  }();
  return path;
}
int g_cases_written = 0;

uint64_t fnv1a(const uint8_t* data, std::size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v, int digits) {
  std::string s(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4)
    s[static_cast<std::size_t>(i)] = "0123456789abcdef"[v & 15];
  return s;
}

// Names a decoded case after its input bytes: the same input always gives the same file.
std::string case_id(const uint8_t* data, std::size_t size) { return hex(fnv1a(data, size), 12); }

// "tensor", or the error's class: shrinking keeps both sides of a mismatch of the same kind.
std::string kind_name(const Outcome& o) {
  return o.ok() ? "tensor" : std::string(error_class_name(o.error().cls));
}

std::string describe(const Outcome& o) {
  if (o.ok()) return "tensor " + std::string(dtype_name(o->dtype())) + o->shape().to_string();
  return std::string(error_class_name(o.error().cls)) + ": " + o.error().message;
}

Status save(const std::string& path, const Case& c, const Outcome& ref, std::string description) {
  CaseFile f{c, harness::expect_from_reference(ref), std::move(description)};
  return save_case_file(path, f);
}

// The grade of c on e: the harness's, as `gscheck run` grades it.
reports::CaseResult grade(Entry& e, const Case& c) {
  harness::CheckOptions opts;
  opts.known_failures = known_failures();
  harness::CaseChecker checker(*e.backend, &reference_backend(), opts);
  CaseFile f;
  f.c = c;
  return checker.check_case(f, "");
}

// When the fuzzer started (this library's static initialisation): findings say how long they
// took.
const auto g_start = std::chrono::steady_clock::now();

// Whether v, a value of size bytes, keeps its value in its low w bytes, read as unsigned or as
// signed.
bool fits(uint64_t v, uint64_t w, uint64_t size) {
  if (w >= size || v >> (8 * w) == 0) return true;
  const unsigned shift = static_cast<unsigned>(64 - 8 * size);
  const int64_t s = static_cast<int64_t>(v << shift) >> shift;
  const int64_t half = int64_t{1} << (8 * w - 1);
  return s >= -half && s < half;
}

// This executable's own SanitizerCoverage counters (the harness, the decoder, the reference: all
// linked in statically); absent where it is not instrumented.
extern "C" uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern "C" uint8_t __stop___sancov_cntrs[] __attribute__((weak));

// Whether libFuzzer should see only the plugin's coverage: $GSCHECK_FUZZ_GUIDE=plugin (the default
// for a plugin with counters) or all. Measured (docs/fuzzing.md): with the reference's coverage
// counted, one seed input grew into 2,928 in 60 s, inputs that differ in how the reference
// handled them, and the few that passed the plugin's inner branches drowned among them.
bool plugin_guides_alone(bool has_counters) {
  const char* g = std::getenv("GSCHECK_FUZZ_GUIDE");
  if (g && std::string_view(g) == "all") return false;
  return has_counters;
}

// At the end of an input, so that libFuzzer reads the plugin's counters alone.
void forget_own_coverage() {
  if (__start___sancov_cntrs && +__stop___sancov_cntrs > +__start___sancov_cntrs)
    std::memset(__start___sancov_cntrs, 0,
                static_cast<std::size_t>(__stop___sancov_cntrs - __start___sancov_cntrs));
}

// libFuzzer's hook for memcmp (absent where the harness is not linked with libFuzzer).
extern "C" void __sanitizer_weak_hook_memcmp(void* caller_pc, const void* s1, const void* s2,
                                             std::size_t n, int result) __attribute__((weak));

// The vendor plugin's own coverage joins libFuzzer's feedback as extra counters (libFuzzer
// reads this section and clears it before each input); folded modulo its size.
__attribute__((section("__libfuzzer_extra_counters"), used)) uint8_t g_plugin_counters[1 << 16];
// And its compares, as libFuzzer's value profile counts its own (which it keeps to itself): a
// feature per place and bit distance, and per place and magnitude of the difference, so inputs
// whose values come nearer to what the plugin compares them with are kept. Hashed into 16 KiB.
__attribute__((section("__libfuzzer_extra_counters"), used)) uint8_t g_plugin_compares[1 << 14];

void count_compare(const CoverageCompare& k) {
  auto slot = [](uint64_t pc, uint64_t v) {
    uint64_t h = (pc & 0xffffff) * 0x9e3779b97f4a7c15ull ^ v * 0xff51afd7ed558ccdull;
    return static_cast<std::size_t>((h ^ h >> 29) % sizeof g_plugin_compares);
  };
  const uint64_t diff = k.a > k.b ? k.a - k.b : k.b - k.a;
  g_plugin_compares[slot(k.pc, static_cast<uint64_t>(std::popcount(k.a ^ k.b)))] = 1;
  g_plugin_compares[slot(k.pc, 128 + static_cast<uint64_t>(std::bit_width(diff)))] = 1;
}

// Whether the plugin's coverage guides alone (set from each call's coverage).
bool g_alone = false;

void take_coverage(const Backend& b) {
  static bool said = false;
  const std::span<const uint8_t> c = b.coverage();
  const bool alone = g_alone = plugin_guides_alone(!c.empty());
  if (!said) {
    said = true;
    if (c.empty()) {
      std::fprintf(
          stderr,
          "gscheck fuzz: %s has no SanitizerCoverage counters: guided by the "
          "reference's and the decoder's coverage only (build it with "
          "-fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp, docs/fuzzing.md)\n",
          b.capabilities().name.c_str());
    } else {
      std::fprintf(
          stderr, "gscheck fuzz: %s's own coverage guides the search (%zu counters%s)\n",
          b.capabilities().name.c_str(), c.size(),
          alone ? ", alone: GSCHECK_FUZZ_GUIDE=all adds gscheck's own" : ", with gscheck's own");
    }
  }
  for (std::size_t i = 0; i < c.size(); ++i) {
    uint8_t& slot = g_plugin_counters[i % sizeof g_plugin_counters];
    if (c[i] > slot) slot = c[i];
  }
  if (!__sanitizer_weak_hook_memcmp) return;  // not linked with libFuzzer (the replay tool)
  for (const CoverageCompare& k : b.coverage_compares()) {
    count_compare(k);
    // The narrowest width that holds both operands (as signed or unsigned), as the input most
    // likely carries them: C compares an int16 at int width, and the decoder's raw int16 data is
    // two bytes. One byte is too little for libFuzzer to learn from (it ignores such words).
    const uint64_t size = k.size == 1 || k.size == 2 || k.size == 4 ? k.size : 8;
    uint64_t w = 2;
    while (w < size && !(fits(k.a, w, size) && fits(k.b, w, size))) w *= 2;
    // libFuzzer's own handler for memcmp: the pair joins its table of recent compares, from
    // which it writes one operand where the input holds the other.
    __sanitizer_weak_hook_memcmp(reinterpret_cast<void*>(k.pc), &k.a, &k.b, std::min(w, size), 1);
  }
}

// A vendor's backend is fuzzed inside its contract: a case decoded under semantics it does not
// claim moves to one it does (the same shapes and values), and a case it still cannot take (op,
// dtype, index dtype, API level) is rejected (-1: libFuzzer 15 and later keep no such input;
// clang 14's ignores it, and the input then adds no coverage when the plugin guides alone). With
// the example gather_nd plugin (tf-gpu only), the decoder's weights move 5 cases in 8.
bool in_contract(const Capabilities& caps, Case& c) {
  const std::vector<Semantics>& claimed = caps.semantics;
  if (!claimed.empty() && std::ranges::find(claimed, c.semantics) == claimed.end())
    c.semantics = claimed[static_cast<std::size_t>(c.semantics) % claimed.size()];
  return admit(caps, c).ok();
}

// Shrinks, saves and prints a mismatch; returns the "kind:" line.
std::string report_mismatch_text(Family family, Case& c, Entry& e, const Outcome& ref,
                                 const Outcome& got);

[[noreturn]] void report_mismatch(Family family, Case c, Entry& e, const Outcome& ref,
                                  const Outcome& got) {
  report_mismatch_text(family, c, e, ref, got);
  std::abort();
}

// A vendor backend's finding is a result, not the end of the fuzzer: each kind is shrunk, saved
// and printed once (with when it was found), and the search goes on.
void report_finding(Family family, Case c, Entry& e, const Outcome& ref, const Outcome& got) {
  static std::set<std::string> seen;
  std::string kind = std::string(op_name(c.op)) + " " + kind_name(ref) + " " + kind_name(got);
  if (!seen.insert(kind).second) return;
  const double at =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
  std::fprintf(stderr, "gscheck fuzz: FINDING %zu after %.1f s of fuzzing\n", seen.size(), at);
  report_mismatch_text(family, c, e, ref, got);
}

std::string report_mismatch_text(Family family, Case& c, Entry& e, const Outcome& ref,
                                 const Outcome& got) {
  const std::string ref_kind = kind_name(ref), got_kind = kind_name(got);
  // The detector's own test (run_differential): each step runs each side once. A bounded
  // time: the case saved is what was reached, and a finding costs the search at most 30 s.
  c = harness::shrink_case(std::move(c),
                           [&](const Case& s) {
                             const Outcome r = reference::run(s);
                             const Outcome g = e.backend->run(s);
                             return kind_name(r) == ref_kind && kind_name(g) == got_kind &&
                                    !compare::compare_outcomes(s, r, g, e.options).pass;
                           },
                           {.seconds = 30})
          .c;
  const Outcome r = reference::run(c);
  const Outcome g = e.backend->run(c);
  const reports::CaseResult graded = grade(e, c);
  const std::string found_by = "fuzz/" + std::string(family_name(family)) + "_fuzz";
  const auto path =
      harness::save_regression(harness::regressions_dir(), {c, r, found_by, e.name, graded.reason});
  std::fprintf(stderr,
               "gscheck fuzz: MISMATCH in %s: backend %s disagrees with the reference\n"
               "  %s\n  reference: %s\n  %s: %s\n",
               std::string(op_name(c.op)).c_str(), e.name.c_str(), graded.reason.c_str(),
               describe(r).c_str(), e.name.c_str(), describe(g).c_str());
  // A short line without values, so scripts/fuzz.sh can group inputs that hit the same bug:
  // dtype and semantics only matter when both sides produced a tensor.
  std::string kind = std::string(op_name(c.op)) + ", reference " + kind_name(r) + ", " + e.name +
                     " " + kind_name(g);
  if (r.ok() && g.ok()) {
    kind +=
        ", " + std::string(dtype_name(r->dtype())) + " " + std::string(semantics_name(c.semantics));
  }
  std::fprintf(stderr, "  kind: %s\n", kind.c_str());
  if (path.ok()) {
    std::fprintf(stderr, "  case file: %s\n  replay: %s\n      or: %s --case %s\n", path->c_str(),
                 harness::replay_command(e.name, *path).c_str(), GSCHECK_FUZZ_REPLAY,
                 path->c_str());
  } else {
    std::fprintf(stderr, "  could not write the case file: %s\n", path.error().message.c_str());
  }
  std::fflush(stderr);
  return kind;
}

}  // namespace

std::vector<Family> backend_families() {
  std::vector<Family> out;
  for (Family f : kAllFamilies) {
    if (!vendor_spec()) {
      out.push_back(f);
      continue;
    }
    const std::vector<Op>& ops = backends().front().backend->capabilities().ops;
    // A case of each family shows its op (tensor_scatter: any of the five).
    const bool claimed = std::ranges::any_of(ops, [f](Op op) {
      switch (f) {
        case Family::kGather:
          return op == Op::kGather;
        case Family::kGatherNd:
          return op == Op::kGatherNd;
        case Family::kScatterNd:
          return op == Op::kScatterNd;
        case Family::kTensorScatter:
          return op == Op::kTensorScatterUpdate || op == Op::kTensorScatterAdd ||
                 op == Op::kTensorScatterSub || op == Op::kTensorScatterMin ||
                 op == Op::kTensorScatterMax;
      }
      return false;
    });
    if (claimed) out.push_back(f);
  }
  return out;
}

void set_write_case_path(std::string path) { write_case_path() = std::move(path); }
int cases_written() { return g_cases_written; }

int run_differential(Family family, const uint8_t* data, std::size_t size) {
  Case c = decode_case(family, data, size);
  c.name = std::string(op_name(c.op)) + "/fuzz_" + case_id(data, size);
  if (!write_case_path().empty()) {
    // Written before running anything, so a crashing reference still leaves the case behind;
    // rewritten with the reference outcome as expect when it returns.
    CaseFile f{c, std::nullopt,
               "Decoded from a fuzz/" + std::string(family_name(family)) +
                   "_fuzz input (write-case mode)"};
    Status st = save_case_file(write_case_path(), f);
    if (st.ok()) st = save(write_case_path(), c, reference::run(c), f.description);
    if (!st.ok()) {
      std::fprintf(stderr, "gscheck fuzz: %s\n", st.error().message.c_str());
      return 0;
    }
    ++g_cases_written;
    return 0;
  }
  const bool vendor = vendor_spec() != nullptr;
  if (vendor && !in_contract(backends().front().backend->capabilities(), c)) {
    if (g_alone) forget_own_coverage();
    return -1;
  }
  const Outcome ref = reference::run(c);
  for (Entry& e : backends()) {
    if (!admit(e.backend->capabilities(), c).ok()) continue;
    const Outcome got = e.backend->run(c);
    if (vendor) take_coverage(*e.backend);
    if (compare::compare_outcomes(c, ref, got, e.options).pass) continue;
    if (vendor) {
      // Graded as `gscheck run` grades it: known failures explain what they name.
      if (known_failures() && !reports::is_failure(grade(e, c).verdict)) continue;
      report_finding(family, c, e, ref, got);
    } else {
      report_mismatch(family, c, e, ref, got);
    }
  }
  if (g_alone) forget_own_coverage();
  return 0;
}

bool check_case_file(const std::string& path) {
  const Expected<CaseFile> f = load_case_file(path);
  if (!f.ok()) {
    std::printf("FAIL %s: %s\n", path.c_str(), f.error().message.c_str());
    return false;
  }
  if (!f->expect) {
    // A crash case from write-case mode: run everything so the crash reproduces, then fail.
    std::printf("FAIL %s: no expect block; running every backend to reproduce a crash\n",
                path.c_str());
    std::printf("  reference: %s\n", describe(reference::run(f->c)).c_str());
    for (Entry& e : backends()) {
      if (admit(e.backend->capabilities(), f->c).ok())
        std::printf("  %s: %s\n", e.name.c_str(), describe(e.backend->run(f->c)).c_str());
    }
    return false;
  }
  // Graded as `gscheck eval` grades it: the reference against the expect block, every other
  // backend against the expect block and the reference.
  bool pass = true;
  auto check = [&](const std::string& who, Backend& b, Backend* ref) {
    harness::CaseChecker checker(b, ref, {});
    const reports::CaseResult r = checker.check_case(*f, path);
    if (r.verdict == reports::Verdict::kUnimplemented) return;
    const bool ok = !reports::is_failure(r.verdict);
    std::printf("%s %s [%s]: %s\n", ok ? "PASS" : "FAIL", path.c_str(), who.c_str(),
                r.reason.c_str());
    pass &= ok;
  };
  check("reference", reference_backend(), nullptr);
  for (Entry& e : backends()) check(e.name, *e.backend, &reference_backend());
  return pass;
}

}  // namespace gscheck::fuzz
