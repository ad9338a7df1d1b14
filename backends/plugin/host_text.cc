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
  std::string out = "; worker stderr (last " + std::to_string(parts.size()) + " line" +
                    (parts.size() > 1 ? "s" : "") + "): ";
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    std::string_view line = *it;
    if (line.size() > 300) line = line.substr(line.size() - 300);
    out += (it == parts.rbegin() ? "" : " | ") + sanitize(line);
  }
  return out;
}

}  // namespace gscheck::plugin
