// Factories of the cuda-emu backends (and of the cuda backend in builds without CUDA).
#include <memory>

#include "cuda/cuda_backends.h"
#include "cuda/emu_executor.h"
#include "cuda/kernel_backend.h"

namespace gscheck::cuda {
namespace {

// cuda-emu in race mode: each case is bracketed by the detector, which turns a race into the
// case's outcome.
class RaceCheckedBackend final : public Backend {
 public:
  RaceCheckedBackend(Capabilities caps, int threads, const KernelOptions& options)
      : race_(std::make_shared<RaceDetector>(options.race_seed)),
        inner_(std::move(caps), EmuExec(threads, options.max_blocks, race_),
               options.deterministic) {}
  const Capabilities& capabilities() const override { return inner_.capabilities(); }
  Outcome run(const Case& c) override {
    race_->begin_case(c);
    Outcome o = inner_.run(c);
    return race_->end_case(std::move(o));
  }

 private:
  std::shared_ptr<RaceDetector> race_;
  KernelBackend<EmuExec> inner_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_emu_backend(int threads) {
  return make_cuda_emu_backend(threads, KernelOptions{});
}

std::unique_ptr<Backend> make_cuda_emu_backend(int threads, const KernelOptions& options) {
  std::string name = options.deterministic ? "cuda-emu-det" : "cuda-emu";
  if (options.warp_sync && !options.race) name += "-warp";
  if (options.race) {
    Capabilities caps = kernel_capabilities(name + "-race", options.deterministic);
    // Half the tracked device memory for inputs and output: the rest is the kernels' scratch
    // (a scatter's sorted copies of its indices and updates at most double them).
    caps.max_case_bytes = static_cast<int64_t>(RaceDetector::kMaxTrackedBytes / 2);
    return std::make_unique<RaceCheckedBackend>(std::move(caps), threads, options);
  }
  return std::make_unique<KernelBackend<EmuExec>>(
      kernel_capabilities(name, options.deterministic),
      EmuExec(threads, options.max_blocks, nullptr, options.warp_sync), options.deterministic,
      options.max_bytes);
}

#if !defined(GSCHECK_HAVE_CUDA)
Expected<std::unique_ptr<Backend>> make_cuda_backend() {
  return Error{ErrorClass::kUnimplemented,
               "the cuda backend is not available: gscheck was built without CUDA (no nvcc found "
               "or GSCHECK_CUDA=OFF)"};
}
Expected<std::unique_ptr<Backend>> make_cuda_backend(const KernelOptions&) {
  return make_cuda_backend();
}
#endif

}  // namespace gscheck::cuda
