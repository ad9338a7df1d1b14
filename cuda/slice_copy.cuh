// Cooperative slice copies for the gather kernels and the tuning policies that pick a thread
// mapping. __host__ __device__ code: also compiled as plain C++ for cuda-emu.
#pragma once

#include <cstdint>

#include "cuda/portability.h"

namespace gscheck::cuda {

/// Tuning of the gather kernels. No GPU was available when these were set (see docs/cuda.md),
/// so each value records the reasoning, not a measurement; re-tune from bench/cuda.
struct GatherPolicy {
  /// 256 threads = 8 warps: enough warps per block to hide load latency, and a block-per-row
  /// group still fits several resident blocks per SM.
  static constexpr uint32_t kBlockThreads = 256;
  /// Slices smaller than one 16 B vector get one thread per element: a row cannot feed a group,
  /// and neighbouring threads then write neighbouring bytes (coalesced stores).
  static constexpr uint64_t kPerElementBelowBytes = 16;
  /// Up to 512 B (32 lanes x 16 B) a sub-warp group per row: one 16 B unit per lane, so small
  /// rows do not leave most of a warp idle.
  static constexpr uint64_t kSubWarpMaxBytes = 512;
  /// Up to 4 KB a warp per row (each lane moves at most 8 units); above, a whole block per row
  /// so one long row is spread over 256 lanes.
  static constexpr uint64_t kWarpMaxBytes = 4096;
  /// Resident blocks per SM the grid is capped at; the kernels are grid-stride loops, so a
  /// capped grid only changes how many rows each thread walks.
  static constexpr uint32_t kBlocksPerSm = 8;
};

/// Tuning of the scatter kernels (one thread per updated element, or per pair for packed
/// half2/bfloat162 atomics).
struct ScatterPolicy {
  /// Same reasoning as GatherPolicy::kBlockThreads.
  static constexpr uint32_t kBlockThreads = 256;
  static constexpr uint32_t kBlocksPerSm = 8;
};

/// How one gather kernel maps threads to output rows.
struct RowMapping {
  /// Lanes per row; 0 means one thread per output element (tiny slices).
  uint32_t group = 0;
};

/// Choose the mapping for a slice of slice_bytes (GatherPolicy).
constexpr RowMapping choose_row_mapping(uint64_t slice_bytes) {
  if (slice_bytes < GatherPolicy::kPerElementBelowBytes) return RowMapping{0};
  if (slice_bytes <= GatherPolicy::kSubWarpMaxBytes) {
    const uint64_t units = (slice_bytes + 15) / 16;
    uint32_t g = 2;
    while (g < units && g < 32) g *= 2;
    return RowMapping{g};
  }
  if (slice_bytes <= GatherPolicy::kWarpMaxBytes) return RowMapping{32};
  return RowMapping{GatherPolicy::kBlockThreads};
}

/// True when 32-bit offsets are safe: every tensor of the launch has < 2^31 elements, so every
/// element or row offset the kernels compute fits (CUB's offset-type dispatch).
constexpr bool fits_32bit_offsets(const int64_t* element_counts, int n) {
  for (int i = 0; i < n; ++i) {
    if (element_counts[i] >= (int64_t{1} << 31)) return false;
  }
  return true;
}

/// The widest unit (16, 8, 4, 2, 1 bytes) in which a row at src can be copied to dst: both
/// addresses must agree modulo it. Rows of a tensor with 16 B aligned bases and slice bytes a
/// multiple of 16 always get 16; otherwise each row gets what its own addresses allow.
GSCHECK_HD_INLINE uint32_t copy_unit_bytes(uintptr_t src, uintptr_t dst) {
  const uintptr_t diff = src ^ dst;
  if ((diff & 15u) == 0) return 16;
  if ((diff & 7u) == 0) return 8;
  if ((diff & 3u) == 0) return 4;
  if ((diff & 1u) == 0) return 2;
  return 1;
}

template <int W>
GSCHECK_HD_INLINE void load_store_unit(uint8_t* dst, const uint8_t* src) {
#if defined(__CUDA_ARCH__)
  using V = typename VecUnit<W>::type;
  *reinterpret_cast<V*>(dst) = *reinterpret_cast<const V*>(src);
#else
  memcpy(dst, src, W);  // one W-byte move; memcpy keeps the host build free of aliasing UB
#endif
}

template <int W>
GSCHECK_HD_INLINE void store_zero_unit(uint8_t* dst) {
#if defined(__CUDA_ARCH__)
  using V = typename VecUnit<W>::type;
  *reinterpret_cast<V*>(dst) = V{};
#else
  memset(dst, 0, W);
#endif
}

/// Bytes one lane moves per step. With narrower units (pointers that disagree modulo 16) a lane
/// still takes a whole 16-byte chunk, so a warp's accesses stay within one 512-byte span.
inline constexpr int kChunkBytes = 16;

template <int W>
GSCHECK_HD_INLINE void copy_chunk(uint8_t* dst, const uint8_t* src) {
#if defined(__CUDA_ARCH__)
#pragma unroll
  for (int k = 0; k < kChunkBytes; k += W) load_store_unit<W>(dst + k, src + k);
#else
  memcpy(dst, src, kChunkBytes);  // the same bytes as the W-unit loop, in one host move
#endif
}

/// Copy n bytes cooperatively (this lane of `group`): scalar bytes until dst is W-aligned,
/// 16-byte chunks of W-byte units (lane-interleaved, so a group's accesses coalesce), scalar
/// tail bytes. Precondition: src and dst agree modulo W.
template <int W>
GSCHECK_HD_INLINE void copy_bytes_in_units(uint8_t* dst, const uint8_t* src, uint64_t n,
                                           uint32_t lane, uint32_t group) {
  uint64_t head = (W - (reinterpret_cast<uintptr_t>(dst) & (W - 1))) & (W - 1);
  if (head > n) head = n;
  const uint64_t chunks = (n - head) / kChunkBytes;
  const uint64_t tail = head + chunks * kChunkBytes;
  for (uint64_t i = lane; i < head; i += group) dst[i] = src[i];
  for (uint64_t i = lane; i < chunks; i += group) {
    copy_chunk<W>(dst + head + i * kChunkBytes, src + head + i * kChunkBytes);
  }
  for (uint64_t i = tail + lane; i < n; i += group) dst[i] = src[i];
}

/// Copy one slice of n bytes with the widest unit its addresses allow.
GSCHECK_HD_INLINE void copy_slice(uint8_t* dst, const uint8_t* src, uint64_t n, uint32_t lane,
                                  uint32_t group) {
  switch (copy_unit_bytes(reinterpret_cast<uintptr_t>(src), reinterpret_cast<uintptr_t>(dst))) {
    case 16:
      copy_bytes_in_units<16>(dst, src, n, lane, group);
      break;
    case 8:
      copy_bytes_in_units<8>(dst, src, n, lane, group);
      break;
    case 4:
      copy_bytes_in_units<4>(dst, src, n, lane, group);
      break;
    case 2:
      copy_bytes_in_units<2>(dst, src, n, lane, group);
      break;
    default:
      copy_bytes_in_units<1>(dst, src, n, lane, group);
      break;
  }
}

/// Zero one slice of n bytes (tf-gpu: the row of an out-of-range index).
GSCHECK_HD_INLINE void zero_slice(uint8_t* dst, uint64_t n, uint32_t lane, uint32_t group) {
  uint64_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15u)) & 15u;
  if (head > n) head = n;
  const uint64_t units = (n - head) / 16;
  const uint64_t tail = head + units * 16;
  for (uint64_t i = lane; i < head; i += group) dst[i] = 0;
  for (uint64_t i = lane; i < units; i += group) store_zero_unit<16>(dst + head + i * 16);
  for (uint64_t i = tail + lane; i < n; i += group) dst[i] = 0;
}

/// Gather, one output row per group of lanes: group in 2..32 (sub-warp or warp) or block_dim
/// (block per row). Map::source(row, &src_row) gives the source row or false (out of range:
/// the row is zeroed). Off is uint32_t or uint64_t.
template <class Map, class Off>
struct GatherRowsKernel {
  Map map;
  const uint8_t* d_params;
  uint8_t* d_out;
  Off rows;
  uint64_t slice_bytes;
  uint32_t group;

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const uint32_t lane = t.thread % group;  // group divides block_dim
    const Off stride = static_cast<Off>(t.total() / group);
    for (Off row = static_cast<Off>(t.global() / group); row < rows; row += stride) {
      uint8_t* dst = d_out + static_cast<uint64_t>(row) * slice_bytes;
      Off src = 0;
      if (map.source(row, &src)) {
        copy_slice(dst, d_params + static_cast<uint64_t>(src) * slice_bytes, slice_bytes, lane,
                   group);
      } else {
        zero_slice(dst, slice_bytes, lane, group);
      }
    }
  }
};

/// Gather, one thread per output element of E bytes (slices under 16 B). Base pointers are
/// aligned to E (tensor buffers are).
template <class Map, class Off, int E>
struct GatherElementsKernel {
  Map map;
  const uint8_t* d_params;
  uint8_t* d_out;
  Off total;  ///< output elements
  Off slice;  ///< elements per row

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const Off stride = static_cast<Off>(t.total());
    for (Off e = static_cast<Off>(t.global()); e < total; e += stride) {
      const Off row = e / slice;
      const Off j = e - row * slice;
      Off src = 0;
      uint8_t* dst = d_out + static_cast<uint64_t>(e) * E;
      if (map.source(row, &src)) {
        load_store_unit<E>(dst, d_params + (static_cast<uint64_t>(src) * slice + j) * E);
      } else {
        store_zero_unit<E>(dst);
      }
    }
  }
};

}  // namespace gscheck::cuda
