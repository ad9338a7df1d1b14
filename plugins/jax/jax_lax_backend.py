"""JAX's kernel level as a gscheck backend: TensorFlow's raw ops (GatherV2, GatherNd, ScatterNd,
TensorScatter*) written with jax.lax.gather and jax.lax.scatter* and explicit dimension
numbers, graded against the `xla` profile (XLA's own rule: no wrap, gathers clamp, scatters drop)
and against `tf-cpu`:

    gscheck run --backend python:plugins/jax/jax_lax_backend.py \\
        --python-venv "$(scripts/jax_venv.sh | tail -1)" \\
        --known-failures plugins/jax/jax_lax_known_failures.json

Kernel level ("api": "kernel"): the axis is always given, batch_dims is never dropped, gather_nd
has no batch_dims. The lowerings:
- GatherV2(axis=a, batch_dims=b): lax.gather of indices[..., None] with
  operand_batching_dims = start_indices_batching_dims = (0..b-1), collapsed_slice_dims and
  start_index_map (a,), offset_dims the params dims before a (after the batch) and after it.
- GatherNd: lax.gather with index_vector_dim last, the first `depth` dims collapsed.
- ScatterNd and TensorScatter*: lax.scatter_add, scatter, scatter_sub, scatter_min, scatter_max
  on rows [N, depth] (ScatterNd adds onto zeros).
The index modes are spelled out, as XLA's rule is: gathers mode="clip" (XLA's clamp), and
"fill" with fill_value 0 for bad_indices_policy IGNORE (the xla profile zeroes such a row, as
TF-XLA does); scatters mode="drop". lax takes the indices as given (no wrap, and int64 stays
int64) except in mode="fill", which cuts them to int32 first: declined where that matters.
Checks are TensorFlow's (plugins/python/tf_checks.py, at the kernel level: see gather()).
"""
import numpy as np

import jax_backend as jb  # sets up jax (x64, CPU), tf_checks and the compilation cache
from jax_backend import jax, tf_checks

lax = jax.lax

CONTRACT = dict(jb.contract(f"jax {jax.__version__} CPU (lax.gather/lax.scatter)"),
                semantics=["xla", "tf-cpu"], api="kernel")
SCATTER = {"scatter_nd": lax.scatter_add, "tensor_scatter_nd_update": lax.scatter,
           "tensor_scatter_nd_add": lax.scatter_add, "tensor_scatter_nd_sub": lax.scatter_sub,
           "tensor_scatter_nd_min": lax.scatter_min, "tensor_scatter_nd_max": lax.scatter_max}

_jitted = jb.jit_cache()


def gather(params, indices, axis, batch_dims):
    # tf_checks is Python-level: a constant axis 0 drops batch_dims there. GatherV2 keeps it; the
    # same axis spelled -rank(params) gets the kernel's checks (batch_dims <= axis) unchanged.
    if (axis is not None and axis.ndim == 0 and axis.dtype.kind == "i" and int(axis) == 0
            and params.ndim > 0):
        axis = np.asarray(-params.ndim, axis.dtype)
    out, a, b = tf_checks.gather(params, indices, axis, batch_dims)
    if out.size == 0:
        return out
    rp, ri = params.ndim, indices.ndim

    def build():
        dn = lax.GatherDimensionNumbers(
            offset_dims=tuple(range(b, a)) + tuple(range(a + ri - b, ri + rp - 1 - b)),
            collapsed_slice_dims=(a,), start_index_map=(a,),
            operand_batching_dims=tuple(range(b)), start_indices_batching_dims=tuple(range(b)))

        def f(p, i):
            sizes = tuple(1 if d == a or d < b else n for d, n in enumerate(p.shape))
            return lax.gather(p, i[..., None], dn, sizes, mode="clip")
        return f

    return jb.run(_jitted(("gather", a, b, rp, ri), build), params, indices, out=out)


def gather_nd(params, indices, policy):
    out, _ = tf_checks.gather_nd(params, indices, 0, policy)
    if out.size == 0:
        return out
    depth, rp, ri = indices.shape[-1], params.ndim, indices.ndim
    ignore = policy == "IGNORE"
    if ignore:
        # mode="fill" casts the indices to int32 before its bounds mask (jax/_src/lax/
        # slicing.py _gather_fill, int_dtype_for_shape): an int64 row outside int32 can come
        # into range (probe.py, 'lax.gather rows [[2**32 + 1]] mode='fill''); declined there.
        jb.check_int32_coordinates(indices, params.shape[:depth], False, clamp=False)

    def build():
        dn = lax.GatherDimensionNumbers(offset_dims=tuple(range(ri - 1, ri - 1 + rp - depth)),
                                        collapsed_slice_dims=tuple(range(depth)),
                                        start_index_map=tuple(range(depth)))
        kw = {"mode": "fill", "fill_value": 0} if ignore else {"mode": "clip"}

        def f(p, i):
            return lax.gather(p, i, dn, (1,) * depth + p.shape[depth:], **kw)
        return f

    return jb.run(_jitted(("gather_nd", depth, rp, ri, ignore), build), params, indices,
                  out=out)


def scatter(op, indices, updates, tensor, shape, policy, semantics):
    out, depth = jb.checked_scatter(op, indices, updates, tensor, shape, policy, semantics)
    if out.size == 0 or indices.size == 0:
        return out
    rank = out.ndim
    fn = SCATTER[op]

    def build():
        dn = lax.ScatterDimensionNumbers(update_window_dims=tuple(range(1, 1 + rank - depth)),
                                         inserted_window_dims=tuple(range(depth)),
                                         scatter_dims_to_operand_dims=tuple(range(depth)))

        def f(t, i, u):
            rows = i.reshape(-1, depth)
            return fn(t, rows, u.reshape((rows.shape[0],) + t.shape[depth:]), dn, mode="drop")
        return f

    return jb.run(_jitted((op, depth, rank), build), out, indices, updates, out=out)


def call(op, *, params, indices, updates, tensor, shape, axis, batch_dims, bad_indices_policy,
         semantics):
    tf_checks.check_ranks(params, indices, updates, tensor, shape, axis)
    policy = jb.profile_policy(bad_indices_policy, semantics)
    if op == "gather":
        return gather(params, indices, axis, batch_dims)
    if op == "gather_nd":
        return gather_nd(params, indices, policy)
    return scatter(op, indices, updates, tensor, shape, policy, semantics)
