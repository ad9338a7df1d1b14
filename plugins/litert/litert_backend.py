"""LiteRT (ai-edge-litert's interpreter, TensorFlow Lite's CPU kernels) graded as TensorFlow's
gather/scatter ops (tf-cpu, Python API level), through gscheck's Python host:

    venv="$(scripts/litert_venv.sh | tail -1)"
    gscheck run --backend python:plugins/litert/litert_backend.py --python-venv "$venv" \\
        --known-failures plugins/litert/litert_known_failures.json

Each call runs a flatbuffer that TensorFlow's own converter (tf.lite.TFLiteConverter, the
tensorflow-cpu of tools/requirements-litert.txt) made from a tf.function of the op whose
input_signature has every dimension None, so one conversion serves every shape of a signature
(op, dtypes, ranks, attributes); its Interpreter is cached and each call resizes the inputs
(resize_tensor_input, allocate_tensors). What the converter emits (plugins/litert/probe.py):
- tf.gather -> GATHER(axis, batch_dims); tf.gather_nd -> GATHER_ND (with batch_dims, the
  Python wrapper's reshape and prepended batch coordinate as RANGE/CONCATENATION/... ops);
  tf.scatter_nd -> SCATTER_ND, its int64 indices and shape CAST to int32 first.
- TensorScatterUpdate -> no builtin: tensor * (1 - SCATTER_ND(ones)) + SCATTER_ND(updates), the
  indices CAST to int32; TensorScatterAdd -> GATHER_ND(tensor) + updates, then that update.
  TensorScatterSub/Min/Max and every other dtype need TF Select (flex) ops, which this
  interpreter cannot run: those ops are left out of CONTRACT, those dtypes declined with the
  converter's words.
- bad_indices_policy: GATHER_ND and SCATTER_ND have no such option; 'IGNORE' is dropped, 'ERROR'
  on a scatter needs TF Select ops (declined).
Shape, dtype and attribute checks are TensorFlow's (plugins/python/tf_checks.py): the converter
sees the shapes. What index values do is LiteRT's: its kernels' index checks ("... index out of
bounds", "indices_has_only_positive_elements") are gscheck.BadIndex; litert_known_failures.json
names where the converted model departs from TensorFlow's op. Where the departure would be a
silent wrong value that no element rule describes (the lowering's arithmetic on -0.0, inf and
colliding rows; int64 indices the CAST wraps), the case is declined with the reason.
"""
import logging
import os
import re
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # the converter's C++ logging
import tensorflow as tf  # noqa: E402
from ai_edge_litert import interpreter as litert  # noqa: E402

logging.getLogger("absl").setLevel(logging.ERROR)
tf.get_logger().setLevel(logging.ERROR)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gscheck  # noqa: E402
import tf_checks  # noqa: E402
from signature_cache import SignatureCache  # noqa: E402

try:
    from importlib.metadata import version as _version
    _LITERT = _version("ai-edge-litert")
except Exception:  # noqa: BLE001 (only the name)
    _LITERT = "?"

CONTRACT = {
    "name": f"litert {_LITERT} CPU (tensorflow {tf.__version__} converter)",
    # TensorScatterSub/Min/Max convert only to TF Select ops (probe.py): not implemented.
    "ops": ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
            "tensor_scatter_nd_add"],
    # The dtypes GATHER and GATHER_ND convert and run for; uint16/32/64, float16, float64 and
    # complex need TF Select ops, bfloat16 is refused as an input type (probe.py).
    "dtypes": ["bool", "int8", "int16", "int32", "int64", "uint8", "float32"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["tf-cpu"],
    "api": "python",
    "tf_messages": False,
    # One interpreter thread; every index is checked before a read (probe.py: no read outside
    # params on the indices tried), so repeats agree.
    "deterministic": True,
}
# LiteRT's own index checks (tflite/kernels/gather.cc, gather_nd.cc, scatter_nd.cc).
BAD_INDEX = re.compile(r"(gather|gather_nd|scatter_nd) index out of bounds|"
                       r"indices_has_only_positive_elements was not true")
# Interpreters by signature, bounded (plugins/python/signature_cache.py); the converter's
# refusals by op, dtypes and policy: few, all kept.
_interpreters = SignatureCache(64)
_refusals = {}


def _spec(dtype, rank):
    return tf.TensorSpec([None] * rank, tf.as_dtype(dtype))


def _select_ops(text):
    """The converter's refusal: the TF ops it would need from TF Select, or None."""
    m = re.search(r"TF Select ops: ([^\n]+)", text)
    if m:
        return f"needs TF Select (flex) ops {m.group(1).strip()}, which ai-edge-litert's " \
               f"interpreter cannot run"
    m = re.search(r"Unsupported TensorFlow type `[^`]*`[^\n]*", text)
    return m.group(0) if m else None


def _interpreter(key, fn, specs):
    """The cached (interpreter, input tensor indices in argument order) of a signature; key[0]
    names the op, key[1] the dtype, key[2] the index dtype, key[-1] the bad_indices_policy (but
    for gather)."""
    # The converter's refusals depend on op, dtypes and policy, not on ranks (probe.py,
    # "converter refusals": ranks 1 to 3 alike), so one refusal serves every rank.
    refused = ("refused", key[0], key[1], key[2], key[-1])
    if refused in _refusals:
        raise gscheck.Unimplemented(_refusals[refused])

    def make():
        # The graph path (no trackable_obj): the same converter, a third of the time of the
        # SavedModel path (probe.py times both); absl warns that it is deprecated.
        f = tf.function(fn, input_signature=specs, autograph=False)
        try:
            model = tf.lite.TFLiteConverter.from_concrete_functions(
                [f.get_concrete_function()]).convert()
        except Exception as e:  # noqa: BLE001 (ConverterError, ValueError)
            reason = _select_ops(str(e))
            if reason is None:
                raise RuntimeError(f"LiteRT's converter: {e}") from None
            what = f"{key[0]} on {key[1]}"
            if key[0] != "gather":
                what += f" with bad_indices_policy {key[-1]!r}"
            _refusals[refused] = f"LiteRT's converter: {what}: {reason}"
            raise gscheck.Unimplemented(_refusals[refused]) from None
        it = litert.Interpreter(model_content=model, num_threads=1)
        # The flatbuffer names its inputs after the arguments, in an order of its own.
        names = {d["name"]: d["index"] for d in it.get_input_details()}
        return it, [names[f"a{k}"] for k in range(len(specs))]

    return _interpreters.get(key, make)


def _run(entry, arrays, indices, out):
    """Resizes the interpreter's inputs to the arrays, runs it and stores its output in out."""
    it, index = entry
    if any(d > tf_checks.INT32_MAX for a in arrays for d in a.shape):
        raise gscheck.Unimplemented("LiteRT's tensor dimensions are int32: a dimension of "
                                    "2^31 or more does not fit")
    try:
        for i, a in zip(index, arrays):
            it.resize_tensor_input(i, a.shape, strict=False)
        it.allocate_tensors()
        for i, a in zip(index, arrays):
            it.set_tensor(i, a)
        it.invoke()
        output = it.get_output_details()[0]
        # get_tensor refuses an output with no elements ("Invalid tensor size"): its shape is
        # all there is.
        result = it.get_tensor(output["index"]) if out.size else np.empty(output["shape"],
                                                                           out.dtype)
    except (RuntimeError, ValueError) as e:
        text = str(e)
        if BAD_INDEX.search(text):
            if indices.size:
                raise gscheck.BadIndex(f"litert: {text}") from None
            # Indices with no elements (empty index rows among them) hold no index to check.
            raise RuntimeError(f"litert: an index check failed with no index (indices of shape "
                               f"{list(indices.shape)}): {text}") from None
        raise RuntimeError(f"litert: {text}") from None
    if result.shape != out.shape:
        raise RuntimeError(f"litert returned shape {result.shape}, TensorFlow's is {out.shape}")
    out[...] = result
    return out


def gather(params, indices, axis, batch_dims):
    out, a, b = tf_checks.gather(params, indices, axis, batch_dims)
    key = ("gather", params.dtype.name, indices.dtype.name, params.ndim, indices.ndim, a, b)
    it = _interpreter(key, lambda a0, a1: tf.gather(a0, a1, axis=a, batch_dims=b),
                      [_spec(params.dtype, params.ndim), _spec(indices.dtype, indices.ndim)])
    return _run(it, (params, indices), indices, out)


def gather_nd(params, indices, batch_dims, policy):
    out, b = tf_checks.gather_nd(params, indices, batch_dims, policy)
    key = ("gather_nd", params.dtype.name, indices.dtype.name, params.ndim, indices.ndim, b,
           policy)
    it = _interpreter(key, lambda a0, a1: tf.gather_nd(a0, a1, batch_dims=b,
                                                       bad_indices_policy=policy),
                      [_spec(params.dtype, params.ndim), _spec(indices.dtype, indices.ndim)])
    return _run(it, (params, indices), indices, out)


def _lowering_changes(op, tensor, ix, up, updates_rank):
    """Why the converter's arithmetic for TensorScatterUpdate/Add (tensor * (1 - mask) +
    scatter_nd(updates)) gives other values than the op on these inputs, or None."""
    in_range = ix.size == 0 or bool(((ix >= 0) & (ix < np.array(tensor.shape[:ix.shape[1]]))).all())
    if not in_range:
        return None  # SCATTER_ND's index check raises first
    dup = len(ix) > 1 and len(np.unique(ix, axis=0)) < len(ix)
    if dup and op == "tensor_scatter_nd_update":
        return "a destination written twice is tensor * (1 - n) + the sum of its updates"
    if tensor.dtype != np.float32:
        return None  # integer and bool arithmetic is exact (modulo 2^n)
    if dup:
        return "float32 sums of colliding rows are tensor * (1 - n) + sum(tensor + update)"
    neg_zero = lambda a: bool(((a == 0) & np.signbit(a)).any())  # noqa: E731
    if neg_zero(tensor) or neg_zero(up):
        return "adding the scattered zeros turns -0.0 into +0.0"
    dest = tensor[tuple(ix.T)]
    if not np.isfinite(dest).all():
        return "an infinity or NaN of the tensor at a destination times the mask's 0 is NaN"
    # Above rank 6 TFLite's float MUL and ADD clamp to +-3.4028235e+38 (probe.py); the
    # TensorScatterAdd lowering adds at the updates' rank first.
    if tensor.ndim > 6 or (op == "tensor_scatter_nd_add" and updates_rank > 6):
        if np.isinf(tensor).any() or np.isinf(up).any():
            return "above rank 6 its float MUL and ADD clamp an infinity to +-3.4028235e+38"
        if op == "tensor_scatter_nd_add":
            with np.errstate(over="ignore", invalid="ignore"):
                if np.isinf(dest + up).any():
                    return ("above rank 6 its float ADD clamps a sum past float32's range to "
                            "+-3.4028235e+38")
    return None


def scatter(op, indices, updates, tensor, shape_input, policy):
    out, depth = tf_checks.scatter(op, indices, updates, tensor, shape_input, policy)
    dt = updates.dtype
    if op == "scatter_nd":
        key = (op, dt.name, indices.dtype.name, indices.ndim, updates.ndim, policy)
        fn = lambda a0, a1, a2: tf.scatter_nd(a0, a1, a2, bad_indices_policy=policy)  # noqa: E731
        arrays = (indices, updates, shape_input)
    else:
        key = (op, dt.name, indices.dtype.name, tensor.ndim, indices.ndim, updates.ndim, policy)
        raw = {"tensor_scatter_nd_update": tf.raw_ops.TensorScatterUpdate,
               "tensor_scatter_nd_add": tf.raw_ops.TensorScatterAdd}[op]
        fn = lambda a0, a1, a2: raw(tensor=a0, indices=a1, updates=a2,  # noqa: E731
                                    bad_indices_policy=policy)
        arrays = (tensor, indices, updates)
    it = _interpreter(key, fn, [_spec(a.dtype, a.ndim) for a in arrays])
    if (op != "tensor_scatter_nd_add" and indices.dtype == np.int64 and indices.size
            and not (-2**31 <= indices.min() and indices.max() <= tf_checks.INT32_MAX)):
        # Measured (probe.py): the CAST wraps [[2**32 + 1]] to row 1 and SCATTER_ND writes it.
        raise gscheck.Unimplemented("LiteRT's SCATTER_ND indices are int32: the converter's CAST "
                                    "of these int64 indices would wrap an index past int32 into "
                                    "range and write there")
    if op != "scatter_nd" and out.size:
        rows = indices.size // depth
        why = _lowering_changes(op, tensor, indices.reshape(rows, depth).astype(np.int64),
                                updates.reshape((rows,) + tensor.shape[depth:]), updates.ndim)
        if why:
            raise gscheck.Unimplemented(f"LiteRT has no {op} kernel; the converter's lowering "
                                        f"departs here: {why}")
    return _run(it, arrays, indices, out)


call = tf_checks.dispatch(gather, gather_nd, scatter)
