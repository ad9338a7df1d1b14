// Dispatch of gather and gather_nd: which kernel and thread mapping a slice size gets, driven by
// GatherPolicy. Both ops share it; each supplies only its index map.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/status.h"
#include "cuda/executor.h"
#include "cuda/slice_copy.cuh"

namespace gscheck::cuda {

/// Tuning of the gather kernels (the CUB policy-struct pattern: the knobs that shape the launch,
/// each with its evidence). No GPU has been lent yet (docs/cuda.md, GPU measurements), so the
/// values are reasoned from the sm_90 machine code (docs/cuda.md, Machine code) and the memory
/// system, not measured; re-tune from bench/cuda (cuda_bench) once a GPU runs it.
struct GatherPolicy {
  /// 256 threads = 8 warps: enough warps per block to hide load latency, and a block-per-row
  /// group still fits several resident blocks per SM (2048 threads per SM on sm_90).
  static constexpr uint32_t kBlockThreads = 256;
  /// Slices smaller than one 16 B vector get one thread per element: a row cannot feed a group,
  /// and neighbouring threads then write neighbouring bytes (coalesced stores).
  static constexpr uint64_t kPerElementBelowBytes = 16;
  /// Up to 512 B (32 lanes x 16 B) a sub-warp group per row: one 16 B unit per lane, so small
  /// rows do not leave most of a warp idle.
  static constexpr uint64_t kSubWarpMaxBytes = 512;
  /// Up to 4 KB a warp per row (each lane moves at most 8 units); above, a whole block per row
  /// so one long row is spread over 256 lanes. Also the smallest piece a long row is split into.
  static constexpr uint64_t kWarpMaxBytes = 4096;
  /// At most this many pieces per long row when rows are fewer than the resident blocks: enough
  /// to fill 132 SMs from a handful of rows while each piece stays >= kWarpMaxBytes.
  static constexpr uint32_t kMaxRowParts = 8;
  /// Resident blocks per SM the grid is capped at; the kernels are grid-stride loops, so a
  /// capped grid only changes how many rows each thread walks (DeviceExec::max_blocks uses the
  /// same 8; launches ask the occupancy API, so it is a record, not read by the dispatch).
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

/// Launch a gather over `rows` output rows of slice_elems elements each (elem_bytes wide), with
/// the mapping GatherPolicy picks for the slice size.
template <class Off, Executor Exec, class Map>
Status launch_gather(Exec& ex, const Map& map, const uint8_t* d_params, uint8_t* d_out,
                     uint64_t rows, uint64_t slice_elems, uint32_t elem_bytes) {
  const uint64_t slice_bytes = slice_elems * elem_bytes;
  const RowMapping m = choose_row_mapping(slice_bytes);
  constexpr uint32_t kBlock = GatherPolicy::kBlockThreads;
  if (m.group != 0) {
    const bool aligned16 = slice_bytes % 16 == 0 &&
                           reinterpret_cast<uintptr_t>(d_params) % 16 == 0 &&
                           reinterpret_cast<uintptr_t>(d_out) % 16 == 0;
    // Few long rows: split each into up to kMaxRowParts pieces (whole units of >= 4 KB) so the grid
    // still fills the machine.
    uint32_t parts = 1;
    if (m.group == GatherPolicy::kBlockThreads && aligned16) {
      const uint64_t units = slice_bytes / 16;
      while (parts < GatherPolicy::kMaxRowParts && rows * parts * 2 <= ex.max_blocks() &&
             units % (parts * 2) == 0 && slice_bytes / (parts * 2) >= GatherPolicy::kWarpMaxBytes)
        parts *= 2;
    }
    GatherRowsKernel<Map, Off> k{map,         d_params, d_out,     static_cast<Off>(rows),
                                 slice_bytes, m.group,  aligned16, parts};
    return ex.launch(k, rows * parts * m.group, kBlock);
  }
  const uint64_t total = rows * slice_elems;
  auto go = [&](auto e) -> Status {
    constexpr int E = decltype(e)::value;
    GatherElementsKernel<Map, Off, E> k{map, d_params, d_out, static_cast<Off>(total),
                                        DivBy<Off>(static_cast<Off>(slice_elems))};
    return ex.launch(k, total, kBlock);
  };
  switch (elem_bytes) {
    case 1:
      return go(std::integral_constant<int, 1>{});
    case 2:
      return go(std::integral_constant<int, 2>{});
    case 4:
      return go(std::integral_constant<int, 4>{});
    case 8:
      return go(std::integral_constant<int, 8>{});  // 16-byte elements never get here
    default:
      return Error{ErrorClass::kUnimplemented,
                   "no gather kernel for " + std::to_string(elem_bytes) + "-byte elements"};
  }
}

}  // namespace gscheck::cuda
