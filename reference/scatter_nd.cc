// tf.scatter_nd (ScatterNd) and tf.tensor_scatter_nd_{update,add,sub,min,max} (TensorScatter*):
// each op's own checks, the shared PrepareAndValidateInputs checks, then rows applied in order.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "reference/ops.h"
#include "reference/validate.h"

namespace gscheck::reference::detail {
namespace {

constexpr int kMaxDepth = 7;  // the scatter functors are instantiated for depths 1..7

std::string kernel_name(Op op) {
  switch (op) {
    case Op::kScatterNd:
      return "ScatterNd";
    case Op::kTensorScatterUpdate:
      return "TensorScatterUpdate";
    case Op::kTensorScatterAdd:
      return "TensorScatterAdd";
    case Op::kTensorScatterSub:
      return "TensorScatterSub";
    case Op::kTensorScatterMin:
      return "TensorScatterMin";
    case Op::kTensorScatterMax:
      return "TensorScatterMax";
    default:
      return std::string(op_name(op));
  }
}

// Which element types TensorFlow's CPU kernels register for each scatter op.
bool dtype_registered(Op op, DType dt, Semantics s) {
  // XLA takes every dtype but strings, bool min/max too (AND, OR) and complex min/max (left to the
  // backends' known failures: the rule is not modelled); bool sub crashes TF-XLA 2.21 (SIGSEGV),
  // so TensorFlow's "no kernel" stays the expectation (docs/spec_notes.md).
  if (is_xla_profile(s) && dt != DType::kString &&
      (op == Op::kTensorScatterMin || op == Op::kTensorScatterMax))
    return dt == DType::kBool || is_real_number(dt);
  switch (op) {
    case Op::kScatterNd:
    case Op::kTensorScatterUpdate:
      return true;
    case Op::kTensorScatterAdd:
    case Op::kTensorScatterSub:
      return dt != DType::kBool && dt != DType::kString;
    default:
      return is_real_number(dt);  // min, max
  }
}

// scatter_nd_op.cc ValidEmptyOutputShape: either no indices and no updates, or all three non-empty.
bool valid_empty_output_shape(int64_t num_inputs, int64_t num_indices, int64_t num_updates) {
  if (num_indices == 0 && num_updates == 0) return true;
  return num_inputs != 0 && num_indices != 0 && num_updates != 0;
}

// TensorShape::DebugString of a shape proto: -1 prints as "?".
std::string proto_shape_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += dims[i] == -1 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

// TensorShapeUtils::MakeShape over the values of scatter_nd's `shape` input.
Expected<Shape> make_shape(const Tensor& shape_input) {
  const int64_t n = shape_input.num_elements();
  if (n > kMaxRank) return invalid_argument("Too many dimensions");
  std::vector<int64_t> dims(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) dims[static_cast<size_t>(i)] = shape_input.int_at(i);
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return invalid_argument("Dimension " + std::to_string(d) + " must be >= 0");
    auto m = checked_mul(count, d);
    if (!m) {
      return invalid_argument("Shape " + proto_shape_string(dims) +
                              " would have more than 2**63 - 1 elements");
    }
    count = *m;
  }
  return Shape(std::move(dims));
}

// ScatterNd's own checks (ScatterNdOp::Compute); returns the output shape.
Expected<Shape> check_scatter_nd(const Tensor& indices, const Tensor& updates,
                                 const Tensor& shape_input) {
  const Shape& is = indices.shape();
  const Shape& us = updates.shape();
  Expected<Shape> shape = make_shape(shape_input);
  if (!shape.ok()) return shape.error();
  const Shape& s = *shape;
  if (!valid_empty_output_shape(shape_input.num_elements(), indices.num_elements(),
                                updates.num_elements())) {
    return invalid_argument("Indices and updates specified for empty output shape");
  }
  const int64_t outer = is.rank() - 1;
  for (int64_t i = 0; i < outer; ++i) {
    // TF reads updates.dim_size(i) past its rank here (a CHECK failure); we report the mismatch.
    if (i >= us.rank() || is.dim(static_cast<int>(i)) != us.dim(static_cast<int>(i))) {
      return invalid_argument("Dimensions [0," + std::to_string(outer) + ") of indices[shape=" +
                              is.to_string() + "] must match dimensions [0," +
                              std::to_string(outer) + ") of updates[shape=" + us.to_string() + "]");
    }
  }
  const int64_t ix = is.dim(static_cast<int>(outer));
  const std::string inner_err =
      "Dimensions [" + std::to_string(ix) + "," + std::to_string(s.rank()) +
      ") of input[shape=" + s.to_string() + "] must match dimensions [" + std::to_string(outer) +
      "," + std::to_string(us.rank()) + ") of updates[shape=" + us.to_string() + "]";
  if (us.rank() - outer != s.rank() - ix) return invalid_argument(inner_err);
  for (int64_t i = 0; i + outer < us.rank(); ++i) {
    if (us.dim(static_cast<int>(i + outer)) != s.dim(static_cast<int>(ix + i))) {
      return invalid_argument(inner_err);
    }
  }
  if (shape_input.rank() != 1) return invalid_argument("Shape must be a vector");
  return shape;
}

// TensorScatter*'s own checks (TensorScatterOp::Compute).
Status check_tensor_scatter(const Shape& s, const Tensor& indices, const Tensor& updates) {
  const Shape& is = indices.shape();
  const Shape& us = updates.shape();
  if (!valid_empty_output_shape(s.num_elements().value_or(0), indices.num_elements(),
                                updates.num_elements())) {
    return invalid_argument("Indices and updates specified for empty output shape");
  }
  const int64_t outer = is.rank() - 1;
  for (int64_t i = 0; i < outer; ++i) {
    if (i >= us.rank() || is.dim(static_cast<int>(i)) != us.dim(static_cast<int>(i))) {
      return invalid_argument("Outer dimensions of indices and update must match. Indices shape: " +
                              is.to_string() + ", updates shape:" + us.to_string());
    }
  }
  const int64_t ix = is.dim(static_cast<int>(outer));
  if (us.rank() - outer != s.rank() - ix) {
    return invalid_argument(
        "Inner dimensions of output shape must match inner dimensions of updates shape. "
        "Output: " +
        s.to_string() + " updates: " + us.to_string());
  }
  for (int64_t i = 0; i + outer < us.rank(); ++i) {
    if (us.dim(static_cast<int>(i + outer)) != s.dim(static_cast<int>(ix + i))) {
      return invalid_argument("The inner " + std::to_string(s.rank() - ix) +
                              " dimensions of output.shape=" + s.to_string() +
                              " must match the inner " + std::to_string(us.rank() - outer) +
                              " dimensions of updates.shape=" + us.to_string());
    }
  }
  return {};
}

// scatter_nd_util.cc ValidateScatterNdUpdateShape.
Status validate_update_shape(const Shape& s, const Shape& is, const Shape& us) {
  const int64_t slice_dim = is.rank() > 1 ? is.dim(is.rank() - 1) : 1;
  const int64_t batch_dim = is.rank() > 1 ? is.rank() - 1 : 1;
  const std::string prefix_err = "Dimensions [0," + std::to_string(batch_dim) +
                                 ") of indices[shape=" + is.to_string() +
                                 "] must match dimensions [0," + std::to_string(batch_dim) +
                                 ") of updates[shape=" + us.to_string() + "]";
  const std::string suffix_err = "Dimensions [" + std::to_string(slice_dim) + "," +
                                 std::to_string(s.rank()) + ") of input[shape=" + s.to_string() +
                                 "] must match dimensions [" + std::to_string(slice_dim) + "," +
                                 std::to_string(us.rank()) +
                                 ") of updates[shape=" + us.to_string() + "]";
  if (us.rank() < batch_dim) return invalid_argument(prefix_err);
  if (s.rank() < slice_dim + (us.rank() - batch_dim)) return invalid_argument(suffix_err);
  if (us.rank() != batch_dim + s.rank() - slice_dim) return invalid_argument(suffix_err);
  for (int64_t d = 0; d < batch_dim; ++d) {
    if (us.dim(static_cast<int>(d)) != is.dim(static_cast<int>(d))) {
      return invalid_argument(prefix_err);
    }
  }
  for (int64_t d = 0; d < us.rank() - batch_dim; ++d) {
    if (us.dim(static_cast<int>(d + batch_dim)) != s.dim(static_cast<int>(d + slice_dim))) {
      return invalid_argument(suffix_err);
    }
  }
  return {};
}

// The scatter rows: depth coordinates into the output, each addressing a slice.
struct Geometry {
  int64_t rows = 0;
  int depth = 0;
  int64_t dims[kMaxDepth] = {};
  int64_t strides[kMaxDepth] = {};  // in slices
  int64_t slice = 1;                // elements per slice
  IndexRule rule;                   // the semantics' rule for each coordinate
};

// PrepareAndValidateInputs (scatter_nd_op.cc): checks shared by every scatter op.
Expected<Geometry> prepare_and_validate(const Shape& s, const Tensor& indices,
                                        const Tensor& updates) {
  const Shape& is = indices.shape();
  const Shape& us = updates.shape();
  if (s.rank() < 1)
    return invalid_argument("Output must be at least 1-D, got shape: " + s.to_string());
  if (!valid_empty_output_shape(s.num_elements().value_or(0), indices.num_elements(),
                                updates.num_elements())) {
    return invalid_argument("Indices and updates specified for empty output.  indices shape: " +
                            is.to_string());
  }
  if (us.dim(0) != is.dim(0)) {
    return invalid_argument("Dimensions [0,1) of indices[shape=" + is.to_string() +
                            "] = " + std::to_string(is.dim(0)) +
                            " must match dimensions [0,1) of updates[shape=" + us.to_string() +
                            "] = " + std::to_string(us.dim(0)));
  }
  GSCHECK_RETURN_IF_ERROR(validate_update_shape(s, is, us));
  const std::string type = index_type_name(indices.dtype());
  const int64_t imax = index_max(indices.dtype());
  if (indices.num_elements() > imax) {
    return invalid_argument("indices has too many elements for " + type + " indexing: " +
                            std::to_string(indices.num_elements()) + " > " + std::to_string(imax));
  }
  if (s.dim(0) > imax) {
    return invalid_argument("params_shape[0] too large for " + type + " indexing: " +
                            std::to_string(s.dim(0)) + " > " + std::to_string(imax));
  }
  const int64_t slice_dim = is.rank() > 1 ? is.dim(is.rank() - 1) : 1;
  // slice_dim <= rank(s) after validate_update_shape.
  const Product slice = product(s.dims(), static_cast<size_t>(slice_dim), s.dims().size());
  if (slice.overflow || slice.value > imax) {
    return invalid_argument("slice size is too large for indexing: " + slice.text() + " > " +
                            std::to_string(imax));
  }
  Geometry g;
  g.depth = static_cast<int>(std::min<int64_t>(slice_dim, kMaxDepth + 1));
  g.slice = slice.value;
  g.rows = indices.num_elements() / std::max<int64_t>(slice_dim, 1);
  return g;
}

// Element operations. Half types compute in float and round after every operation (Eigen);
// integers wrap; bool add is OR; string add concatenates; min/max keep the output element
// unless the update compares strictly smaller/larger (std::min/std::max, as Eigen's cwiseMin).
template <class T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <class T>
T from_float(float f) {
  if constexpr (std::is_same_v<T, Float16>) {
    return float16_from_float(f);
  } else {
    return bfloat16_from_float(f);
  }
}

template <class T>
void add_to(T& o, const T& u) {
  if constexpr (std::is_same_v<T, bool>) {
    o = o || u;
  } else if constexpr (kIsHalf<T>) {
    o = from_float<T>(to_float(o) + to_float(u));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    o = static_cast<T>(static_cast<U>(static_cast<U>(o) + static_cast<U>(u)));
  } else {
    o += u;  // float, double, complex, string (concatenation)
  }
}

template <class T>
void sub_from(T& o, const T& u) {
  if constexpr (kIsHalf<T>) {
    o = from_float<T>(to_float(o) - to_float(u));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    o = static_cast<T>(static_cast<U>(static_cast<U>(o) - static_cast<U>(u)));
  } else {
    o -= u;
  }
}

template <class T>
bool less(const T& a, const T& b) {
  if constexpr (kIsHalf<T>) {
    return to_float(a) < to_float(b);
  } else {
    return a < b;
  }
}

// -1 for -0, +1 for +0, 0 for anything else (every non-float type).
template <class T>
int zero_sign(const T& x) {
  if constexpr (kIsHalf<T>) {
    return zero_sign(to_float(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    return x == 0 ? (std::signbit(x) ? -1 : 1) : 0;
  } else {
    return 0;
  }
}

template <class T>
bool nan_value(const T& x) {
  if constexpr (kIsHalf<T>) {
    return std::isnan(to_float(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <class T>
bool sign_bit(const T& x) {
  if constexpr (kIsHalf<T>) {
    return (x.bits & 0x8000) != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::signbit(x);
  } else {
    return false;
  }
}

// x with its sign bit set to neg, the payload kept (a NaN's too).
template <class T>
T with_sign(T x, bool neg) {
  if constexpr (kIsHalf<T>) {
    x.bits = static_cast<uint16_t>((x.bits & 0x7fff) | (neg ? 0x8000 : 0));
    return x;
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::copysign(x, neg ? T(-1) : T(1));
  } else {
    return x;
  }
}

// Whether the update u replaces o in a min (less(u, o)) or max (less(o, u)); where neither is
// less (equal, or a NaN) TensorFlow keeps o, and Departure::MinMaxTie says otherwise.
template <class T>
bool update_wins(const T& o, const T& u, bool min, Departure::MinMaxTie tie) {
  if (min ? less(u, o) : less(o, u)) return true;
  if (min ? less(o, u) : less(u, o)) return false;
  switch (tie) {
    case Departure::MinMaxTie::kKeep:
      return false;
    case Departure::MinMaxTie::kUpdate:
      return true;
    case Departure::MinMaxTie::kXla: {
      if (nan_value(o)) return false;
      if (nan_value(u)) return true;
      const int so = zero_sign(o), su = zero_sign(u);
      return so != 0 && su != 0 && so != su && (min ? su < 0 : su > 0);
    }
  }
  return false;
}

// The value an update that wins stores: itself, except XLA's NaN update, whose sign is the
// operands' signs or'd (min) or and'd (max).
template <class T>
T stored(const T& o, const T& u, bool min, Departure::MinMaxTie tie) {
  if (tie != Departure::MinMaxTie::kXla || !nan_value(u)) return u;
  return with_sign(u, min ? (sign_bit(o) || sign_bit(u)) : (sign_bit(o) && sign_bit(u)));
}

// Departure::flush_denormals: TensorFlow's CPU kernels run with x86's FTZ and DAZ set. Measured
// with TensorFlow 2.21 (docs/spec_notes.md, "Flush-to-zero"): float32/float64/complex add, sub
// and min/max flush every subnormal operand and result (min(1e-40f, 1.0f) is +0); bfloat16 adds
// through float32 (0x007f + 0x007f is 0); bfloat16 min/max compare the flushed floats and keep
// the chosen operand's bits on the scalar path (a slice vectorised on some CPUs flushes it: the
// shipped file declares that apart, as host-dependent).
template <class F>
F daz(F x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(F(0), x) : x;
}
template <class T>
T flushed(const T& x) {
  if constexpr (std::is_floating_point_v<T>) {
    return daz(x);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    return T(daz(x.real()), daz(x.imag()));
  } else {
    return x;  // integers, bool, string; the half types flush through float (below)
  }
}
template <class T>
void add_flushed(T& o, const T& u) {
  if constexpr (kIsHalf<T>) {
    o = from_float<T>(daz(daz(to_float(o)) + daz(to_float(u))));
  } else {
    o = flushed(o);
    add_to(o, flushed(u));
    o = flushed(o);
  }
}
template <class T>
void sub_flushed(T& o, const T& u) {
  if constexpr (kIsHalf<T>) {
    o = from_float<T>(daz(daz(to_float(o)) - daz(to_float(u))));
  } else {
    o = flushed(o);
    sub_from(o, flushed(u));
    o = flushed(o);
  }
}
// min or max under DAZ, storing as the rule says (Departure::MinMaxStore): the chosen operand's
// bits (TensorFlow's half types; TF-XLA's vector chunks), or the flushed value it was compared as
// (TensorFlow's float32 and float64; XLA, which computes the half types in float32: jax's
// bfloat16 min(0x0001, 1.0) is 0x0000, 2026-12-07).
template <class T>
void min_max_flushed(T& o, const T& u, bool min, Departure::MinMaxTie tie, bool keep_bits) {
  if constexpr (kIsHalf<T>) {
    if (update_wins(daz(to_float(o)), daz(to_float(u)), min, tie)) o = stored(o, u, min, tie);
    if (!keep_bits && !nan_value(o)) o = from_float<T>(daz(to_float(o)));
  } else if (keep_bits) {
    if (update_wins(flushed(o), flushed(u), min, tie)) o = stored(o, u, min, tie);
  } else {
    const T a = flushed(o);
    const T b = flushed(u);
    o = update_wins(a, b, min, tie) ? stored(a, b, min, tie) : a;
  }
}

template <class T>
constexpr bool kHasSub = !std::is_same_v<T, bool> && !std::is_same_v<T, std::string>;
template <class T>
constexpr bool kHasMinMax = std::is_arithmetic_v<T>;  // bool: xla only (dtype_registered)
template <class T>
constexpr bool kHasMinMaxAll = kHasMinMax<T> || kIsHalf<T>;

// Applies every in-range row in row order with apply(dst, src, n); returns the last bad row or -1.
template <class T, class Index, class Apply>
int64_t scatter_rows(const Index* ix, const T* upd, T* out, const Geometry& geo, Apply apply) {
  const Geometry g = geo;  // a local copy the compiler can keep in registers across the rows
  const std::size_t slice_bytes = static_cast<std::size_t>(g.slice) * sizeof(T);
  int64_t bad = -1;
  for_each_row_prefetched(
      g.rows, out, slice_bytes, /*for_write=*/true,
      [&](int64_t r) {
        return row_slice_offset(ix + r * g.depth, g.depth, g.dims, g.strides, 0, g.slice, g.rule);
      },
      [&](int64_t r, int64_t offset) {
        if (offset < 0) {
          bad = r;
        } else {
          apply(out + offset, upd + r * g.slice, g.slice);
        }
        return true;
      });
  return bad;
}

// The arithmetic and tie parts of d apply (index rules are in g already). kEither computes the
// chosen bits: the grading asks for both stores itself (harness/explain.cc).
template <class T, class Index>
Expected<int64_t> scatter_typed(Op op, const Tensor& indices, const Tensor& updates, Tensor& out,
                                const Geometry& g, const Departure& d) {
  const bool flush = d.flush_denormals;
  const Departure::MinMaxTie tie = d.min_max_tie;
  using S = Departure::MinMaxStore;
  const bool keep_bits = d.min_max_store == S::kKept || d.min_max_store == S::kEither ||
                         (d.min_max_store == S::kTensorFlow && kIsHalf<T>);
  const Index* ix = indices.data_as<Index>();
  const T* upd = updates.data_as<T>();
  T* o = out.data_as<T>();
  if (flush) {
    switch (op) {
      case Op::kScatterNd:  // zeros + each row, as the kernel does
      case Op::kTensorScatterAdd:
        return scatter_rows(ix, upd, o, g, [](T* dst, const T* src, int64_t n) {
          for (int64_t j = 0; j < n; ++j) add_flushed(dst[j], src[j]);
        });
      case Op::kTensorScatterSub:
        if constexpr (kHasSub<T>) {
          return scatter_rows(ix, upd, o, g, [](T* dst, const T* src, int64_t n) {
            for (int64_t j = 0; j < n; ++j) sub_flushed(dst[j], src[j]);
          });
        }
        break;
      case Op::kTensorScatterMin:
      case Op::kTensorScatterMax:
        if constexpr (kHasMinMaxAll<T>) {
          const bool min = op == Op::kTensorScatterMin;
          return scatter_rows(ix, upd, o, g, [=](T* dst, const T* src, int64_t n) {
            for (int64_t j = 0; j < n; ++j) min_max_flushed(dst[j], src[j], min, tie, keep_bits);
          });
        }
        break;
      default:
        break;  // update copies: nothing to flush
    }
  }
  switch (op) {
    case Op::kTensorScatterUpdate:
      return scatter_rows(ix, upd, o, g, [](T* dst, const T* src, int64_t n) {
        if constexpr (std::is_same_v<T, std::string>) {
          std::copy_n(src, n, dst);
        } else {
          std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T));
        }
      });
    case Op::kScatterNd:
    case Op::kTensorScatterAdd:
      return scatter_rows(ix, upd, o, g, [](T* dst, const T* src, int64_t n) {
        for (int64_t j = 0; j < n; ++j) add_to(dst[j], src[j]);
      });
    case Op::kTensorScatterSub:
      if constexpr (kHasSub<T>) {
        return scatter_rows(ix, upd, o, g, [](T* dst, const T* src, int64_t n) {
          for (int64_t j = 0; j < n; ++j) sub_from(dst[j], src[j]);
        });
      }
      break;
    case Op::kTensorScatterMin:
    case Op::kTensorScatterMax:
      if constexpr (kHasMinMaxAll<T>) {
        const bool min = op == Op::kTensorScatterMin;
        if (tie == Departure::MinMaxTie::kKeep) {  // TensorFlow's: the common path stays lean
          return scatter_rows(ix, upd, o, g, [min](T* dst, const T* src, int64_t n) {
            for (int64_t j = 0; j < n; ++j)
              if (min ? less(src[j], dst[j]) : less(dst[j], src[j])) dst[j] = src[j];
          });
        }
        return scatter_rows(ix, upd, o, g, [min, tie](T* dst, const T* src, int64_t n) {
          for (int64_t j = 0; j < n; ++j)
            if (update_wins(dst[j], src[j], min, tie)) dst[j] = stored(dst[j], src[j], min, tie);
        });
      }
      break;
    default:
      break;
  }
  // Unreachable: dtype_registered() refused the combination before.
  return Error{ErrorClass::kInternal, "reference: no element operation for " +
                                          std::string(op_name(op)) + " on " +
                                          std::string(dtype_name(dtype_of<T>()))};
}

}  // namespace

Outcome run_scatter_nd(const Case& c, const Options& options) {
  const Tensor& indices = *c.indices;
  const Tensor& updates = *c.updates;
  const DType dt = updates.dtype();
  const bool tensor_op = is_tensor_scatter(c.op);
  const std::string name = kernel_name(c.op);

  // Kernel selection: matching input dtypes, then a registered (dtype, index dtype) kernel.
  if (tensor_op && c.tensor->dtype() != dt) {
    return invalid_argument("cannot compute " + name +
                            " as input #2(zero-based) was expected to be a " +
                            std::string(dtype_name(c.tensor->dtype())) + " tensor but is a " +
                            std::string(dtype_name(dt)) + " tensor");
  }
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return unsupported(std::string(op_name(c.op)) + ": TensorFlow has no " + name +
                       " kernel for indices of dtype " + std::string(dtype_name(indices.dtype())) +
                       " (it registers int32 and int64)");
  }
  if (std::optional<Error> e = xla_string_error(c.semantics, dt, op_name(c.op))) return *e;
  if (!dtype_registered(c.op, dt, c.semantics)) {
    return unsupported(std::string(op_name(c.op)) + ": TensorFlow has no " + name +
                       " CPU kernel for dtype " + std::string(dtype_name(dt)));
  }
  Expected<BadIndicesPolicy> policy = parse_policy(c.bad_indices_policy, c.semantics);
  if (!policy.ok()) return policy.error();

  if (indices.rank() < 1) {
    return invalid_argument("Indices shape must have rank at least one. Found:" +
                            indices.shape().to_string());
  }
  if (updates.rank() < 1) {
    return invalid_argument("Updates shape must have rank at least one. Found:" +
                            updates.shape().to_string());
  }
  Shape s;
  if (tensor_op) {
    s = c.tensor->shape();
    GSCHECK_RETURN_IF_ERROR(check_tensor_scatter(s, indices, updates));
  } else {
    Expected<Shape> shape = check_scatter_nd(indices, updates, *c.shape);
    if (!shape.ok()) return shape.error();
    s = std::move(*shape);
  }
  Expected<Geometry> geometry = prepare_and_validate(s, indices, updates);
  if (!geometry.ok()) return geometry.error();
  Geometry& g = *geometry;
  g.rule = index_rule(c.semantics, /*gathers=*/false, *policy, options.departure);

  // scatter_nd starts from zeros (false, ""), tensor_scatter_nd_* from a copy of `tensor`.
  Expected<Tensor> out = new_output(dt, s, options.max_output_bytes, !tensor_op);
  if (!out.ok()) return out.error();
  if (out->num_elements() == 0) return out;
  if (tensor_op) {
    if (dt == DType::kString) {
      out->strings() = c.tensor->strings();
    } else {
      std::memcpy(out->data(), c.tensor->data(), out->byte_size());
    }
  }
  if (g.depth < 1 || g.depth > kMaxDepth) {
    const int64_t depth = indices.rank() > 1 ? indices.shape().dim(indices.rank() - 1) : 1;
    return invalid_argument(
        "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested "
        "rank: " +
        std::to_string(depth));
  }
  for (int k = 0; k < g.depth; ++k) {
    g.dims[k] = s.dim(k);
    g.strides[k] =
        product(s.dims(), static_cast<size_t>(k) + 1, static_cast<size_t>(g.depth)).value;
  }
  // Validation guarantees these; checked so that a reasoning slip is an error, not a wild write.
  const Product prefix = product(s.dims(), 0, static_cast<size_t>(g.depth));
  if (updates.num_elements() != g.rows * g.slice || prefix.overflow ||
      prefix.value * g.slice != out->num_elements()) {
    return Error{ErrorClass::kInternal, "reference: scatter shapes inconsistent after validation"};
  }

  Expected<int64_t> bad = visit_dtype(dt, [&](auto ttag) {
    using T = typename decltype(ttag)::type;
    return visit_index_dtype(indices.dtype(), [&](auto itag) {
      using Index = typename decltype(itag)::type;
      const reference::Departure& d = options.departure;
      Expected<int64_t> r = scatter_typed<T, Index>(c.op, indices, updates, *out, g, d);
      // One row, rewritten as it is over its sum with zeros (an out-of-range row writes nothing).
      if (r.ok() && d.one_row_copied && c.op == Op::kScatterNd && g.rows == 1)
        return scatter_typed<T, Index>(Op::kTensorScatterUpdate, indices, updates, *out, g,
                                       Departure{});
      return r;
    });
  });
  if (!bad.ok()) return bad.error();
  if (*bad >= 0 && bad_indices_raise(c.semantics, *policy, options.departure)) {
    Shape rows_shape = indices.shape();
    rows_shape.dims().pop_back();
    std::string values;
    for (int k = 0; k < g.depth; ++k) {
      if (k) values += ", ";
      values += std::to_string(indices.int_at(*bad * g.depth + k));
    }
    return bad_index("indices" + slice_debug_string(rows_shape, *bad) + " = [" + values +
                     "] does not index into shape " + s.to_string());
  }
  return out;
}

}  // namespace gscheck::reference::detail
