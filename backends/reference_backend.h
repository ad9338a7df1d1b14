// The reference (reference::run) as a Backend: the oracle claims every op, dtype and semantics.
#pragma once

#include <memory>

#include "backends/registry.h"

namespace gscheck {

/// A backend running reference::run; max_output_bytes is its output budget.
std::unique_ptr<Backend> make_reference_backend(int64_t max_output_bytes = kDefaultMaxCaseBytes);

}  // namespace gscheck
