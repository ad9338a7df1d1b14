// Vendor plugins: a shared library implementing include/gscheck/plugin.h, run in gscheck-worker
// processes (backends/plugin_worker.cc), never in gscheck's own process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/registry.h"

namespace gscheck {

/// How plugin calls are isolated.
enum class Isolation {
  kWorker,  ///< persistent workers: the plugin is loaded and init()ed once per worker
  kCall,    ///< as kWorker, but every call runs in a child forked from the worker (--isolate call)
};

/// How a plugin is run.
struct PluginOptions {
  Isolation isolate = Isolation::kWorker;
  /// Worker processes, so concurrent run() calls (--jobs).
  int jobs = 1;
  /// A call running longer is killed and fails (--timeout); 0: 10 s plus 1 s per 64 MiB of the
  /// case's inputs and output.
  double timeout_seconds = 0;
  /// Loading the library, its entry point and init() must finish within this.
  double load_timeout_seconds = 120;
  /// The call's byte budget (--max-bytes): the output plus its string bytes. The worker's
  /// address space is capped from it too.
  int64_t max_output_bytes = kDefaultMaxCaseBytes;
  /// Absolute paths the worker must not read (where it runs in its own mount namespace, in
  /// which every mount is read-only): the run's case files and their directories, the
  /// known-failures file, the reports and the folders of saved cases. A directory that holds
  /// the worker, the plugin or a Python module or venv stays visible (its files stay hidden).
  std::vector<std::string> hidden;
  /// Existing directories (absolute, resolved) the worker may write (--worker-writable: a
  /// runtime's compile cache); besides them its only writable place is its private /dev/shm.
  std::vector<std::string> writable;
  /// Where no namespaces can be made (no root and no unprivileged user namespaces, a container
  /// without CAP_SYS_ADMIN, $GSCHECK_NAMESPACES=0): run workers in a process group only
  /// (--unsafe-no-sandbox) instead of refusing to start them.
  bool unsafe_no_sandbox = false;
  /// The backend's name in reports and replay commands ("" gives "plugin:PATH"), and the flags
  /// a replay needs besides --backend (Capabilities::replay_flags).
  std::string name;
  std::string replay_flags;
  /// gscheck bench: a call after which the worker runs more processes or threads than before,
  /// and than the warm-ups left (the first call of each prepared input on a worker, where a
  /// runtime makes its thread pools), fails ("work left running past the call").
  bool no_work_past_call = false;
  /// Coverage-guided fuzzing of the plugin (fuzz/harness.cc): each worker publishes the
  /// plugin's SanitizerCoverage counters after every call, read through Backend::coverage().
  bool coverage = false;
  /// Set by make_plugin_backend when coverage is: the counters' memfd every worker gets.
  int coverage_memfd = -1;
};

/// The number of cores: the default --jobs.
int default_jobs();

/// The gscheck-worker executable plugin backends start ($GSCHECK_WORKER, else next to this
/// executable, else where it was built); "" when none is known.
std::string plugin_worker_path();

/// Start a worker that loads the plugin and reports its declared contract. Errors name the path
/// and why: not loadable, no entry point, wrong ABI version, malformed contract, init() failed,
/// crashed or hung while loading (with the worker's stderr tail).
Expected<std::unique_ptr<Backend>> make_plugin_backend(const std::string& path,
                                                       const PluginOptions& options = {});

}  // namespace gscheck
