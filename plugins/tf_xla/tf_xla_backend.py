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
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep the worker's stderr tail readable
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gscheck  # noqa: E402
from signature_cache import SignatureCache  # noqa: E402

# One tf.function per signature is the design: TensorFlow's "excessive retracing" warning would
# fill the worker's stderr tail, which the report quotes when a call fails.
tf.get_logger().setLevel("ERROR")

OPS = ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
       "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max"]
CONTRACT = {
    "name": "tf-xla " + tf.__version__,
    "ops": OPS,
    # Every dtype XLA compiles (no strings); bfloat16 as ml_dtypes', which TensorFlow pins.
    "dtypes": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "bfloat16", "float32", "float64", "complex64", "complex128"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["xla", "tf-cpu"],
    "api": "python",
    "tf_messages": False,
    # XLA's CPU scatter is one loop over the rows: the same program gives the same bits (the
    # order itself is unspecified, so duplicates are graded as any order).
    "deterministic": True,
}

# One tf.function per signature; XLA keeps a compiled program per shape inside each.
_cache = SignatureCache(256)
# Outputs that may hold more than this many elements get their static shape traced first, so a
# case over gscheck's budget is refused before XLA fills it (2^31 elements take XLA minutes).
_BIG_OUTPUT = 1 << 24
_RAW = {"tensor_scatter_nd_update": "TensorScatterUpdate", "tensor_scatter_nd_add": "TensorScatterAdd",
        "tensor_scatter_nd_sub": "TensorScatterSub", "tensor_scatter_nd_min": "TensorScatterMin",
        "tensor_scatter_nd_max": "TensorScatterMax"}


def _spec(a):
    return tf.TensorSpec([None] * a.ndim, tf.as_dtype(a.dtype))


def _compiled(key, fn, args):
    # autograph=False: the functions are one op each, with no Python control flow to convert;
    # converting them was ~3% of a run (profiled 2026-12-04).
    return _cache.get(key, lambda: tf.function(fn, jit_compile=True, autograph=False,
                                               input_signature=[_spec(a) for a in args]))


def _dims_product(shape):
    n = 1
    for d in shape:
        n *= max(int(d), 1)
    return n


def _output_bound(op, params, indices, shape):
    """An upper bound on the output's elements: a gather's dims are some of params' and
    indices' (zero dims counted as one); scatter_nd's are its shape's; a tensor_scatter's output
    is its tensor, already in memory."""
    if op in ("gather", "gather_nd"):
        return _dims_product(params.shape) * _dims_product(indices.shape)
    if op == "scatter_nd":
        return _dims_product(shape.tolist()) if shape.ndim == 1 else 0
    return 0


def _sig(*arrays):
    return tuple((a.dtype.str, a.ndim) for a in arrays)


def _build(op, params, indices, updates, tensor, shape, axis, batch_dims, policy, kernel):
    """(key, function, tensor inputs) for one call; constants live in the key. kernel: the raw
    ops (GatherV2, GatherNd, ScatterNd, TensorScatter*) instead of the Python wrappers."""
    kw = {"bad_indices_policy": policy} if policy else {}
    if op == "gather":
        a = None if axis is None else axis.tolist()  # a constant: XLA needs it at compile time
        key = (op, _sig(params, indices), repr(a), batch_dims, kernel)
        if kernel:
            ad = tf.as_dtype(axis.dtype)
            return (key, lambda p, i: tf.raw_ops.GatherV2(params=p, indices=i,
                                                          axis=tf.constant(a, ad),
                                                          batch_dims=batch_dims),
                    (params, indices))
        return key, lambda p, i: tf.gather(p, i, axis=a, batch_dims=batch_dims), (params, indices)
    if op == "gather_nd":
        key = (op, _sig(params, indices), batch_dims, policy, kernel)
        if kernel:
            return (key, lambda p, i: tf.raw_ops.GatherNd(params=p, indices=i, **kw),
                    (params, indices))
        return key, lambda p, i: tf.gather_nd(p, i, batch_dims=batch_dims, **kw), (params, indices)
    if op == "scatter_nd":
        s = shape.tolist()
        key = (op, _sig(indices, updates), str(shape.dtype), repr(s), policy, kernel)
        sd = tf.as_dtype(shape.dtype)
        if kernel:
            return (key, lambda i, u: tf.raw_ops.ScatterNd(indices=i, updates=u,
                                                           shape=tf.constant(s, sd), **kw),
                    (indices, updates))
        return (key, lambda i, u: tf.scatter_nd(i, u, tf.constant(s, sd), **kw),
                (indices, updates))
    key = (op, _sig(tensor, indices, updates), policy, kernel)
    if policy or kernel:  # the Python wrappers take no policy: the raw op, as TF's tests call it
        raw = getattr(tf.raw_ops, _RAW[op])
        return (key, lambda t, i, u: raw(tensor=t, indices=i, updates=u, **kw),
                (tensor, indices, updates))
    fn = getattr(tf, op)
    return key, lambda t, i, u: fn(t, i, u), (tensor, indices, updates)


def _check_gather_shape(result, params, indices, axis, batch_dims, kernel):
    """XLA's gather from an axis of size 0 returns a tensor of another shape (docs/spec_notes.md):
    said as the backend's failure, not passed on as an output. Only there: where TensorFlow
    raises on shapes, what XLA returns instead is graded as it is."""
    a = batch_dims if axis is None else int(axis.reshape(-1)[0])  # axis=None is batch_dims
    bd = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    if axis is not None and a == 0 and not kernel:
        bd = 0  # tf.gather drops batch_dims for a constant axis 0 (GatherV2 does not)
    a = a + params.ndim if a < 0 else a
    if not 0 <= bd <= a < params.ndim or params.shape[a] != 0:
        return
    want = params.shape[:a] + indices.shape[bd:] + params.shape[a + 1:]
    if result.shape != want:
        raise RuntimeError(f"XLA returned a gather of shape {list(result.shape)}; TensorFlow's "
                           f"shape is {list(want)}")


def _check_gather_nd_shape(result, params, indices, batch_dims):
    """The same for gather_nd when an indexed dimension of params has size 0."""
    if indices.ndim == 0:
        return
    bd = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    depth = indices.shape[-1]
    if not 0 <= bd < indices.ndim or bd + depth > params.ndim or \
            0 not in params.shape[bd:bd + depth]:
        return
    want = indices.shape[:-1] + params.shape[bd + depth:]
    if result.shape != want:
        raise RuntimeError(f"XLA returned a gather_nd of shape {list(result.shape)}; "
                           f"TensorFlow's shape is {list(want)}")


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


def make_call(kernel):
    """The backend's call(): at TensorFlow's Python API level, or the raw ops' (kernel)."""
    def call(op, *, params, indices, updates, tensor, shape, axis, batch_dims,
             bad_indices_policy, semantics):
        return _call(op, params, indices, updates, tensor, shape, axis, batch_dims,
                     bad_indices_policy, kernel)
    return call


call = make_call(kernel=False)


def _call(op, params, indices, updates, tensor, shape, axis, batch_dims, bad_indices_policy,
          kernel):
    if kernel and op == "gather" and axis is None:
        raise gscheck.InvalidArgument("GatherV2 takes an axis tensor")
    data = tensor if tensor is not None else params if params is not None else updates
    if op == "tensor_scatter_nd_sub" and data.dtype == np.bool_:
        # TF-XLA 2.21 dies with SIGSEGV compiling it (known failure with its repro).
        raise gscheck.Unimplemented("tensor_scatter_nd_sub on bool crashes TF-XLA 2.21")
    if op == "scatter_nd" and (shape.ndim != 1 or shape.dtype.kind != "i"):
        raise gscheck.InvalidArgument("scatter_nd's shape must be an integer vector")
    key, fn, args = _build(op, params, indices, updates, tensor, shape, axis, batch_dims,
                           bad_indices_policy, kernel)
    try:
        f = _compiled(key, fn, args)
        out = None
        if _output_bound(op, params, indices, shape) > _BIG_OUTPUT:
            # A graph trace at these exact shapes (no XLA): TensorFlow's shape inference.
            traced = tf.function(fn).get_concrete_function(
                *[tf.TensorSpec(a.shape, tf.as_dtype(a.dtype)) for a in args])
            static = traced.structured_outputs.shape
            if static.is_fully_defined():
                out = gscheck.output(static.as_list())  # ResourceExhausted over the budget
        result = f(*[tf.constant(a) for a in args]).numpy()
        if op == "gather":
            _check_gather_shape(result, params, indices, axis, batch_dims, kernel)
        elif op == "gather_nd":
            _check_gather_nd_shape(result, params, indices, batch_dims)
        if out is None:
            return result
        if result.size != out.size:
            raise RuntimeError(f"XLA returned shape {result.shape}; TensorFlow's shape "
                               f"inference says {out.shape}")
        out[...] = result.reshape(out.shape)
        return out
    except gscheck.Error:
        raise
    except (tf.errors.OpError, ValueError, TypeError) as e:
        _raise_for(e)
