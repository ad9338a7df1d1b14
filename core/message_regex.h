// The regular expressions of case files (expect.error.message) and of every message match:
// the ECMAScript subset docs/case_format.md documents, run by RE2 (time linear in the text, no
// recursion on the pattern's nesting or on the text), so no case file can hang or crash a run.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace re2 {
class RE2;
}

namespace gscheck {

class MessageRegex {
 public:
  /// Compile an ECMAScript pattern. Constructs outside the subset (backreferences, lookaround,
  /// (?flags), \cX, \p, [^] ...), groups nested deeper than 1000 and patterns RE2 refuses
  /// (counted repetition over 1000, over its 8 MiB memory limit) are a kParse error saying why;
  /// the message quotes at most a short excerpt of the pattern.
  static Expected<MessageRegex> compile(std::string_view pattern);

  /// True when the pattern matches somewhere in text (ECMAScript's RegExp.prototype.test).
  bool search(std::string_view text) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_;
};

/// The text as an ECMAScript pattern matching it literally (every metacharacter escaped).
std::string regex_escape(std::string_view text);

/// A case file's expect.error.message for an error: its message, or any of its alternatives,
/// escaped: `^(?:m|a1|a2)$` (`^m$` without alternatives). With whole = false the end is open
/// (`^m`, a prefix: TensorFlow may append node names).
std::string error_message_regex(const Error& e, bool whole = true);

/// A short excerpt of untrusted text for an error message: at most max_bytes bytes (cut at a
/// UTF-8 boundary) followed by "... (N bytes)" when it is longer.
std::string excerpt(std::string_view text, std::size_t max_bytes = 80);

}  // namespace gscheck
