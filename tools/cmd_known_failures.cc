// `gscheck known-failures check FILE [run options]`: is a known-failures file exactly as wide as
// the failures it explains? Runs `gscheck run` (case files and the seeded sweep) with the file
// and the lint: entries that explain nothing, dtypes no case needed, overlapping entries, XPASS,
// and injected bugs (abort, wrong value, wrong class, false bad_index, declined) an entry would
// forgive on a case the backend got right.
#include <cstdio>

#include "tools/commands.h"

namespace gscheck::tools {

int cmd_known_failures(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "usage: gscheck known-failures check FILE [--backend NAME] [gscheck run options] "
      "[PATHS...]\n"
      "  Runs `gscheck run --known-failures FILE --lint-known-failures` and prints, per entry,\n"
      "  the cases its predicate selected, the differences it explained and the injected bugs it\n"
      "  would forgive; each problem is a KNOWN-FAILURES line. Exit status: 0 no case failed and\n"
      "  no finding, 4 no finding and the only failures are UNSAFE cases entries describe (the\n"
      "  file is right, the backend is not safe), 1 otherwise, 2 bad command line.\n";
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args.size() < 2 || args[0] != "check") {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::vector<std::string> run = {"--known-failures", args[1], "--lint-known-failures"};
  run.insert(run.end(), args.begin() + 2, args.end());
  return cmd_run(run);
}

}  // namespace gscheck::tools
