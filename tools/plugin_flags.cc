#include "tools/plugin_flags.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "harness/regression.h"

namespace gscheck::tools {

std::vector<OptionSpec> plugin_option_specs() {
  return {{"--jobs", true}, {"--timeout", true}, {"--isolate", true}, {"--python-venv", true}};
}

bool is_plugin_backend(const std::string& name) {
  return name.starts_with("plugin:") || name.starts_with("python:");
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
  // The Python host reads its venv from the environment, which every worker inherits.
  if (auto v = parsed.value("--python-venv")) {
    std::error_code ec;
    const auto dir = std::filesystem::absolute(*v, ec);
    if (v->empty() || ec || !std::filesystem::is_directory(dir))
      return parse_error("--python-venv: no directory '" + *v + "'");
    ::setenv("GSCHECK_PYTHON_VENV", dir.c_str(), 1);
  }
  return o;
}

namespace {

// The Python host plugin: $GSCHECK_PYTHON_PLUGIN, else libgscheck_python_plugin.so next to the
// running executable (where the build and an install put it).
Expected<std::string> python_host_path() {
  if (const char* env = std::getenv("GSCHECK_PYTHON_PLUGIN"); env && *env) return std::string(env);
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
  dir = dir.substr(0, dir.rfind('/') + 1);
  const std::string path = dir + "libgscheck_python_plugin.so";
  if (::access(path.c_str(), R_OK) != 0)
    return parse_error("python: backends need " + path +
                       " (built where libpython's development files are, scripts/setup.sh; or "
                       "set $GSCHECK_PYTHON_PLUGIN)");
  return path;
}

}  // namespace

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
  if (name.starts_with("python:")) {
    if (name.size() == 7) return parse_error("backend 'python:' needs a module after the colon");
    const auto host = python_host_path();
    if (!host.ok()) return host.error();
    std::string module = name.substr(7);
    // A file is named absolutely: workers may start elsewhere than the working directory.
    if (module.ends_with(".py") || module.find('/') != std::string::npos) {
      std::error_code ec;
      module = std::filesystem::absolute(module, ec).string();
    }
    ::setenv("GSCHECK_PYTHON_MODULE", module.c_str(), 1);
    plugin.max_output_bytes = max_bytes;
    plugin.name = name;
    if (const char* venv = std::getenv("GSCHECK_PYTHON_VENV"); venv && *venv)
      plugin.replay_flags = "--python-venv " + harness::shell_quote(venv);
    return make_plugin_backend(*host, plugin);
  }
  return make_backend(name, max_bytes);
}

}  // namespace gscheck::tools
