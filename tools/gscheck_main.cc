// The gscheck command line: `gscheck <command> [args]`, dispatched through one table.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report.h"
#include "tools/commands.h"

namespace gscheck::tools {
namespace {

struct Command {
  std::string_view name;
  int (*run)(const std::vector<std::string>& args);
  std::string_view help;  ///< one line for `gscheck --help`
};

// ---- The command table. A new subcommand: declare cmd_<name> in tools/commands.h, implement it
// ---- in tools/cmd_<name>.cc (tools/CMakeLists.txt), and add one line here.
constexpr Command kCommands[] = {
    {"run", cmd_run, "the CI check: golden cases, regressions and a seeded sweep vs the reference"},
    {"eval", cmd_eval, "run case files on a backend and check their expected outcomes"},
    {"report", cmd_report, "merge shard reports into one; diff two reports (regressions)"},
    {"known-failures", cmd_known_failures,
     "check a known-failures file: unused, too wide, or forgiving injected bugs"},
    {"list-backends", cmd_list_backends, "list the backends of this build and their contracts"},
    {"export", cmd_export, "write seeded cases with the reference's outcome as case files"},
    {"bench", cmd_bench, "time a backend on problems (checked on every call) against a copy"},
};
// ---- End of the command table.

void print_help(std::FILE* out) {
  std::fprintf(out,
               "usage: gscheck <command> [options]   (gscheck <command> --help for details)\n"
               "A conformance checker for TensorFlow's gather / gather_nd / scatter_nd family.\n\n"
               "commands:\n");
  for (const Command& c : kCommands)
    std::fprintf(out, "  %-14s %s\n", std::string(c.name).c_str(), std::string(c.help).c_str());
  std::fprintf(out, "\n  --version      print the version and the git commit\n");
}

}  // namespace
}  // namespace gscheck::tools

int main(int argc, char** argv) {
  using namespace gscheck::tools;
  if (argc < 2) {
    print_help(stderr);
    return 2;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_help(stdout);
    return 0;
  }
  if (first == "--version") {
    const auto commit = gscheck::reports::git_commit();
    std::printf("gscheck %s%s%s\n", std::string(gscheck::reports::tool_version()).c_str(),
                commit.empty() ? "" : " ", std::string(commit).c_str());
    return 0;
  }
  for (const Command& c : kCommands) {
    if (c.name == first) return c.run(std::vector<std::string>(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "gscheck: unknown command '%s'\n", argv[1]);
  print_help(stderr);
  return 2;
}
