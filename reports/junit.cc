// JUnit XML in the shape CI systems (GitLab, Jenkins, GitHub test reporters) read: testsuites >
// testsuite (one per op) > testcase, with failure / error / skipped children.
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>

#include "compare/elements.h"
#include "reports/report.h"

namespace gscheck::reports {
namespace {

// The code point of the well-formed UTF-8 sequence at s[i] (shortest form, no surrogates, at
// most U+10FFFF) and its length; length 0 when the bytes are not one.
std::pair<uint32_t, std::size_t> utf8_decode(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  std::size_t n;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2, cp = c & 0x1fu;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, cp = c & 0x0fu;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, cp = c & 0x07u;
  } else {
    return {0, 0};
  }
  if (i + n > s.size()) return {0, 0};
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return {0, 0};
    cp = (cp << 6) | (cc & 0x3fu);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {0, 0};
  return {cp, n};
}

// XML 1.0's Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
// [#x10000-#x10FFFF].
bool xml_char(uint32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
         (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

// Escape for XML 1.0 text and attributes. Only characters XML 1.0 allows are emitted: bytes of
// anything else (controls, U+FFFE/U+FFFF, surrogates, overlong or invalid UTF-8) become the text
// \xNN, one per byte. A carriage return is a character reference (a parser would turn a literal
// one into a line feed), and so are a line feed and a tab in an attribute.
std::string escape(std::string_view s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const char* ref = nullptr;
    switch (c) {
      case '&':
        ref = "&amp;";
        break;
      case '<':
        ref = "&lt;";
        break;
      case '>':
        ref = "&gt;";
        break;
      case '"':
        ref = "&quot;";
        break;
      case '\'':
        ref = "&apos;";
        break;
      case '\r':
        ref = "&#13;";  // a literal one would be read as a line break
        break;
      case '\n':
      case '\t':
        // In an attribute a parser reads a literal one as a space (attribute normalisation).
        if (attribute) ref = c == '\n' ? "&#10;" : "&#9;";
        break;
      default:
        break;
    }
    if (ref) {
      out += ref;
      ++i;
      continue;
    }
    const auto [cp, n] = utf8_decode(s, i);
    if (n == 0 || !xml_char(cp)) {
      // The whole sequence when it decodes (U+FFFF is EF BF BF: three \xNN), else one byte.
      const std::size_t bad = n == 0 ? 1 : n;
      for (std::size_t k = 0; k < bad; ++k) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i + k]));
        out += buf;
      }
      i += bad;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

std::string xml_escape(std::string_view s) { return escape(s, false); }
std::string xml_attribute(std::string_view s) { return escape(s, true); }

namespace {

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", ms / 1000.0);
  return buf;
}

// The body of a failure: each check, its first mismatches and the repro line.
std::string failure_text(const CaseResult& r) {
  std::string s = "outcome: " + r.outcome + "\n";
  for (const auto& c : r.checks) {
    s += "against " + c.against + ": " + (c.result.pass ? "pass" : "FAIL") + ": " +
         c.result.summary + "\n";
    for (const auto& m : c.result.mismatches)
      s += "  at " + compare::format_index(m.index) + ": expected " + m.expected + ", got " +
           m.got + (m.triage.empty() ? "" : "\n    " + m.triage) + "\n";
  }
  if (r.runs > 1)
    s += "runs: " + std::to_string(r.runs) + ", " + std::to_string(r.differing_runs) +
         " differing bitwise from the first\n";
  if (!r.file.empty()) s += "file: " + r.file + "\n";
  s += "repro: " + r.repro + "\n";
  return s;
}

}  // namespace

std::string suite_name(const CaseResult& c) {
  return c.op ? std::string(op_name(*c.op)) : std::string("unparsed");
}

void JunitSuite::add(const CaseResult& c, bool strict) {
  ++tests;
  failures += c.verdict == Verdict::kFailed || c.verdict == Verdict::kNondeterministic ||
              c.verdict == Verdict::kDeclined || c.verdict == Verdict::kUnsafe ||
              (strict && c.verdict == Verdict::kXpass);
  errors += c.verdict == Verdict::kMistrusted;
  skipped += c.verdict == Verdict::kUnimplemented || c.verdict == Verdict::kSkipped ||
             c.verdict == Verdict::kXfail;
  ms += c.elapsed_ms;
}

std::string junit_testcase(const CaseResult& c, const std::string& backend, bool strict) {
  const std::string op = xml_attribute(suite_name(c));
  const std::string b = xml_attribute(backend);
  std::string x = "    <testcase classname=\"gscheck." + b + "." + op + "\" name=\"" +
                  xml_attribute(c.name) + "\"" +
                  (c.file.empty() ? "" : " file=\"" + xml_attribute(c.file) + "\"") + " time=\"" +
                  seconds(c.elapsed_ms) + "\"";
  const std::string message = xml_attribute(c.reason);
  switch (c.verdict) {
    case Verdict::kPassed:
      return x + "/>\n";
    case Verdict::kFailed:
    case Verdict::kNondeterministic:
    case Verdict::kDeclined:
    case Verdict::kUnsafe:  // described by a known failure or not: a failure
      x += ">\n      <failure message=\"" + message + "\" type=\"" +
           std::string(verdict_name(c.verdict)) + "\">" + xml_escape(failure_text(c)) +
           "</failure>\n";
      break;
    case Verdict::kMistrusted:
      x += ">\n      <error message=\"" + message + "\" type=\"MISTRUSTED\">" +
           xml_escape(failure_text(c)) + "</error>\n";
      break;
    case Verdict::kUnimplemented:
    case Verdict::kSkipped:
      x += ">\n      <skipped message=\"" + std::string(verdict_name(c.verdict)) + ": " + message +
           "\"/>\n";
      break;
    case Verdict::kXfail:  // a declared failure: JUnit's "skipped" keeps CI green
      x += ">\n      <skipped message=\"XFAIL: " +
           xml_attribute(c.known ? c.known->reason + " (" + c.known->link + ")" : c.reason) +
           "\"/>\n      <system-out>" + xml_escape(failure_text(c)) + "</system-out>\n";
      break;
    case Verdict::kXpass: {
      const std::string why = "XPASS: known to fail (" +
                              (c.known ? c.known->reason + ", " + c.known->link : std::string()) +
                              ") but passed";
      if (strict) {
        x += ">\n      <failure message=\"" + xml_attribute(why) + "\" type=\"XPASS\">" +
             xml_escape(why) + "</failure>\n";
      } else {
        x += ">\n      <system-out>" + xml_escape(why) + "</system-out>\n";
      }
      break;
    }
  }
  return x + "    </testcase>\n";
}

std::string junit_head(const RunInfo& run, const std::map<std::string, JunitSuite>& suites) {
  JunitSuite all;
  for (const auto& [name, s] : suites) {
    all.tests += s.tests;
    all.failures += s.failures;
    all.errors += s.errors;
    all.skipped += s.skipped;
  }
  if (!run.interrupted.empty()) ++all.tests, ++all.errors;  // the "run" testcase below
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gscheck " +
         xml_attribute(run.command) + " " + xml_attribute(run.backend.name) + "\" tests=\"" +
         std::to_string(all.tests) + "\" failures=\"" + std::to_string(all.failures) +
         "\" errors=\"" + std::to_string(all.errors) + "\" skipped=\"" +
         std::to_string(all.skipped) + "\" time=\"" + seconds(run.elapsed_s * 1000) + "\">\n";
}

std::string junit_suite_open(const RunInfo& run, const std::string& name, const JunitSuite& s) {
  return "  <testsuite name=\"" + xml_attribute(run.backend.name) + "." + xml_attribute(name) +
         "\" tests=\"" + std::to_string(s.tests) + "\" failures=\"" + std::to_string(s.failures) +
         "\" errors=\"" + std::to_string(s.errors) + "\" skipped=\"" + std::to_string(s.skipped) +
         "\" time=\"" + seconds(s.ms) + "\" timestamp=\"" + xml_attribute(run.started_at) + "\">\n";
}

std::string junit_tail(const RunInfo& run) {
  std::string x;
  if (!run.interrupted.empty()) {
    // An unfinished run fails in CI: one error testcase says why and what the report holds.
    const std::string b = xml_attribute(run.backend.name);
    const std::string why = "interrupted: " + run.interrupted;
    x += "  <testsuite name=\"" + b + ".run\" tests=\"1\" failures=\"0\" errors=\"1\" " +
         "skipped=\"0\" time=\"0.000000\" timestamp=\"" + xml_attribute(run.started_at) + "\">\n" +
         "    <testcase classname=\"gscheck." + b +
         ".run\" name=\"run finished\" time=\"0.000000\">\n" + "      <error message=\"" +
         xml_attribute(why) + "\" type=\"INTERRUPTED\">" + xml_escape(why) +
         "; the report holds the cases that ran before</error>\n    </testcase>\n  </testsuite>\n";
  }
  return x + "</testsuites>\n";
}

std::string junit_xml(const Report& r) {
  std::map<std::string, JunitSuite> suites;
  std::map<std::string, std::string> bodies;
  for (const auto& c : r.cases) {
    const std::string name = suite_name(c);
    suites[name].add(c, r.run.strict);
    bodies[name] += junit_testcase(c, r.run.backend.name, r.run.strict);
  }
  std::string x = junit_head(r.run, suites);
  for (const auto& [name, s] : suites)
    x += junit_suite_open(r.run, name, s) + bodies[name] + "  </testsuite>\n";
  return x + junit_tail(r.run);
}

}  // namespace gscheck::reports
