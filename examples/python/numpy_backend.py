"""An example Python-hosted gscheck backend: TensorFlow's gather/scatter ops in numpy, with
tf-cpu semantics (a bad index is an error, IGNORE skips it) at TensorFlow's Python API level.

    gscheck run --backend python:examples/python/numpy_backend.py \\
        --python-venv "$(scripts/numpy_venv.sh | tail -1)"

The checks are TensorFlow's, in its kernels' order (plugins/python/tf_checks.py, shared with
the runtime backends), so each case fails with TensorFlow's error class (the messages are not
TensorFlow's: tf_messages is False); this file moves the data. docs/vendor.md has the contract.
"""
import numpy as np

import gscheck
import tf_checks  # gscheck's own: the host puts its helper modules on sys.path

CONTRACT = {
    "name": "numpy-example",
    "ops": tf_checks.OPS,
    "dtypes": ["bool", "int32", "int64", "float16", "float32", "float64", "complex64"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["tf-cpu"],
    "api": "python",
    "tf_messages": False,
    "deterministic": True,
}


def _in_range(ix, dim):
    return (ix >= 0) & (ix < dim)


def gather(params, indices, axis, batch_dims):
    out, a, b = tf_checks.gather(params, indices, axis, batch_dims)
    if out.size == 0:
        return out
    dim = params.shape[a]
    batch = tf_checks.prod(params.shape[:b])
    ix = indices.reshape(batch, -1).astype(np.int64)
    bad = ~_in_range(ix, dim)
    if bad.any():
        raise gscheck.BadIndex(f"indices {int(ix[bad][0])} is not in [0, {dim})")
    # [batch, outer, dim, inner] -> [batch, outer, n, inner], one take per batch.
    p = params.reshape(batch, tf_checks.prod(params.shape[b:a]), dim,
                       tf_checks.prod(params.shape[a + 1:]))
    o = out.reshape(batch, p.shape[1], ix.shape[1], p.shape[3])
    for k in range(batch):
        np.take(p[k], ix[k], axis=1, out=o[k])
    return out


def gather_nd(params, indices, batch_dims, policy):
    out, b = tf_checks.gather_nd(params, indices, batch_dims, policy)
    depth = indices.shape[-1]
    aug = b + depth
    batch = tf_checks.prod(params.shape[:b])
    rows = batch * tf_checks.prod(indices.shape[b:-1])
    if rows == 0:
        return out
    slice_size = tf_checks.prod(params.shape[aug:])
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


def scatter(op, indices, updates, tensor, shape_input, policy):
    out, depth = tf_checks.scatter(op, indices, updates, tensor, shape_input, policy)
    if out.size == 0:
        return out
    s = out.shape
    rows = indices.size // depth
    ix = indices.reshape(rows, depth).astype(np.int64)
    ok = np.all(_in_range(ix, np.array(s[:depth], np.int64)), axis=1)
    slice_size = tf_checks.prod(s[depth:])
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
    tf_checks.check_ranks(params, indices, updates, tensor, shape, axis)
    with np.errstate(all="ignore"):  # integer wrap-around and inf arithmetic are the contract
        if op == "gather":
            return gather(params, indices, axis, batch_dims)
        if op == "gather_nd":
            return gather_nd(params, indices, batch_dims, bad_indices_policy)
        return scatter(op, indices, updates, tensor, shape, bad_indices_policy)
