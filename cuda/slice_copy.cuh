// Device code of gather and gather_nd: cooperative slice copies and the two gather kernels, over
// an index map each op supplies (cuda/gather_device.cuh, cuda/gather_nd_device.cuh). The thread
// mapping is chosen by cuda/gather_dispatch.cuh. __host__ __device__ code: also compiled as plain
// C++ for cuda-emu.
#pragma once

#include <cstdint>

#include "cuda/portability.h"

namespace gscheck::cuda {

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

/// cuda-emu: a W-byte unit access at a misaligned address faults, as the device's would (the
/// host's memcpy would not care, and the fault fails the launch, so the copy may go on).
GSCHECK_HD_INLINE void emu_check_unit(const void* dst, const void* src, int w) {
#if GSCHECK_EMU
  (void)emu::check_aligned(src, static_cast<std::size_t>(w), "a vector load");
  (void)emu::check_aligned(dst, static_cast<std::size_t>(w), "a vector store");
#else
  (void)dst;
  (void)src;
  (void)w;
#endif
}

template <int W>
GSCHECK_HD_INLINE void load_store_unit(uint8_t* dst, const uint8_t* src) {
#if defined(__CUDA_ARCH__)
  using V = typename VecUnit<W>::type;
  *reinterpret_cast<V*>(dst) = *reinterpret_cast<const V*>(src);
#else
  emu_check_unit(dst, src, W);
  memcpy(dst, src, W);  // one W-byte move; memcpy keeps the host build free of aliasing UB
#endif
}

/// One W-byte load / store (an LDG/STG of W bytes on the device; src/dst aligned to W).
template <int W>
GSCHECK_HD_INLINE typename VecUnit<W>::type load_unit(const uint8_t* src) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const typename VecUnit<W>::type*>(src);
#else
  emu_check_unit(src, src, W);
  typename VecUnit<W>::type v;
  memcpy(&v, src, W);  // a device-style typed load would be aliasing UB on the host
  return v;
#endif
}
template <int W>
GSCHECK_HD_INLINE void store_unit(uint8_t* dst, const typename VecUnit<W>::type& v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<typename VecUnit<W>::type*>(dst) = v;
#else
  emu_check_unit(dst, dst, W);
  memcpy(dst, &v, W);
#endif
}

template <int W>
GSCHECK_HD_INLINE void store_zero_unit(uint8_t* dst) {
#if defined(__CUDA_ARCH__)
  using V = typename VecUnit<W>::type;
  *reinterpret_cast<V*>(dst) = V{};
#else
  emu_check_unit(dst, dst, W);
  memset(dst, 0, W);
#endif
}

/// Bytes one lane moves per step. With narrower units (pointers that disagree modulo 16) a lane
/// still takes a whole 16-byte chunk, so a warp's accesses stay within one 512-byte span.
inline constexpr int kChunkBytes = 16;

template <int W>
GSCHECK_HD_INLINE void copy_chunk(uint8_t* dst, const uint8_t* src) {
#if defined(__CUDA_ARCH__)
  GSCHECK_UNROLL
  for (int k = 0; k < kChunkBytes; k += W) load_store_unit<W>(dst + k, src + k);
#else
  emu_check_unit(dst, src, W);    // the loop's units are W-aligned when its first one is
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

/// A read-only 16-byte load: the non-coherent path (LDG.E.128.CONSTANT) on the device.
GSCHECK_HD_INLINE VecUnit<16>::type load16(const uint8_t* src) {
#if GSCHECK_DEVICE_PATH
  return __ldg(reinterpret_cast<const uint4*>(src));
#else
  VecUnit<16>::type v;
  memcpy(&v, src, 16);
  return v;
#endif
}
GSCHECK_HD_INLINE void store16(uint8_t* dst, const VecUnit<16>::type& v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(dst) = v;
#else
  emu_check_unit(dst, dst, 16);
  memcpy(dst, &v, 16);
#endif
}

/// Rows a lane moves at once when a row is at most one 16-byte unit per lane: four independent
/// index loads, then four 16-byte loads in flight, then four stores.
inline constexpr int kRowsInFlight = 4;
/// 16-byte units a lane keeps in flight within one long row (a row of more units than lanes).
inline constexpr int kUnitsInFlight = 4;

/// Gather, one output row per group of lanes: group in 2..32 (sub-warp or warp) or block_dim
/// (block per row). Map::source(row, &src_row) gives the source row or false (out of range:
/// the row is zeroed). Off is uint32_t or uint64_t. aligned16: both bases 16-byte aligned and
/// slice_bytes a multiple of 16 (checked on the host), so every row is whole 16-byte units and
/// takes the fast path; otherwise each row picks the widest unit its addresses allow.
template <class Map, class Off>
struct GatherRowsKernel {
  Map map;
  const uint8_t* d_params;
  uint8_t* d_out;
  Off rows;
  uint64_t slice_bytes;
  uint32_t group;
  bool aligned16;
  /// Aligned rows over 4 KB when rows are fewer than resident blocks: each row is split into
  /// `parts` (a power of two) pieces of whole units, one group per piece, so no SM idles.
  uint32_t parts = 1;

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const uint32_t lane = t.thread % group;  // group divides block_dim
    const Off stride = static_cast<Off>(t.total() / group);
    const Off first = static_cast<Off>(t.global() / group);
    if (aligned16) {
      const uint64_t units = slice_bytes / 16;
      if (units <= group) {
        short_rows(first, stride, lane);
      } else {
        long_rows(first, stride, lane, units);
      }
      return;
    }
    for (Off row = first; row < rows; row += stride) {
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

  // Rows of at most `group` units: lane < units moves unit `lane` of kRowsInFlight rows per step.
  GSCHECK_HD_INLINE void short_rows(Off first, Off stride, uint32_t lane) const {
    using V = VecUnit<16>::type;
    const bool active = lane < slice_bytes / 16;
    const uint64_t lane_off = static_cast<uint64_t>(lane) * 16;
    for (Off row = first; row < rows; row += kRowsInFlight * stride) {
      Off src[kRowsInFlight];
      bool ok[kRowsInFlight];
      GSCHECK_UNROLL
      for (int k = 0; k < kRowsInFlight; ++k) {
        const Off r = row + static_cast<Off>(k) * stride;
        ok[k] = r < rows && r >= row && map.source(r, &src[k]);  // r >= row: no wrap-around
      }
      if (!active) continue;
      V v[kRowsInFlight];
      GSCHECK_UNROLL
      for (int k = 0; k < kRowsInFlight; ++k) {
        v[k] =
            ok[k] ? load16(d_params + static_cast<uint64_t>(src[k]) * slice_bytes + lane_off) : V{};
      }
      GSCHECK_UNROLL
      for (int k = 0; k < kRowsInFlight; ++k) {
        const Off r = row + static_cast<Off>(k) * stride;
        if (r < rows && r >= row)
          store16(d_out + static_cast<uint64_t>(r) * slice_bytes + lane_off, v[k]);
      }
    }
  }

  // Rows of more units than lanes: kUnitsInFlight independent loads per lane, and the next
  // piece's index fetched before this piece's copy so its latency overlaps the copy. A piece is
  // a whole row, or 1/parts of one.
  GSCHECK_HD_INLINE void long_rows(Off first, Off stride, uint32_t lane, uint64_t units) const {
    using V = VecUnit<16>::type;
    const Off pieces = rows * static_cast<Off>(parts);  // parts > 1 only when rows are few
    const uint64_t piece_units = units / parts;
    if (first >= pieces) return;
    Off next_src = 0;
    bool next_ok = map.source(first / parts, &next_src);
    for (Off v = first; v < pieces; v += stride) {
      const Off src_row = next_src;
      const bool ok = next_ok;
      const Off nv = v + stride;
      if (nv < pieces && nv > v) next_ok = map.source(nv / parts, &next_src);
      const Off row = v / parts;
      const uint64_t piece_off = static_cast<uint64_t>(v - row * parts) * piece_units * 16;
      uint8_t* dst = d_out + static_cast<uint64_t>(row) * slice_bytes + piece_off;
      const uint8_t* src = d_params + static_cast<uint64_t>(src_row) * slice_bytes + piece_off;
      uint64_t u = lane;
      const uint64_t g = group;
      for (; u + (kUnitsInFlight - 1) * g < piece_units; u += kUnitsInFlight * g) {
        V x[kUnitsInFlight];
        GSCHECK_UNROLL
        for (int k = 0; k < kUnitsInFlight; ++k) x[k] = ok ? load16(src + (u + k * g) * 16) : V{};
        GSCHECK_UNROLL
        for (int k = 0; k < kUnitsInFlight; ++k) store16(dst + (u + k * g) * 16, x[k]);
      }
      for (; u < piece_units; u += g) store16(dst + u * 16, ok ? load16(src + u * 16) : V{});
    }
  }
};

/// Gather, one thread per output element of E bytes (slices under 16 B), kRowsInFlight elements
/// per step so several index and element loads are in flight. Base pointers are aligned to E.
template <class Map, class Off, int E>
struct GatherElementsKernel {
  Map map;
  const uint8_t* d_params;
  uint8_t* d_out;
  Off total;         ///< output elements
  DivBy<Off> slice;  ///< elements per row

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    using V = typename VecUnit<E>::type;
    const Off stride = static_cast<Off>(t.total());
    const Off n = slice.value();
    for (Off e = static_cast<Off>(t.global()); e < total; e += kRowsInFlight * stride) {
      Off src[kRowsInFlight];
      bool ok[kRowsInFlight];
      GSCHECK_UNROLL
      for (int k = 0; k < kRowsInFlight; ++k) {
        const Off ek = e + static_cast<Off>(k) * stride;
        ok[k] = false;
        if (ek < total && ek >= e) {
          const Off row = slice.div(ek);
          Off s = 0;
          ok[k] = map.source(row, &s);
          src[k] = s * n + (ek - row * n);
        }
      }
      V v[kRowsInFlight];
      GSCHECK_UNROLL
      for (int k = 0; k < kRowsInFlight; ++k) {
        v[k] = ok[k] ? load_unit<E>(d_params + static_cast<uint64_t>(src[k]) * E) : V{};
      }
      GSCHECK_UNROLL
      for (int k = 0; k < kRowsInFlight; ++k) {
        const Off ek = e + static_cast<Off>(k) * stride;
        if (ek < total && ek >= e) store_unit<E>(d_out + static_cast<uint64_t>(ek) * E, v[k]);
      }
    }
  }
};

}  // namespace gscheck::cuda
