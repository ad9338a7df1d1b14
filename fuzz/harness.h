// What the fuzz targets run: a differential check of every backend against the reference, and a
// crash check of the case-file parser. The libFuzzer targets and gscheck_fuzz_replay share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/case.h"
#include "fuzz/decoder.h"

namespace gscheck::fuzz {

/// Decode the input as a case of the family, run the reference and every other backend of the
/// registry whose capabilities cover the case, and compare outcomes. On a mismatch: shrink the
/// case, write it to harness::regressions_dir() with expect = the reference outcome, print the path
/// and a replay command, and abort() so libFuzzer keeps the input. Returns 0.
///
/// With $GSCHECK_FUZZ_BACKEND, only that backend is checked, inside its contract (a case under
/// semantics it does not claim moves to one it does); a case it cannot take returns -1, which
/// libFuzzer 15 and later read as "keep no such input". A plugin with its own counters guides
/// alone: this executable's counters are cleared after each input ($GSCHECK_FUZZ_GUIDE=all keeps
/// them). A mismatch is shrunk, saved and printed once per kind, and the search goes on.
///
/// In write-case mode (set_write_case_path) it only writes the decoded case, with the reference
/// outcome as expect, and compares nothing.
int run_differential(Family family, const uint8_t* data, std::size_t size);

/// The differential targets worth running on $GSCHECK_FUZZ_BACKEND: those with an op the backend
/// claims (every one without a vendor backend). A target whose ops it claims none of only rejects
/// inputs; scripts/fuzz.sh --backend gives its time to the others.
std::vector<Family> backend_families();

/// Feed the bytes to the case-file parser. It must return a case or an error, never crash; a
/// parsed case must survive writing and re-reading unchanged (otherwise abort()). Returns 0.
int run_case_json(const uint8_t* data, std::size_t size);

/// Write-case mode: run_differential writes the decoded case to path instead of comparing.
/// $GSCHECK_FUZZ_WRITE_CASE sets it too (for libFuzzer binaries). Empty turns it off.
void set_write_case_path(std::string path);
/// How many case files write-case mode has written.
int cases_written();

/// Check one case file as a regression test: its expect block against the reference and against
/// every backend that supports the case. Prints one line per failure; true when all pass.
bool check_case_file(const std::string& path);

}  // namespace gscheck::fuzz
