// The op x dtype table of the cuda kernels, read by both the capabilities (kernel_backend.cc)
// and the scatter dispatch: which element and index dtypes the kernels take, and for which
// (op, dtype) pairs TensorFlow registers a kernel at all. Plain constexpr, also usable in
// device code (`if constexpr` on a storage type).
#pragma once

#include "core/case.h"
#include "core/dtype.h"

namespace gscheck::cuda {

/// TensorFlow's kernels handle index depths 1..7 (batch coordinates included for gather_nd).
inline constexpr int kMaxDepth = 7;

/// The element dtypes the kernels take (every op), in the order the capabilities list them.
inline constexpr DType kKernelDTypes[] = {DType::kBool,    DType::kInt32,     DType::kInt64,
                                          DType::kFloat16, DType::kBFloat16,  DType::kFloat32,
                                          DType::kFloat64, DType::kComplex64, DType::kComplex128};
/// The index dtypes the kernels take.
inline constexpr DType kKernelIndexDTypes[] = {DType::kInt32, DType::kInt64};

constexpr bool kernel_takes_dtype(DType dt) {
  for (DType d : kKernelDTypes) {
    if (d == dt) return true;
  }
  return false;
}

/// How a scatter op combines an update with the destination.
enum class ScatterKind : unsigned char { kUpdate, kAdd, kSub, kMin, kMax };

constexpr ScatterKind scatter_kind(Op op) {
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

/// The rule for which (kind, dtype) pairs have a kernel: min/max need an ordering (no complex,
/// no bool); sub on bool does not exist; add on bool is scatter_nd's logical or.
constexpr bool kind_has_kernel(ScatterKind k, DType dt) {
  const bool ordered = dt != DType::kComplex64 && dt != DType::kComplex128 && dt != DType::kBool;
  if (k == ScatterKind::kMin || k == ScatterKind::kMax) return ordered;
  if (k == ScatterKind::kSub) return dt != DType::kBool;
  return true;
}

/// Whether TensorFlow registers a kernel for op on dt elements (when not, its kernel lookup
/// fails before any check). tensor_scatter_nd_add has no bool kernel, although scatter_nd's
/// bool add (kAdd, a logical or) exists.
constexpr bool tf_has_kernel(Op op, DType dt) {
  if (op == Op::kGather || op == Op::kGatherNd) return true;
  if (op == Op::kTensorScatterAdd && dt == DType::kBool) return false;
  return kind_has_kernel(scatter_kind(op), dt);
}

}  // namespace gscheck::cuda
