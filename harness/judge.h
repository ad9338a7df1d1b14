// Judging the runs of one case: every check (the expect block, the reference, the repeats), the
// differences they found, and one precedence table that picks the verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "core/case.h"
#include "reports/known_failures.h"
#include "reports/report.h"

namespace gscheck::harness {

// What the checks found for one set of runs of a case (the verdict before known failures).
struct Judged {
  reports::Verdict verdict = reports::Verdict::kPassed;
  std::string reason;
  std::vector<reports::Check> checks;
  int differing_runs = 0;
  std::vector<reports::Difference> differences;
};

// The inputs of a judgement: the case, the expect block graded, the reference's outcome, and the
// backend's outcome on every run.
struct Evidence {
  const CaseFile& f;
  const Expect* graded = nullptr;    ///< the expect block as the contract grades it
  const Outcome* want = nullptr;     ///< the reference's outcome, when it could grade
  const std::vector<Outcome>& runs;  ///< run 1, then the repeats
  bool deterministic = true;
  compare::Options opts;
  std::string mistrust;           ///< the reference fails the expect block
  std::string reference_refused;  ///< why the reference could not grade ("" when it did)
  int64_t max_output_bytes = kDefaultMaxCaseBytes;  ///< the reference's, for known failures' rules
};

/// A crash, hang or other failure of the backend itself (class internal) is never a right answer.
bool backend_failure(const Evidence& ev, const Outcome& o);
/// TensorFlow's outcome class for the case: the reference's, else the expect block's; sets
/// *expects_output when TensorFlow computes.
std::optional<ErrorClass> expected_error_class(const Evidence& ev, bool* expects_output);
/// Every check, then one precedence table picks the verdict.
Judged judge(const Evidence& ev);

/// Where two outcomes differ bitwise, in words ("" when identical): dtype, shape, the first
/// differing element (flat index), or error class and message.
std::string bitwise_difference(const Outcome& a, const Outcome& b);

}  // namespace gscheck::harness
