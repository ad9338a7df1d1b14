#include "tools/plugin_flags.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/executable_dir.h"
#include "harness/regression.h"

namespace gscheck::tools {

std::vector<OptionSpec> plugin_option_specs() {
  return {{"--jobs", true},        {"--timeout", true},         {"--isolate", true},
          {"--python-venv", true}, {"--worker-writable", true}, {"--unsafe-no-sandbox", false}};
}

bool is_plugin_backend(const std::string& name) {
  return name.starts_with("plugin:") || name.starts_with("python:");
}

namespace {

// The path with every symlink resolved, or "" when it does not exist.
std::string real_path(const std::string& path) {
  char* abs = ::realpath(path.c_str(), nullptr);
  if (!abs) return "";
  std::string out = abs;
  std::free(abs);
  return out;
}

}  // namespace

Expected<PluginOptions> plugin_options(const ParsedArgs& parsed, int64_t max_bytes) {
  PluginOptions o;
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
  o.unsafe_no_sandbox = parsed.has("--unsafe-no-sandbox");
  // Directories the worker may write, besides its private /dev/shm: "DIR[:DIR...]".
  if (auto v = parsed.value("--worker-writable")) {
    std::string_view rest = *v;
    while (true) {
      const std::size_t colon = rest.find(':');
      const std::string dir(rest.substr(0, colon));
      std::error_code ec;
      const std::string real = dir.empty() ? "" : real_path(dir);
      if (real.empty() || !std::filesystem::is_directory(real, ec))
        return parse_error("--worker-writable: no directory '" + dir + "'");
      if (real == "/") return parse_error("--worker-writable: '" + dir + "' is the root");
      o.writable.push_back(real);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  return o;
}

namespace {

// `inner` is `outer` or lies under it.
bool within(const std::string& inner, const std::string& outer) {
  return inner == outer ||
         (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
          inner[outer.size()] == '/');
}

}  // namespace

Status hide_run_inputs(PluginOptions& o, const ParsedArgs& parsed,
                       const std::vector<std::string>& case_files,
                       const std::string& failed_cases_dir) {
  std::vector<std::string> paths;
  auto add = [&](const std::string& p) {
    if (std::string r = real_path(p); !r.empty() && r != "/") paths.push_back(std::move(r));
  };
  for (const std::string& f : case_files) {
    add(f);
    if (std::string r = real_path(f); !r.empty()) add(r.substr(0, r.rfind('/')));
  }
  for (const char* flag : {"--report", "--junit", "--known-failures"})
    if (auto v = parsed.value(flag); v && *v != "-") add(*v);
  // Saved cases hold the reference's outcome of every failing case: made now, so that the
  // workers of this run, started before any is saved, cannot read them either.
  if (!failed_cases_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(failed_cases_dir, ec);
    add(failed_cases_dir);
  }
  add(harness::regressions_dir());
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  // A writable directory may not reach what grades the run, nor the executables that grade it
  // (a worker swapped for the next run's).
  std::vector<std::string> guarded = paths;
  for (const std::string& exe : {std::string("/proc/self/exe"), plugin_worker_path()})
    if (std::string r = exe.empty() ? "" : real_path(exe); !r.empty()) guarded.push_back(r);
  for (const std::string& w : o.writable)
    for (const std::string& g : guarded)
      if (within(w, g) || within(g, w))
        return parse_error("--worker-writable: " + w + (within(g, w) ? " holds " : " lies in ") +
                           g + ", which the worker may not " + (within(g, w) ? "write" : "see"));
  o.hidden = std::move(paths);
  return {};
}

namespace {

// The Python host plugin: $GSCHECK_PYTHON_PLUGIN, else libgscheck_python_plugin.so next to the
// running executable (where the build and an install put it).
Expected<std::string> python_host_path() {
  if (const char* env = std::getenv("GSCHECK_PYTHON_PLUGIN"); env && *env) return std::string(env);
  const std::string path = executable_dir() + "libgscheck_python_plugin.so";
  if (::access(path.c_str(), R_OK) != 0)
    return parse_error("python: backends need " + path +
                       " (built where libpython's development files are, scripts/setup.sh; or "
                       "set $GSCHECK_PYTHON_PLUGIN)");
  return path;
}

}  // namespace

namespace {

// A plugin backend with the flags its replay line needs, and weaker containment said once here
// (and in the report's backend.containment).
Expected<std::unique_ptr<Backend>> contained(const std::string& path, PluginOptions plugin) {
  std::string writable;
  for (const auto& w : plugin.writable) writable += (writable.empty() ? "" : ":") + w;
  for (const std::string& flag :
       {writable.empty() ? "" : "--worker-writable " + harness::shell_quote(writable),
        std::string(plugin.unsafe_no_sandbox ? "--unsafe-no-sandbox" : "")})
    if (!flag.empty()) plugin.replay_flags += (plugin.replay_flags.empty() ? "" : " ") + flag;
  auto b = make_plugin_backend(path, plugin);
  if (b.ok() && (*b)->capabilities().containment.starts_with("process group only"))
    std::fprintf(stderr, "gscheck: plugin containment (--unsafe-no-sandbox): %s\n",
                 (*b)->capabilities().containment.c_str());
  return b;
}

}  // namespace

Expected<std::unique_ptr<Backend>> make_named_backend(const std::string& name, int64_t max_bytes,
                                                      PluginOptions plugin) {
  if (name.starts_with("plugin:") && name.size() > 7) {
    plugin.max_output_bytes = max_bytes;
    return contained(name.substr(7), std::move(plugin));
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
    return contained(*host, std::move(plugin));
  }
  return make_backend(name, max_bytes);
}

}  // namespace gscheck::tools
