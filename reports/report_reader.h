// Reading JSON reports back (`gscheck report merge|diff`), case by case through a SAX parser: at
// any time memory holds the report's head and one case's DOM, never a DOM of the whole file.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "reports/report.h"

namespace gscheck::reports {

/// Called with each case of a report in file order; an error stops the reading and is returned.
using CaseSink = std::function<Status(CaseResult&&)>;

/// The most memory the DOM of one case, or of the head (everything but the cases), may take
/// while it is read (an estimate: a case file's mismatches are capped, so real cases are small).
inline constexpr int64_t kMaxReportValueBytes = int64_t{64} << 20;

/// Read a report's JSON text from in (the caller bounds its length): the head into run, each case
/// to sink as soon as it is parsed (before the head is complete: "cases" may come first). Nesting
/// deeper than 64 levels, a value over kMaxReportValueBytes, a number that does not fit its
/// field, a missing or mistyped field are errors naming the field.
Status read_report_stream(std::istream& in, RunInfo& run, const CaseSink& sink);
/// The same for a file: a regular file of at most max_bytes (a FIFO, device or folder is refused
/// before anything is read); errors start with the path.
Status read_report_file(const std::string& path, int64_t max_bytes, RunInfo& run,
                        const CaseSink& sink);
/// A whole report from its text (tests, the fuzz target).
Expected<Report> parse_report_text(std::string_view text, int64_t max_bytes = int64_t{1} << 30);
/// One case object of a report; where names it in errors ("report.cases[3]").
Expected<CaseResult> case_result_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace gscheck::reports
