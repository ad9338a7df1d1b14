// Known failures (--known-failures FILE): failures a backend is known to have, declared in a JSON
// file (reports/known_failures.schema.json), graded XFAIL instead of failing the run; a case such
// an entry selects that passes is XPASS. See docs/report_format.md ("Known failures").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "reports/report.h"

namespace gscheck::reports {

/// One entry: which cases it selects, what their failure looks like, and why it is known.
struct KnownFailure {
  // Selector.
  std::string case_pattern = "*";  ///< glob (* ?) on the case name or its file path
  std::vector<Op> ops;             ///< empty: every op
  std::vector<DType> dtypes;       ///< the data dtype (params, tensor/updates); empty: every one
  // The failure.
  Verdict verdict = Verdict::kFailed;  ///< FAILED, NONDETERMINISTIC or MISTRUSTED
  /// "output" (the backend gave a tensor), an error class name, or "" for any outcome.
  std::string outcome;
  /// ECMAScript regex searched in the result's outcome, reason and mismatch lines ("expected X,
  /// got Y", one per line); an entry with a message
  /// recognises failures by what they say, so a passing case never makes it XPASS.
  std::optional<std::string> message;
  std::optional<std::regex> message_re;
  /// Only a case that FAILED by subnormals flushed to zero and nothing else
  /// (CaseResult::flushed_subnormals): a CPU running with FTZ/DAZ, as TensorFlow's does.
  bool flushed_subnormals = false;
  // Why.
  std::string reason;
  std::string link;
};

struct KnownFailures {
  std::string path;
  std::vector<KnownFailure> entries;
};

/// Parse a known-failures document; a malformed entry is a kParse error naming it.
Expected<KnownFailures> known_failures_from_json(const nlohmann::json& j, const std::string& path);
/// Read and parse a known-failures file.
Expected<KnownFailures> load_known_failures(const std::string& path);

/// True when the glob pattern (`*` any run, `?` one character) matches all of text.
bool glob_match(std::string_view pattern, std::string_view text);

/// The outcome class of a result: "output", an error class name, or "not run".
std::string outcome_class(const CaseResult& r);

/// Grade a result by the entries: a failure matching an entry becomes XFAIL, a PASSED case
/// selected by an entry without a message becomes XPASS (the first matching entry wins); the
/// verdict before is kept in r.known. Other verdicts are left alone.
void apply_known_failures(const KnownFailures& known, CaseResult& r);

}  // namespace gscheck::reports
