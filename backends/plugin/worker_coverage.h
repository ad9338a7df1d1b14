// A plugin's SanitizerCoverage counters and compares, for coverage-guided fuzzing of the plugin
// (docs/fuzzing.md, "Fuzz your own kernel"). A plugin built with
// -fsanitize-coverage=inline-8bit-counters[,pc-table][,trace-cmp] registers its counters and
// calls its compare hooks through the symbols the worker exports (worker_exports.list); when
// gscheck gives the worker kCoverageFd (wire.h), each call's counters and compares are published
// there.
#pragma once

namespace gscheck::worker {

/// Maps kCoverageFd when gscheck gave one; before the plugin is loaded.
void coverage_open();
/// Zeroes the plugin's counters and starts keeping its compares: before each run().
void coverage_reset();
/// Stops keeping compares and copies the plugin's counters to kCoverageFd: after each run().
void coverage_publish();

}  // namespace gscheck::worker
