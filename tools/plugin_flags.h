// The plugin options of `gscheck run` and `gscheck eval` (--jobs, --timeout, --isolate).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/plugin_backend.h"
#include "backends/registry.h"
#include "tools/cli_args.h"

namespace gscheck::tools {

/// Usage lines for the plugin options (a literal, to concatenate into a command's usage).
#define GSCHECK_PLUGIN_USAGE                                                                      \
  "  --jobs N         plugin:PATH backends: worker processes, so cases checked at once\n"         \
  "                   (default: the number of cores); reports keep the case order\n"              \
  "  --timeout S      plugin:PATH backends: seconds one call may take before its worker is\n"     \
  "                   killed (default: 10 plus 1 per 64 MiB of the case's inputs and output)\n"   \
  "  --isolate MODE   plugin:PATH backends: 'worker' (default: each worker loads the plugin\n"    \
  "                   once and serves every call) or 'call' (each call in a fresh fork of it)\n"  \
  "  --python-venv DIR python:MODULE backends: the venv whose site-packages the module imports\n" \
  "                   from (default: $GSCHECK_PYTHON_VENV; scripts/numpy_venv.sh makes one)\n"    \
  "  --worker-writable DIR[:DIR...]  plugin and python backends: directories the worker may\n"    \
  "                   write (a compile cache); every other mount is read-only to it, its\n"       \
  "                   private /dev/shm ($TMPDIR) aside, and the run's case files,\n"              \
  "                   known-failures file and reports are hidden from it\n"                       \
  "  --unsafe-no-sandbox  plugin and python backends, where this machine lets gscheck make no\n"  \
  "                   namespaces: run the worker in a process group only (it can then write\n"    \
  "                   and read what gscheck can) instead of refusing; the report says so\n"

/// Whether the backend runs in plugin workers: plugin:PATH, or python:MODULE (gscheck's Python
/// host, a plugin embedding CPython, serving the module).
bool is_plugin_backend(const std::string& name);

/// The option specs of GSCHECK_PLUGIN_USAGE.
std::vector<OptionSpec> plugin_option_specs();

/// The plugin options from a parsed line; max_bytes is the run's --max-bytes.
Expected<PluginOptions> plugin_options(const ParsedArgs& parsed, int64_t max_bytes);

/// What a plugin's worker must not see (PluginOptions::hidden): the case files and their
/// directories, the known-failures file, the reports, the saved-cases folder (made here when
/// missing) and the regressions corpus. Before make_named_backend. An error when a
/// --worker-writable directory holds or lies in one of them, or holds gscheck or its worker.
Status hide_run_inputs(PluginOptions& o, const ParsedArgs& parsed,
                       const std::vector<std::string>& case_files,
                       const std::string& failed_cases_dir);

/// The backend named on the command line: a registry name, or plugin:PATH or python:MODULE made
/// with the plugin options (whose byte budget becomes max_bytes). Every backend gets the budget.
Expected<std::unique_ptr<Backend>> make_named_backend(const std::string& name, int64_t max_bytes,
                                                      PluginOptions plugin = {});

}  // namespace gscheck::tools
