// Vendor plugins: a shared library implementing include/gscheck/plugin.h, run in a forked worker.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.h"

namespace gscheck {

/// How a plugin is run.
struct PluginOptions {
  /// Run each call in a forked child: a crash or hang fails that case only.
  bool isolate = true;
  /// A call running longer than this is killed and reported (isolated mode only).
  double timeout_seconds = 30.0;
  /// Largest output the plugin may allocate.
  int64_t max_output_bytes = kDefaultMaxCaseBytes;
};

/// Load a plugin library (dlopen) and read its declared contract. Errors name the path and why:
/// not loadable, no gscheck_plugin_v1 symbol, wrong ABI version, malformed contract.
Expected<std::unique_ptr<Backend>> make_plugin_backend(const std::string& path,
                                                       const PluginOptions& options = {});

}  // namespace gscheck
