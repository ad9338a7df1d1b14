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

}  // namespace gscheck::tools
