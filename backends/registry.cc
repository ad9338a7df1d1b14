// The backends this build offers. cuda-emu and cuda come from cuda/ when their targets exist
// (GSCHECK_HAVE_CUDA_EMU, GSCHECK_HAVE_CUDA_BACKEND are set by backends/CMakeLists.txt).
#include "backends/registry.h"

#include "backends/plugin_backend.h"
#include "backends/reference_backend.h"

#if defined(GSCHECK_HAVE_CUDA_EMU)
#include "cuda/cuda_backends.h"
#endif

namespace gscheck {

std::vector<std::string> backend_names() {
  std::vector<std::string> names = {"reference"};
#if defined(GSCHECK_HAVE_CUDA_EMU)
  names.push_back("cuda-emu");
  names.push_back("cuda-emu-det");
  // Race mode: threads interleaved at every device access, data races are failures.
  if (cuda::race_mode_available()) names.push_back("cuda-emu-race");
  // Warp-synchronous: each warp's lanes in lock step at the warp intrinsics.
  names.push_back("cuda-emu-warp");
#endif
#if defined(GSCHECK_HAVE_CUDA_BACKEND)
  names.push_back("cuda");
  names.push_back("cuda-det");
#endif
  return names;
}

Expected<std::unique_ptr<Backend>> make_backend(std::string_view name, int64_t max_bytes) {
  if (name == "reference") return make_reference_backend(max_bytes);
  // "plugin:PATH" loads a vendor library built against include/gscheck/plugin.h.
  if (name.starts_with("plugin:")) {
    if (name.size() == 7)
      return parse_error("backend 'plugin:' needs a library path after the colon");
    PluginOptions opts;
    opts.max_output_bytes = max_bytes;
    return make_plugin_backend(std::string(name.substr(7)), opts);
  }
#if defined(GSCHECK_HAVE_CUDA_EMU)
  if (name == "cuda-emu") return cuda::make_cuda_emu_backend(0, {.max_bytes = max_bytes});
  // Scatter rows sorted by destination and applied in row order: bit-identical every run.
  if (name == "cuda-emu-det")
    return cuda::make_cuda_emu_backend(0, {.deterministic = true, .max_bytes = max_bytes});
  if (name == "cuda-emu-race") {
    if (!cuda::race_mode_available())
      return Error{ErrorClass::kUnimplemented,
                   "backend 'cuda-emu-race' needs kernels built with race instrumentation, "
                   "which ASan/MSan builds cannot have"};
    return cuda::make_cuda_emu_backend(1, {.max_bytes = max_bytes, .race = true});
  }
  if (name == "cuda-emu-warp")
    return cuda::make_cuda_emu_backend(0, {.max_bytes = max_bytes, .warp_sync = true});
#endif
#if defined(GSCHECK_HAVE_CUDA_BACKEND)
  if (name == "cuda") return cuda::make_cuda_backend({.max_bytes = max_bytes});
  if (name == "cuda-det")
    return cuda::make_cuda_backend({.deterministic = true, .max_bytes = max_bytes});
#endif
  std::string known;
  for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  if (name == "cuda" || name == "cuda-det" || name == "cuda-emu" || name == "cuda-emu-det" ||
      name == "cuda-emu-race" || name == "cuda-emu-warp")
    return Error{ErrorClass::kUnimplemented,
                 "backend '" + std::string(name) +
                     "' is not built into this gscheck (available: " + known + ")"};
  return parse_error("unknown backend '" + std::string(name) + "' (available: " + known +
                     ", or plugin:PATH)");
}

}  // namespace gscheck
