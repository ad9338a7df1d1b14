#include "reports/known_failures.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gscheck::reports {
namespace {

using nlohmann::json;

Error bad(const std::string& path, const std::string& where, const std::string& what) {
  return Error{ErrorClass::kParse, path + ": " + where + ": " + what};
}

bool selects(const KnownFailure& e, const CaseResult& r) {
  if (!glob_match(e.case_pattern, r.name) &&
      (r.file.empty() || !glob_match(e.case_pattern, r.file)))
    return false;
  if (!e.ops.empty() && (!r.op || std::find(e.ops.begin(), e.ops.end(), *r.op) == e.ops.end()))
    return false;
  if (!e.dtypes.empty()) {
    const std::optional<DType> dt = data_dtype(r);
    if (!dt || std::find(e.dtypes.begin(), e.dtypes.end(), *dt) == e.dtypes.end()) return false;
  }
  return true;
}

bool fails_as_declared(const KnownFailure& e, const CaseResult& r) {
  if (r.verdict != e.verdict) return false;
  if (!e.outcome.empty() && outcome_class(r) != e.outcome) return false;
  if (e.flushed_subnormals && !r.flushed_subnormals) return false;
  if (e.message_re) {
    std::string text = r.outcome + "\n" + r.reason;
    for (const Check& ch : r.checks)
      for (const auto& m : ch.result.mismatches)
        text += "\nexpected " + m.expected + ", got " + m.got;
    if (!std::regex_search(text, *e.message_re)) return false;
  }
  return true;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point per star: linear enough for case names.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string outcome_class(const CaseResult& r) {
  if (r.outcome.rfind("error ", 0) == 0) {
    const std::size_t colon = r.outcome.find(':');
    return r.outcome.substr(6, colon == std::string::npos ? std::string::npos : colon - 6);
  }
  if (r.outcome == "not run" || r.outcome.empty()) return "not run";
  return "output";
}

Expected<KnownFailures> known_failures_from_json(const json& j, const std::string& path) {
  if (!j.is_object()) return bad(path, "top level", "expected an object");
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (k != "gscheck_known_failures" && k != "description" && k != "known")
      return bad(path, k, "unknown field (expected gscheck_known_failures, description, known)");
  }
  if (!j.contains("gscheck_known_failures") || j["gscheck_known_failures"] != 1)
    return bad(path, "gscheck_known_failures", "missing or not 1 (format version 1)");
  if (!j.contains("known") || !j["known"].is_array())
    return bad(path, "known", "expected an array of entries");
  KnownFailures out;
  out.path = path;
  static constexpr const char* kFields[] = {"case",    "ops",     "dtypes",
                                            "verdict", "outcome", "message",
                                            "reason",  "link",    "flushed_subnormals"};
  const json& list = j["known"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    const std::string where = "known[" + std::to_string(i) + "]";
    if (!e.is_object()) return bad(path, where, "expected an object");
    for (const auto& item : e.items()) {
      const std::string& k = item.key();
      if (std::none_of(std::begin(kFields), std::end(kFields),
                       [&](const char* f) { return k == f; }))
        return bad(path, where + "." + k,
                   "unknown field (expected case, ops, dtypes, verdict, outcome, message, "
                   "flushed_subnormals, reason, link)");
    }
    auto text = [&](const char* name, bool required) -> Expected<std::optional<std::string>> {
      if (!e.contains(name)) {
        if (required) return bad(path, where + "." + name, "missing");
        return std::optional<std::string>{};
      }
      if (!e[name].is_string() || (required && e[name].get_ref<const std::string&>().empty()))
        return bad(path, where + "." + name, "expected a non-empty string");
      return std::optional<std::string>{e[name].get<std::string>()};
    };
    KnownFailure k;
    for (const auto& [name, required, slot] :
         {std::tuple<const char*, bool, std::string*>{"reason", true, &k.reason},
          {"link", true, &k.link},
          {"case", false, &k.case_pattern},
          {"outcome", false, &k.outcome}}) {
      auto v = text(name, required);
      if (!v.ok()) return v.error();
      if (*v) *slot = **v;
    }
    if (!k.outcome.empty() && k.outcome != "output" && !error_class_from_name(k.outcome))
      return bad(path, where + ".outcome",
                 "\"" + k.outcome + "\" is neither \"output\" nor an error class name");
    auto verdict = text("verdict", true);
    if (!verdict.ok()) return verdict.error();
    const auto v = verdict_from_name(**verdict);
    if (!v ||
        (*v != Verdict::kFailed && *v != Verdict::kNondeterministic && *v != Verdict::kMistrusted))
      return bad(path, where + ".verdict",
                 "\"" + **verdict + "\" is not FAILED, NONDETERMINISTIC or MISTRUSTED");
    k.verdict = *v;
    auto message = text("message", false);
    if (!message.ok()) return message.error();
    if (*message) {
      k.message = **message;
      try {
        k.message_re.emplace(*k.message, std::regex::ECMAScript);
      } catch (const std::regex_error& ex) {
        return bad(path, where + ".message", "invalid regex /" + *k.message + "/: " + ex.what());
      }
    }
    if (e.contains("flushed_subnormals")) {
      if (!e["flushed_subnormals"].is_boolean())
        return bad(path, where + ".flushed_subnormals", "expected true or false");
      k.flushed_subnormals = e["flushed_subnormals"].get<bool>();
    }
    for (const auto& [name, is_op] :
         {std::pair<const char*, bool>{"ops", true}, {"dtypes", false}}) {
      if (!e.contains(name)) continue;
      if (!e[name].is_array() || e[name].empty())
        return bad(path, where + "." + name, "expected a non-empty array of names");
      for (const json& n : e[name]) {
        const std::string s = n.is_string() ? n.get<std::string>() : n.dump();
        if (is_op) {
          const auto op = n.is_string() ? op_from_name(s) : std::nullopt;
          if (!op) return bad(path, where + ".ops", "unknown op " + s);
          k.ops.push_back(*op);
        } else {
          const auto dt = n.is_string() ? dtype_from_name(s) : std::nullopt;
          if (!dt) return bad(path, where + ".dtypes", "unknown dtype " + s);
          k.dtypes.push_back(*dt);
        }
      }
    }
    out.entries.push_back(std::move(k));
  }
  return out;
}

Expected<KnownFailures> load_known_failures(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorClass::kParse, path + ": cannot open the known-failures file"};
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{ErrorClass::kParse, path + ": not valid JSON"};
  return known_failures_from_json(j, path);
}

void apply_known_failures(const KnownFailures& known, CaseResult& r) {
  const bool failed = is_failure(r.verdict);
  if (!failed && r.verdict != Verdict::kPassed) return;
  for (const KnownFailure& e : known.entries) {
    if (!selects(e, r)) continue;
    // An entry recognising failures by what they are (a message, a flush) cannot be XPASS.
    if (failed ? !fails_as_declared(e, r) : e.message.has_value() || e.flushed_subnormals) continue;
    r.known = CaseResult::Known{r.verdict, e.case_pattern, e.reason, e.link};
    if (failed) {
      r.verdict = Verdict::kXfail;
      r.reason = "known failure (" + e.reason + ", " + e.link + "): " + r.reason;
    } else {
      r.verdict = Verdict::kXpass;
      r.reason =
          "declared a known failure (" + e.reason + ", " + e.link + ") but passed: " + r.reason;
    }
    return;
  }
}

}  // namespace gscheck::reports
