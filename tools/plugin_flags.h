// The plugin options of `gscheck run` and `gscheck eval` (--jobs, --timeout, --isolate), and the
// ordered parallel loop that --jobs drives.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "backends/plugin_backend.h"
#include "tools/cli_args.h"

namespace gscheck::tools {

/// Usage lines for the plugin options (a literal, to concatenate into a command's usage).
#define GSCHECK_PLUGIN_USAGE \
  "  --jobs N         plugin:PATH backends: worker processes, so cases checked at once\n" \
  "                   (default: the number of cores); reports keep the case order\n" \
  "  --timeout S      plugin:PATH backends: seconds one call may take before its worker is\n" \
  "                   killed (default: 10 plus 1 per 64 MiB of the case's inputs and output)\n" \
  "  --isolate MODE   plugin:PATH backends: 'worker' (default: each worker loads the plugin\n" \
  "                   once and serves every call) or 'call' (each call in a fresh fork of it)\n"

/// The option specs of GSCHECK_PLUGIN_USAGE.
std::vector<OptionSpec> plugin_option_specs();

/// The plugin options from a parsed line; max_bytes is the run's --max-bytes.
Expected<PluginOptions> plugin_options(const ParsedArgs& parsed, int64_t max_bytes);

/// Calls work(i) for i in [0, n) on `jobs` threads and emit(result) in index order, as soon as
/// each result and all before it are ready. jobs <= 1 runs everything on this thread.
template <class R>
void for_each_ordered(std::size_t n, int jobs, const std::function<R(std::size_t)>& work,
                      const std::function<void(R&&)>& emit);

}  // namespace gscheck::tools

#include "tools/plugin_flags_impl.h"
