#include "backends/plugin/host_text.h"

#include <vector>

namespace gscheck::plugin {

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((b(k) & 0xc0) != 0x80) return 0;
  return n;
}

void hex_byte(std::string& out, unsigned char ch) {
  static const char* hex = "0123456789abcdef";
  out += "\\x";
  out += hex[ch >> 4];
  out += hex[ch & 15];
}

}  // namespace

std::string sanitize(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto ch = static_cast<unsigned char>(s[i]);
    if (ch < 0x80) {
      if (ch < 0x20 || ch == 0x7f)
        hex_byte(out, ch);
      else
        out += static_cast<char>(ch);
      ++i;
    } else if (const std::size_t n = utf8_length(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      hex_byte(out, ch);  // not UTF-8: JSON reports and terminals get the byte's value
      ++i;
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
