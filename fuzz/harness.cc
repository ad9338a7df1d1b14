#include "fuzz/harness.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "compare/compare.h"
#include "core/case_json.h"
#include "core/message_regex.h"
#include "fuzz/shrink.h"
#include "reference/reference.h"

#ifndef GSCHECK_SOURCE_DIR
#define GSCHECK_SOURCE_DIR "."
#endif
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

// The registry's backends other than the reference, made once per process.
std::vector<Entry>& backends() {
  static std::vector<Entry> all = [] {
    std::vector<Entry> v;
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

Expect expect_of(const Outcome& o) {
  Expect e;
  if (o.ok()) {
    e.output = o.value();
  } else {
    e.error_class = o.error().cls;
    e.error_regex = error_message_regex(o.error(), false);  // a prefix: TF may append node names
  }
  return e;
}

// "tensor", or the error's class: shrinking keeps both sides of a mismatch of the same kind.
std::string kind_name(const Outcome& o) {
  return o.ok() ? "tensor" : std::string(error_class_name(o.error().cls));
}

std::string describe(const Outcome& o) {
  if (o.ok()) return "tensor " + std::string(dtype_name(o->dtype())) + o->shape().to_string();
  return std::string(error_class_name(o.error().cls)) + ": " + o.error().message;
}

Status save(const std::string& path, const Case& c, const Outcome& ref, std::string description) {
  CaseFile f{c, expect_of(ref), std::move(description)};
  return save_case_file(path, f);
}

[[noreturn]] void report_mismatch(Family family, const uint8_t* data, std::size_t size, Case c,
                                  Entry& e, const Outcome& ref, const Outcome& got) {
  const std::string ref_kind = kind_name(ref), got_kind = kind_name(got);
  c = shrink_case(std::move(c), [&](const Case& s) {
    const Outcome r = reference::run(s);
    const Outcome g = e.backend->run(s);
    return kind_name(r) == ref_kind && kind_name(g) == got_kind &&
           !compare::compare_outcomes(s, r, g, e.options).pass;
  });
  const Outcome r = reference::run(c);
  const Outcome g = e.backend->run(c);
  const compare::Verdict v = compare::compare_outcomes(c, r, g, e.options);

  const std::string id = case_id(data, size);
  const std::string dir = regressions_dir();
  const std::string path =
      (std::filesystem::path(dir) / (std::string(op_name(c.op)) + "_fuzz_" + id + ".json"))
          .string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const Status st = save(path, c, r,
                         "Found by fuzz/" + std::string(family_name(family)) + "_fuzz: backend " +
                             e.name + " disagrees with the reference. " + v.summary);
  std::fprintf(stderr,
               "gscheck fuzz: MISMATCH in %s: backend %s disagrees with the reference\n"
               "  %s\n  reference: %s\n  %s: %s\n",
               std::string(op_name(c.op)).c_str(), e.name.c_str(), v.summary.c_str(),
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
  if (st.ok()) {
    std::fprintf(stderr,
                 "  case file: %s\n  replay: build/default/tools/gscheck eval --backend %s %s\n"
                 "      or: %s --case %s\n",
                 path.c_str(), e.name.c_str(), path.c_str(), GSCHECK_FUZZ_REPLAY, path.c_str());
  } else {
    std::fprintf(stderr, "  could not write the case file: %s\n", st.error().message.c_str());
  }
  std::fflush(stderr);
  std::abort();
}

}  // namespace

std::string regressions_dir() {
  const char* env = std::getenv("GSCHECK_REGRESSIONS_DIR");
  if (env && *env) return env;
  return std::string(GSCHECK_SOURCE_DIR) + "/corpus/regressions";
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
  const Outcome ref = reference::run(c);
  for (Entry& e : backends()) {
    if (!e.backend->capabilities().supports(c)) continue;
    const Outcome got = e.backend->run(c);
    if (!compare::compare_outcomes(c, ref, got, e.options).pass) {
      report_mismatch(family, data, size, c, e, ref, got);
    }
  }
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
      if (e.backend->capabilities().supports(f->c)) {
        std::printf("  %s: %s\n", e.name.c_str(), describe(e.backend->run(f->c)).c_str());
      }
    }
    return false;
  }
  bool pass = true;
  auto check = [&](const std::string& who, const Outcome& got, const compare::Options& opts) {
    const compare::Verdict v = compare::check_expect(f->c, *f->expect, got, opts);
    std::printf("%s %s [%s]: %s\n", v.pass ? "PASS" : "FAIL", path.c_str(), who.c_str(),
                v.summary.c_str());
    pass &= v.pass;
  };
  check("reference", reference::run(f->c), compare::Options{});
  for (Entry& e : backends()) {
    if (e.backend->capabilities().supports(f->c)) check(e.name, e.backend->run(f->c), e.options);
  }
  return pass;
}

}  // namespace gscheck::fuzz
