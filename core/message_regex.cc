#include "core/message_regex.h"

#include <re2/re2.h>

namespace gscheck {
namespace {

constexpr int kMaxGroupDepth = 1000;

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// ECMAScript -> RE2 syntax, one pass without recursion. Where the two differ in meaning the
// pattern is rewritten ('.', \uHHHH) or refused with the reason.
Expected<std::string> to_re2(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false;
  int depth = 0;  // group nesting: RE2 would take more, the documented subset stops here
  auto refuse = [&](std::size_t at, const std::string& why) -> Error {
    return parse_error(why + " at offset " + std::to_string(at) + " (not in the supported " +
                       "ECMAScript subset, see docs/case_format.md)");
  };
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 == p.size()) return parse_error("a trailing backslash");
      const char e = p[i + 1];
      if (e >= '1' && e <= '9') return refuse(i, "a backreference \\" + std::string(1, e));
      if (e == 'k') return refuse(i, "a named backreference \\k");
      if (e == 'c') return refuse(i, "a control escape \\c");
      if (e == 'p' || e == 'P')
        return refuse(i, "a Unicode property escape \\" + std::string(1, e));
      if (e == 'u') {
        if (i + 5 < p.size() && is_hex(p[i + 2]) && is_hex(p[i + 3]) && is_hex(p[i + 4]) &&
            is_hex(p[i + 5])) {
          out += "\\x{" + std::string(p.substr(i + 2, 4)) + "}";
          i += 5;
          continue;
        }
        return refuse(i, "a \\u escape without four hex digits");
      }
      if (e == 'v') {
        out += "\\x0B";
        ++i;
        continue;
      }
      out += c;
      out += e;
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      if (c == '[' && i + 1 < p.size() && (p[i + 1] == ':' || p[i + 1] == '=' || p[i + 1] == '.')) {
        out += "\\[";  // a literal '[' in ECMAScript, a POSIX class opener in RE2
        continue;
      }
      out += c;
      continue;
    }
    switch (c) {
      case '[':
        if (p.substr(i, 2) == "[]") return refuse(i, "an empty class []");
        if (p.substr(i, 3) == "[^]") return refuse(i, "the class [^]");
        in_class = true;
        out += c;
        // A ']' right after '[' or '[^' closes the class in ECMAScript (an empty class, refused
        // above); RE2 would read it as a literal: make that impossible to reach.
        if (i + 1 < p.size() && p[i + 1] == '^') {
          out += '^';
          ++i;
        }
        continue;
      case '(':
        if (++depth > kMaxGroupDepth)
          return refuse(i, "groups nested deeper than " + std::to_string(kMaxGroupDepth));
        if (i + 1 < p.size() && p[i + 1] == '?') {
          if (p.substr(i, 3) == "(?:") {
            out += "(?:";
            i += 2;
            continue;
          }
          const std::string_view rest = p.substr(i, 4);
          if (rest.starts_with("(?=") || rest.starts_with("(?!"))
            return refuse(i, "a lookahead " + std::string(rest.substr(0, 3)));
          if (rest.starts_with("(?<=") || rest.starts_with("(?<!"))
            return refuse(i, "a lookbehind " + std::string(rest));
          if (rest.starts_with("(?<")) return refuse(i, "a named group (?<");
          return refuse(i, "the group syntax " + std::string(p.substr(i, 3)));
        }
        out += c;
        continue;
      case ')':
        if (depth > 0) --depth;
        out += c;
        continue;
      case '.':
        out += "[^\\n\\r\\x{2028}\\x{2029}]";  // ECMAScript's '.' excludes all line terminators
        continue;
      default:
        out += c;
    }
  }
  if (in_class) return parse_error("a '[' class without its closing ']'");
  return out;
}

}  // namespace

std::string regex_escape(std::string_view text) {
  std::string re;
  re.reserve(text.size() + 8);
  for (char ch : text) {
    if (std::string_view("^$\\.*+?()[]{}|/").find(ch) != std::string_view::npos) re += '\\';
    re += ch;
  }
  return re;
}

std::string error_message_regex(const Error& e, bool whole) {
  std::string re = "^";
  if (e.alternatives.empty()) {
    re += regex_escape(e.message);
  } else {
    re += "(?:" + regex_escape(e.message);
    for (const auto& a : e.alternatives) re += "|" + regex_escape(a);
    re += ")";
  }
  return whole ? re + "$" : re;
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

Expected<MessageRegex> MessageRegex::compile(std::string_view pattern) {
  auto translated = to_re2(pattern);
  if (!translated.ok())
    return parse_error("invalid regular expression /" + excerpt(pattern) +
                       "/: " + translated.error().message);
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_encoding(RE2::Options::EncodingUTF8);
  opts.set_max_mem(int64_t{8} << 20);  // RE2's default; a pattern over it is refused
  auto re = std::make_shared<const RE2>(*translated, opts);
  if (!re->ok())
    return parse_error("invalid regular expression /" + excerpt(pattern) +
                       "/: " + excerpt(re->error(), 160));
  MessageRegex m;
  m.pattern_ = std::string(pattern);
  m.re_ = std::move(re);
  return m;
}

bool MessageRegex::search(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

}  // namespace gscheck
