// The gscheck subcommands. Each takes the arguments after its name and returns the exit status:
// 0 success, 1 a case failed, 2 a malformed command line, 3 a report could not be written.
// tools/gscheck_main.cc dispatches to them through its command table.
#pragma once

#include <string>
#include <vector>

namespace gscheck::tools {

/// gscheck eval: run case files on a backend, check them against their expect blocks.
int cmd_bench(const std::vector<std::string>& args);
int cmd_eval(const std::vector<std::string>& args);
/// gscheck run: the CI job (golden + regressions + seeded sweep, differential vs the reference).
int cmd_run(const std::vector<std::string>& args);
/// gscheck list-backends: each backend and the contract it declares.
int cmd_list_backends(const std::vector<std::string>& args);
/// gscheck report merge|diff: combine shard reports, compare two runs (tools/cmd_report.cc).
int cmd_report(const std::vector<std::string>& args);
/// gscheck known-failures check: lint a known-failures file on a run (tools/cmd_known_failures.cc).
int cmd_known_failures(const std::vector<std::string>& args);
/// gscheck export: seeded cases with the reference's outcome as expect (tools/cmd_export.cc).
int cmd_export(const std::vector<std::string>& args);

}  // namespace gscheck::tools
