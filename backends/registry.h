// The registry: the backends this build offers, by name (the interface is core/backend.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.h"

namespace gscheck {

/// Names of the backends this build offers ("reference", "cuda-emu", "cuda" where built).
std::vector<std::string> backend_names();
/// Create a backend by name; an unknown name or an unavailable device is an error naming why.
/// max_bytes is the memory budget for one case's output (--max-bytes), given to every backend.
Expected<std::unique_ptr<Backend>> make_backend(std::string_view name,
                                                int64_t max_bytes = kDefaultMaxCaseBytes);

}  // namespace gscheck
