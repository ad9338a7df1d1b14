#include "tools/cli_args.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "core/executable_dir.h"

namespace gscheck::tools {

std::optional<std::string> ParsedArgs::value(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Expected<ParsedArgs> parse_args(const std::vector<std::string>& args,
                                const std::vector<OptionSpec>& specs) {
  ParsedArgs out;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      out.values["--help"] = "";
      continue;
    }
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const OptionSpec& s) { return s.name == name; });
    if (spec == specs.end()) return parse_error("unknown option '" + name + "'");
    if (out.has(name)) return parse_error("option '" + name + "' given twice");
    if (!spec->takes_value) {
      if (eq != std::string::npos) return parse_error("option '" + name + "' takes no value");
      out.values[name] = "";
      continue;
    }
    if (eq != std::string::npos) {
      out.values[name] = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      out.values[name] = args[++i];
    } else {
      return parse_error("option '" + name + "' needs a value");
    }
  }
  return out;
}

Expected<int64_t> parse_int_option(const std::string& name, const std::string& text, int64_t lo,
                                   int64_t hi) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || v < lo || v > hi)
    return parse_error(name + ": expected an integer in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], got '" + text + "'");
  return v;
}

Expected<double> parse_fraction_option(const std::string& name, const std::string& text) {
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  // Decimal text only: strtod would also take leading spaces, hex and "inf".
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos ||
      end != text.c_str() + text.size() || !(f >= 0 && f <= 1))
    return parse_error(name + ": expected a number in [0, 1], got '" + text + "'");
  return f;
}

int value_error(const char* command, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n(%s --help for the options)\n", command, message.c_str(), command);
  return 2;
}

CommandLine parse_command_line(const std::vector<std::string>& args,
                               const std::vector<OptionSpec>& specs, const char* command,
                               const char* usage) {
  auto parsed = parse_args(args, specs);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: %s\n%s", command, parsed.error().message.c_str(), usage);
    return {std::nullopt, 2};
  }
  if (parsed->has("--help")) {
    std::fputs(usage, stdout);
    return {std::nullopt, 0};
  }
  return {std::move(*parsed), 0};
}

#ifndef GSCHECK_SOURCE_DIR
#define GSCHECK_SOURCE_DIR "."
#endif
#ifndef GSCHECK_DATA_FROM_EXE
#define GSCHECK_DATA_FROM_EXE "../../share/gscheck"
#endif

std::optional<std::string> data_path(const std::string& rel) {
  std::error_code ec;
  if (std::filesystem::exists(rel, ec)) return rel;
  if (const std::string dir = executable_dir(); !dir.empty()) {
    const auto installed =
        (std::filesystem::path(dir) / GSCHECK_DATA_FROM_EXE / rel).lexically_normal().string();
    if (std::filesystem::exists(installed, ec)) return installed;
  }
  const std::string source = std::string(GSCHECK_SOURCE_DIR) + "/" + rel;
  if (std::filesystem::exists(source, ec)) return source;
  return std::nullopt;
}

}  // namespace gscheck::tools
