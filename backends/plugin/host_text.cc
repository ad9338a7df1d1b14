#include "backends/plugin/host_text.h"

#include <vector>

namespace gscheck::plugin {

std::string sanitize(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) {
    if (ch < 0x20 || ch == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

void LogTail::add(const char* p, std::size_t n) {
  buf_.append(p, n);
  if (buf_.size() > 2 * kKeep) buf_.erase(0, buf_.size() - kKeep);
}

std::string LogTail::tail(int lines) const {
  std::string_view s(buf_);
  if (s.size() > kKeep) s = s.substr(s.size() - kKeep);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  std::vector<std::string_view> parts;
  while (!s.empty() && static_cast<int>(parts.size()) < lines) {
    const auto nl = s.rfind('\n');
    parts.push_back(nl == std::string_view::npos ? s : s.substr(nl + 1));
    s = nl == std::string_view::npos ? std::string_view() : s.substr(0, nl);
  }
  if (parts.empty()) return "";
  // A sanitizer's report is a headline and a stack: the tail alone would show only the stack's
  // outer frames, so the newest headline above it comes first.
  std::string_view headline;
  for (std::string_view mark : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                                "Sanitizer CHECK failed", "WARNING: ThreadSanitizer"}) {
    const auto at = s.rfind(mark);
    if (at == std::string_view::npos) continue;
    const auto begin = s.rfind('\n', at), end = s.find('\n', at);
    const std::string_view line =
        s.substr(begin == std::string_view::npos ? 0 : begin + 1,
                 end == std::string_view::npos ? std::string_view::npos : end - begin - 1);
    if (line.data() > headline.data()) headline = line;
  }
  std::string out = "; worker stderr (";
  if (!headline.empty()) {
    if (headline.size() > 300) headline = headline.substr(0, 300);
    out += "its sanitizer report's headline, then ";
  }
  out += "last " + std::to_string(parts.size()) + " line" + (parts.size() > 1 ? "s" : "") + "): ";
  if (!headline.empty()) out += sanitize(headline) + " | ... | ";
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    std::string_view line = *it;
    if (line.size() > 300) line = line.substr(line.size() - 300);
    out += (it == parts.rbegin() ? "" : " | ") + sanitize(line);
  }
  return out;
}

}  // namespace gscheck::plugin
