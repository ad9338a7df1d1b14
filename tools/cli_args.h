// A small command-line parser for the subcommands: --name VALUE, --name=VALUE, flags, positional
// arguments and `--`. Every malformed line is an error naming what is wrong.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace gscheck::tools {

/// One option a subcommand accepts.
struct OptionSpec {
  std::string name;  ///< with the dashes: "--backend"
  bool takes_value = false;
};

/// The parsed command line.
struct ParsedArgs {
  std::map<std::string, std::string> values;  ///< options given (flags map to "")
  std::vector<std::string> positional;
  bool has(const std::string& name) const { return values.count(name) > 0; }
  std::optional<std::string> value(const std::string& name) const;
};

/// Parse args against specs; "--help"/"-h" are always accepted as flags named "--help".
Expected<ParsedArgs> parse_args(const std::vector<std::string>& args,
                                const std::vector<OptionSpec>& specs);

/// A subcommand's parsed command line, or the exit status when parsing already finished the
/// command.
struct CommandLine {
  std::optional<ParsedArgs> args;  ///< empty when the command is done
  int exit_status = 0;             ///< meaningful only when args is empty
};

/// parse_args for the subcommand `command` ("gscheck eval"): for --help prints `usage` to stdout
/// (exit status 0); for a malformed line prints "<command>: <what is wrong>" and `usage` to stderr
/// (exit status 2).
CommandLine parse_command_line(const std::vector<std::string>& args,
                               const std::vector<OptionSpec>& specs, const char* command,
                               const char* usage);

/// A mistake in a value or a file of `command` ("gscheck run"): the message and where the options
/// are, two lines on stderr, not the whole usage after it (which would scroll the message away);
/// returns 2, the exit status of a bad command line.
int value_error(const char* command, const std::string& message);

/// A decimal integer option value in [lo, hi]; the error names the option.
Expected<int64_t> parse_int_option(const std::string& name, const std::string& text, int64_t lo,
                                   int64_t hi);

/// A decimal number option value in [0, 1] (a share of cases); the error names the option.
Expected<double> parse_fraction_option(const std::string& name, const std::string& text);

/// gscheck's own data (rel: "corpus/golden", "bench/problems/default.json"): under the working
/// directory, else where an install put it (share/gscheck, found from the running executable,
/// symlinks resolved), else in the source tree this binary was built from; nullopt when none
/// has it.
std::optional<std::string> data_path(const std::string& rel);

}  // namespace gscheck::tools
