"""ONNX Runtime's CPU execution provider graded as TensorFlow's gather/scatter ops (tf-cpu, Python
API level), through gscheck's Python host:

    venv="$(scripts/onnxruntime_venv.sh | tail -1)"
    gscheck run --backend python:plugins/onnxruntime/onnxruntime_backend.py --python-venv "$venv" \\
        --known-failures plugins/onnxruntime/onnxruntime_known_failures.json

Each call runs one tiny ONNX model (opset 18) built for its signature (op, dtypes, ranks,
attributes) with dynamic dimensions, its InferenceSession cached. The ops are lowered as tf2onnx
lowers them (tf2onnx/onnx_opset/tensor.py, read 2026-12-02):
- GatherV2 -> Gather(axis); with batch_dims: indices cast to int64 and unsqueezed to depth 1,
  params transposed so that the axis follows the batch dimensions, GatherND(batch_dims), the
  result transposed back.
- GatherNd -> GatherND (indices cast to int64). tf.gather_nd's batch_dims is Python's reshape of
  the batch into one dimension, then GatherND(batch_dims=1).
- TensorScatterUpdate/Add/Min/Max -> ScatterND with reduction none/add/min/max; TensorScatterSub
  -> Neg of the updates, then ScatterND add (indices cast to int64).
- ScatterNd: tf2onnx emits ConstantOfShape(0) and ScatterND with reduction none, which keeps one
  of the duplicate rows where TensorFlow sums them (a converter bug, docs/spec_notes.md); here it
  is ScatterND add onto zeros, what the op means, so the runtime's kernel is what is graded.
Shape, dtype and attribute checks are TensorFlow's (plugins/python/tf_checks.py): a converter
sees the shapes. What index values do is ONNX Runtime's: where it raises on a bad index the case
is gscheck.BadIndex; where it wraps a negative index the output is returned as it is, and
onnxruntime_known_failures.json names the departure.
"""
import os
import re
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gscheck  # noqa: E402
import tf_checks  # noqa: E402
from signature_cache import SignatureCache  # noqa: E402

OPSET = 18  # ScatterND's min/max reductions
_NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
            "float32", "float64"]
CONTRACT = {
    "name": f"onnxruntime {ort.__version__} CPU",
    "ops": tf_checks.OPS,
    # The CPU EP's Gather, GatherND and ScatterND types; no complex (not an ORT tensor type).
    "dtypes": ["bool"] + _NUMERIC,
    "index_dtypes": ["int32", "int64"],
    "semantics": ["tf-cpu"],
    "api": "python",
    "tf_messages": False,
    # One intra-op thread: the kernels then write in row order.
    "deterministic": True,
}
REDUCTION = {"scatter_nd": "add", "tensor_scatter_nd_update": "none",
             "tensor_scatter_nd_add": "add", "tensor_scatter_nd_sub": "add",
             "tensor_scatter_nd_min": "min", "tensor_scatter_nd_max": "max"}
# ORT's own bad-index messages (gather_elements/gather.cc, gather_nd.cc, scatter_nd.cc).
BAD_INDEX = re.compile(r"indices element out of data bounds|invalid index found|invalid indice found")
NO_KERNEL = re.compile(r"data type is not supported|Could not find an implementation|"
                       r"Type Error: Type 'tensor\(\w+\)' of input parameter")

ort.set_default_logger_severity(4)  # failed runs would print their error to stderr
_run_options = ort.RunOptions()
_run_options.log_severity_level = 4
# Sessions by signature, the least recently used dropped past 64 (plugins/python/signature_cache.py).
_sessions = SignatureCache(64)


def _vi(name, dtype, rank):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                         [None] * rank)


def _session(key, nodes, inputs, output, inits=()):
    """The cached session for a signature; inputs: [(name, dtype, rank)], output likewise."""
    def make():
        graph = helper.make_graph(nodes, key[0], [_vi(*i) for i in inputs], [_vi(*output)],
                                  initializer=list(inits))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 9
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 4
        try:
            return ort.InferenceSession(model.SerializeToString(), opts,
                                        providers=["CPUExecutionProvider"])
        except Exception as e:  # the CPU EP has no kernel for this type
            if not NO_KERNEL.search(str(e)):
                raise
            raise gscheck.Unimplemented(f"onnxruntime: {e}") from None

    return _sessions.get(key, make)


def _run(session, feeds):
    try:
        return session.run(None, feeds, _run_options)[0]
    except Exception as e:
        text = str(e)
        if BAD_INDEX.search(text):
            raise gscheck.BadIndex(f"onnxruntime: {text}") from None
        if NO_KERNEL.search(text):
            raise gscheck.Unimplemented(f"onnxruntime: {text}") from None
        raise RuntimeError(f"onnxruntime: {text}") from None


def _int64_indices(nodes, name, dtype):
    """GatherND/ScatterND take int64 indices only: tf2onnx casts, and so does this."""
    if dtype == np.int64:
        return name
    nodes.append(helper.make_node("Cast", [name], ["indices64"], to=TensorProto.INT64))
    return "indices64"


def _store(out, result):
    if result.shape != out.shape:
        raise RuntimeError(f"onnxruntime returned shape {result.shape}, TensorFlow's is "
                           f"{out.shape}")
    out[...] = result
    return out


def gather(params, indices, axis, batch_dims):
    out, a, b = tf_checks.gather(params, indices, axis, batch_dims)
    rp, ri = params.ndim, indices.ndim
    key = ("gather", params.dtype.str, indices.dtype.str, rp, ri, a, b)
    nodes, inits = [], []
    if b == 0:
        nodes.append(helper.make_node("Gather", ["params", "indices"], ["out"], axis=a))
    else:
        idx = _int64_indices(nodes, "indices", indices.dtype)
        inits.append(helper.make_tensor("last", TensorProto.INT64, [1], [-1]))
        nodes.append(helper.make_node("Unsqueeze", [idx, "last"], ["idx_col"]))
        data = "params"
        if a != b:  # the axis moved next to the batch dimensions
            perm = list(range(b)) + [a] + list(range(b, a)) + list(range(a + 1, rp))
            nodes.append(helper.make_node("Transpose", ["params"], ["params_t"], perm=perm))
            data = "params_t"
        gathered = "out" if a == b else "gathered"
        nodes.append(helper.make_node("GatherND", [data, "idx_col"], [gathered], batch_dims=b))
        if a != b:
            # GatherND gives batch + indices[b:] + params[b:a] + params[a+1:]; TensorFlow puts
            # params[b:a] before indices[b:].
            rr = rp + ri - 1 - b
            j = ri + a - b
            unperm = list(range(b)) + list(range(ri, j)) + list(range(b, ri)) + list(range(j, rr))
            nodes.append(helper.make_node("Transpose", [gathered], ["out"], perm=unperm))
    s = _session(key, nodes, [("params", params.dtype, rp), ("indices", indices.dtype, ri)],
                 ("out", params.dtype, out.ndim), inits)
    return _store(out, _run(s, {"params": params, "indices": indices}))


def gather_nd(params, indices, batch_dims, policy):
    out, b = tf_checks.gather_nd(params, indices, batch_dims, policy)
    if policy == "IGNORE":
        raise gscheck.Unimplemented("ONNX has no bad_indices_policy: GatherND cannot skip rows")
    if b > 0:  # tf.gather_nd's lowering: the batch dimensions as one
        batch = tf_checks.prod(params.shape[:b])
        params = params.reshape((batch,) + params.shape[b:])
        indices = indices.reshape((batch,) + indices.shape[b:])
    nb = 1 if b > 0 else 0
    key = ("gather_nd", params.dtype.str, indices.dtype.str, params.ndim, indices.ndim, nb)
    nodes = []
    idx = _int64_indices(nodes, "indices", indices.dtype)
    nodes.append(helper.make_node("GatherND", ["params", idx], ["out"], batch_dims=nb))
    out_rank = indices.ndim - 1 + params.ndim - nb - indices.shape[-1]
    s = _session(key, nodes, [("params", params.dtype, params.ndim),
                              ("indices", indices.dtype, indices.ndim)],
                 ("out", params.dtype, out_rank))
    return _store(out, _run(s, {"params": params, "indices": indices}).reshape(out.shape))


def scatter(op, indices, updates, tensor, shape_input, policy):
    out, depth = tf_checks.scatter(op, indices, updates, tensor, shape_input, policy)
    if policy == "IGNORE":
        raise gscheck.Unimplemented("ONNX has no bad_indices_policy: ScatterND cannot skip rows")
    s = out.shape
    rows = indices.size // depth if depth else 0
    ix = indices.reshape(rows, depth)
    up = updates.reshape((rows,) + s[depth:])
    dt = updates.dtype
    key = (op, dt.str, ix.dtype.str, len(s), up.ndim)
    nodes = []
    idx = _int64_indices(nodes, "indices", ix.dtype)
    upd = "updates"
    if op == "tensor_scatter_nd_sub":
        nodes.append(helper.make_node("Neg", ["updates"], ["neg_updates"]))
        upd = "neg_updates"
    nodes.append(helper.make_node("ScatterND", ["data", idx, upd], ["out"],
                                  reduction=REDUCTION[op]))
    sess = _session(key, nodes, [("data", dt, len(s)), ("indices", ix.dtype, 2),
                                 ("updates", dt, up.ndim)], ("out", dt, len(s)))
    # out holds the starting tensor (zeros for scatter_nd); the runtime gets a copy of it.
    return _store(out, _run(sess, {"data": out.copy(), "indices": ix, "updates": up}))


call = tf_checks.dispatch(gather, gather_nd, scatter)
