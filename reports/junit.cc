// JUnit XML in the shape CI systems (GitLab, Jenkins, GitHub test reporters) read: testsuites >
// testsuite (one per op) > testcase, with failure / error / skipped children.
#include <cstdio>
#include <map>

#include "compare/elements.h"
#include "reports/report.h"

namespace gscheck::reports {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0 && c >= 0xc2)
    n = 2;
  else if ((c & 0xf0) == 0xe0)
    n = 3;
  else if ((c & 0xf8) == 0xf0 && c <= 0xf4)
    n = 4;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return n;
}

// Escape for XML 1.0 text and attributes; bytes XML cannot carry (controls, invalid UTF-8)
// become the text \xNN.
std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      case '\'':
        out += "&apos;";
        ++i;
        continue;
      default:
        break;
    }
    const std::size_t n = utf8_length(s, i);
    if (n == 0 || (c < 0x20 && c != '\n' && c != '\t')) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

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
           m.got + "\n";
  }
  if (r.runs > 1)
    s += "runs: " + std::to_string(r.runs) + ", " + std::to_string(r.differing_runs) +
         " differing bitwise from the first\n";
  if (!r.file.empty()) s += "file: " + r.file + "\n";
  s += "repro: " + r.repro + "\n";
  return s;
}

}  // namespace

std::string junit_xml(const Report& r) {
  std::map<std::string, std::vector<const CaseResult*>> suites;
  for (const auto& c : r.cases)
    suites[c.op ? std::string(op_name(*c.op)) : std::string("unparsed")].push_back(&c);
  const Totals t = totals(r);
  auto count = [&](Verdict v) -> int64_t {
    auto it = t.all.find(v);
    return it == t.all.end() ? 0 : it->second;
  };
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const std::string backend = xml_escape(r.run.backend.name);
  x += "<testsuites name=\"gscheck " + xml_escape(r.run.command) + " " + backend + "\" tests=\"" +
       std::to_string(r.cases.size()) + "\" failures=\"" +
       std::to_string(count(Verdict::kFailed) + count(Verdict::kNondeterministic) +
                      (r.run.strict ? count(Verdict::kXpass) : 0)) +
       "\" errors=\"" + std::to_string(count(Verdict::kMistrusted)) + "\" skipped=\"" +
       std::to_string(count(Verdict::kUnimplemented) + count(Verdict::kSkipped) +
                      count(Verdict::kXfail)) +
       "\" time=\"" + seconds(r.run.elapsed_s * 1000) + "\">\n";
  for (const auto& [op, cases] : suites) {
    int64_t failures = 0, errors = 0, skipped = 0;
    double ms = 0;
    for (const auto* c : cases) {
      failures += c->verdict == Verdict::kFailed || c->verdict == Verdict::kNondeterministic ||
                  (r.run.strict && c->verdict == Verdict::kXpass);
      errors += c->verdict == Verdict::kMistrusted;
      skipped += c->verdict == Verdict::kUnimplemented || c->verdict == Verdict::kSkipped ||
                 c->verdict == Verdict::kXfail;
      ms += c->elapsed_ms;
    }
    x += "  <testsuite name=\"" + backend + "." + xml_escape(op) + "\" tests=\"" +
         std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
         "\" time=\"" + seconds(ms) + "\" timestamp=\"" + xml_escape(r.run.started_at) + "\">\n";
    for (const auto* c : cases) {
      x += "    <testcase classname=\"gscheck." + backend + "." + xml_escape(op) + "\" name=\"" +
           xml_escape(c->name) + "\"" +
           (c->file.empty() ? "" : " file=\"" + xml_escape(c->file) + "\"") + " time=\"" +
           seconds(c->elapsed_ms) + "\"";
      const std::string message = xml_escape(c->reason);
      switch (c->verdict) {
        case Verdict::kPassed:
          x += "/>\n";
          continue;
        case Verdict::kFailed:
        case Verdict::kNondeterministic:
          x += ">\n      <failure message=\"" + message + "\" type=\"" +
               std::string(verdict_name(c->verdict)) + "\">" + xml_escape(failure_text(*c)) +
               "</failure>\n";
          break;
        case Verdict::kMistrusted:
          x += ">\n      <error message=\"" + message + "\" type=\"MISTRUSTED\">" +
               xml_escape(failure_text(*c)) + "</error>\n";
          break;
        case Verdict::kUnimplemented:
        case Verdict::kSkipped:
          x += ">\n      <skipped message=\"" + std::string(verdict_name(c->verdict)) + ": " +
               message + "\"/>\n";
          break;
        case Verdict::kXfail:  // a declared failure: JUnit's "skipped" keeps CI green
          x += ">\n      <skipped message=\"XFAIL: " +
               xml_escape(c->known ? c->known->reason + " (" + c->known->link + ")" : c->reason) +
               "\"/>\n      <system-out>" + xml_escape(failure_text(*c)) + "</system-out>\n";
          break;
        case Verdict::kXpass: {
          const std::string why =
              "XPASS: known to fail (" +
              (c->known ? c->known->reason + ", " + c->known->link : std::string()) +
              ") but passed";
          if (r.run.strict) {
            x += ">\n      <failure message=\"" + xml_escape(why) + "\" type=\"XPASS\">" +
                 xml_escape(why) + "</failure>\n";
          } else {
            x += ">\n      <system-out>" + xml_escape(why) + "</system-out>\n";
          }
          break;
        }
      }
      x += "    </testcase>\n";
    }
    x += "  </testsuite>\n";
  }
  x += "</testsuites>\n";
  return x;
}

}  // namespace gscheck::reports
