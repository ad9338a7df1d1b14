// libFuzzer target for reading reports and `gscheck report merge|diff` (reports/combine.h): the
// input is up to three report texts separated by a line "--8<--"; each is read case by case
// (reports/report_reader.h), then every pair is diffed and the reports merged (as shards and
// forced), and the merge written as JSON and JUnit. Errors are fine; crashes, hangs, unbounded
// memory and reports that do not read back are not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "reports/combine.h"
#include "reports/report_reader.h"

namespace {

using gscheck::reports::Report;

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> out;
  constexpr std::string_view kSep = "\n--8<--\n";
  while (out.size() < 2) {
    const auto at = text.find(kSep);
    if (at == std::string_view::npos) break;
    out.push_back(text.substr(0, at));
    text.remove_prefix(at + kSep.size());
  }
  out.push_back(text);
  return out;
}

// What a report writes must read back with the same cases.
void round_trip(const Report& r) {
  const std::string text = gscheck::reports::report_to_json(r).dump(
      2, ' ', false, nlohmann::json::error_handler_t::replace);
  auto back = gscheck::reports::parse_report_text(text);
  if (!back.ok() || back->cases.size() != r.cases.size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace rp = gscheck::reports;
  std::vector<Report> reports;
  for (std::string_view part : split(std::string_view(reinterpret_cast<const char*>(data), size))) {
    auto r = rp::parse_report_text(part, int64_t{1} << 24);
    if (r.ok()) reports.push_back(std::move(*r));
  }
  for (const Report& r : reports) round_trip(r);
  for (std::size_t a = 0; a < reports.size(); ++a)
    for (std::size_t b = 0; b < reports.size(); ++b) {
      auto d = rp::diff_reports(reports[a], reports[b]);
      if (!d.ok()) continue;
      (void)rp::diff_table(*d, 5);
      (void)rp::diff_to_json(*d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (a == b && (d->regression() || !d->cases.empty())) std::abort();  // a report vs itself
    }
  if (reports.empty()) return 0;
  for (bool force : {false, true}) {
    std::vector<rp::MergeInput> inputs;
    for (std::size_t i = 0; i < reports.size(); ++i)
      inputs.push_back({"part" + std::to_string(i) + ".json", reports[i]});
    auto merged = rp::merge_reports(std::move(inputs), force);
    if (!merged.ok()) continue;
    round_trip(*merged);
    (void)rp::junit_xml(*merged);
    (void)rp::summary_table(*merged);
  }
  return 0;
}
