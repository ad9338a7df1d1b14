#include "tools/plugin_flags.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "harness/regression.h"

namespace gscheck::tools {

std::vector<OptionSpec> plugin_option_specs() {
  return {{"--jobs", true}, {"--timeout", true}, {"--isolate", true}};
}

namespace {

// The directory of a path gscheck reads or writes, absolute and existing, or "".
std::string existing_dir_of(const std::string& path, bool is_dir) {
  const std::string dir = is_dir ? path : path.substr(0, path.find_last_of('/') + 1);
  char* abs = ::realpath(dir.empty() ? "." : dir.c_str(), nullptr);
  if (!abs) return "";
  std::string out = abs;
  std::free(abs);
  struct stat st {};
  return ::stat(out.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? out : "";
}

// What a plugin must not write: the reports' directories, the regressions directory, and the
// case and known-failures files' directories.
std::vector<std::string> protected_dirs(const ParsedArgs& parsed) {
  std::vector<std::pair<std::string, bool>> paths;
  for (const char* flag : {"--report", "--junit", "--known-failures"})
    if (auto v = parsed.value(flag); v && *v != "-") paths.emplace_back(*v, false);
  for (const auto& p : parsed.positional) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) paths.emplace_back(p, S_ISDIR(st.st_mode));
  }
  paths.emplace_back(harness::regressions_dir(), true);
  std::vector<std::string> dirs;
  for (const auto& [p, is_dir] : paths)
    if (auto d = existing_dir_of(p, is_dir);
        !d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end())
      dirs.push_back(d);
  return dirs;
}

}  // namespace

Expected<PluginOptions> plugin_options(const ParsedArgs& parsed, int64_t max_bytes) {
  PluginOptions o;
  o.read_only_dirs = protected_dirs(parsed);
  o.max_output_bytes = max_bytes;
  o.jobs = default_jobs();
  if (auto v = parsed.value("--jobs")) {
    auto n = parse_int_option("--jobs", *v, 1, 256);
    if (!n.ok()) return n.error();
    o.jobs = static_cast<int>(*n);
  }
  if (auto v = parsed.value("--timeout")) {
    double s = 0;
    const char* end = v->data() + v->size();
    auto [p, ec] = std::from_chars(v->data(), end, s);
    if (v->empty() || ec != std::errc() || p != end || !(s > 0) || s > 86400)
      return parse_error("--timeout: expected seconds in (0, 86400], got '" + *v + "'");
    o.timeout_seconds = s;
  }
  if (auto v = parsed.value("--isolate")) {
    if (*v == "worker") {
      o.isolate = Isolation::kWorker;
    } else if (*v == "call") {
      o.isolate = Isolation::kCall;
    } else {
      return parse_error("--isolate: expected 'worker' or 'call', got '" + *v + "'");
    }
  }
  return o;
}

Expected<std::unique_ptr<Backend>> make_named_backend(const std::string& name, int64_t max_bytes,
                                                      PluginOptions plugin) {
  if (name.starts_with("plugin:") && name.size() > 7) {
    plugin.max_output_bytes = max_bytes;
    auto b = make_plugin_backend(name.substr(7), plugin);
    // Weaker containment is said once here, and in the report's backend.containment.
    if (b.ok() && (*b)->capabilities().containment.starts_with("process group only"))
      std::fprintf(stderr, "gscheck: plugin containment: %s\n",
                   (*b)->capabilities().containment.c_str());
    return b;
  }
  return make_backend(name, max_bytes);
}

}  // namespace gscheck::tools
