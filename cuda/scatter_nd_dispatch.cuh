// scatter_nd and tensor_scatter_nd_*: which kernel variant runs a case (atomic, vector reduce of
// width 4/2/1, or sorted), driven by ScatterPolicy, and the launches of the device code of
// cuda/scatter_nd_device.cuh.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/status.h"
#include "cuda/executor.h"
#include "cuda/scatter_nd_device.cuh"
#include "cuda/validate.h"

namespace gscheck::cuda {

/// Tuning of the scatter kernels (the CUB policy-struct pattern: the knobs that shape the launch,
/// each with its evidence). Not measured on a GPU yet (docs/cuda.md, GPU measurements); the
/// widths follow the sm_90 atomics the machine-code check finds (tests/cuda/sass_check.py).
struct ScatterPolicy {
  /// Same reasoning as GatherPolicy::kBlockThreads: 8 warps per block hide the atomics' latency
  /// and several blocks stay resident per SM.
  static constexpr uint32_t kBlockThreads = 256;
  /// As GatherPolicy::kBlocksPerSm (launches ask the occupancy API).
  static constexpr uint32_t kBlocksPerSm = 8;
  /// float32 add/sub units (4, else 2 when the slice or alignment forbids 4): atomicAdd(float4*)
  /// is one REDG.E.ADD.F32x4 on sm_90 (float2*: F32x2), a quarter of the scalar reductions.
  static constexpr int kFloat32Width = 4;
  /// float16/bfloat16 add/sub units: one red.global.add.noftz.f16x2 / .bf16x2 per pair (the
  /// atomicAdd overloads compiled to a generic ATOM with a shared-memory branch).
  static constexpr int kHalfWidth = 2;
  /// A racing store of more bytes than this could tear between two updates (single-copy
  /// atomicity ends at 8 bytes), so update of wider elements (complex128) always sorts.
  static constexpr uint64_t kMaxAtomicStoreBytes = 8;
};

/// Bits needed for keys in [0, v].
inline int key_bits(uint64_t v) {
  int b = 1;
  while (b < 64 && (v >> b) != 0) ++b;
  return b;
}

/// Vector width of the reduce kernel for T: 4 or 2 float32 (vector reductions), 2 half types
/// (packed), 1 otherwise; 0 when the reduce kernel does not take T (complex128, bool).
template <class T>
constexpr int reduce_max_width() {
  if constexpr (std::is_same_v<T, float>) return ScatterPolicy::kFloat32Width;
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>)
    return ScatterPolicy::kHalfWidth;
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                std::is_same_v<T, double> || std::is_same_v<T, complex64_t>)
    return 1;
  return 0;
}

template <class T, class Off, int V, Executor Exec>
Status launch_reduce(Exec& ex, ScatterKind kind, const Off* d_dest, const T* d_updates, T* d_out,
                     uint64_t total, Off slice, Off invalid) {
  ScatterReduceKernel<T, Off, V> k{d_dest,
                                   d_updates,
                                   d_out,
                                   static_cast<Off>(total / V),
                                   DivBy<Off>(static_cast<Off>(slice / V)),
                                   slice,
                                   invalid,
                                   kind};
  return ex.launch(k, total / V, ScatterPolicy::kBlockThreads);
}

template <class T, class Off, Executor Exec>
Status apply_scatter_rows(Exec& ex, const ScatterPlan& p, ScatterKind kind, bool sorted,
                          const uint8_t* d_updates_bytes, uint8_t* d_out_bytes, const Off* d_dest,
                          const Off* d_rows) {
  constexpr uint32_t kBlock = ScatterPolicy::kBlockThreads;
  const auto* d_updates = reinterpret_cast<const T*>(d_updates_bytes);
  T* d_out = reinterpret_cast<T*>(d_out_bytes);
  const Off rows = static_cast<Off>(p.rows);
  const Off slice = static_cast<Off>(p.slice);
  const Off invalid = static_cast<Off>(p.out_elements / p.slice);
  const uint64_t total = static_cast<uint64_t>(p.rows) * static_cast<uint64_t>(p.slice);
  // A racing 16-byte store could tear between two updates, so complex128 update always sorts.
  if (kind == ScatterKind::kUpdate && sizeof(T) > ScatterPolicy::kMaxAtomicStoreBytes)
    sorted = true;
  if (!sorted) {
    constexpr int kMaxV = reduce_max_width<T>();
    if constexpr (kMaxV > 0) {
      if (kind != ScatterKind::kUpdate) {
        const auto aligned = [&](uint64_t bytes) {
          return reinterpret_cast<uintptr_t>(d_out) % bytes == 0 &&
                 reinterpret_cast<uintptr_t>(d_updates) % bytes == 0;
        };
        const bool vector_ok = kind == ScatterKind::kAdd || kind == ScatterKind::kSub;
        if constexpr (kMaxV >= 4) {
          if (vector_ok && p.slice % 4 == 0 && aligned(4 * sizeof(T)))
            return launch_reduce<T, Off, 4>(ex, kind, d_dest, d_updates, d_out, total, slice,
                                            invalid);
        }
        if constexpr (kMaxV >= 2) {
          if (vector_ok && p.slice % 2 == 0 && aligned(2 * sizeof(T)))
            return launch_reduce<T, Off, 2>(ex, kind, d_dest, d_updates, d_out, total, slice,
                                            invalid);
        }
        return launch_reduce<T, Off, 1>(ex, kind, d_dest, d_updates, d_out, total, slice, invalid);
      }
    }
    ScatterAtomicKernel<T, Off> k{d_dest, d_updates, d_out, static_cast<Off>(total),
                                  slice,  invalid,   kind};
    return ex.launch(k, total, kBlock);
  }
  // Sorted path: scratch kept by the executor (no allocation per call once warm).
  auto sorted_dest = ex.scratch(1, p.rows * sizeof(Off));
  if (!sorted_dest.ok()) return sorted_dest.error();
  auto sorted_rows = ex.scratch(2, p.rows * sizeof(Off));
  if (!sorted_rows.ok()) return sorted_rows.error();
  GSCHECK_RETURN_IF_ERROR(ex.sort_pairs(d_dest, reinterpret_cast<Off*>(*sorted_dest), d_rows,
                                        reinterpret_cast<Off*>(*sorted_rows), p.rows,
                                        key_bits(static_cast<uint64_t>(invalid))));
  ScatterSortedKernel<T, Off> k{reinterpret_cast<const Off*>(*sorted_dest),
                                reinterpret_cast<const Off*>(*sorted_rows),
                                d_updates,
                                d_out,
                                rows,
                                DivBy<Off>(slice),
                                invalid,
                                kind};
  return ex.launch(k, total, kBlock);
}

/// The destination kernel of one scatter: d_dest[r] for every index row (and d_rows[r] = r
/// when d_rows is set, for the sorted path).
template <class Index, class Off, Executor Exec>
Status launch_scatter_dest(Exec& ex, const ScatterPlan& p, const Index* d_indices, Off* d_dest,
                           Off* d_rows, int64_t* d_bad) {
  ScatterDestKernel<Index, Off> dk{};
  dk.d_indices = d_indices;
  dk.depth = p.depth;
  for (int k = 0; k < p.depth; ++k) {
    dk.dims[k] = static_cast<Off>(p.dims[k]);
    dk.strides[k] = static_cast<Off>(p.strides[k]);
  }
  dk.rows = static_cast<Off>(p.rows);
  dk.invalid = static_cast<Off>(p.out_elements / p.slice);
  dk.d_dest = d_dest;
  dk.d_rows = d_rows;
  dk.d_bad = d_bad;
  return ex.launch(dk, static_cast<uint64_t>(p.rows), ScatterPolicy::kBlockThreads);
}

}  // namespace gscheck::cuda
