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

/// A decimal integer option value in [lo, hi]; the error names the option.
Expected<int64_t> parse_int_option(const std::string& name, const std::string& text, int64_t lo,
                                   int64_t hi);

}  // namespace gscheck::tools
