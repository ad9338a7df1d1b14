// Qualifiers and thread indices that let one kernel source compile for the GPU (nvcc) and as
// plain C++ (g++) for the cuda-emu grid executor. Without __CUDACC__ no CUDA header is needed.
#pragma once

#include <cstdint>
#include <cstring>

// An unroll hint for the device pass only (the host compiler would warn about it).
#if defined(__CUDA_ARCH__)
#define GSCHECK_UNROLL _Pragma("unroll")
#else
#define GSCHECK_UNROLL
#endif

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define GSCHECK_HD __host__ __device__
#define GSCHECK_HD_INLINE __host__ __device__ __forceinline__
#else
#define GSCHECK_HD
#define GSCHECK_HD_INLINE inline
#endif

// Which code a build runs. GSCHECK_EMU: the host compiler's build for cuda-emu, which supplies
// the device library (cuda/emu/device_intrinsics.h) so the device code paths run as written.
// GSCHECK_DEVICE_PATH: the device's code, compiled by nvcc's device pass and by cuda-emu; only
// nvcc's host pass of __host__ __device__ code (never executed) skips it.
#if !defined(__CUDACC__)
#define GSCHECK_EMU 1
#define GSCHECK_DEVICE_PATH 1
#elif defined(__CUDA_ARCH__)
#define GSCHECK_EMU 0
#define GSCHECK_DEVICE_PATH 1
#else
#define GSCHECK_EMU 0
#define GSCHECK_DEVICE_PATH 0
#endif
// The branch nvcc's host pass compiles where the device code has no host meaning.
#define GSCHECK_HOST_PASS_UNREACHABLE() __builtin_trap()

namespace gscheck::cuda {

/// Where one thread sits in a 1-D launch; the kernel functors take it instead of reading
/// blockIdx/threadIdx so the emulator can hand it in.
struct ThreadIndex {
  uint32_t block;      ///< blockIdx.x
  uint32_t thread;     ///< threadIdx.x
  uint32_t block_dim;  ///< blockDim.x
  uint32_t grid_dim;   ///< gridDim.x
  GSCHECK_HD_INLINE uint64_t global() const {
    return static_cast<uint64_t>(block) * block_dim + thread;
  }
  GSCHECK_HD_INLINE uint64_t total() const { return static_cast<uint64_t>(grid_dim) * block_dim; }
};

template <class To, class From>
GSCHECK_HD_INLINE To bit_cast(const From& f) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

}  // namespace gscheck::cuda

#if GSCHECK_EMU
#include "cuda/emu/device_intrinsics.h"
#endif
