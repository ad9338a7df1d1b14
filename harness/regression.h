// A failing case saved as a case file (a regression) so that it replays: one directory rule, one
// expect policy, one name scheme and one replay line for `gscheck run`, the fuzzers and the
// properties alike.
#pragma once

#include <optional>
#include <string>

#include "core/case.h"
#include "core/status.h"

namespace gscheck::harness {

/// A word quoted for POSIX shells when it needs it.
std::string shell_quote(const std::string& s);

/// The command that replays a case file: "gscheck eval --backend B [--repeat K] FILE" (the
/// --repeat only when repeat > 1).
std::string replay_command(const std::string& backend, const std::string& path, int repeat = 1,
                           const std::string& flags = "");

/// Where regressions go when the caller has no folder of its own (fuzzers, properties):
/// $GSCHECK_REGRESSIONS_DIR when set, else corpus/regressions of the source tree. `gscheck run`
/// saves next to its report instead (<report dir>/failed_cases), and not at all without one.
std::string regressions_dir();

/// The expect block of a regression: the reference's outcome. For an error, its class and its
/// message as a prefix regex: messages are graded only for backends that promise TensorFlow's
/// text, and a prefix leaves room for what TensorFlow appends (node names).
Expect expect_from_reference(const Outcome& reference);

struct Regression {
  Case c;  ///< the failing case (saved under a new name)
  /// The reference's outcome: the expect block; nullopt when the reference itself crashed (the
  /// file then has no expect block, and replaying it reproduces the crash).
  std::optional<Outcome> reference;
  std::string found_by;  ///< "gscheck run", "fuzz/gather_fuzz", "property P (seed)"
  std::string backend;   ///< the backend that failed it
  std::string detail;    ///< how it failed, one line
};

/// Write r into dir (created if missing) as <op>_<hash>.json, the case named
/// <op>/regression_<hash>, where hash is 12 hex digits of the file's text: the same failure
/// always lands in the same file. Returns the path.
Expected<std::string> save_regression(const std::string& dir, const Regression& r);

}  // namespace gscheck::harness
