// ReportStream (reports/report.h): case results spooled to unlinked temporary files, the final
// JSON report and JUnit XML assembled from them in pieces and renamed into place.
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "reports/atomic_file.h"
#include "reports/report.h"

namespace gscheck::reports {
namespace {

using nlohmann::json;

// An anonymous temporary file (std::tmpfile: unlinked, gone with the process however it ends).
struct Spool {
  std::FILE* f = nullptr;
  ~Spool() {
    if (f) std::fclose(f);
  }
  Status append(std::string_view text, const char* what) {
    if (!f) f = std::tmpfile();
    if (!f)
      return Error{ErrorClass::kInternal, std::string("cannot create the ") + what + " spool"};
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size())
      return Error{ErrorClass::kInternal, std::string("writing the ") + what + " spool failed"};
    return {};
  }
  // Copy the spool into out in 1 MiB pieces.
  Status copy_to(AtomicFile& out) {
    if (!f) return {};
    if (std::fflush(f) != 0 || std::fseek(f, 0, SEEK_SET) != 0)
      return Error{ErrorClass::kInternal, "rereading a report spool failed"};
    std::string buf(1 << 20, '\0');
    for (;;) {
      const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
      if (n > 0) GSCHECK_RETURN_IF_ERROR(out.write(std::string_view(buf.data(), n)));
      if (n < buf.size()) break;
    }
    const bool failed = std::ferror(f) != 0;
    std::fseek(f, 0, SEEK_END);
    if (failed) return Error{ErrorClass::kInternal, "rereading a report spool failed"};
    return {};
  }
};

// A case object as nlohmann writes it at depth 2 of dump(2): every line indented 4 more.
std::string indented_case(const CaseResult& r) {
  const std::string text =
      case_result_to_json(r).dump(2, ' ', false, json::error_handler_t::replace);
  std::string out = "    ";
  out.reserve(text.size() + text.size() / 8);
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += "    ";
  }
  return out;
}

}  // namespace

struct ReportStream::State {
  std::mutex mu;
  RunInfo run;
  std::string json_path, junit_path;
  RunTally tally;
  Spool cases;  // ",\n"-separated indented case objects
  std::map<std::string, JunitSuite> suites;
  std::map<std::string, Spool> suite_cases;
  bool finished = false;
  Status finish_status;

  // initial: the "not finished" files open() writes; a stream ("-") gets only the final one.
  Status write_json(bool initial) {
    if (json_path.empty() || (initial && json_path == "-")) return {};
    const std::string head =
        report_head_json(run, tally).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    // "cases" sorts after "backend" and before "command": the first such line at depth 1.
    const std::string marker = "\n  \"cases\": []";
    const std::size_t at = head.find(marker);
    if (at == std::string::npos)
      return Error{ErrorClass::kInternal, json_path + ": report layout not as expected"};
    auto out = AtomicFile::create(json_path);
    if (!out.ok()) return out.error();
    if (tally.cases() == 0) {
      GSCHECK_RETURN_IF_ERROR(out->write(head));
    } else {
      GSCHECK_RETURN_IF_ERROR(out->write(std::string_view(head).substr(0, at)));
      GSCHECK_RETURN_IF_ERROR(out->write("\n  \"cases\": [\n"));
      GSCHECK_RETURN_IF_ERROR(cases.copy_to(*out));
      GSCHECK_RETURN_IF_ERROR(out->write("\n  ]"));
      GSCHECK_RETURN_IF_ERROR(out->write(std::string_view(head).substr(at + marker.size())));
    }
    return out->commit();
  }

  Status write_junit(bool initial) {
    if (junit_path.empty() || (initial && junit_path == "-")) return {};
    auto out = AtomicFile::create(junit_path);
    if (!out.ok()) return out.error();
    GSCHECK_RETURN_IF_ERROR(out->write(junit_head(run, suites)));
    for (auto& [name, s] : suites) {
      GSCHECK_RETURN_IF_ERROR(out->write(junit_suite_open(run, name, s)));
      GSCHECK_RETURN_IF_ERROR(suite_cases[name].copy_to(*out));
      GSCHECK_RETURN_IF_ERROR(out->write("  </testsuite>\n"));
    }
    GSCHECK_RETURN_IF_ERROR(out->write(junit_tail(run)));
    return out->commit();
  }

  Status write_both(bool initial) {
    Status a = write_json(initial);
    Status b = write_junit(initial);
    return a.ok() ? b : a;
  }
};

ReportStream::ReportStream(std::unique_ptr<State> s) : s_(std::move(s)) {}
ReportStream::~ReportStream() = default;

Expected<std::unique_ptr<ReportStream>> ReportStream::open(RunInfo run, std::string json_path,
                                                           std::string junit_path) {
  if (!json_path.empty() && json_path == junit_path)
    return Error{ErrorClass::kInvalidArgument,
                 "--report and --junit both name " + json_path + ": one would replace the other"};
  if (!json_path.empty() && !junit_path.empty()) {
    std::error_code a;
    if (std::filesystem::equivalent(json_path, junit_path, a) && !a)
      return Error{ErrorClass::kInvalidArgument,
                   "--report " + json_path + " and --junit " + junit_path + " are the same file"};
  }
  auto s = std::make_unique<State>();
  s->run = std::move(run);
  s->json_path = std::move(json_path);
  s->junit_path = std::move(junit_path);
  // Written now: until finish() replaces them, the files say the run has not finished.
  s->run.interrupted = "the run has not finished (it may still be running, or was killed)";
  GSCHECK_RETURN_IF_ERROR(s->write_both(true));
  return std::unique_ptr<ReportStream>(new ReportStream(std::move(s)));
}

Status ReportStream::add(const CaseResult& r) {
  // The text is made outside the lock; only the appends are serialised.
  const std::string json_text = s_->json_path.empty() ? std::string() : indented_case(r);
  const std::string xml_text = s_->junit_path.empty()
                                   ? std::string()
                                   : junit_testcase(r, s_->run.backend.name, s_->run.strict);
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->finished) return {};
  const bool first = s_->tally.cases() == 0;
  s_->tally.add(r);
  const std::string suite = suite_name(r);
  s_->suites[suite].add(r, s_->run.strict);
  if (!s_->json_path.empty()) {
    if (!first) GSCHECK_RETURN_IF_ERROR(s_->cases.append(",\n", "report"));
    GSCHECK_RETURN_IF_ERROR(s_->cases.append(json_text, "report"));
  }
  if (!s_->junit_path.empty())
    GSCHECK_RETURN_IF_ERROR(s_->suite_cases[suite].append(xml_text, "junit"));
  return {};
}

RunTally ReportStream::tally() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->tally;
}

void ReportStream::set_sweep_reached(int64_t positions, double sweep_elapsed_s) {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->finished) return;
  s_->run.sweep = positions;
  s_->run.sweep_elapsed_s = sweep_elapsed_s;
}

Status ReportStream::finish(double elapsed_s, const std::string& interrupted) {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->finished) return s_->finish_status;
  s_->finished = true;
  s_->run.elapsed_s = elapsed_s;
  s_->run.interrupted = interrupted;
  s_->finish_status = s_->write_both(false);
  return s_->finish_status;
}

}  // namespace gscheck::reports
