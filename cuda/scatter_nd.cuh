// scatter_nd and tensor_scatter_nd_{update,add,sub,min,max}: kernels and launcher.
// Two ways to apply rows: atomics (tf-gpu: any order), or sorted (deterministic: rows sorted by
// destination, each destination element reduced by one thread in row order, as tf-cpu does).
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/guarded_output.h"
#include "cuda/launch_common.cuh"
#include "cuda/ops.h"

namespace gscheck::cuda {

enum class ScatterKind : unsigned char { kUpdate, kAdd, kSub, kMin, kMax };

/// The kernels' storage type for a tensor element type (same bytes, device-friendly).
template <class T>
struct StorageOf {
  using type = T;
};
template <>
struct StorageOf<Float16> {
  using type = half_t;
};
template <>
struct StorageOf<BFloat16> {
  using type = bf16_t;
};
template <>
struct StorageOf<std::complex<float>> {
  using type = complex64_t;
};
template <>
struct StorageOf<std::complex<double>> {
  using type = complex128_t;
};

/// Which (type, kind) pairs TensorFlow has kernels for: min/max need an ordering, add/sub on
/// bool exist only as scatter_nd's logical or (kAdd).
template <class T>
constexpr bool scatter_kind_valid(ScatterKind k) {
  constexpr bool ordered = !std::is_same_v<T, complex64_t> && !std::is_same_v<T, complex128_t> &&
                           !std::is_same_v<T, bool>;
  if (k == ScatterKind::kMin || k == ScatterKind::kMax) return ordered;
  if (k == ScatterKind::kSub) return !std::is_same_v<T, bool>;
  return true;
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

template <class T>
GSCHECK_HD_INLINE bool elem_is_nan(T x) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
    const float f = to_f32(x);
    return f != f;
  } else if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

/// x[0..V) = src[0..V) in one V*sizeof(T)-byte load on the device (src aligned to it).
template <class T, int V>
GSCHECK_HD_INLINE void load_units(T* x, const T* src) {
#if defined(__CUDA_ARCH__)
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

#if defined(__CUDA_ARCH__)
/// __shfl_sync for the element types of the reduce kernel (2, 4 or 8 bytes).
template <class T>
__device__ __forceinline__ T shfl_elem(unsigned mask, T v, int src) {
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
///    lane of each group issues the atomic. The emulator has no warps: each thread flushes its
///    own unit, the scalar fallback.
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
#if defined(__CUDA_ARCH__)
    const unsigned mask = __activemask();
    const int lane = static_cast<int>(threadIdx.x & 31u);
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
  Off slice;
  Off invalid;
  ScatterKind kind;

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const Off stride = static_cast<Off>(t.total());
    const Off total = rows * slice;
    for (Off e = static_cast<Off>(t.global()); e < total; e += stride) {
      const Off i = e / slice;
      const Off j = e - i * slice;
      const Off dest = d_sorted_dest[i];
      if (dest == invalid || (i > 0 && d_sorted_dest[i - 1] == dest)) continue;
      T* o = d_out + static_cast<uint64_t>(dest) * slice + j;
      T acc = *o;
      for (Off k = i; k < rows && d_sorted_dest[k] == dest; ++k) {
        acc = apply_kind(kind, acc, d_updates[static_cast<uint64_t>(d_sorted_rows[k]) * slice + j]);
      }
      *o = acc;
    }
  }
};

inline ScatterKind scatter_kind(Op op) {
  switch (op) {
    case Op::kTensorScatterUpdate:
      return ScatterKind::kUpdate;
    case Op::kTensorScatterSub:
      return ScatterKind::kSub;
    case Op::kTensorScatterMin:
      return ScatterKind::kMin;
    case Op::kTensorScatterMax:
      return ScatterKind::kMax;
    default:
      return ScatterKind::kAdd;  // scatter_nd and tensor_scatter_nd_add
  }
}

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
  if constexpr (std::is_same_v<T, float>) return 4;
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) return 2;
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                std::is_same_v<T, double> || std::is_same_v<T, complex64_t>)
    return 1;
  return 0;
}

template <class T, class Off, int V, class Exec>
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

template <class T, class Off, class Exec>
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
  if (kind == ScatterKind::kUpdate && sizeof(T) > 8) sorted = true;
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
                                slice,
                                invalid,
                                kind};
  return ex.launch(k, total, kBlock);
}

/// The destination kernel of one scatter: d_dest[r] for every index row (and d_rows[r] = r
/// when d_rows is set, for the sorted path).
template <class Index, class Off, class Exec>
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

template <class Exec>
Outcome run_scatter_nd(Exec& ex, const Case& c, const ScatterPlan& p, const RunConfig& cfg) {
  const Tensor& indices = *c.indices;
  const Tensor& updates = *c.updates;
  const DType dt = updates.dtype();
  Expected<Tensor> out = c.op == Op::kScatterNd ? Tensor::zeros(dt, p.out_shape) : *c.tensor;
  if (!out.ok() || p.rows == 0 || p.out_elements == 0) return out;
  const ScatterKind kind = scatter_kind(c.op);
  const auto elem = static_cast<uint32_t>(dtype_size(dt));

  auto d_indices = upload(ex, indices.data(), indices.byte_size());
  if (!d_indices.ok()) return d_indices.error();
  auto d_updates = upload(ex, updates.data(), updates.byte_size());
  if (!d_updates.ok()) return d_updates.error();
  // Scatter outputs start from the input (or zeros): every element is defined, no poison.
  auto g = GuardedOutput<Exec>::create(ex, out->byte_size(), std::nullopt);
  if (!g.ok()) return g.error();
  GSCHECK_RETURN_IF_ERROR(ex.to_device(g->data(), out->data(), out->byte_size()));
  auto bad = BadRecord<Exec>::create(ex);
  if (!bad.ok()) return bad.error();

  const int64_t counts[] = {indices.num_elements(), updates.num_elements(), p.out_elements};
  Status st = with_index_type(indices.dtype(), [&](auto index_tag) -> Status {
    using Index = decltype(index_tag);
    return with_offset_type(counts, [&](auto off_tag) -> Status {
      using Off = decltype(off_tag);
      // A racing 16-byte store could tear, so complex128 update always takes the sorted path.
      const bool sorted = cfg.sorted_scatter || (kind == ScatterKind::kUpdate && elem > 8);
      auto dest = ex.scratch(0, p.rows * sizeof(Off) * (sorted ? 2 : 1));
      if (!dest.ok()) return dest.error();
      Off* d_dest = reinterpret_cast<Off*>(*dest);
      Off* d_rows = sorted ? d_dest + p.rows : nullptr;  // the atomic path writes no row numbers
      GSCHECK_RETURN_IF_ERROR((launch_scatter_dest<Index, Off>(
          ex, p, reinterpret_cast<const Index*>(d_indices->get()), d_dest, d_rows, bad->ptr())));
      return visit_dtype(dt, [&](auto tag) -> Status {
        using T = typename StorageOf<typename decltype(tag)::type>::type;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int32_t> ||
                      std::is_same_v<T, int64_t> || std::is_same_v<T, half_t> ||
                      std::is_same_v<T, bf16_t> || std::is_same_v<T, float> ||
                      std::is_same_v<T, double> || std::is_same_v<T, complex64_t> ||
                      std::is_same_v<T, complex128_t>) {
          if (!scatter_kind_valid<T>(kind)) {
            return Error{
                ErrorClass::kUnsupported,
                std::string(op_name(c.op)) + " has no kernel for " + std::string(dtype_name(dt))};
          }
          return apply_scatter_rows<T, Off>(ex, p, kind, sorted, d_updates->get(), g->data(),
                                            d_dest, d_rows);
        } else {
          return Error{ErrorClass::kUnimplemented,
                       "cuda scatter kernels do not take " + std::string(dtype_name(dt))};
        }
      });
    });
  });
  if (!st.ok()) return st.error();
  GSCHECK_RETURN_IF_ERROR(g->finish(ex, reinterpret_cast<uint8_t*>(out->data()), elem));
  auto b = bad->read(ex);
  if (!b.ok()) return b.error();
  if (cfg.checked && b->any()) {
    // tf-cpu applies rows in order and reports the last bad one.
    const std::vector<int64_t>& idims = indices.shape().dims();
    const std::vector<int64_t> row_dims(idims.begin(), idims.end() - 1);
    std::string tuple;
    for (int k = 0; k < p.depth; ++k) {
      tuple += (k ? ", " : "") + std::to_string(indices.int_at(b->last * p.depth + k));
    }
    return bad_index("indices" + position_string(row_dims, b->last) + " = [" + tuple +
                     "] does not index into shape " + p.out_shape.to_string());
  }
  return out;
}

}  // namespace gscheck::cuda
