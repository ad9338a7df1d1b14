#include "tools/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace gscheck::tools {
namespace {

constexpr double kRedrawS = 0.1;  // terminal refresh: smooth, and cheap at any case rate

std::string seconds(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0fs", std::ceil(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600,
                  static_cast<int>(s) / 60 % 60);
  }
  return buf;
}

}  // namespace

Progress::Mode Progress::mode_for(bool quiet, std::FILE* out) {
  if (quiet) return Mode::kNone;
  return isatty(fileno(out)) ? Mode::kTerminal : Mode::kLines;
}

Progress::Progress(Mode mode, std::FILE* out, std::optional<int64_t> total,
                   std::optional<double> budget_s, double interval_s)
    : mode_(mode),
      out_(out),
      total_(total),
      budget_s_(budget_s),
      interval_s_(interval_s),
      start_(std::chrono::steady_clock::now()) {
  // The first plain line comes after one interval, not at once: short runs stay silent.
  last_draw_ = 0;
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::text(int64_t done, int64_t failures, double elapsed_s) const {
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  char buf[256];
  std::string head;
  std::string eta;
  if (total_) {
    const int64_t total = std::max<int64_t>(*total_, 1);
    std::snprintf(buf, sizeof buf, "%lld/%lld cases (%d%%)", static_cast<long long>(done),
                  static_cast<long long>(*total_), static_cast<int>(100 * done / total));
    head = buf;
    if (rate > 0) eta = ", ETA " + seconds(static_cast<double>(*total_ - done) / rate);
  } else {
    head = std::to_string(done) + " cases";
  }
  if (budget_s_ && budget_start_) {  // the case files before the sweep are not budgeted
    const double left = std::max(0.0, *budget_s_ - (elapsed_s - *budget_start_));
    const std::string budget_eta = ", " + seconds(left) + " of " + seconds(*budget_s_) + " left";
    eta = total_ && !eta.empty() ? eta + budget_eta : budget_eta;
  }
  std::snprintf(buf, sizeof buf, ", %.0f cases/s, %lld failure%s", rate,
                static_cast<long long>(failures), failures == 1 ? "" : "s");
  return head + buf + eta;
}

void Progress::start_budget() { budget_start_ = elapsed(); }

void Progress::draw(int64_t done, int64_t failures) {
  const double now = elapsed();
  const std::string t = text(done, failures, now);
  if (mode_ == Mode::kTerminal) {
    std::fprintf(out_, "\r\033[K%s", t.c_str());
    drawn_ = true;
  } else {
    std::fprintf(out_, "gscheck: %s\n", t.c_str());
  }
  std::fflush(out_);
  last_draw_ = now;
}

void Progress::update(int64_t done, int64_t failures) {
  if (mode_ == Mode::kNone) return;
  const double due = mode_ == Mode::kTerminal ? kRedrawS : interval_s_;
  if (elapsed() - last_draw_ >= due) draw(done, failures);
}

void Progress::clear() {
  if (mode_ != Mode::kTerminal || !drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

void Progress::finish(int64_t done, int64_t failures) {
  if (mode_ == Mode::kNone) return;
  if (mode_ == Mode::kTerminal) {
    draw(done, failures);
    std::fputs("\n", out_);
    std::fflush(out_);
    drawn_ = false;
  } else if (last_draw_ > 0) {
    draw(done, failures);  // a closing line only when earlier lines were printed
  }
}

}  // namespace gscheck::tools
