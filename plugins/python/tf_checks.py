"""TensorFlow's shape, dtype and attribute checks for the gather/scatter ops at the Python API
level, in TensorFlow's order, for Python-hosted backends: examples/python/numpy_backend.py and
those that run another runtime's kernels (plugins/onnxruntime, plugins/openvino, plugins/litert).

A model converter sees these shapes when it converts a graph, so what is decidable from shapes,
dtypes and attributes is TensorFlow's rule here; what depends on index values is left to the
runtime, so its bad-index behaviour is what gets graded. Each function allocates the output with
gscheck.output() where TensorFlow allocates it (a memory budget is reported at the same point)
and returns it with what the backend needs; the backend moves the data.
"""
import numpy as np

import gscheck

OPS = ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
       "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max"]
INT32_MAX = 2**31 - 1
MAX_RANK = 254  # TensorFlow's TensorShape
POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")


def prod(dims):
    n = 1
    for d in dims:
        n *= int(d)
    return n


def dispatch(gather, gather_nd, scatter):
    """The call() of a backend made of gather(params, indices, axis, batch_dims),
    gather_nd(params, indices, batch_dims, policy) and
    scatter(op, indices, updates, tensor, shape, policy), after TensorFlow's rank limit."""
    def call(op, *, params, indices, updates, tensor, shape, axis, batch_dims,
             bad_indices_policy, semantics):
        check_ranks(params, indices, updates, tensor, shape, axis)
        if op == "gather":
            return gather(params, indices, axis, batch_dims)
        if op == "gather_nd":
            return gather_nd(params, indices, batch_dims, bad_indices_policy)
        return scatter(op, indices, updates, tensor, shape, bad_indices_policy)
    return call


def check_ranks(*tensors):
    for t in tensors:
        if t is not None and t.ndim > MAX_RANK:
            raise gscheck.InvalidArgument(f"rank {t.ndim} > {MAX_RANK}")


def _imax(indices):
    return np.iinfo(indices.dtype).max


def gather(params, indices, axis, batch_dims):
    """tf.gather's checks; returns (out, axis, batch_dims), both normalised to >= 0."""
    axis_t = np.asarray(batch_dims, np.int64) if axis is None else axis
    # tf.gather tests `axis != 0` with numpy's truth value; an axis of 0 drops batch_dims.
    if axis_t.size != 1:
        raise gscheck.InvalidArgument("The truth value of an array is ambiguous")
    if axis_t.dtype.kind in "iu" and int(axis_t.reshape(-1)[0]) == 0:
        batch_dims = 0
    if not -2**31 <= batch_dims < 2**31:
        raise gscheck.InvalidArgument("batch_dims out of range for an int32")
    rp, ri = params.ndim, indices.ndim
    if rp < 1:
        raise gscheck.InvalidArgument("params must be at least 1 dimensional")
    if axis_t.ndim != 0:
        raise gscheck.InvalidArgument("axis must be scalar")
    if axis_t.dtype not in (np.int32, np.int64):
        raise gscheck.InvalidArgument("axis must be int32 or int64.")
    a = int(axis_t)
    if a in (2**63 - 1, -2**63):
        raise gscheck.InvalidArgument("axis out of range")
    if rp < (-a if a < 0 else a + 1):
        raise gscheck.InvalidArgument("axis out of range for params")
    if a < 0:
        a += rp
    b = batch_dims
    if b != 0:
        if not -ri <= b <= ri:
            raise gscheck.InvalidArgument("batch_dims out of range")
        if b < 0:
            b += ri
        if b >= rp or a < b:
            raise gscheck.InvalidArgument("batch_dims must be less than rank(params) and <= axis")
        if params.shape[:b] != indices.shape[:b]:
            raise gscheck.InvalidArgument("params.shape[:batch_dims] != indices.shape[:batch_dims]")
    if params.shape[a] > _imax(indices):
        raise gscheck.InvalidArgument("params.shape[axis] too large for the index dtype")
    shape = params.shape[:a] + indices.shape[b:] + params.shape[a + 1:]
    if len(shape) > MAX_RANK:
        raise gscheck.InvalidArgument("output rank too large")
    return gscheck.output(shape), a, b


def gather_nd(params, indices, batch_dims, policy):
    """tf.gather_nd's checks; returns (out, batch_dims)."""
    rp, ri = params.ndim, indices.ndim
    b = batch_dims
    batch = 1
    if b < 0:
        raise gscheck.InvalidArgument("tf.gather_nd does not allow negative batch_dims.")
    if b > 0:
        if b >= ri or b >= rp:
            raise gscheck.InvalidArgument("batch_dims must be less than rank(indices), rank(params)")
        batch = prod(params.shape[:b])
        if batch * prod(indices.shape[b:]) != indices.size:
            raise gscheck.InvalidArgument("indices cannot be reshaped to the batch")
    if policy not in POLICIES:
        raise gscheck.Unsupported(f"no GatherNd kernel for bad_indices_policy {policy!r}")
    if rp < 1 or ri < 1:
        raise gscheck.InvalidArgument("params and indices must be at least vectors")
    depth = indices.shape[-1]
    aug = b + depth
    if aug > rp:
        raise gscheck.InvalidArgument("index innermost dimension length must be <= params rank")
    rows = batch * prod(indices.shape[b:-1])
    if rows > INT32_MAX:
        raise gscheck.InvalidArgument("indices has too many elements for int indexing")
    imax = _imax(indices)
    if params.size > imax or prod(params.shape[aug:]) > imax:
        raise gscheck.InvalidArgument("params too large for the index dtype")
    shape = params.shape[:b] + indices.shape[b:-1] + params.shape[aug:]
    if len(shape) > MAX_RANK:
        raise gscheck.InvalidArgument("output rank too large")
    out = gscheck.output(shape)
    if rows and params.size == 0:
        raise gscheck.InvalidArgument("Requested more than 0 entries, but params is empty.")
    if rows and aug > 7:
        raise gscheck.InvalidArgument("Only indices.shape[-1] values between 1 and 7 are supported")
    return out, b


def _scatter_shapes(op, indices, updates, s, shape_input):
    """ScatterNd's or TensorScatter*'s checks, then PrepareAndValidateInputs."""
    ish, ush = indices.shape, updates.shape
    n_out = prod(s)

    def valid_empty(n):
        return (indices.size == 0 and updates.size == 0) or (n and indices.size and updates.size)

    if not valid_empty(shape_input.size if op == "scatter_nd" else n_out):
        raise gscheck.InvalidArgument("Indices and updates specified for empty output shape")
    outer = indices.ndim - 1
    if updates.ndim < outer or ish[:outer] != ush[:outer]:
        raise gscheck.InvalidArgument("outer dimensions of indices and updates must match")
    ix = ish[outer]
    if updates.ndim - outer != len(s) - ix or ush[outer:] != tuple(s[ix:]):
        raise gscheck.InvalidArgument("inner dimensions of the output and updates must match")
    if op == "scatter_nd" and shape_input.ndim != 1:
        raise gscheck.InvalidArgument("Shape must be a vector")
    if len(s) < 1:
        raise gscheck.InvalidArgument("Output must be at least 1-D")
    if not valid_empty(n_out):
        raise gscheck.InvalidArgument("Indices and updates specified for empty output")
    if ush[0] != ish[0]:
        raise gscheck.InvalidArgument("Dimensions [0,1) of indices and updates must match")
    slice_dim = ish[-1] if indices.ndim > 1 else 1
    batch_dim = indices.ndim - 1 if indices.ndim > 1 else 1
    if (updates.ndim < batch_dim or len(s) < slice_dim + updates.ndim - batch_dim
            or updates.ndim != batch_dim + len(s) - slice_dim or ush[:batch_dim] != ish[:batch_dim]
            or ush[batch_dim:] != tuple(s[slice_dim:])):
        raise gscheck.InvalidArgument("updates shape does not match indices and output")
    imax = _imax(indices)
    if indices.size > imax or s[0] > imax or prod(s[slice_dim:]) > imax:
        raise gscheck.InvalidArgument("too large for the index dtype")
    return slice_dim


def scatter(op, indices, updates, tensor, shape_input, policy):
    """The scatter ops' checks; returns (out, depth): out holds the starting tensor (zeros for
    scatter_nd), depth is indices.shape[-1] (1 for rank-1 indices)."""
    dt = updates.dtype
    if tensor is not None and tensor.dtype != dt:
        raise gscheck.InvalidArgument("tensor and updates dtypes differ")
    if op in ("tensor_scatter_nd_add", "tensor_scatter_nd_sub") and dt == np.bool_:
        raise gscheck.Unsupported(f"no {op} kernel for bool")
    # ml_dtypes' bfloat16 is numpy kind "V": a float here, as in TensorFlow.
    if op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max") and dt.kind not in "iuf" and \
            dt.name != "bfloat16":
        raise gscheck.Unsupported(f"no {op} kernel for {dt}")
    if policy not in POLICIES:
        raise gscheck.InvalidArgument(f"Unknown bad indices handling attribute: {policy}")
    if indices.ndim < 1 or updates.ndim < 1:
        raise gscheck.InvalidArgument("indices and updates must have rank at least one")
    if tensor is not None:
        s = tensor.shape
    else:
        if shape_input.size > MAX_RANK:
            raise gscheck.InvalidArgument("Too many dimensions")
        s = tuple(int(d) for d in shape_input.reshape(-1))
        if any(d < 0 for d in s):
            raise gscheck.InvalidArgument("Dimension must be >= 0")
        if prod(s) > 2**63 - 1:
            raise gscheck.InvalidArgument("Shape would have more than 2**63 - 1 elements")
    depth = _scatter_shapes(op, indices, updates, s, shape_input)
    out = gscheck.output(s)
    if out.size == 0:
        return out, depth
    out[...] = 0 if tensor is None else tensor
    if not 1 <= depth <= 7:
        raise gscheck.InvalidArgument("Only indices.shape[-1] values between 1 and 5 are supported")
    return out, depth
