#include "reports/bench_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace gscheck::reports {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

namespace {

using nlohmann::json;

// U of `b` over `a`: pairs where b's value is the larger, ties counted half.
double u_greater(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a)
    for (double y : b) u += y > x ? 1.0 : y == x ? 0.5 : 0.0;
  return u;
}

// C(n, k) as a double (only compared against a bound).
double choose(std::size_t n, std::size_t k) {
  double c = 1;
  for (std::size_t i = 1; i <= k; ++i)
    c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return c;
}

constexpr double kMaxSplits = 200000;

// One backend's result on one problem, as the report has it.
struct Timed {
  std::string verdict;
  std::vector<double> samples;
  double median = 0, rmad = 0;
  bool timed = false;
};

Expected<std::map<std::pair<std::string, std::string>, Timed>> results_of(const json& report,
                                                                          const char* which) {
  const std::string where = std::string(which) + " report";
  if (!report.contains("problems") || !report["problems"].is_array())
    return parse_error(where + ": no \"problems\" array");
  std::map<std::pair<std::string, std::string>, Timed> out;
  for (const json& p : report["problems"]) {
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("results") ||
        !p["results"].is_array())
      return parse_error(where + ": a problem without a \"name\" string and a \"results\" array");
    const std::string name = p["name"];
    for (const json& r : p["results"]) {
      if (!r.is_object() || !r.contains("backend") || !r["backend"].is_string() ||
          !r.contains("verdict") || !r["verdict"].is_string())
        return parse_error(where + ": problem '" + name +
                           "' has a result without \"backend\" and \"verdict\" strings");
      Timed t;
      t.verdict = r["verdict"];
      if (t.verdict == "PASSED" && r.contains("median_s") && r["median_s"].is_number() &&
          r.contains("samples_s") && r["samples_s"].is_array()) {
        for (const json& s : r["samples_s"]) {
          if (!s.is_number())
            return parse_error(where + ": problem '" + name + "': samples_s holds a non-number");
          t.samples.push_back(s.get<double>());
        }
        t.median = r["median_s"].get<double>();
        if (r.contains("rel_mad") && r["rel_mad"].is_number()) t.rmad = r["rel_mad"].get<double>();
        t.timed = !t.samples.empty() && t.median > 0;
      }
      const auto key = std::make_pair(name, r["backend"].get<std::string>());
      if (!out.emplace(key, std::move(t)).second)
        return parse_error(where + ": problem '" + name + "' lists backend '" + key.second +
                           "' twice");
    }
  }
  return out;
}

std::string micros(double s) { return fixed(s * 1e6, 1) + " us"; }

}  // namespace

double mann_whitney_p_greater(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size(), m = b.size(), total = n + m;
  if (n == 0 || m == 0) return 1;
  const double observed = u_greater(a, b);
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  if (choose(total, m) <= kMaxSplits) {
    // Every way of calling m of the pooled values "b": the share with a U at least as large.
    std::vector<char> in_b(total, 0);
    std::fill(in_b.begin(), in_b.begin() + static_cast<std::ptrdiff_t>(m), 1);
    std::vector<double> x, y;
    double splits = 0, as_large = 0;
    do {
      x.clear();
      y.clear();
      for (std::size_t i = 0; i < total; ++i) (in_b[i] ? y : x).push_back(pooled[i]);
      splits += 1;
      if (u_greater(x, y) >= observed - 1e-9) as_large += 1;
    } while (std::prev_permutation(in_b.begin(), in_b.end()));
    return as_large / splits;
  }
  // Normal approximation: tie-corrected variance, continuity correction.
  std::sort(pooled.begin(), pooled.end());
  double ties = 0;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j < total && pooled[j] == pooled[i]) ++j;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double nn = static_cast<double>(n), mm = static_cast<double>(m);
  const double N = nn + mm;
  const double var = nn * mm / 12.0 * ((N + 1) - ties / (N * (N - 1)));
  if (var <= 0) return 1;
  const double z = (observed - nn * mm / 2 - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

bool is_bench_report(const json& j) { return j.is_object() && j.contains("gscheck_bench_report"); }

namespace {
// Reads top-level keys until one tells the kind of report, then stops.
struct KeySniffer : nlohmann::json_sax<json> {
  int depth = 0;
  bool bench = false, decided = false;
  bool key(string_t& k) override {
    if (depth != 1) return true;
    if (k == "gscheck_bench_report") bench = decided = true;
    if (k == "cases" || k == "totals") decided = true;  // a run report's
    return !decided;
  }
  bool start_object(std::size_t) override { return ++depth, true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return ++depth, true; }
  bool end_array() override { return --depth, true; }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};
}  // namespace

Expected<bool> file_is_bench_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return parse_error("cannot read " + path);
  KeySniffer sniffer;
  json::sax_parse(in, &sniffer, json::input_format_t::json, /*strict=*/false);
  return sniffer.bench;
}

bool BenchDiff::regression() const {
  return std::any_of(changes.begin(), changes.end(),
                     [](const BenchChange& c) { return c.regression(); });
}

Expected<BenchDiff> diff_bench_reports(const json& old_report, const json& new_report,
                                       const BenchDiffOptions& options) {
  for (const auto& [r, which] : {std::pair{&old_report, "old"}, std::pair{&new_report, "new"}})
    if (!is_bench_report(*r) || (*r)["gscheck_bench_report"] != 1)
      return parse_error(std::string(which) +
                         " report is not a gscheck bench report (\"gscheck_bench_report\": 1)");
  auto old_results = results_of(old_report, "old");
  if (!old_results.ok()) return old_results.error();
  auto new_results = results_of(new_report, "new");
  if (!new_results.ok()) return new_results.error();

  BenchDiff d;
  d.options = options;
  const auto field = [](const json& r, const char* a, const char* b) {
    return r.contains(a) && r[a].contains(b) ? r[a][b].dump() : std::string("null");
  };
  for (const auto& [a, b] : {std::pair{"machine", "cpu"}, std::pair{"machine", "cpus"}})
    if (field(old_report, a, b) != field(new_report, a, b))
      d.warnings.push_back(std::string("the runs' ") + a + "." + b + " differ (" +
                           field(old_report, a, b) + " and " + field(new_report, a, b) +
                           "): their times are not comparable");
  const auto cold = [](const json& r) {
    const json* s = r.contains("settings") && r["settings"].is_object() ? &r["settings"] : nullptr;
    return s && s->contains("cold_flush_bytes") && (*s)["cold_flush_bytes"].is_number() &&
           (*s)["cold_flush_bytes"].get<double>() > 0;
  };
  if (cold(old_report) != cold(new_report))
    d.warnings.push_back(std::string("the ") + (cold(old_report) ? "old" : "new") +
                         " run had cold caches (--cold), the other warm: their times are not "
                         "comparable");
  for (const char* s : {"sets", "min_time_s", "repetitions"})
    if (field(old_report, "settings", s) != field(new_report, "settings", s))
      d.warnings.push_back(std::string("the runs' settings.") + s + " differ (" +
                           field(old_report, "settings", s) + " and " +
                           field(new_report, "settings", s) + ")");
  if (old_report.value("seed", json()) != new_report.value("seed", json()))
    d.warnings.push_back("the runs' seeds differ: the inputs are not the same");

  bool too_few = false;
  for (const auto& [key, o] : *old_results) {
    auto it = new_results->find(key);
    BenchChange c;
    c.problem = key.first;
    c.backend = key.second;
    c.old_verdict = o.verdict;
    if (it == new_results->end()) {
      c.kind = "removed";
      d.changes.push_back(std::move(c));
      continue;
    }
    const Timed& n = it->second;
    c.new_verdict = n.verdict;
    if (o.timed && n.timed) {
      c.old_median_s = o.median;
      c.new_median_s = n.median;
      c.ratio = n.median / o.median;
      // The smallest p a test of these sizes can give: 1 / C(n+m, m).
      if (1.0 / choose(o.samples.size() + n.samples.size(), n.samples.size()) >= options.alpha)
        too_few = true;
      const double bound = std::max(options.threshold, 3 * std::max(o.rmad, n.rmad));
      const double p_slower = mann_whitney_p_greater(o.samples, n.samples);
      const double p_faster = mann_whitney_p_greater(n.samples, o.samples);
      if (c.ratio > 1 + bound && p_slower < options.alpha) {
        c.kind = "slower";
        c.p = p_slower;
      } else if (c.ratio < 1 / (1 + bound) && p_faster < options.alpha) {
        c.kind = "faster";
        c.p = p_faster;
      } else if ((c.ratio > 1 + options.threshold && p_slower < options.alpha) ||
                 (c.ratio < 1 / (1 + options.threshold) && p_faster < options.alpha)) {
        // Past the threshold and the test, but within the spread of a run this noisy: say so
        // rather than flag it or call it unchanged.
        c.kind = "unclear";
        c.p = std::min(p_slower, p_faster);
        c.bound = bound;
      } else {
        ++d.unchanged;
        continue;
      }
      d.changes.push_back(std::move(c));
      continue;
    }
    if (o.verdict == n.verdict) {
      ++d.unchanged;
      continue;
    }
    if (n.verdict == "FAILED")
      c.kind = "failed";
    else if (o.verdict == "PASSED" && (n.verdict == "UNIMPLEMENTED" || n.verdict == "SKIPPED"))
      c.kind = "lost";
    else if (o.verdict == "FAILED" && n.verdict == "PASSED")
      c.kind = "fixed";
    else
      c.kind = "verdict";
    d.changes.push_back(std::move(c));
  }
  for (const auto& [key, n] : *new_results) {
    if (old_results->count(key)) continue;
    BenchChange c;
    c.problem = key.first;
    c.backend = key.second;
    c.new_verdict = n.verdict;
    c.kind = n.verdict == "FAILED" ? "failed" : "added";  // a new problem that fails, fails
    d.changes.push_back(std::move(c));
  }
  if (too_few)
    d.warnings.push_back("too few repetitions for the U test to reach p < " +
                         fixed(options.alpha, 3) +
                         ": no change in speed can be flagged (use --repetitions 5 or more)");
  std::stable_sort(d.changes.begin(), d.changes.end(),
                   [](const auto& a, const auto& b) { return a.regression() > b.regression(); });
  return d;
}

std::string bench_diff_table(const BenchDiff& d) {
  std::ostringstream out;
  int regressions = 0;
  for (const auto& c : d.changes) regressions += c.regression();
  out << "gscheck report diff (bench): " << d.unchanged << " unchanged, " << d.changes.size()
      << " changed, " << regressions << " regression" << (regressions == 1 ? "" : "s")
      << " (slower: median beyond " << fixed(100 * d.options.threshold, 0)
      << "% or 3 rMADs, and Mann-Whitney U p < " << fixed(d.options.alpha, 3) << ")\n";
  for (const auto& w : d.warnings) out << "warning: " << w << "\n";
  for (const auto& c : d.changes) {
    out << "  " << c.kind << "  " << c.problem << "  " << c.backend;
    if (c.timed()) {
      out << "  " << micros(c.old_median_s) << " -> " << micros(c.new_median_s) << " (x"
          << fixed(c.ratio, 3) << ", p=" << fixed(c.p, 4) << ")";
      if (c.kind == "unclear")
        out << ": within 3 rMADs of a run this spread (" << fixed(100 * c.bound, 0)
            << "%): bench again";
    } else {
      out << "  " << (c.old_verdict.empty() ? "-" : c.old_verdict) << " -> "
          << (c.new_verdict.empty() ? "-" : c.new_verdict);
    }
    out << "\n";
  }
  return out.str();
}

json bench_diff_to_json(const BenchDiff& d) {
  json changes = json::array();
  for (const auto& c : d.changes) {
    json j{{"problem", c.problem},
           {"backend", c.backend},
           {"kind", c.kind},
           {"regression", c.regression()}};
    if (!c.old_verdict.empty()) j["old_verdict"] = c.old_verdict;
    if (!c.new_verdict.empty()) j["new_verdict"] = c.new_verdict;
    if (c.kind == "unclear") j["noise_bound"] = c.bound;
    if (c.timed()) {
      j["old_median_s"] = c.old_median_s;
      j["new_median_s"] = c.new_median_s;
      j["ratio"] = c.ratio;
      j["p"] = c.p;
    }
    changes.push_back(std::move(j));
  }
  return {{"gscheck_bench_diff", 1}, {"alpha", d.options.alpha}, {"threshold", d.options.threshold},
          {"warnings", d.warnings},  {"unchanged", d.unchanged}, {"regression", d.regression()},
          {"changes", changes}};
}

}  // namespace gscheck::reports
