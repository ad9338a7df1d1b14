// The oracle: TensorFlow's gather/scatter semantics, written from ../shared/spec/semantics.md.
#pragma once

#include <cstdint>

#include "core/case.h"

namespace gscheck::reference {

/// Limits the reference runs under.
struct Options {
  /// The output tensor may not exceed this many bytes (refused with kResourceExhausted).
  int64_t max_output_bytes = kDefaultMaxCaseBytes;
};

/// Run one case under its semantics: TensorFlow's validation in TensorFlow's order and text,
/// then the op. Never throws, never aborts on bad input.
Outcome run(const Case& c, const Options& options = {});

}  // namespace gscheck::reference
