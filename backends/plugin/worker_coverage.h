// A plugin's SanitizerCoverage counters, for coverage-guided fuzzing of the plugin
// (docs/fuzzing.md, "Fuzz your own kernel"). A plugin built with
// -fsanitize-coverage=inline-8bit-counters[,pc-table] registers its counters through the hooks the
// worker exports (worker_exports.list); when gscheck gives the worker kCoverageFd (wire.h), each
// call's counters are published there.
#pragma once

namespace gscheck::worker {

/// Maps kCoverageFd when gscheck gave one; before the plugin is loaded.
void coverage_open();
/// Zeroes the plugin's counters: before each run().
void coverage_reset();
/// Copies the plugin's counters to kCoverageFd: after each run().
void coverage_publish();

}  // namespace gscheck::worker
