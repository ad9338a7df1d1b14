// Text that comes from a plugin or its worker, made safe to print in gscheck's output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gscheck::plugin {

/// Control bytes and bytes that are not well-formed UTF-8 become \xNN: no newlines, no terminal
/// escapes (so no fake summary lines in gscheck's output), and valid UTF-8 for JSON reports.
std::string sanitize(std::string_view s);

/// The last bytes a worker wrote to its stdout and stderr.
class LogTail {
 public:
  void add(const char* p, std::size_t n);
  /// The last lines, sanitised, on one line ("; worker stderr (last N lines): ..."), or "".
  std::string tail(int lines = 8) const;

 private:
  static constexpr std::size_t kKeep = 8192;
  std::string buf_;
};

}  // namespace gscheck::plugin
