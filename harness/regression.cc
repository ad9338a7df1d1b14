#include "harness/regression.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/case_json.h"
#include "core/message_regex.h"

#ifndef GSCHECK_SOURCE_DIR
#define GSCHECK_SOURCE_DIR "."
#endif

namespace gscheck::harness {
namespace {

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ULL;
  return h;
}

}  // namespace

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-./=:+,@") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string replay_command(const std::string& backend, const std::string& path, int repeat,
                           const std::string& flags) {
  return "gscheck eval --backend " + shell_quote(backend) + (flags.empty() ? "" : " " + flags) +
         (repeat > 1 ? " --repeat " + std::to_string(repeat) : std::string()) + " " +
         shell_quote(path);
}

std::string regressions_dir() {
  if (const char* env = std::getenv("GSCHECK_REGRESSIONS_DIR"); env && *env) return env;
  return std::string(GSCHECK_SOURCE_DIR) + "/corpus/regressions";
}

Expect expect_from_reference(const Outcome& reference) {
  Expect e;
  if (reference.ok()) {
    e.output = reference.value();
  } else {
    e.error_class = reference.error().cls;
    e.error_regex = error_message_regex(reference.error(), /*whole=*/false);
  }
  return e;
}

Expected<std::string> save_regression(const std::string& dir, const Regression& r) {
  CaseFile f;
  f.c = r.c;
  if (r.reference) f.expect = expect_from_reference(*r.reference);
  f.description = "Found by " + r.found_by + ": backend " + r.backend + " failed it" +
                  (r.detail.empty() ? "" : " (" + r.detail + ")") +
                  (r.reference ? ". The expect block is the reference's outcome."
                               : ". No expect block: the reference crashed on it.");
  const std::string op(op_name(r.c.op));
  f.c.name = op + "/regression";  // the hash is of the text without itself
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a(case_file_text(f))));
  const std::string id(hash, 12);
  f.c.name = op + "/regression_" + id;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{ErrorClass::kInternal, "cannot create " + dir + ": " + ec.message()};
  const std::string path = (std::filesystem::path(dir) / (op + "_" + id + ".json")).string();
  GSCHECK_RETURN_IF_ERROR(save_case_file(path, f));
  return path;
}

}  // namespace gscheck::harness
