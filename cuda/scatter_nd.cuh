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
/// (bad row: recorded, skipped). d_rows[r] = r (the values for the sorted path).
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
      d_rows[r] = r;
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

/// Packed path for half/bfloat16 add and sub: one half2/bfloat162 atomic per pair of elements.
/// Precondition: slice even and both buffers 4-byte aligned, so pairs never straddle rows.
template <class T, class Off>
struct ScatterPackedAddKernel {
  const Off* d_dest;
  const T* d_updates;
  T* d_out;
  Off pairs;  ///< rows * slice / 2
  Off slice;
  Off invalid;
  bool negate;

  GSCHECK_HD void operator()(const ThreadIndex& t) const {
    const Off stride = static_cast<Off>(t.total());
    for (Off p = static_cast<Off>(t.global()); p < pairs; p += stride) {
      const Off e = 2 * p;
      const Off r = e / slice;
      const Off dest = d_dest[r];
      if (dest == invalid) continue;
      T u0 = d_updates[e];
      T u1 = d_updates[e + 1];
      if (negate) {
        u0 = elem_neg(u0);
        u1 = elem_neg(u1);
      }
      atomic_add2(d_out + static_cast<uint64_t>(dest) * slice + (e - r * slice), u0, u1);
    }
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

template <class T, class Off, class Exec>
Status apply_scatter_rows(Exec& ex, const ScatterPlan& p, ScatterKind kind, bool sorted,
                          const uint8_t* d_updates_bytes, uint8_t* d_out_bytes,
                          typename Exec::Buffer& dest, typename Exec::Buffer& rows_buf) {
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
    constexpr bool kHalf = std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>;
    if constexpr (kHalf) {
      if ((kind == ScatterKind::kAdd || kind == ScatterKind::kSub) && p.slice % 2 == 0 &&
          reinterpret_cast<uintptr_t>(d_out) % 4 == 0 &&
          reinterpret_cast<uintptr_t>(d_updates) % 4 == 0) {
        ScatterPackedAddKernel<T, Off> k{reinterpret_cast<const Off*>(dest.get()),
                                         d_updates,
                                         d_out,
                                         static_cast<Off>(total / 2),
                                         slice,
                                         invalid,
                                         kind == ScatterKind::kSub};
        return ex.launch(k, total / 2, kBlock);
      }
    }
    ScatterAtomicKernel<T, Off> k{reinterpret_cast<const Off*>(dest.get()),
                                  d_updates,
                                  d_out,
                                  static_cast<Off>(total),
                                  slice,
                                  invalid,
                                  kind};
    return ex.launch(k, total, kBlock);
  }
  auto sorted_dest = ex.alloc(p.rows * sizeof(Off));
  if (!sorted_dest.ok()) return sorted_dest.error();
  auto sorted_rows = ex.alloc(p.rows * sizeof(Off));
  if (!sorted_rows.ok()) return sorted_rows.error();
  GSCHECK_RETURN_IF_ERROR(ex.sort_pairs(
      reinterpret_cast<const Off*>(dest.get()), reinterpret_cast<Off*>(sorted_dest->get()),
      reinterpret_cast<const Off*>(rows_buf.get()), reinterpret_cast<Off*>(sorted_rows->get()),
      p.rows, key_bits(static_cast<uint64_t>(invalid))));
  ScatterSortedKernel<T, Off> k{reinterpret_cast<const Off*>(sorted_dest->get()),
                                reinterpret_cast<const Off*>(sorted_rows->get()),
                                d_updates,
                                d_out,
                                rows,
                                slice,
                                invalid,
                                kind};
  return ex.launch(k, total, kBlock);
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
      auto dest = ex.alloc(p.rows * sizeof(Off));
      if (!dest.ok()) return dest.error();
      auto rows_buf = ex.alloc(p.rows * sizeof(Off));
      if (!rows_buf.ok()) return rows_buf.error();
      ScatterDestKernel<Index, Off> dk{};
      dk.d_indices = reinterpret_cast<const Index*>(d_indices->get());
      dk.depth = p.depth;
      for (int k = 0; k < p.depth; ++k) {
        dk.dims[k] = static_cast<Off>(p.dims[k]);
        dk.strides[k] = static_cast<Off>(p.strides[k]);
      }
      dk.rows = static_cast<Off>(p.rows);
      dk.invalid = static_cast<Off>(p.out_elements / p.slice);
      dk.d_dest = reinterpret_cast<Off*>(dest->get());
      dk.d_rows = reinterpret_cast<Off*>(rows_buf->get());
      dk.d_bad = bad->ptr();
      GSCHECK_RETURN_IF_ERROR(
          ex.launch(dk, static_cast<uint64_t>(p.rows), ScatterPolicy::kBlockThreads));
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
          return apply_scatter_rows<T, Off>(ex, p, kind, cfg.sorted_scatter, d_updates->get(),
                                            g->data(), *dest, *rows_buf);
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
