// libFuzzer target for the known-failures loader (reports/known_failures.h): arbitrary bytes give
// entries or an error, never a crash, a hang or unbounded memory; every regex that loads is then
// run (RE2) over fixed messages, among them a 50 KB text that backtracking engines choke on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/case_json.h"
#include "reports/known_failures.h"

namespace {

const std::string& long_message() {
  static const std::string m = "got " + std::string(50000, 'a') + " expected Z";
  return m;
}

void search_all(const gscheck::MessageRegex& re) {
  static const std::string_view kFixed[] = {
      "", "Check failed: d < dims()", "indices[0,1] = [7] does not index into param shape [3]",
      "signal 6 (Abort)", "\xff\xfe not utf-8 \x01"};
  for (std::string_view m : kFixed) (void)re.search(m);
  (void)re.search(long_message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto j = gscheck::parse_json_bounded(text, int64_t{1} << 24);
  if (!j.ok()) return 0;
  auto known = gscheck::reports::known_failures_from_json(*j, "fuzz.json");
  if (!known.ok()) {
    if (known.error().message.empty()) std::abort();  // an error must say what is wrong
    return 0;
  }
  for (const auto& e : known->entries) {
    if (e.message) search_all(*e.message);
    if (e.expected_message) search_all(*e.expected_message);
    (void)gscheck::reports::glob_match(e.case_pattern, long_message());
    (void)gscheck::reports::glob_match(e.case_pattern, "sweep/7/12/gather_nd");
  }
  return 0;
}
