#include "tools/plugin_flags.h"

#include <charconv>

namespace gscheck::tools {

std::vector<OptionSpec> plugin_option_specs() {
  return {{"--jobs", true}, {"--timeout", true}, {"--isolate", true}};
}

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
  return o;
}

Expected<std::unique_ptr<Backend>> make_named_backend(const std::string& name, int64_t max_bytes,
                                                      PluginOptions plugin) {
  if (name.starts_with("plugin:") && name.size() > 7) {
    plugin.max_output_bytes = max_bytes;
    return make_plugin_backend(name.substr(7), plugin);
  }
  return make_backend(name, max_bytes);
}

}  // namespace gscheck::tools
