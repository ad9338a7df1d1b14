// Reports read back: the field readers (each names the field it could not read), the SAX handler
// that hands out one case at a time, and the file and text entry points.
#include "reports/report_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <streambuf>
#include <type_traits>
#include <vector>

#include "core/case_json.h"
#include "core/message_regex.h"

namespace gscheck::reports {

using nlohmann::json;

namespace {

// nlohmann converts any number to any arithmetic type with a plain cast: 1e30 or 2^64-1 as
// int64_t is undefined behaviour. Integers must be integers that fit T.
template <class T>
bool fits(const json& v) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  const int64_t x = v.get<int64_t>();
  if constexpr (std::is_unsigned_v<T>) {
    return x >= 0;
  } else {
    return x >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           x <= static_cast<int64_t>(std::numeric_limits<T>::max());
  }
}

// Reading a report back: each accessor names the field it could not read.
struct Reader {
  std::string where;

  Error bad(const std::string& what) const { return parse_error(where + ": " + what); }

  template <class T>
  Expected<T> get(const json& j, const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) return bad(std::string("missing \"") + key + "\"");
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!fits<T>(*it)) return bad(std::string("\"") + key + "\" is not an integer in range");
    }
    try {
      return it->template get<T>();
    } catch (const json::exception&) {
      return bad(std::string("\"") + key + "\" has the wrong type");
    }
  }
  // A list of integers, each of which must fit (get<std::vector<int64_t>> would cast each).
  Expected<std::vector<int64_t>> ints(const json& j, const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) return bad(std::string("missing \"") + key + "\"");
    if (!it->is_array()) return bad(std::string("\"") + key + "\" is not an array");
    std::vector<int64_t> out;
    out.reserve(it->size());
    for (const json& v : *it) {
      if (!fits<int64_t>(v))
        return bad(std::string("\"") + key + "\" holds a value that is not an integer in range");
      out.push_back(v.get<int64_t>());
    }
    return out;
  }
  template <class T, class Parse>
  Expected<T> named(const json& j, const char* key, Parse parse) const {
    auto text = get<std::string>(j, key);
    if (!text.ok()) return text.error();
    auto v = parse(*text);
    if (!v) return bad(std::string("\"") + key + "\": unknown value \"" + *text + "\"");
    return *v;
  }
  template <class T, class Parse>
  Expected<std::vector<T>> named_list(const json& j, const char* key, Parse parse) const {
    auto texts = get<std::vector<std::string>>(j, key);
    if (!texts.ok()) return texts.error();
    std::vector<T> out;
    for (const auto& t : *texts) {
      auto v = parse(t);
      if (!v) return bad(std::string("\"") + key + "\": unknown value \"" + t + "\"");
      out.push_back(*v);
    }
    return out;
  }
};

#define GSCHECK_ASSIGN(lhs, expr)    \
  do {                               \
    auto v_ = (expr);                \
    if (!v_.ok()) return v_.error(); \
    lhs = std::move(v_).value();     \
  } while (0)

Expected<std::vector<InputInfo>> inputs_from_json(const json& j, const std::string& where) {
  const Reader rd{where};
  auto inputs = j.find("inputs");
  if (inputs == j.end() || !inputs->is_object()) return rd.bad("\"inputs\" is not an object");
  std::vector<InputInfo> out;
  for (const auto& [name, in] : inputs->items()) {
    const Reader ird{where + ".inputs." + name};
    InputInfo info;
    info.name = name;
    GSCHECK_ASSIGN(info.dtype, ird.named<DType>(in, "dtype", dtype_from_name));
    std::vector<int64_t> dims;
    GSCHECK_ASSIGN(dims, ird.ints(in, "shape"));
    info.shape = Shape(std::move(dims));
    out.push_back(std::move(info));
  }
  return out;
}

Expected<CaseResult> case_from_json(const json& j, const std::string& where) {
  const Reader rd{where};
  if (!j.is_object()) return rd.bad("not an object");
  CaseResult r;
  GSCHECK_ASSIGN(r.name, rd.get<std::string>(j, "name"));
  if (j.contains("file") && !j["file"].is_null())
    GSCHECK_ASSIGN(r.file, rd.get<std::string>(j, "file"));
  if (j.contains("op") && !j["op"].is_null())
    GSCHECK_ASSIGN(r.op, rd.named<Op>(j, "op", op_from_name));
  GSCHECK_ASSIGN(r.semantics, rd.named<Semantics>(j, "semantics", semantics_from_name));
  if (j.contains("api")) GSCHECK_ASSIGN(r.api, rd.named<Api>(j, "api", api_from_name));
  GSCHECK_ASSIGN(r.inputs, inputs_from_json(j, where));
  GSCHECK_ASSIGN(r.bad_indices_policy, rd.get<std::string>(j, "bad_indices_policy"));
  GSCHECK_ASSIGN(r.backend, rd.get<std::string>(j, "backend"));
  GSCHECK_ASSIGN(r.verdict, rd.named<Verdict>(j, "verdict", verdict_from_name));
  GSCHECK_ASSIGN(r.outcome, rd.get<std::string>(j, "outcome"));
  GSCHECK_ASSIGN(r.reason, rd.get<std::string>(j, "reason"));
  auto checks = j.find("checks");
  if (checks == j.end() || !checks->is_array()) return rd.bad("\"checks\" is not an array");
  for (std::size_t i = 0; i < checks->size(); ++i) {
    const json& c = (*checks)[i];
    const Reader crd{where + ".checks[" + std::to_string(i) + "]"};
    Check check;
    GSCHECK_ASSIGN(check.against, crd.get<std::string>(c, "against"));
    GSCHECK_ASSIGN(check.result.pass, crd.get<bool>(c, "pass"));
    GSCHECK_ASSIGN(check.result.summary, crd.get<std::string>(c, "summary"));
    GSCHECK_ASSIGN(check.result.mismatch_count, crd.get<int64_t>(c, "mismatch_count"));
    auto ms = c.find("mismatches");
    if (ms == c.end() || !ms->is_array()) return crd.bad("\"mismatches\" is not an array");
    for (const json& m : *ms) {
      compare::Mismatch mm;
      GSCHECK_ASSIGN(mm.index, crd.ints(m, "index"));
      GSCHECK_ASSIGN(mm.expected, crd.get<std::string>(m, "expected"));
      GSCHECK_ASSIGN(mm.got, crd.get<std::string>(m, "got"));
      if (m.contains("triage")) GSCHECK_ASSIGN(mm.triage, crd.get<std::string>(m, "triage"));
      check.result.mismatches.push_back(std::move(mm));
    }
    r.checks.push_back(std::move(check));
  }
  GSCHECK_ASSIGN(r.elapsed_ms, rd.get<double>(j, "elapsed_ms"));
  GSCHECK_ASSIGN(r.repro, rd.get<std::string>(j, "repro"));
  GSCHECK_ASSIGN(r.runs, rd.get<int>(j, "runs"));
  GSCHECK_ASSIGN(r.differing_runs, rd.get<int>(j, "differing_runs"));
  if (auto d = j.find("differences"); d != j.end()) {
    if (!d->is_object()) return rd.bad("\"differences\" is not an object");
    for (const auto& [key, list] :
         {std::pair<const char*, std::vector<CaseResult::Differences>*>{"explained", &r.explained},
          {"unexplained", &r.unexplained}}) {
      auto l = d->find(key);
      if (l == d->end() || !l->is_array())
        return rd.bad("\"differences." + std::string(key) + "\" is not an array");
      for (const json& g : *l) {
        if (!g.is_object() || !g.contains("count") || !g["count"].is_number_integer() ||
            !g.contains("example") || !g["example"].is_string() ||
            (g.contains("entry") && !g["entry"].is_string()))
          return rd.bad("\"differences." + std::string(key) +
                        "\" holds an entry without count and example");
        auto count = rd.get<int64_t>(g, "count");
        if (!count.ok()) return count.error();
        list->push_back({g.value("entry", std::string()), *count, g["example"].get<std::string>()});
      }
    }
  }
  if (auto k = j.find("known_failure"); k != j.end() && !k->is_null()) {
    const Reader krd{where + ".known_failure"};
    CaseResult::Known known;
    GSCHECK_ASSIGN(known.verdict, krd.named<Verdict>(*k, "verdict", verdict_from_name));
    GSCHECK_ASSIGN(known.entry, krd.get<std::string>(*k, "entry"));
    GSCHECK_ASSIGN(known.reason, krd.get<std::string>(*k, "reason"));
    GSCHECK_ASSIGN(known.link, krd.get<std::string>(*k, "link"));
    if (k->contains("values_unchecked"))
      GSCHECK_ASSIGN(known.values_unchecked, krd.get<bool>(*k, "values_unchecked"));
    if (k->contains("follows")) GSCHECK_ASSIGN(known.follows, krd.get<std::string>(*k, "follows"));
    r.known = std::move(known);
  }
  if (auto k = j.find("shrunk"); k != j.end()) {
    const Reader srd{where + ".shrunk"};
    if (!k->is_object()) return srd.bad("not an object");
    CaseResult::Shrunk s;
    GSCHECK_ASSIGN(s.file, srd.get<std::string>(*k, "file"));
    GSCHECK_ASSIGN(s.repro, srd.get<std::string>(*k, "repro"));
    GSCHECK_ASSIGN(s.inputs, inputs_from_json(*k, where + ".shrunk"));
    GSCHECK_ASSIGN(s.reason, srd.get<std::string>(*k, "reason"));
    GSCHECK_ASSIGN(s.tried, srd.get<int64_t>(*k, "tried"));
    GSCHECK_ASSIGN(s.kept, srd.get<int64_t>(*k, "kept"));
    GSCHECK_ASSIGN(s.seconds, srd.get<double>(*k, "seconds"));
    GSCHECK_ASSIGN(s.limited, srd.get<bool>(*k, "limited"));
    r.shrunk = std::move(s);
  }
  return r;
}

// Everything but the cases.
Status run_from_json(const json& j, RunInfo& run) {
  const Reader rd{"report"};
  if (!j.is_object()) return rd.bad("not a JSON object");
  auto version = rd.get<int>(j, "gscheck_report");
  if (!version.ok()) return version.error();
  if (*version != 1) return rd.bad("gscheck_report " + std::to_string(*version) + " is not 1");
  GSCHECK_ASSIGN(run.command, rd.get<std::string>(j, "command"));
  GSCHECK_ASSIGN(run.argv, rd.get<std::vector<std::string>>(j, "argv"));
  GSCHECK_ASSIGN(run.started_at, rd.get<std::string>(j, "started_at"));
  GSCHECK_ASSIGN(run.elapsed_s, rd.get<double>(j, "elapsed_s"));
  if (j.contains("seed") && !j["seed"].is_null())
    GSCHECK_ASSIGN(run.seed, rd.get<uint64_t>(j, "seed"));
  GSCHECK_ASSIGN(run.sweep, rd.get<int64_t>(j, "sweep"));
  // Fields added after the first reports: absent means their default.
  if (j.contains("sweep_size")) GSCHECK_ASSIGN(run.sweep_size, rd.get<int64_t>(j, "sweep_size"));
  if (j.contains("sweep_boundary_fraction"))
    GSCHECK_ASSIGN(run.sweep_boundary_fraction, rd.get<double>(j, "sweep_boundary_fraction"));
  if (j.contains("sweep_large_fraction"))
    GSCHECK_ASSIGN(run.sweep_large_fraction, rd.get<double>(j, "sweep_large_fraction"));
  if (j.contains("shard") && !j["shard"].is_null()) {
    const Reader srd{"report.shard"};
    Shard s;
    GSCHECK_ASSIGN(s.index, srd.get<int64_t>(j["shard"], "index"));
    GSCHECK_ASSIGN(s.count, srd.get<int64_t>(j["shard"], "count"));
    // As many shards as `gscheck run --shard` takes: merging loops over every shard.
    if (s.count < 1 || s.count > kMaxShards || s.index < 1 || s.index > s.count)
      return srd.bad("index " + std::to_string(s.index) + " of " + std::to_string(s.count) +
                     " (shards are 1 <= K <= N <= " + std::to_string(kMaxShards) + ")");
    run.shard = s;
  }
  if (j.contains("time_budget_s") && !j["time_budget_s"].is_null())
    GSCHECK_ASSIGN(run.time_budget_s, rd.get<double>(j, "time_budget_s"));
  if (j.contains("sweep_elapsed_s"))
    GSCHECK_ASSIGN(run.sweep_elapsed_s, rd.get<double>(j, "sweep_elapsed_s"));
  if (j.contains("merged_from"))
    GSCHECK_ASSIGN(run.merged_from, rd.get<std::vector<std::string>>(j, "merged_from"));
  if (j.contains("known_failures") && !j["known_failures"].is_null())
    GSCHECK_ASSIGN(run.known_failures, rd.get<std::string>(j, "known_failures"));
  if (j.contains("sealed") && !j["sealed"].is_null()) {
    const json& sj = j["sealed"];
    if (!sj.is_object()) return rd.bad("\"sealed\" is not an object");
    const Reader srd2{"report.sealed"};
    RunInfo::Sealed sealed;
    GSCHECK_ASSIGN(sealed.case_files, srd2.get<int64_t>(sj, "case_files"));
    GSCHECK_ASSIGN(sealed.case_bytes, srd2.get<int64_t>(sj, "case_bytes"));
    for (auto [name, field] : {std::pair{"case_files_sha256", &sealed.case_files_sha256},
                               std::pair{"known_failures_sha256", &sealed.known_failures_sha256},
                               std::pair{"gscheck_sha256", &sealed.gscheck_sha256},
                               std::pair{"worker_sha256", &sealed.worker_sha256}})
      if (sj.contains(name) && !sj[name].is_null())
        GSCHECK_ASSIGN(*field, srd2.get<std::string>(sj, name));
    run.sealed = std::move(sealed);
  }
  if (j.contains("strict")) GSCHECK_ASSIGN(run.strict, rd.get<bool>(j, "strict"));
  if (j.contains("interrupted") && !j["interrupted"].is_null())
    GSCHECK_ASSIGN(run.interrupted, rd.get<std::string>(j, "interrupted"));
  auto b = j.find("backend");
  if (b == j.end() || !b->is_object()) return rd.bad("\"backend\" is not an object");
  const Reader brd{"report.backend"};
  Capabilities& caps = run.backend;
  GSCHECK_ASSIGN(caps.name, brd.get<std::string>(*b, "name"));
  GSCHECK_ASSIGN(caps.ops, brd.named_list<Op>(*b, "ops", op_from_name));
  GSCHECK_ASSIGN(caps.dtypes, brd.named_list<DType>(*b, "dtypes", dtype_from_name));
  GSCHECK_ASSIGN(caps.index_dtypes, brd.named_list<DType>(*b, "index_dtypes", dtype_from_name));
  GSCHECK_ASSIGN(caps.semantics, brd.named_list<Semantics>(*b, "semantics", semantics_from_name));
  GSCHECK_ASSIGN(caps.deterministic, brd.get<bool>(*b, "deterministic"));
  GSCHECK_ASSIGN(caps.tf_messages, brd.get<bool>(*b, "tf_messages"));
  GSCHECK_ASSIGN(caps.accumulates_half_in_float, brd.get<bool>(*b, "accumulates_half_in_float"));
  if (b->contains("apis"))
    GSCHECK_ASSIGN(caps.apis, brd.named_list<Api>(*b, "apis", api_from_name));
  if (b->contains("tf_bad_index_messages"))
    GSCHECK_ASSIGN(caps.tf_bad_index_messages, brd.get<bool>(*b, "tf_bad_index_messages"));
  if (b->contains("containment") && !(*b)["containment"].is_null())
    GSCHECK_ASSIGN(caps.containment, brd.get<std::string>(*b, "containment"));
  return {};
}

#undef GSCHECK_ASSIGN

}  // namespace

namespace {

constexpr int kMaxDepth = 64;

// A SAX handler building the head's DOM with an empty "cases" array, and one DOM per element of
// the top-level "cases" array, converted and handed to the sink as soon as it closes. Memory is
// charged per DOM (an estimate, as the case parser's): the head and each case have their own
// budget.
class ReportSax : public nlohmann::json_sax<json> {
 public:
  explicit ReportSax(const CaseSink& sink) : sink_(sink) {}

  bool null() override { return add(json(nullptr), 0); }
  bool boolean(bool v) override { return add(json(v), 0); }
  bool number_integer(number_integer_t v) override { return add(json(v), 0); }
  bool number_unsigned(number_unsigned_t v) override { return add(json(v), 0); }
  bool number_float(number_float_t v, const string_t&) override { return add(json(v), 0); }
  bool string(string_t& v) override {
    const auto n = static_cast<int64_t>(v.size());
    return add(json(std::move(v)), 32 + 2 * n);
  }
  bool binary(binary_t&) override { return fail("binary values are not JSON"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool key(string_t& k) override {
    if (!charge(80 + static_cast<int64_t>(k.size()))) return false;
    key_ = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override {
    if (!in_cases_ && head_.size() == 1 && root_.is_object() && key_ == "cases") {
      if (cases_seen_) return fail("the report has two \"cases\" arrays");
      cases_seen_ = in_cases_ = true;
      return open(json::array());  // stays empty in the head
    }
    return open(json::array());
  }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return fail("invalid JSON: " + excerpt(what, 200));
  }

  json& head() { return root_; }
  bool cases_seen() const { return cases_seen_; }
  const std::optional<Error>& error() const { return error_; }

 private:
  // Inside the cases array, between cases: the next value starts a case of its own.
  bool case_level() const { return in_cases_ && head_.size() == 2 && case_.empty(); }
  std::vector<json*>& stack() { return in_cases_ && head_.size() == 2 ? case_ : head_; }

  bool fail(const std::string& why) {
    if (!error_) error_ = gscheck::parse_error(why);
    return false;
  }
  bool charge(int64_t bytes) {
    int64_t& used = in_cases_ ? case_used_ : head_used_;
    used += bytes;
    if (used <= kMaxReportValueBytes) return true;
    if (!error_)
      error_ = Error{ErrorClass::kResourceExhausted,
                     std::string(in_cases_ ? "report.cases[" + std::to_string(index_) + "]"
                                           : "the report's head") +
                         " needs more than " + std::to_string(kMaxReportValueBytes) +
                         " bytes of memory to parse"};
    return false;
  }
  int depth() const { return static_cast<int>(head_.size() + case_.size()); }
  json* place(json&& v) {
    std::vector<json*>& st = stack();
    if (st.empty()) {
      json& root = in_cases_ ? case_root_ : root_;
      root = std::move(v);
      return &root;
    }
    json& top = *st.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }
  bool add(json&& v, int64_t extra) {
    const bool whole_case = case_level();
    if (whole_case) case_used_ = 0;
    if (!charge(32 + extra)) return false;
    place(std::move(v));
    return whole_case ? emit() : true;
  }
  bool open(json&& container) {
    if (depth() >= kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    if (case_level()) case_used_ = 0;
    if (!charge(64)) return false;
    // Pointers to open containers stay valid: nothing is added to a parent while a child is open.
    json* p = place(std::move(container));
    stack().push_back(p);
    return true;
  }
  bool close() {
    if (in_cases_ && head_.size() == 2 && !case_.empty()) {
      case_.pop_back();
      return case_.empty() ? emit() : true;
    }
    if (in_cases_ && head_.size() == 2) in_cases_ = false;  // the cases array itself
    head_.pop_back();
    return true;
  }
  bool emit() {
    auto c = case_result_from_json(case_root_, "report.cases[" + std::to_string(index_) + "]");
    case_root_ = json();
    ++index_;
    if (!c.ok()) {
      if (!error_) error_ = c.error();
      return false;
    }
    Status st = sink_(std::move(*c));
    if (!st.ok()) {
      if (!error_) error_ = st.error();
      return false;
    }
    return true;
  }

  const CaseSink& sink_;
  json root_, case_root_;
  std::vector<json*> head_, case_;
  std::string key_;
  bool in_cases_ = false, cases_seen_ = false;
  int64_t head_used_ = 0, case_used_ = 0, index_ = 0;
  std::optional<Error> error_;
};

// Reads a file descriptor in 1 MiB pieces, at most limit bytes (a file that grows past it while
// it is read ends the input early and says so).
class FdBuf : public std::streambuf {
 public:
  FdBuf(int fd, int64_t limit) : fd_(fd), left_(limit), buf_(1 << 20) {}
  int read_errno() const { return errno_; }
  bool grew() const { return grew_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    ssize_t n;
    do {
      n = ::read(fd_, buf_.data(), buf_.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) errno_ = errno;
    if (n <= 0) return traits_type::eof();
    if (n > left_) {
      grew_ = true;
      return traits_type::eof();
    }
    left_ -= n;
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  int fd_;
  int64_t left_;
  std::vector<char> buf_;
  int errno_ = 0;
  bool grew_ = false;
};

// A read-only view of text as a stream buffer.
class TextBuf : public std::streambuf {
 public:
  explicit TextBuf(std::string_view s) {
    char* p = const_cast<char*>(s.data());  // never written: no put area, no putback
    setg(p, p, p + s.size());
  }
};

}  // namespace

Status read_report_stream(std::istream& in, RunInfo& run, const CaseSink& sink) {
  ReportSax sax(sink);
  try {
    json::sax_parse(in, &sax, json::input_format_t::json, /*strict=*/true);
  } catch (const std::bad_alloc&) {
    return Error{ErrorClass::kResourceExhausted, "out of memory while reading the report"};
  }
  if (sax.error()) return *sax.error();
  GSCHECK_RETURN_IF_ERROR(run_from_json(sax.head(), run));
  if (!sax.cases_seen()) return parse_error("report: \"cases\" is not an array");
  return {};
}

Status read_report_file(const std::string& path, int64_t max_bytes, RunInfo& run,
                        const CaseSink& sink) {
  auto with_path = [&](const Error& e) { return Error{e.cls, path + ": " + e.message}; };
  // As read_bounded: O_NONBLOCK so that opening a FIFO does not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return with_path(parse_error("cannot open: " + std::string(std::strerror(errno))));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return with_path(parse_error("cannot stat: " + std::string(std::strerror(errno))));
  if (!S_ISREG(st.st_mode)) return with_path(parse_error("not a regular file"));
  if (st.st_size > max_bytes)
    return with_path(Error{ErrorClass::kResourceExhausted, "file of " + std::to_string(st.st_size) +
                                                               " bytes exceeds the limit of " +
                                                               std::to_string(max_bytes) +
                                                               " bytes"});
  FdBuf buf(fd, max_bytes);
  std::istream in(&buf);
  Status s = read_report_stream(in, run, sink);
  if (buf.read_errno() != 0)
    return with_path(parse_error("cannot read: " + std::string(std::strerror(buf.read_errno()))));
  if (buf.grew()) return with_path(parse_error("the file grew past the limit while it was read"));
  if (!s.ok()) return with_path(s.error());
  return {};
}

Expected<Report> parse_report_text(std::string_view text, int64_t max_bytes) {
  if (static_cast<int64_t>(text.size()) > max_bytes)
    return Error{ErrorClass::kResourceExhausted, "report text over the limit"};
  TextBuf buf(text);
  std::istream in(&buf);
  Report r;
  Status s = read_report_stream(in, r.run, [&](CaseResult&& c) -> Status {
    r.cases.push_back(std::move(c));
    return {};
  });
  if (!s.ok()) return s.error();
  return r;
}

Expected<CaseResult> case_result_from_json(const json& j, const std::string& where) {
  return case_from_json(j, where);
}

Expected<Report> report_from_json(const json& j) {
  Report r;
  GSCHECK_RETURN_IF_ERROR(run_from_json(j, r.run));
  auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array())
    return parse_error("report: \"cases\" is not an array");
  for (std::size_t i = 0; i < cases->size(); ++i) {
    auto c = case_from_json((*cases)[i], "report.cases[" + std::to_string(i) + "]");
    if (!c.ok()) return c.error();
    r.cases.push_back(std::move(*c));
  }
  return r;
}

Expected<Report> read_json_report(const std::string& path, int64_t max_bytes) {
  Report r;
  Status s = read_report_file(path, max_bytes, r.run, [&](CaseResult&& c) -> Status {
    r.cases.push_back(std::move(c));
    return {};
  });
  if (!s.ok()) return s.error();
  return r;
}

}  // namespace gscheck::reports
