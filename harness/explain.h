// Known failures applied to a judged case, and the injected bugs `known-failures check` tries.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/judge.h"
#include "reports/known_failures.h"

namespace gscheck::harness {

// Known failures: a failing case is XFAIL when every difference is explained by an entry whose
// predicate holds; a passing case an outcome entry naming it selects is XPASS. MISTRUSTED is the
// oracle's problem and never forgiven.
struct Explanation {
  reports::Verdict verdict;
  std::vector<std::size_t> entries;  ///< those that explained something (or declared, for XPASS)
  std::vector<reports::CaseResult::Differences> explained, unexplained;
  reports::CaseResult::KnownLint lint;
  /// Set when entries say the backend follows another rule and it does not: the case's reason,
  /// graded against the reference run under that rule.
  std::string reason;
  /// Set when the case is XFAIL because the reference under a followed rule agrees: the rule.
  std::string follows;
};

/// The verdict known failures give a judged case, and which entries gave it.
Explanation explain(const reports::KnownFailures& known, const Evidence& ev, const Judged& j,
                    const std::string& name, const std::string& file);

/// The injected bugs `known-failures check` tries on a case the backend got right: a file that
/// would forgive one there is wider than the failures it explains.
std::vector<std::pair<std::string, Outcome>> injected_bugs(const Evidence& ev);

/// The injected bugs `known-failures check` tries on a case entries explained (the backend's
/// tensor, as it answered): element 0 replaced by another input element ("wrong row where it
/// explains"), and for a scatter an element no in-range row addresses so replaced ("untouched
/// element changed where it explains"). An entry that explains one of them accepts values it
/// cannot predict; NaNs are never the replacement (a NaN rule may rightly accept another NaN).
std::vector<std::pair<std::string, Outcome>> injected_bugs_on_explained(const Evidence& ev);

}  // namespace gscheck::harness
