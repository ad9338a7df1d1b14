// Factories for the CUDA implementation's backends; the registry in backends/ calls these.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace gscheck::cuda {

/// The kernels compiled as plain C++ and run by the CPU grid executor; always available.
/// threads: worker threads running blocks (0 = hardware concurrency).
std::unique_ptr<Backend> make_cuda_emu_backend(int threads = 0);

/// The real kernels on the GPU. An error (kUnimplemented) when this build has no CUDA toolkit,
/// or (kInternal) when no usable GPU is present, with the reason in the message.
Expected<std::unique_ptr<Backend>> make_cuda_backend();

}  // namespace gscheck::cuda
