// The verdict on one case: the vocabulary reports, known failures and the grader share.
#pragma once

#include <optional>
#include <string_view>

namespace gscheck::reports {

/// The verdict on one case (benchdnn's outcome set).
enum class Verdict : unsigned char {
  kPassed,         ///< every check passed
  kFailed,         ///< a check failed: the backend is wrong (or the case file is malformed)
  kMistrusted,     ///< the reference disagrees with the case's expect: no trustworthy baseline
  kUnimplemented,  ///< outside the backend's declared capabilities (not a failure)
  /// A backend that declares itself deterministic gave outcomes that are not bit-identical
  /// across repeated runs of the case: it broke its contract (a failure).
  kNondeterministic,
  kSkipped,  ///< not run (refused by the memory budget)
  /// A failure a --known-failures entry declares (not a failure of the run).
  kXfail,
  /// A case a --known-failures entry declares failing passed (a failure only with --strict).
  kXpass,
  /// A case inside the declared contract that the backend would not run (unimplemented, or
  /// unsupported where TensorFlow computes): a failure, so no backend passes by declining.
  kDeclined,
  /// The backend crashed, hung or was killed (the call cost it its worker, or crashed gscheck's
  /// own process), or returned elements that are in no input and not zero where every element
  /// must be a copy (memory it never wrote, or read outside its inputs). Always a failure: a
  /// known-failures entry may describe it (CaseResult::known) but never turns it green.
  kUnsafe,
};
inline constexpr Verdict kAllVerdicts[] = {
    Verdict::kPassed,           Verdict::kFailed,  Verdict::kMistrusted, Verdict::kUnimplemented,
    Verdict::kNondeterministic, Verdict::kSkipped, Verdict::kXfail,      Verdict::kXpass,
    Verdict::kDeclined,         Verdict::kUnsafe};
/// "PASSED", "FAILED", "MISTRUSTED", "UNIMPLEMENTED", "NONDETERMINISTIC", "SKIPPED", "XFAIL",
/// "XPASS", "DECLINED", "UNSAFE".
std::string_view verdict_name(Verdict v);
/// Inverse of verdict_name; nullopt for an unknown name.
std::optional<Verdict> verdict_from_name(std::string_view name);
/// True for the verdicts that make a run fail (FAILED, MISTRUSTED, NONDETERMINISTIC, DECLINED,
/// UNSAFE; XPASS too when strict).
bool is_failure(Verdict v, bool strict = false);

}  // namespace gscheck::reports
