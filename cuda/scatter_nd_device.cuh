// scatter_nd and tensor_scatter_nd_{update,add,sub,min,max}: the kernels (device code, seeing only
// the portability layer and the kernel table). Two ways to apply rows: atomics (tf-gpu: any
// order), or sorted (deterministic: rows sorted by destination, each destination element reduced
// by one thread in row order, as tf-cpu does). Which kernel runs: cuda/scatter_nd_dispatch.cuh.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda/kernel_table.h"
#include "cuda/portability.h"

namespace gscheck::cuda {

/// Whether storage type T has a kernel for kind k: the kernel table's rule on T's dtype.
template <class T>
constexpr bool scatter_kind_valid(ScatterKind k) {
  return kind_has_kernel(k, storage_dtype<T>());
}

/// Destination slice of every index row: d_dest[r] = slice number in the output, or `invalid`
/// (bad row: recorded, skipped). d_rows[r] = r (the values for the sorted path; null on the
/// atomic path, which needs no row numbers).
template <class Index, class Off>
struct ScatterDestKernel {
  const Index* d_indices;
  int depth;
  Off dims[kMaxDepth];
  Off strides[kMaxDepth];
  Off rows;
  Off invalid;
  Off* d_dest;
  Off* d_rows;
  int64_t* d_bad;

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const Off stride = static_cast<Off>(t.total());
    for (Off r = static_cast<Off>(t.global()); r < rows; r += stride) {
      const Index* ix = d_indices + static_cast<uint64_t>(r) * depth;
      Off s = 0;
      bool ok = true;
      for (int k = 0; k < depth && ok; ++k) {
        const int64_t v = static_cast<int64_t>(ix[k]);
        ok = v >= 0 && v < static_cast<int64_t>(dims[k]);
        if (ok) s += static_cast<Off>(v) * strides[k];
      }
      if (!ok) record_bad_position(d_bad, static_cast<int64_t>(r));
      d_dest[r] = ok ? s : invalid;
      if (d_rows != nullptr) d_rows[r] = r;
    }
  }
};

template <class T>
GSCHECK_HD_INLINE T apply_kind(ScatterKind kind, T cur, T u) {
  if constexpr (std::is_same_v<T, bool>) {
    return kind == ScatterKind::kUpdate ? u : elem_add(cur, u);
  } else {
    switch (kind) {
      case ScatterKind::kUpdate:
        return u;
      case ScatterKind::kAdd:
        return elem_add(cur, u);
      case ScatterKind::kSub:
        return elem_add(cur, elem_neg(u));
      case ScatterKind::kMin:
        if constexpr (scatter_kind_valid<T>(ScatterKind::kMin)) return elem_min(cur, u);
        return cur;
      case ScatterKind::kMax:
        if constexpr (scatter_kind_valid<T>(ScatterKind::kMax)) return elem_max(cur, u);
        return cur;
    }
    return cur;
  }
}

/// Atomic path: one thread per updated element, read-modify-write with the kind's atomic.
template <class T, class Off>
struct ScatterAtomicKernel {
  const Off* d_dest;
  const T* d_updates;
  T* d_out;
  Off total;  ///< rows * slice
  Off slice;
  Off invalid;
  ScatterKind kind;

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const Off stride = static_cast<Off>(t.total());
    for (Off e = static_cast<Off>(t.global()); e < total; e += stride) {
      const Off r = e / slice;
      const Off dest = d_dest[r];
      if (dest == invalid) continue;
      T* o = d_out + static_cast<uint64_t>(dest) * slice + (e - r * slice);
      const T u = d_updates[e];
      if constexpr (std::is_same_v<T, bool>) {
        if (kind == ScatterKind::kUpdate) {
          atomic_store(o, u);
        } else {
          atomic_add(o, u);
        }
      } else {
        switch (kind) {
          case ScatterKind::kUpdate:
            if constexpr (sizeof(T) <= 8) atomic_store(o, u);
            break;
          case ScatterKind::kAdd:
            atomic_add(o, u);
            break;
          case ScatterKind::kSub:
            atomic_add(o, elem_neg(u));
            break;
          case ScatterKind::kMin:
            if constexpr (scatter_kind_valid<T>(ScatterKind::kMin)) atomic_min(o, u);
            break;
          case ScatterKind::kMax:
            if constexpr (scatter_kind_valid<T>(ScatterKind::kMax)) atomic_max(o, u);
            break;
        }
      }
    }
  }
};

/// x[0..V) = src[0..V) in one V*sizeof(T)-byte load on the device (src aligned to it).
template <class T, int V>
GSCHECK_HD_INLINE void load_units(T* x, const T* src) {
#if GSCHECK_DEVICE_PATH
  if constexpr (V > 1 && (V * sizeof(T) == 4 || V * sizeof(T) == 8 || V * sizeof(T) == 16)) {
    using W = typename VecUnit<V * sizeof(T)>::type;
    const W w = __ldg(reinterpret_cast<const W*>(src));
    memcpy(x, &w, sizeof(W));
    return;
  }
#endif
  memcpy(x, src, V * sizeof(T));
}

/// Two updates of one element folded into one, for add/sub (a sum) and min/max. An update of
/// NaN never changes the destination (TensorFlow keeps the current value), so a NaN on the left
/// is replaced by the right one rather than absorbing it.
template <class T>
GSCHECK_HD_INLINE T fold_updates(ScatterKind kind, T a, T b) {
  if constexpr (scatter_kind_valid<T>(ScatterKind::kMin)) {
    if (kind == ScatterKind::kMin) return (elem_is_nan(a) || elem_less(b, a)) ? b : a;
    if (kind == ScatterKind::kMax) return (elem_is_nan(a) || elem_less(a, b)) ? b : a;
  }
  return elem_add(a, b);
}

#if GSCHECK_DEVICE_PATH
/// __shfl_sync for the element types of the reduce kernel (2, 4 or 8 bytes).
template <class T>
GSCHECK_HD_INLINE T shfl_elem(unsigned mask, T v, int src) {
  if constexpr (sizeof(T) <= 4) {
    using U = typename UIntOf<sizeof(T)>::type;
    const unsigned int w = bit_cast<U>(v);
    return bit_cast<T>(static_cast<U>(__shfl_sync(mask, w, src)));
  } else {
    static_assert(sizeof(T) == 8);
    return bit_cast<T>(__shfl_sync(mask, bit_cast<unsigned long long>(v), src));
  }
}
#endif

/// Atomic path for add, sub, min and max: one thread per unit of V adjacent elements of a row
/// (V = 4 or 2: float32 vector reductions, 2: packed half2/bfloat162, else 1). Two ways fewer
/// atomics reach a destination that many rows share (a hot key):
///  - a thread carries its last unit while the next one has the same destination, and issues
///    one atomic when the destination changes (grid-stride steps are a multiple of 32 units, so
///    a thread stays on one column of a row that every index hits);
///  - at the end, lanes of a warp holding the same destination fold their units together
///    (__match_any_sync, then pointer jumping over the lanes of each group) and only the lowest
///    lane of each group issues the atomic. cuda-emu runs this fold too: with the lanes in lock
///    step in its warp-synchronous mode, each lane alone (a group of one) otherwise.
/// Sums are then associated differently from element order: tf-gpu's atomics promise no order.
template <class T, class Off, int V>
struct ScatterReduceKernel {
  const Off* d_dest;
  const T* d_updates;
  T* d_out;
  Off units;               ///< rows * slice / V
  DivBy<Off> slice_units;  ///< slice / V
  Off slice;
  Off invalid;
  ScatterKind kind;  ///< kAdd, kSub, kMin or kMax

  GSCHECK_HD_INLINE void flush(Off at, const T* acc) const {
    T* o = d_out + static_cast<uint64_t>(at);
    if (kind == ScatterKind::kMin || kind == ScatterKind::kMax) {
      if constexpr (scatter_kind_valid<T>(ScatterKind::kMin)) {
        GSCHECK_UNROLL
        for (int k = 0; k < V; ++k) {
          if (kind == ScatterKind::kMin) {
            atomic_min(o + k, acc[k]);
          } else {
            atomic_max(o + k, acc[k]);
          }
        }
      }
      return;
    }
    if constexpr (V > 1 && std::is_same_v<T, float>) {
      atomic_add_f32v<V>(o, acc);
    } else if constexpr (V == 2 && (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>)) {
      atomic_add2(o, acc[0], acc[1]);
    } else {
      GSCHECK_UNROLL
      for (int k = 0; k < V; ++k) atomic_add(o + k, acc[k]);
    }
  }

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    constexpr Off kNone = ~Off{0};
    const Off stride = static_cast<Off>(t.total());
    const Off su = slice_units.value();
    const bool negate = kind == ScatterKind::kSub;
    const ScatterKind fold = negate ? ScatterKind::kAdd : kind;
    Off pending = kNone;
    T acc[V] = {};
    for (Off u = static_cast<Off>(t.global()); u < units; u += stride) {
      const Off r = slice_units.div(u);
      const Off dest = d_dest[r];
      if (dest == invalid) continue;
      const Off at = dest * slice + (u - r * su) * static_cast<Off>(V);
      T x[V];
      load_units<T, V>(x, d_updates + static_cast<uint64_t>(u) * V);
      if (negate) {
        GSCHECK_UNROLL
        for (int k = 0; k < V; ++k) x[k] = elem_neg(x[k]);
      }
      if (at == pending) {
        GSCHECK_UNROLL
        for (int k = 0; k < V; ++k) acc[k] = fold_updates(fold, acc[k], x[k]);
      } else {
        if (pending != kNone) flush(pending, acc);
        pending = at;
        GSCHECK_UNROLL
        for (int k = 0; k < V; ++k) acc[k] = x[k];
      }
    }
#if GSCHECK_DEVICE_PATH
    const unsigned mask = __activemask();
    const int lane = static_cast<int>(t.thread & 31u);
    const unsigned peers = __match_any_sync(mask, pending);
    const unsigned later = peers & ~((2u << lane) - 1u);  // peers above this lane
    int next = later ? __ffs(later) - 1 : -1;
    // Pointer jumping: after round i, acc folds this lane's unit and the next 2^(i+1)-1 peers'.
    while (__any_sync(mask, next >= 0)) {
      const int from = next >= 0 ? next : lane;
      GSCHECK_UNROLL
      for (int k = 0; k < V; ++k) {
        const T other = shfl_elem(mask, acc[k], from);
        if (next >= 0) acc[k] = fold_updates(fold, acc[k], other);
      }
      const int next2 = __shfl_sync(mask, next, from);
      if (next >= 0) next = next2;
    }
    if ((peers & ((1u << lane) - 1u)) != 0) return;  // not the lowest lane of its group
#endif
    if (pending != kNone) flush(pending, acc);
  }
};

/// Sorted path: rows sorted by destination (stable, so row order within a destination). The
/// first row of each destination run reduces the run in order, one thread per slice element.
template <class T, class Off>
struct ScatterSortedKernel {
  const Off* d_sorted_dest;
  const Off* d_sorted_rows;
  const T* d_updates;
  T* d_out;
  Off rows;
  DivBy<Off> slice;
  Off invalid;
  ScatterKind kind;

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const Off stride = static_cast<Off>(t.total());
    const Off n = slice.value();
    const Off total = rows * n;
    for (Off e = static_cast<Off>(t.global()); e < total; e += stride) {
      const Off i = slice.div(e);
      const Off j = e - i * n;
      const Off dest = d_sorted_dest[i];
      if (dest == invalid) continue;
      T* o = d_out + static_cast<uint64_t>(dest) * n + j;
      if (kind == ScatterKind::kUpdate) {
        // The last row of the run wins: that row's thread writes it, no walk (a hot key costs
        // one store per element, not one thread walking every row).
        if (i + 1 < rows && d_sorted_dest[i + 1] == dest) continue;
        *o = d_updates[static_cast<uint64_t>(d_sorted_rows[i]) * n + j];
        continue;
      }
      if (i > 0 && d_sorted_dest[i - 1] == dest) continue;
      T acc = *o;
      for (Off k = i; k < rows && d_sorted_dest[k] == dest; ++k) {
        acc = apply_kind(kind, acc, d_updates[static_cast<uint64_t>(d_sorted_rows[k]) * n + j]);
      }
      *o = acc;
    }
  }
};

}  // namespace gscheck::cuda
