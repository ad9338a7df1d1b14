// Factories for the CUDA implementation's backends; the registry in backends/ calls these.
#pragma once

#include <cstdint>
#include <memory>

#include "core/backend.h"

namespace gscheck::cuda {

/// The kernels compiled as plain C++ and run by the CPU grid executor; always available.
/// threads: worker threads running blocks (0 = hardware concurrency).
std::unique_ptr<Backend> make_cuda_emu_backend(int threads = 0);

/// The real kernels on the GPU. An error (kUnimplemented) when this build has no CUDA toolkit,
/// or (kInternal) when no usable GPU is present, with the reason in the message.
Expected<std::unique_ptr<Backend>> make_cuda_backend();

/// Variants of the kernel backends (the factories above use the defaults).
struct KernelOptions {
  /// Scatter rows are always sorted by destination and applied in row order, so every run
  /// gives tf-cpu's row-order result bit for bit. Registered as "cuda-emu-det" / "cuda-det".
  /// Off ("cuda-emu" / "cuda"): tf-gpu cases use atomics (any order), tf-cpu cases still sort.
  bool deterministic = false;
  /// cuda-emu only: cap on the grid's blocks (0 = 8 per worker thread); small values make
  /// every grid-stride loop wrap, for tests.
  uint32_t max_blocks = 0;
  /// The memory budget for a case's output (--max-bytes): larger outputs are kResourceExhausted.
  int64_t max_bytes = kDefaultMaxCaseBytes;
  /// cuda-emu only: race mode (cuda/race_detector.h): each launch's threads interleaved at
  /// every device access, and a data race is the case's outcome (kInternal, naming kernel,
  /// tensor, element and both threads). Registered as "cuda-emu-race". race_seed picks the
  /// interleavings (mixed with each case's name).
  bool race = false;
  uint64_t race_seed = 1;
  /// cuda-emu only: warp-synchronous mode (cuda/emu/warp_sync.h): the 32 lanes of each warp run
  /// in lock step at the warp intrinsics (__match_any_sync, __shfl*_sync, ...), so the atomic
  /// path's fold of equal destinations runs as on the GPU. Registered as "cuda-emu-warp".
  /// Not combined with race (race mode runs every lane alone).
  bool warp_sync = false;
};
/// Example: auto det = make_cuda_emu_backend(4, {.deterministic = true});
/// False when this build's kernels are not instrumented for race mode (ASan/MSan builds).
bool race_mode_available();
std::unique_ptr<Backend> make_cuda_emu_backend(int threads, const KernelOptions& options);
Expected<std::unique_ptr<Backend>> make_cuda_backend(const KernelOptions& options);

}  // namespace gscheck::cuda
