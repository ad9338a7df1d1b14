"""An example Python-hosted gscheck backend: TensorFlow's gather/scatter ops in numpy, with
tf-cpu semantics (a bad index is an error, IGNORE skips it) at TensorFlow's Python API level.

    gscheck run --backend python:examples/python/numpy_backend.py \\
        --python-venv "$(scripts/numpy_venv.sh | tail -1)"

The checks follow TensorFlow's kernels in order, so each case fails with TensorFlow's error
class (the messages are not TensorFlow's: tf_messages is False). docs/vendor.md has the contract.
"""
import numpy as np

import gscheck

CONTRACT = {
    "name": "numpy-example",
    "ops": ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
            "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
            "tensor_scatter_nd_max"],
    "dtypes": ["bool", "int32", "int64", "float16", "float32", "float64", "complex64"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["tf-cpu"],
    "api": "python",
    "tf_messages": False,
    "deterministic": True,
}

INT32_MAX = 2**31 - 1
MAX_RANK = 254  # TensorFlow's TensorShape
POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")


def _imax(indices):
    return np.iinfo(indices.dtype).max


def _prod(dims):
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _check_ranks(*tensors):
    for t in tensors:
        if t is not None and t.ndim > MAX_RANK:
            raise gscheck.InvalidArgument(f"rank {t.ndim} > {MAX_RANK}")


def _in_range(ix, dim):
    return (ix >= 0) & (ix < dim)


def gather(params, indices, axis, batch_dims):
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
    dim = params.shape[a]
    if dim > _imax(indices):
        raise gscheck.InvalidArgument("params.shape[axis] too large for the index dtype")
    shape = params.shape[:a] + indices.shape[b:] + params.shape[a + 1:]
    if len(shape) > MAX_RANK:
        raise gscheck.InvalidArgument("output rank too large")
    out = gscheck.output(shape)
    if out.size == 0:
        return out
    batch = _prod(params.shape[:b])
    ix = indices.reshape(batch, -1).astype(np.int64)
    bad = ~_in_range(ix, dim)
    if bad.any():
        raise gscheck.BadIndex(f"indices {int(ix[bad][0])} is not in [0, {dim})")
    # [batch, outer, dim, inner] -> [batch, outer, n, inner], one take per batch.
    p = params.reshape(batch, _prod(params.shape[b:a]), dim, _prod(params.shape[a + 1:]))
    o = out.reshape(batch, p.shape[1], ix.shape[1], p.shape[3])
    for k in range(batch):
        np.take(p[k], ix[k], axis=1, out=o[k])
    return out


def gather_nd(params, indices, batch_dims, policy):
    rp, ri = params.ndim, indices.ndim
    b = batch_dims
    batch = 1
    if b < 0:
        raise gscheck.InvalidArgument("tf.gather_nd does not allow negative batch_dims.")
    if b > 0:
        if b >= ri or b >= rp:
            raise gscheck.InvalidArgument("batch_dims must be less than rank(indices), rank(params)")
        batch = _prod(params.shape[:b])
        if batch * _prod(indices.shape[b:]) != indices.size:
            raise gscheck.InvalidArgument("indices cannot be reshaped to the batch")
    if policy not in POLICIES:
        raise gscheck.Unsupported(f"no GatherNd kernel for bad_indices_policy {policy!r}")
    if rp < 1 or ri < 1:
        raise gscheck.InvalidArgument("params and indices must be at least vectors")
    depth = indices.shape[-1]
    aug = b + depth
    if aug > rp:
        raise gscheck.InvalidArgument("index innermost dimension length must be <= params rank")
    rows = batch * _prod(indices.shape[b:-1])
    if rows > INT32_MAX:
        raise gscheck.InvalidArgument("indices has too many elements for int indexing")
    imax = _imax(indices)
    slice_size = _prod(params.shape[aug:])
    if params.size > imax or slice_size > imax:
        raise gscheck.InvalidArgument("params too large for the index dtype")
    shape = params.shape[:b] + indices.shape[b:-1] + params.shape[aug:]
    if len(shape) > MAX_RANK:
        raise gscheck.InvalidArgument("output rank too large")
    out = gscheck.output(shape)
    if rows == 0:
        return out
    if params.size == 0:
        raise gscheck.InvalidArgument("Requested more than 0 entries, but params is empty.")
    if aug > 7:
        raise gscheck.InvalidArgument("Only indices.shape[-1] values between 1 and 7 are supported")
    # Python's lowering: params' batch dimensions flattened into one, whose coordinate is
    # prepended to every index row.
    ix = indices.reshape(rows, depth).astype(np.int64)
    lead = params.shape[b:aug]
    if b > 0:
        ix = np.concatenate([np.repeat(np.arange(batch), rows // batch)[:, None], ix], axis=1)
        lead = (batch,) + lead
    ok = np.all(_in_range(ix, np.array(lead, np.int64)), axis=1)
    if not ok.all() and policy != "IGNORE":
        raise gscheck.BadIndex(f"indices row {ix[~ok][0].tolist()} does not index into params")
    flat = np.ravel_multi_index(tuple(np.where(ok[:, None], ix, 0).T), lead) if lead \
        else np.zeros(rows, np.int64)
    src = params.reshape(-1, slice_size)
    o = out.reshape(rows, slice_size)
    np.take(src, flat, axis=0, out=o)
    o[~ok] = 0
    return out


def _scatter_shape_checks(op, indices, updates, s, shape_input):
    """ScatterNd's or TensorScatter*'s checks, then PrepareAndValidateInputs; returns depth."""
    ish, ush = indices.shape, updates.shape
    n_out = _prod(s)

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
    # PrepareAndValidateInputs.
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
    if indices.size > imax or s[0] > imax or _prod(s[slice_dim:]) > imax:
        raise gscheck.InvalidArgument("too large for the index dtype")
    return slice_dim


def scatter(op, indices, updates, tensor, shape_input, policy):
    dt = updates.dtype
    if tensor is not None and tensor.dtype != dt:
        raise gscheck.InvalidArgument("tensor and updates dtypes differ")
    if op in ("tensor_scatter_nd_add", "tensor_scatter_nd_sub") and dt == np.bool_:
        raise gscheck.Unsupported(f"no {op} kernel for bool")
    if op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max") and dt.kind not in "iuf":
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
        if _prod(s) > 2**63 - 1:
            raise gscheck.InvalidArgument("Shape would have more than 2**63 - 1 elements")
    depth = _scatter_shape_checks(op, indices, updates, s, shape_input)
    out = gscheck.output(s)
    if out.size == 0:
        return out
    out[...] = 0 if tensor is None else tensor
    if not 1 <= depth <= 7:
        raise gscheck.InvalidArgument("Only indices.shape[-1] values between 1 and 5 are supported")
    rows = indices.size // depth
    ix = indices.reshape(rows, depth).astype(np.int64)
    ok = np.all(_in_range(ix, np.array(s[:depth], np.int64)), axis=1)
    slice_size = _prod(s[depth:])
    o = out.reshape(-1, slice_size)
    u = updates.reshape(rows, slice_size)
    flat = np.ravel_multi_index(tuple(ix[ok].T), s[:depth])
    u_ok = u[ok]
    if op in ("scatter_nd", "tensor_scatter_nd_add"):
        np.add.at(o, flat, u_ok)  # unbuffered, in row order
    elif op == "tensor_scatter_nd_sub":
        np.subtract.at(o, flat, u_ok)
    else:
        for r, row in zip(flat, u_ok):  # row order: the last update of a slot wins
            if op == "tensor_scatter_nd_update":
                o[r] = row
            else:  # the update replaces the element only when strictly less (greater)
                take = row < o[r] if op == "tensor_scatter_nd_min" else row > o[r]
                o[r][take] = row[take]
    if not ok.all() and policy != "IGNORE":
        raise gscheck.BadIndex(f"indices row {ix[~ok][-1].tolist()} does not index into {s}")
    return out


def call(op, *, params, indices, updates, tensor, shape, axis, batch_dims, bad_indices_policy,
         semantics):
    _check_ranks(params, indices, updates, tensor, shape, axis)
    with np.errstate(all="ignore"):  # integer wrap-around and inf arithmetic are the contract
        if op == "gather":
            return gather(params, indices, axis, batch_dims)
        if op == "gather_nd":
            return gather_nd(params, indices, batch_dims, bad_indices_policy)
        return scatter(op, indices, updates, tensor, shape, bad_indices_policy)
