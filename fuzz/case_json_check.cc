// The case_json target's check: the parser on arbitrary bytes (declared in fuzz/harness.h).
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "core/case_json.h"
#include "fuzz/harness.h"

namespace gscheck::fuzz {
namespace {

bool same_tensor(const std::optional<Tensor>& a, const std::optional<Tensor>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || a->bit_equal(*b);
}

bool same_case_file(const CaseFile& a, const CaseFile& b) {
  const Case &x = a.c, &y = b.c;
  if (x.name != y.name || x.op != y.op || x.semantics != y.semantics ||
      x.batch_dims != y.batch_dims || x.bad_indices_policy != y.bad_indices_policy ||
      a.description != b.description || a.expect.has_value() != b.expect.has_value()) {
    return false;
  }
  if (!same_tensor(x.params, y.params) || !same_tensor(x.indices, y.indices) ||
      !same_tensor(x.updates, y.updates) || !same_tensor(x.tensor, y.tensor) ||
      !same_tensor(x.shape, y.shape) || !same_tensor(x.axis, y.axis)) {
    return false;
  }
  if (!a.expect) return true;
  return same_tensor(a.expect->output, b.expect->output) &&
         a.expect->error_class == b.expect->error_class &&
         a.expect->error_regex == b.expect->error_regex;
}

// Case files the parser accepts are kept small so every execution stays fast.
constexpr int64_t kParseBudgetBytes = int64_t{1} << 20;

}  // namespace

int run_case_json(const uint8_t* data, std::size_t size) {
  // The path `gscheck` takes for a case file: bounded DOM (depth, bytes), then the case.
  const Expected<CaseFile> f = parse_case_file_text(
      std::string_view(reinterpret_cast<const char*>(data), size), kParseBudgetBytes);
  if (!f.ok()) {
    // Error messages quote only excerpts of the input: bounded whatever the input holds.
    if (f.error().message.size() > 16384) {  // rank-254 shapes fit
      std::fprintf(stderr, "gscheck fuzz: case_json: an error message of %zu bytes\n",
                   f.error().message.size());
      std::abort();
    }
    return 0;
  }
  // What the parser accepts must survive writing and reading back, in both encodings.
  for (TensorEncoding enc : {TensorEncoding::kNumbers, TensorEncoding::kBase64}) {
    const std::string text = case_file_text(*f, enc);
    const nlohmann::json again_json = nlohmann::json::parse(text, nullptr, false);
    const char* what = nullptr;
    std::string why;
    if (again_json.is_discarded()) {
      what = "case_file_text wrote invalid JSON";
    } else if (auto again = case_file_from_json(again_json, 8 * kParseBudgetBytes); !again.ok()) {
      what = "the written case file does not parse";
      why = again.error().message;
    } else if (!same_case_file(*f, *again)) {
      what = "the case file changed in a write/read round trip";
    }
    if (what) {
      std::fprintf(stderr, "gscheck fuzz: case_json (%s encoding): %s %s\nwritten:\n%s\n",
                   enc == TensorEncoding::kNumbers ? "numbers" : "base64", what, why.c_str(),
                   text.c_str());
      std::abort();
    }
  }
  return 0;
}

}  // namespace gscheck::fuzz
