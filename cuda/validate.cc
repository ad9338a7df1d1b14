#include "cuda/validate.h"

#include <cstdint>
#include <limits>
#include <string>

namespace gscheck::cuda {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

std::string str(int64_t v) { return std::to_string(v); }

// Product of dims [begin, end); shapes inside tensors are valid, so this cannot overflow
// beyond the element count of the tensor they came from.
int64_t prod(const Shape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= s.dim(i);
  return p;
}

int64_t index_max(DType index_dtype) {
  return index_dtype == DType::kInt32 ? kInt32Max : std::numeric_limits<int64_t>::max();
}

Status check_output_budget(DType dt, const Shape& out, int64_t max_bytes) {
  auto bytes = tensor_bytes(dt, out);
  if (!bytes || *bytes > max_bytes) {
    return Error{ErrorClass::kResourceExhausted, "output of shape " + out.to_string() +
                                                     " exceeds the memory budget of " +
                                                     str(max_bytes) + " bytes"};
  }
  return {};
}

// Shared gather_nd / scatter limits (TensorFlow checks them in this order).
Status check_nd_limits(int64_t rows, int64_t params_elements, int64_t slice, DType index_dtype) {
  if (rows > kInt32Max) {
    return invalid_argument("indices has too many elements for int indexing: " + str(rows) + " > " +
                            str(kInt32Max));
  }
  const int64_t max = index_max(index_dtype);
  const std::string type = index_dtype == DType::kInt32 ? "int32" : "int64";
  if (params_elements > max) {
    return invalid_argument("params.NumElements() too large for " + type +
                            " indexing: " + str(params_elements) + " > " + str(max));
  }
  if (slice > max) {
    return invalid_argument("slice size is too large for indexing: " + str(slice) + " > " +
                            str(max));
  }
  return {};
}

}  // namespace

std::string position_string(const std::vector<int64_t>& dims, int64_t flat) {
  if (dims.empty()) return "";
  std::vector<int64_t> pos(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    const int64_t d = dims[i] > 0 ? dims[i] : 1;
    pos[i] = flat % d;
    flat /= d;
  }
  std::string s = "[";
  for (size_t i = 0; i < pos.size(); ++i) s += (i ? "," : "") + str(pos[i]);
  return s + "]";
}

Expected<GatherPlan> validate_gather(const Case& c, int64_t max_bytes) {
  const Tensor& params = *c.params;
  const Tensor& indices = *c.indices;
  const int rp = params.rank();
  const int ri = indices.rank();
  // Python: tf.gather compares the axis with 0 through NumPy, which raises ValueError for an
  // axis of 0 or 2+ elements; an axis equal to 0 calls GatherV2 without batch_dims (dropped).
  // The raw kernel (api kernel) keeps it.
  const bool python = c.api == Api::kPython;
  if (python && c.axis && c.axis->num_elements() != 1) {
    return invalid_argument(c.axis->num_elements() == 0
                                ? "The truth value of an empty array is ambiguous. Use "
                                  "`array.size > 0` to check that an array is not empty."
                                : "The truth value of an array with more than one element is "
                                  "ambiguous. Use a.any() or a.all()");
  }
  int64_t b = c.batch_dims;
  if (python && c.axis && is_integer(c.axis->dtype()) && c.axis->int_at(0) == 0) b = 0;
  // GatherV2's batch_dims attribute is an int32.
  if (b < std::numeric_limits<int32_t>::min() || b > std::numeric_limits<int32_t>::max()) {
    return invalid_argument("Attr batch_dims has value " + str(b) + " out of range for an int32");
  }
  if (rp < 1) return invalid_argument("params must be at least 1 dimensional");
  int64_t axis = b;  // Python: axis=None means axis = batch_dims
  if (c.axis) {
    if (c.axis->rank() != 0) return invalid_argument("axis must be scalar");
    if (c.axis->dtype() != DType::kInt32 && c.axis->dtype() != DType::kInt64) {
      return invalid_argument("axis must be int32 or int64.");
    }
    axis = c.axis->int_at(0);
  }
  if (axis == std::numeric_limits<int64_t>::max()) {
    return invalid_argument("axis must be less than std::numeric_limits<int64_t>::max()");
  }
  if (axis == std::numeric_limits<int64_t>::min()) {
    return invalid_argument("axis must be greater than std::numeric_limits<int64_t>::min()");
  }
  const int64_t min_rank = axis < 0 ? -axis : axis + 1;
  if (rp < min_rank) {
    return invalid_argument("Shape must be at least rank " + str(min_rank) + " but is rank " +
                            str(rp));
  }
  if (axis < 0) axis += rp;
  if (b != 0) {
    if (b < -ri || b > ri) {
      return invalid_argument("Expected batch_dims in the range [" + str(-ri) + ", " + str(ri) +
                              "], but got " + str(b));
    }
    if (b < 0) b += ri;
  }
  if (b >= rp) {
    return invalid_argument("batch_dims (" + str(b) + ") must be less than rank(params) (" +
                            str(rp) + ").");
  }
  if (b > axis) {
    return invalid_argument("batch_dims (" + str(b) + ") must be less than or equal to axis (" +
                            str(axis) + ").");
  }
  for (int i = 0; i < b; ++i) {
    if (params.shape().dim(i) != indices.shape().dim(i)) {
      return invalid_argument("params.shape[" + str(i) + "]: " + str(params.shape().dim(i)) +
                              " should be equal to indices.shape[" + str(i) +
                              "]: " + str(indices.shape().dim(i)));
    }
  }
  const int a = static_cast<int>(axis);
  const int bd = static_cast<int>(b);
  const int64_t axis_dim = params.shape().dim(a);
  if (axis_dim > index_max(indices.dtype())) {
    return invalid_argument(
        "params.shape[" + str(a) + "] too large for " + std::string(dtype_name(indices.dtype())) +
        " indexing: " + str(axis_dim) + " > " + str(index_max(indices.dtype())));
  }
  GatherPlan p;
  std::vector<int64_t> out;
  for (int i = 0; i < a; ++i) out.push_back(params.shape().dim(i));
  for (int i = bd; i < ri; ++i) out.push_back(indices.shape().dim(i));
  for (int i = a + 1; i < rp; ++i) out.push_back(params.shape().dim(i));
  if (static_cast<int64_t>(out.size()) > kMaxRank)
    return invalid_argument("Too many dimensions in tensor");
  p.out_shape = Shape(std::move(out));
  auto n = p.out_shape.num_elements();
  if (!n) return invalid_argument("output shape " + p.out_shape.to_string() + " is too large");
  GSCHECK_RETURN_IF_ERROR(check_output_budget(params.dtype(), p.out_shape, max_bytes));
  p.out_elements = *n;
  p.batch = prod(params.shape(), 0, bd);
  p.outer = prod(params.shape(), bd, a);
  p.axis_dim = axis_dim;
  p.inner = prod(params.shape(), a + 1, rp);
  p.n_idx = prod(indices.shape(), bd, ri);
  return p;
}

Status check_gather_nd_batch_dims(const Case& c, int64_t* batch) {
  const Shape& ps = c.params->shape();
  const Shape& is = c.indices->shape();
  const int64_t b = c.batch_dims;
  *batch = 1;
  if (b == 0) return {};
  if (b < 0) return invalid_argument("tf.gather_nd does not allow negative batch_dims.");
  if (b >= is.rank()) {
    return invalid_argument("Argument `batch_dims` = " + str(b) +
                            " must be less than rank(`indices`) = " + str(is.rank()));
  }
  if (b >= ps.rank()) {
    return invalid_argument("Argument `batch_dims` = " + str(b) +
                            " must be less than rank(`params`) = " + str(ps.rank()));
  }
  // TensorFlow reshapes indices to [prod(params batch dims)] + indices.shape[batch_dims:]: only
  // the element counts must agree, so an index tensor without elements fits any batch.
  const int bd = static_cast<int>(b);
  const std::optional<int64_t> params_batch = ps.num_elements(0, bd);
  const std::optional<int64_t> rest = is.num_elements(bd, is.rank());
  if (!params_batch) {
    return invalid_argument("the batch dims of params " + ps.to_string() +
                            " have more than 2**63 - 1 elements");
  }
  const std::optional<int64_t> want =
      rest == int64_t{0} ? std::optional<int64_t>(0)
                         : (rest ? checked_mul(*params_batch, *rest) : std::nullopt);
  if (!want || *want != c.indices->num_elements()) {
    return invalid_argument("Input to reshape is a tensor with " + str(c.indices->num_elements()) +
                            " values, but the requested shape has " +
                            (want ? str(*want) : std::string("more than 2**63 - 1")));
  }
  *batch = *params_batch;
  return {};
}

Expected<GatherNdPlan> validate_gather_nd(const Case& c, int64_t max_bytes) {
  const Tensor& params = *c.params;
  const Tensor& indices = *c.indices;
  const int rp = params.rank();
  const int ri = indices.rank();
  const int64_t b = c.batch_dims;
  // Python-level checks of tf.gather_nd's batch_dims come before the kernel's.
  int64_t batch = 1;
  GSCHECK_RETURN_IF_ERROR(check_gather_nd_batch_dims(c, &batch));
  if (rp < 1) return invalid_argument("params must be at least a vector");
  if (ri < 1) return invalid_argument("indices must be at least a vector");
  const int bd = static_cast<int>(b);
  const int64_t depth = indices.shape().dim(ri - 1);
  const int64_t full_depth = depth + bd;  // TensorFlow prepends the batch coordinates
  if (full_depth > rp) {
    return invalid_argument("index innermost dimension length must be <= params rank; saw: " +
                            str(full_depth) + " vs. " + str(rp));
  }
  const int fd = static_cast<int>(full_depth);
  GatherNdPlan p;
  // With batch dims, rows are counted in the reshaped indices: batch * rows per batch.
  const std::optional<int64_t> rows = bd > 0 ? checked_mul(batch, prod(indices.shape(), bd, ri - 1))
                                             : prod(indices.shape(), 0, ri - 1);
  if (!rows) return invalid_argument("gather_nd would gather more than 2**63 - 1 rows");
  p.rows = *rows;
  p.slice = prod(params.shape(), fd, rp);
  GSCHECK_RETURN_IF_ERROR(check_nd_limits(p.rows, params.num_elements(), p.slice, indices.dtype()));
  if (p.rows > 0 && params.num_elements() == 0) {
    return invalid_argument("Requested more than 0 entries, but params is empty.  Params shape: " +
                            params.shape().to_string());
  }
  if (p.rows > 0 && full_depth > kMaxDepth) {
    return invalid_argument(
        "Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested "
        "rank: " +
        str(full_depth));
  }
  // The output is reshaped back to params' batch dims (TensorFlow's batch_gather_nd).
  std::vector<int64_t> out;
  for (int i = 0; i < bd; ++i) out.push_back(params.shape().dim(i));
  for (int i = bd; i < ri - 1; ++i) out.push_back(indices.shape().dim(i));
  for (int i = fd; i < rp; ++i) out.push_back(params.shape().dim(i));
  if (static_cast<int64_t>(out.size()) > kMaxRank)
    return invalid_argument("Too many dimensions in tensor");
  p.out_shape = Shape(std::move(out));
  p.out_elements = p.rows * p.slice;
  GSCHECK_RETURN_IF_ERROR(check_output_budget(params.dtype(), p.out_shape, max_bytes));
  p.batch_dims = bd;
  p.depth = static_cast<int>(depth);
  p.rows_per_batch = prod(indices.shape(), bd, ri - 1);
  p.batch_stride = prod(params.shape(), bd, fd);
  for (int k = 0; k < p.depth && k < kMaxDepth; ++k) {
    p.dims[k] = params.shape().dim(bd + k);
    p.strides[k] = prod(params.shape(), bd + k + 1, fd);
  }
  return p;
}

Expected<ScatterPlan> validate_scatter(const Case& c, int64_t max_bytes) {
  const Tensor& indices = *c.indices;
  const Tensor& updates = *c.updates;
  const int ri = indices.rank();
  const int ru = updates.rank();
  Shape out;
  // Every scatter op checks these ranks first.
  if (ri < 1) {
    return invalid_argument("Indices shape must have rank at least one. Found:" +
                            indices.shape().to_string());
  }
  if (ru < 1) {
    return invalid_argument("Updates shape must have rank at least one. Found:" +
                            updates.shape().to_string());
  }
  if (c.op == Op::kScatterNd) {
    const Tensor& shape = *c.shape;
    if (!is_integer(shape.dtype())) return invalid_argument("shape must be an integer tensor");
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      const int64_t d = shape.int_at(i);
      if (d < 0) return invalid_argument("Dimension " + str(d) + " must be >= 0");
      dims.push_back(d);
    }
    if (static_cast<int64_t>(dims.size()) > kMaxRank) {
      return invalid_argument("Too many dimensions in tensor");
    }
    out = Shape(std::move(dims));
    if (!out.num_elements()) {
      return invalid_argument("Shape " + out.to_string() +
                              " would have more than 2**63 - 1 elements");
    }
    if (shape.num_elements() == 0 && (indices.num_elements() > 0 || updates.num_elements() > 0)) {
      return invalid_argument("Indices and updates specified for empty output shape");
    }
    const int o = ri - 1;
    bool outer_ok = ru >= o;
    for (int i = 0; outer_ok && i < o; ++i) {
      outer_ok = indices.shape().dim(i) == updates.shape().dim(i);
    }
    if (!outer_ok) {
      return invalid_argument("Dimensions [0," + str(o) + ") of indices[shape=" +
                              indices.shape().to_string() + "] must match dimensions [0," + str(o) +
                              ") of updates[shape=" + updates.shape().to_string() + "]");
    }
    const int64_t ix = indices.shape().dim(ri - 1);
    bool inner_ok = ix <= out.rank() && ru - o == out.rank() - ix;
    for (int i = 0; inner_ok && i < ru - o; ++i) {
      inner_ok = updates.shape().dim(o + i) == out.dim(static_cast<int>(ix) + i);
    }
    if (!inner_ok) {
      return invalid_argument("Dimensions [" + str(ix) + "," + str(out.rank()) +
                              ") of input[shape=" + out.to_string() + "] must match dimensions [" +
                              str(o) + "," + str(ru) +
                              ") of updates[shape=" + updates.shape().to_string() + "]");
    }
    if (shape.rank() != 1) return invalid_argument("Shape must be a vector");
  } else {
    out = c.tensor->shape();
    // Here rank-1 indices are one row of depth dim(0) with no outer dims: indices (0,) then
    // needs updates of the tensor's whole shape.
    const int o = ri - 1;
    const int64_t ix = indices.shape().dim(ri - 1);
    if (out.rank() < 1) {
      return invalid_argument("Output must be at least 1-D, got shape: " + out.to_string());
    }
    bool outer_ok = ru >= o;
    for (int i = 0; outer_ok && i < o; ++i) {
      outer_ok = indices.shape().dim(i) == updates.shape().dim(i);
    }
    if (!outer_ok) {
      return invalid_argument("Outer dimensions of indices and update must match. Indices shape: " +
                              indices.shape().to_string() +
                              ", updates shape:" + updates.shape().to_string());
    }
    if (ru - o != out.rank() - ix) {
      return invalid_argument(
          "Inner dimensions of output shape must match inner dimensions of updates shape. "
          "Output: " +
          out.to_string() + " updates: " + updates.shape().to_string());
    }
    for (int i = 0; i < ru - o; ++i) {
      if (updates.shape().dim(o + i) != out.dim(static_cast<int>(ix) + i)) {
        return invalid_argument("The inner " + str(out.rank() - ix) +
                                " dimensions of output.shape=" + out.to_string() +
                                " must match the inner " + str(ru - o) +
                                " dimensions of updates.shape=" + updates.shape().to_string());
      }
    }
  }
  // Checks shared by both ops (TensorFlow's PrepareAndValidateInputs). Its update-shape rule
  // reads rank-1 indices as rows of depth 1, so it is more lenient than the checks above.
  if (out.rank() < 1) {
    return invalid_argument("Output must be at least 1-D, got shape: " + out.to_string());
  }
  const int64_t out_elements = *out.num_elements();
  if (out_elements == 0 && (indices.num_elements() > 0 || updates.num_elements() > 0)) {
    return invalid_argument("Indices and updates specified for empty output.  indices shape: " +
                            indices.shape().to_string());
  }
  if (updates.shape().dim(0) != indices.shape().dim(0)) {
    return invalid_argument("Dimensions [0,1) of indices[shape=" + indices.shape().to_string() +
                            "] = " + str(indices.shape().dim(0)) +
                            " must match dimensions [0,1) of updates[shape=" +
                            updates.shape().to_string() + "] = " + str(updates.shape().dim(0)));
  }
  const int64_t depth = ri > 1 ? indices.shape().dim(ri - 1) : 1;
  const int64_t batch_rank = ri > 1 ? ri - 1 : 1;
  {
    bool ok = ru >= batch_rank && ru - batch_rank == out.rank() - depth;
    for (int i = 0; ok && i < batch_rank; ++i) {
      ok = updates.shape().dim(i) == indices.shape().dim(i);
    }
    for (int i = 0; ok && i < ru - batch_rank; ++i) {
      ok = updates.shape().dim(static_cast<int>(batch_rank) + i) ==
           out.dim(static_cast<int>(depth) + i);
    }
    if (!ok) {
      return invalid_argument("Dimensions of updates[shape=" + updates.shape().to_string() +
                              "] do not match indices[shape=" + indices.shape().to_string() +
                              "] and output[shape=" + out.to_string() + "]");
    }
  }
  const int64_t max = index_max(indices.dtype());
  const std::string type(dtype_name(indices.dtype()));
  if (indices.num_elements() > max) {
    return invalid_argument("indices has too many elements for " + type +
                            " indexing: " + str(indices.num_elements()) + " > " + str(max));
  }
  if (out.dim(0) > max) {
    return invalid_argument("params_shape[0] too large for " + type +
                            " indexing: " + str(out.dim(0)) + " > " + str(max));
  }
  ScatterPlan p;
  p.slice = prod(out, static_cast<int>(depth), out.rank());
  if (p.slice > max) {
    return invalid_argument("slice size is too large for indexing: " + str(p.slice) + " > " +
                            str(max));
  }
  GSCHECK_RETURN_IF_ERROR(check_output_budget(updates.dtype(), out, max_bytes));
  p.out_shape = out;
  p.out_elements = out_elements;
  if (out_elements == 0) return p;
  if (depth < 1 || depth > kMaxDepth) {
    return invalid_argument(
        "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested "
        "rank: " +
        str(depth));
  }
  p.rows = indices.num_elements() / depth;
  if (p.rows == 0) return p;
  p.depth = static_cast<int>(depth);
  for (int k = 0; k < p.depth; ++k) {
    p.dims[k] = out.dim(k);
    p.strides[k] = prod(out, k + 1, p.depth);
  }
  return p;
}

}  // namespace gscheck::cuda
