"""TensorFlow's XLA path as a gscheck backend: each op inside tf.function(jit_compile=True), at
TensorFlow's Python API level, graded against the `xla` profile (and against tf-cpu, to list
where XLA departs from TensorFlow's own kernels).

    gscheck run --backend python:plugins/tf_xla/tf_xla_backend.py \\
        --python-venv "$(scripts/tf_venv.sh | tail -1)" \\
        --known-failures plugins/tf_xla/tf_xla_known_failures.json

One compiled function per signature (op, dtypes, ranks, constant attributes), cached: the inputs
are traced with unknown dims, so XLA compiles once per shape under one trace. gather's axis and
scatter_nd's shape must be compile-time constants under XLA, so they are part of the signature.
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep the worker's stderr tail readable
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import tensorflow as tf

import gscheck

OPS = ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
       "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max"]
CONTRACT = {
    "name": "tf-xla " + tf.__version__,
    "ops": OPS,
    # XLA compiles no strings; the host has no bfloat16 view.
    "dtypes": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["xla", "tf-cpu"],
    "api": "python",
    "tf_messages": False,
    # XLA's CPU scatter is one loop over the rows: the same program gives the same bits (the
    # order itself is unspecified, so duplicates are graded as any order).
    "deterministic": True,
}

_cache = {}
_RAW = {"tensor_scatter_nd_update": "TensorScatterUpdate", "tensor_scatter_nd_add": "TensorScatterAdd",
        "tensor_scatter_nd_sub": "TensorScatterSub", "tensor_scatter_nd_min": "TensorScatterMin",
        "tensor_scatter_nd_max": "TensorScatterMax"}


def _spec(a):
    return tf.TensorSpec([None] * a.ndim, tf.as_dtype(a.dtype))


def _compiled(key, fn, args):
    f = _cache.get(key)
    if f is None:
        f = tf.function(fn, jit_compile=True, input_signature=[_spec(a) for a in args])
        _cache[key] = f
    return f


def _sig(*arrays):
    return tuple((a.dtype.str, a.ndim) for a in arrays)


def _build(op, params, indices, updates, tensor, shape, axis, batch_dims, policy):
    """(key, function, tensor inputs) for one call; constants live in the key."""
    kw = {"bad_indices_policy": policy} if policy else {}
    if op == "gather":
        a = None if axis is None else axis.tolist()  # a constant: XLA needs it at compile time
        key = (op, _sig(params, indices), repr(a), batch_dims)
        return key, lambda p, i: tf.gather(p, i, axis=a, batch_dims=batch_dims), (params, indices)
    if op == "gather_nd":
        key = (op, _sig(params, indices), batch_dims, policy)
        return key, lambda p, i: tf.gather_nd(p, i, batch_dims=batch_dims, **kw), (params, indices)
    if op == "scatter_nd":
        s = shape.tolist()
        key = (op, _sig(indices, updates), str(shape.dtype), repr(s), policy)
        sd = tf.as_dtype(shape.dtype)
        return (key, lambda i, u: tf.scatter_nd(i, u, tf.constant(s, sd), **kw),
                (indices, updates))
    key = (op, _sig(tensor, indices, updates), policy)
    if policy:  # the Python wrappers take no policy: the raw op, as TensorFlow's tests call it
        raw = getattr(tf.raw_ops, _RAW[op])
        return (key, lambda t, i, u: raw(tensor=t, indices=i, updates=u, bad_indices_policy=policy),
                (tensor, indices, updates))
    fn = getattr(tf, op)
    return key, lambda t, i, u: fn(t, i, u), (tensor, indices, updates)


def _raise_for(e):
    """A TensorFlow exception as the outcome it stands for."""
    text = str(e).strip().splitlines()
    msg = text[-1] if text else type(e).__name__
    full = str(e)
    if "Detected unsupported operations" in full or "no registered" in full.lower() or \
            "must be int32 or int64" in full or isinstance(e, (tf.errors.NotFoundError,
                                                              tf.errors.UnimplementedError)):
        raise gscheck.Unsupported(msg[:500]) from None
    if isinstance(e, tf.errors.ResourceExhaustedError):
        raise gscheck.ResourceExhausted(msg[:500]) from None
    if isinstance(e, (tf.errors.InvalidArgumentError, ValueError, TypeError)):
        raise gscheck.InvalidArgument(msg[:500]) from None
    raise e


def call(op, *, params, indices, updates, tensor, shape, axis, batch_dims, bad_indices_policy,
         semantics):
    data = tensor if tensor is not None else params if params is not None else updates
    if op == "tensor_scatter_nd_sub" and data.dtype == np.bool_:
        # TF-XLA 2.21 dies with SIGSEGV compiling it (known failure with its repro).
        raise gscheck.Unimplemented("tensor_scatter_nd_sub on bool crashes TF-XLA 2.21")
    if op == "scatter_nd" and (shape.ndim != 1 or shape.dtype.kind != "i"):
        raise gscheck.InvalidArgument("scatter_nd's shape must be an integer vector")
    key, fn, args = _build(op, params, indices, updates, tensor, shape, axis, batch_dims,
                           bad_indices_policy)
    try:
        f = _compiled(key, fn, args)
        out = f(*[tf.constant(a) for a in args])
        return out.numpy()
    except gscheck.Error:
        raise
    except (tf.errors.OpError, ValueError, TypeError) as e:
        _raise_for(e)
