// PyTorch (libtorch 2.15, CPU) as a gscheck plugin: TensorFlow's ops written the way a PyTorch
// user writes them, so that gscheck grades PyTorch's indexing ops against TensorFlow's contract.
//   GatherV2            index_select (batch_dims 0); advanced indexing with a batch arange
//   GatherNd            advanced indexing, params[indices[..., 0], ..., indices[..., d-1]]
//   ScatterNd           zeros(shape).index_put_(rows, updates, accumulate=true)
//   TensorScatterUpdate tensor.clone().index_put_(rows, updates)
//   TensorScatterAdd    index_put_(..., accumulate=true); Sub: the same with -updates
//   TensorScatterMin    scatter_reduce_("amin"/"amax", include_self=true) on the [rows, slice]
//   /Max                view, the row numbers found by advanced indexing into an arange
// It declares the kernel API level, tf-cpu semantics (PyTorch raises on a bad index), every
// dtype but strings, int32/int64 indices, no TensorFlow messages (only error classes are
// graded). The wrapper checks only what it needs to build the PyTorch call (ranks, axis,
// batch_dims, the output budget); everything else is PyTorch's own checking. The differences
// from TensorFlow this finds are in plugins/pytorch/torch_known_failures.json and docs/vendor.md
// ("Worked example: grading PyTorch"). No exception leaves this file.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/TensorIndexing.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gscheck/plugin.h"

namespace {

// gsc_dtype order -> PyTorch's ScalarType (strings have none).
constexpr c10::ScalarType kTorchDtype[] = {
    at::kBool,     at::kChar,   at::kShort,  at::kInt,          at::kLong,
    at::kByte,     at::kUInt16, at::kUInt32, at::kUInt64,       at::kHalf,
    at::kBFloat16, at::kFloat,  at::kDouble, at::kComplexFloat, at::kComplexDouble};
constexpr int kDtypes = static_cast<int>(sizeof kTorchDtype / sizeof kTorchDtype[0]);

int gsc_dtype_of(c10::ScalarType t) {
  for (int i = 0; i < kDtypes; ++i)
    if (kTorchDtype[i] == t) return i;
  return -1;
}

int32_t fail(gsc_result* result, int32_t code, const std::string& message) {
  std::snprintf(result->message, sizeof result->message, "%s", message.c_str());
  return code;
}

std::vector<int64_t> dims_of(const gsc_tensor& t) {
  return std::vector<int64_t>(t.dims, t.dims + t.rank);
}

// A read-only view of gscheck's input; anything written to is cloned first.
at::Tensor view_of(const gsc_tensor& t) {
  return at::from_blob(const_cast<void*>(t.data), dims_of(t),
                       at::TensorOptions().dtype(kTorchDtype[t.dtype]));
}

// A scalar integer input (gather's axis) or the error a wrapper would raise.
std::optional<int64_t> scalar_int(const gsc_tensor& t) {
  if (t.rank != 0) return std::nullopt;
  if (t.dtype == GSC_INT32) return *static_cast<const int32_t*>(t.data);
  if (t.dtype == GSC_INT64) return *static_cast<const int64_t*>(t.data);
  return std::nullopt;
}

// Indices as PyTorch wants them (int64), split into the depth index tensors of advanced
// indexing: rows[k] = indices[..., k].
c10::List<std::optional<at::Tensor>> rows_of(const at::Tensor& indices) {
  c10::List<std::optional<at::Tensor>> rows;
  for (const at::Tensor& r : indices.to(at::kLong).unbind(-1)) rows.push_back(r);
  return rows;
}

int64_t product(const std::vector<int64_t>& d, std::size_t from, std::size_t to) {
  int64_t n = 1;
  for (std::size_t i = from; i < to; ++i) n *= d[i];
  return n;
}

// What the wrapper refuses before calling PyTorch: an error code and its message.
struct Refusal {
  int32_t code = GSC_OK;
  std::string message;
  at::Tensor operator()(int32_t c, std::string m) {
    code = c;
    message = std::move(m);
    return at::Tensor();
  }
  at::Tensor operator()(std::string m) { return (*this)(GSC_INVALID_ARGUMENT, std::move(m)); }
};

// The budget check before PyTorch allocates the output (gscheck refuses it anyway). A shape of
// more than 2^63 - 1 elements (scatter_nd's shape input) is left to PyTorch, which refuses it.
bool over_budget(const gsc_call* call, const std::vector<int64_t>& shape, int32_t dtype) {
  __int128 n = 1;
  for (int64_t d : shape) {
    if (d == 0) return false;
    if (n > INT64_MAX / d) return false;  // n * d would pass 2^63 - 1
    n *= d;
  }
  return call->max_bytes > 0 &&
         n * static_cast<__int128>(c10::elementSize(kTorchDtype[dtype])) > call->max_bytes;
}

// tf.raw_ops.GatherV2(params, indices, axis, batch_dims).
at::Tensor gather(const gsc_call* call, Refusal& refuse) {
  const gsc_tensor& p = *call->params;
  const gsc_tensor& i = *call->indices;
  if (p.rank < 1) return refuse("params must be at least 1 dimensional");
  const std::optional<int64_t> axis_value = scalar_int(*call->axis);
  if (!axis_value) return refuse("axis must be an integer scalar");
  int64_t axis = *axis_value;
  if (axis < -p.rank || axis >= p.rank) return refuse("axis out of range");
  if (axis < 0) axis += p.rank;
  int64_t b = call->batch_dims;
  if (b < -i.rank || b > i.rank) return refuse("batch_dims out of range");
  if (b < 0) b += i.rank;
  if (b >= p.rank) return refuse("batch_dims must be less than rank(params)");
  if (b > axis) return refuse("batch_dims must be less than or equal to axis");
  const std::vector<int64_t> pd = dims_of(p), id = dims_of(i);
  for (int64_t k = 0; k < b; ++k)
    if (pd[k] != id[k]) return refuse("params and indices batch dimensions differ");
  const auto ax = static_cast<std::size_t>(axis), bd = static_cast<std::size_t>(b);
  std::vector<int64_t> shape(pd.begin(), pd.begin() + axis);
  shape.insert(shape.end(), id.begin() + b, id.end());
  shape.insert(shape.end(), pd.begin() + axis + 1, pd.end());
  if (over_budget(call, shape, p.dtype))
    return refuse(GSC_RESOURCE_EXHAUSTED, "the output is over the byte budget");

  const at::Tensor params = view_of(p), indices = view_of(i).to(at::kLong);
  if (b == 0) return at::index_select(params, axis, indices.reshape({-1})).reshape(shape);
  // out[b, a, i, r] = params[b, a, indices[b, i], r] over params viewed as [B, A, D, R].
  const int64_t nb = product(pd, 0, bd), na = product(pd, bd, ax), d = pd[ax];
  const int64_t nr = product(pd, ax + 1, pd.size()), ni = product(id, bd, id.size());
  using at::indexing::Slice;
  const at::Tensor batch = at::arange(nb, at::kLong).unsqueeze(1);
  const at::Tensor g =
      params.reshape({nb, na, d, nr}).index({batch, Slice(), indices.reshape({nb, ni}), Slice()});
  return g.permute({0, 2, 1, 3}).reshape(shape);  // advanced dims came first: [B, I, A, R]
}

// tf.raw_ops.GatherNd(params, indices).
at::Tensor gather_nd(const gsc_call* call, Refusal& refuse) {
  const gsc_tensor& p = *call->params;
  const gsc_tensor& i = *call->indices;
  if (p.rank < 1) return refuse("params must be at least a vector");
  if (i.rank < 1) return refuse("indices must be at least a vector");
  const int64_t depth = i.dims[i.rank - 1];
  if (depth > p.rank) return refuse("index depth exceeds rank(params)");
  std::vector<int64_t> shape(i.dims, i.dims + i.rank - 1);
  shape.insert(shape.end(), p.dims + depth, p.dims + p.rank);
  if (over_budget(call, shape, p.dtype))
    return refuse(GSC_RESOURCE_EXHAUSTED, "the output is over the byte budget");
  const at::Tensor params = view_of(p);
  if (depth == 0) return params.expand(shape);  // every row is all of params (a view)
  return params.index(rows_of(view_of(i)));
}

// scatter_nd and tensor_scatter_nd_*: out is a fresh tensor, updated in place.
at::Tensor scatter(const gsc_call* call, Refusal& refuse) {
  const gsc_tensor& i = *call->indices;
  const gsc_tensor& u = *call->updates;
  at::Tensor out;
  std::vector<int64_t> shape;
  if (call->op == GSC_SCATTER_ND) {
    const gsc_tensor& s = *call->shape;
    if (s.rank != 1 || (s.dtype != GSC_INT32 && s.dtype != GSC_INT64))
      return refuse("shape must be an integer vector");
    for (int64_t k = 0; k < s.dims[0]; ++k) {
      const int64_t v = s.dtype == GSC_INT32 ? static_cast<const int32_t*>(s.data)[k]
                                             : static_cast<const int64_t*>(s.data)[k];
      if (v < 0) return refuse("shape entries must be >= 0");
      shape.push_back(v);
    }
    if (over_budget(call, shape, u.dtype))
      return refuse(GSC_RESOURCE_EXHAUSTED, "the output is over the byte budget");
    out = at::zeros(shape, at::TensorOptions().dtype(kTorchDtype[u.dtype]));
  } else {
    shape = dims_of(*call->tensor);
    if (over_budget(call, shape, call->tensor->dtype))
      return refuse(GSC_RESOURCE_EXHAUSTED, "the output is over the byte budget");
    out = view_of(*call->tensor).clone();
  }
  if (shape.empty()) return refuse("output must be at least 1-D");
  if (i.rank < 1) return refuse("indices must be at least 1-D");
  const int64_t depth = i.dims[i.rank - 1];
  if (depth > static_cast<int64_t>(shape.size())) return refuse("index depth exceeds rank(output)");
  if (depth == 0) {  // no coordinate to index with: a no-op on an empty output only
    if (out.numel() == 0) return out;
    return refuse("index depth 0 on a non-empty output");
  }
  const at::Tensor indices = view_of(i);
  const at::Tensor updates = view_of(u);
  switch (call->op) {
    case GSC_SCATTER_ND:
    case GSC_TENSOR_SCATTER_ADD:
      out.index_put_(rows_of(indices), updates, /*accumulate=*/true);
      return out;
    case GSC_TENSOR_SCATTER_SUB:
      out.index_put_(rows_of(indices), updates.neg(), /*accumulate=*/true);
      return out;
    case GSC_TENSOR_SCATTER_UPDATE:
      out.index_put_(rows_of(indices), updates);
      return out;
    default:
      break;
  }
  // min/max: the row number of each index row (advanced indexing checks and wraps the index as
  // index_put_ does), then one scatter_reduce_ over the [rows, slice] view of out. updates are
  // broadcast to the indexing result's shape first, as index_put_ would.
  const auto dd = static_cast<std::size_t>(depth);
  const int64_t nrows = product(shape, 0, dd), slice = product(shape, dd, shape.size());
  std::vector<int64_t> head(shape.begin(), shape.begin() + depth);
  const at::Tensor row = at::arange(nrows, at::kLong).reshape(head).index(rows_of(indices));
  std::vector<int64_t> want(i.dims, i.dims + i.rank - 1);
  want.insert(want.end(), shape.begin() + depth, shape.end());
  const int64_t n = row.numel();
  const at::Tensor index = row.reshape({n, 1}).expand({n, slice});
  const at::Tensor src = updates.expand(want).reshape({n, slice});
  const char* reduce = call->op == GSC_TENSOR_SCATTER_MIN ? "amin" : "amax";
  out.view({nrows, slice}).scatter_reduce_(0, index, src, reduce, /*include_self=*/true);
  return out;
}

// What PyTorch raised, as a gscheck outcome class.
int32_t torch_error(const c10::Error& e, gsc_result* result) {
  const std::string text = e.what_without_backtrace();
  // index_select raises a plain c10::Error for an index out of range, or into an empty axis.
  if (dynamic_cast<const c10::IndexError*>(&e) ||
      text.find("out of DATA bounds") != std::string::npos ||
      text.find("self indexing axis dim should be positive") != std::string::npos)
    return fail(result, GSC_BAD_INDEX, text);
  if (dynamic_cast<const c10::NotImplementedError*>(&e) ||
      text.find("not implemented for") != std::string::npos ||
      text.find("is not supported") != std::string::npos)
    return fail(result, GSC_UNSUPPORTED, text);
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e))
    return fail(result, GSC_RESOURCE_EXHAUSTED, text);
  return fail(result, GSC_INVALID_ARGUMENT, text);
}

int32_t run_call(const gsc_call* call, gsc_result* result) {
  if (call->semantics != GSC_TF_CPU)
    return fail(result, GSC_UNIMPLEMENTED, "PyTorch raises on a bad index: tf-cpu semantics");
  if (call->op < GSC_GATHER || call->op > GSC_TENSOR_SCATTER_MAX)
    return fail(result, GSC_UNIMPLEMENTED, "unknown op");
  if (call->op == GSC_GATHER && !call->axis)
    return fail(result, GSC_UNIMPLEMENTED, "GatherV2 needs its axis (axis=None is Python's)");
  if (call->op == GSC_GATHER_ND && call->batch_dims != 0)
    return fail(result, GSC_UNIMPLEMENTED, "GatherNd has no batch_dims (Python's lowering)");
  const bool gathers = call->op == GSC_GATHER || call->op == GSC_GATHER_ND;
  if (!call->indices || (gathers ? !call->params : !call->updates) ||
      (call->op == GSC_SCATTER_ND && !call->shape) ||
      (!gathers && call->op != GSC_SCATTER_ND && !call->tensor))
    return fail(result, GSC_INTERNAL, "an input the op takes is missing");
  for (const gsc_tensor* t : {call->params, call->indices, call->updates, call->tensor})
    if (t && (t->dtype < 0 || t->dtype >= kDtypes))
      return fail(result, GSC_UNIMPLEMENTED, "PyTorch has no tensor of this dtype");
  // PyTorch has no bad_indices_policy: it always raises, which is what "" and ERROR mean.
  const std::string policy = call->bad_indices_policy ? call->bad_indices_policy : "";
  if (call->op != GSC_GATHER && !policy.empty() && policy != "DEFAULT" && policy != "ERROR")
    return fail(result, GSC_UNIMPLEMENTED, "PyTorch has no bad_indices_policy " + policy);

  Refusal refused;
  at::Tensor out;
  if (call->op == GSC_GATHER)
    out = gather(call, refused);
  else if (call->op == GSC_GATHER_ND)
    out = gather_nd(call, refused);
  else
    out = scatter(call, refused);
  if (refused.code != GSC_OK) return fail(result, refused.code, refused.message);

  const int dtype = gsc_dtype_of(out.scalar_type());
  if (dtype < 0) return fail(result, GSC_INTERNAL, "PyTorch returned an unknown dtype");
  const std::vector<int64_t> dims(out.sizes().begin(), out.sizes().end());
  void* dst =
      call->alloc_output(call->alloc_ctx, dtype, static_cast<int32_t>(dims.size()), dims.data());
  if (!dst) return fail(result, GSC_RESOURCE_EXHAUSTED, "gscheck refused the output's size");
  // Straight into gscheck's buffer: a view (an expanded params) is materialised only there.
  if (out.numel() > 0)
    at::from_blob(dst, dims, at::TensorOptions().dtype(out.scalar_type())).copy_(out);
  return GSC_OK;
}

int32_t run(const gsc_call* call, gsc_result* result) {
  try {
    return run_call(call, result);
  } catch (const c10::Error& e) {
    return torch_error(e, result);
  } catch (const std::bad_alloc& e) {
    return fail(result, GSC_RESOURCE_EXHAUSTED, std::string("torch plugin: ") + e.what());
  } catch (const std::exception& e) {
    return fail(result, GSC_INTERNAL, std::string("torch plugin: ") + e.what());
  } catch (...) {
    return fail(result, GSC_INTERNAL, "torch plugin: unknown exception");
  }
}

// libtorch's intra-op pool as it defaults (one thread per core), set up in the worker; its
// threads start with the first parallel op and live as long as the worker.
int32_t init(gsc_result* result) {
  try {
    at::init_num_threads();
    (void)at::get_num_threads();
    return GSC_OK;
  } catch (const std::exception& e) {
    return fail(result, GSC_INTERNAL, std::string("torch plugin init: ") + e.what());
  } catch (...) {
    return fail(result, GSC_INTERNAL, "torch plugin init: unknown exception");
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int32_t gscheck_plugin_api(void) { return GSC_API_KERNEL; }

__attribute__((visibility("default"))) const gsc_plugin_v2* gscheck_plugin_v2(void) {
  static const gsc_plugin_v2 plugin = [] {
    gsc_plugin_v2 p{};
    p.abi_version = GSCHECK_PLUGIN_ABI_V2;
    p.name = "pytorch 2.15 (libtorch CPU, ATen indexing ops)";
    p.ops = (1u << 8) - 1;
    p.dtypes = (1ull << kDtypes) - 1;  // every dtype but GSC_STRING
    p.index_dtypes = (1u << GSC_INT32) | (1u << GSC_INT64);
    p.semantics = 1u << GSC_TF_CPU;
    p.deterministic = 1;
    p.tf_messages = 0;
    p.half_in_float = 0;
    p.run = run;
    p.flags = 0;
    p.init = init;
    p.finalize = nullptr;
    return p;
  }();
  return &plugin;
}

}  // extern "C"
