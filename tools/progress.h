// The progress of a long run on stderr: a line redrawn in place on a terminal, plain lines at an
// interval otherwise (CI logs), nothing when quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace gscheck::tools {

class Progress {
 public:
  enum class Mode { kNone, kTerminal, kLines };
  /// kNone when quiet, kTerminal when out is a terminal, else kLines.
  static Mode mode_for(bool quiet, std::FILE* out);

  /// total: cases the run will check (nullopt when a time budget decides); budget_s: --time;
  /// interval_s: seconds between plain lines (the terminal line redraws every 0.1 s).
  Progress(Mode mode, std::FILE* out, std::optional<int64_t> total, std::optional<double> budget_s,
           double interval_s);

  /// The time budget starts now (the sweep begins): "left" counts from here.
  void start_budget();
  /// Cases done and failures so far; prints when a redraw or line is due. Cheap otherwise.
  void update(int64_t done, int64_t failures);
  /// Erase the terminal line before other output is printed (it is redrawn on the next update).
  void clear();
  /// The last state, then a newline on a terminal.
  void finish(int64_t done, int64_t failures);

  /// The text of one progress report (without \r or newline), for tests.
  std::string text(int64_t done, int64_t failures, double elapsed_s) const;

 private:
  double elapsed() const;
  void draw(int64_t done, int64_t failures);

  Mode mode_;
  std::FILE* out_;
  std::optional<int64_t> total_;
  std::optional<double> budget_s_;
  double interval_s_;
  std::chrono::steady_clock::time_point start_;
  std::optional<double> budget_start_;  // elapsed() when the budget started
  double last_draw_ = -1e9;
  bool drawn_ = false;  // a terminal line is on screen
};

}  // namespace gscheck::tools
