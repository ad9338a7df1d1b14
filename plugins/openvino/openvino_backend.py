"""OpenVINO's CPU plugin graded as TensorFlow's gather/scatter ops (tf-cpu, Python API level),
through gscheck's Python host:

    venv="$(scripts/openvino_venv.sh | tail -1)"
    gscheck run --backend python:plugins/openvino/openvino_backend.py --python-venv "$venv" \\
        --known-failures plugins/openvino/openvino_known_failures.json

Each call runs a one-op ov.Model with dynamic dimensions built for its signature (op, dtypes,
ranks, attributes), compiled once for the CPU plugin and cached. The ops: GatherV2 -> Gather-8
(axis, batch_dims), GatherNd -> GatherND-8, TensorScatter{Update,Add,Sub,Min,Max} ->
ScatterNDUpdate-15 with reduction none/sum/sub/min/max (OpenVINO's TensorFlow frontend,
src/frontends/tensorflow_common/src/op/, maps TensorScatterAdd to ScatterNDUpdate-15 SUM). tf.gather_nd's batch_dims is Python's
reshape of the batch into one dimension, then GatherND(batch_dims=1). ScatterNd: the frontend
broadcasts a zero and emits ScatterNDUpdate without a reduction, which keeps one of the
duplicate rows where TensorFlow sums them (docs/spec_notes.md); here it is the sum reduction
onto zeros, what the op means, so the plugin's kernel is what is graded.
Shape, dtype and attribute checks are TensorFlow's (plugins/python/tf_checks.py): a converter
sees the shapes. What index values do is OpenVINO's: ScatterNDUpdate's failed index check is
gscheck.BadIndex; Gather's zero-filled rows, GatherND's reads outside params and wrapped negative
indices are returned as they are, and openvino_known_failures.json names each departure.
"""
import os
import re
import sys

import numpy as np

# `import openvino` sends a telemetry event from a forked process (openvino/tools/ovc/__init__.py
# through openvino_telemetry), which outlives the call that imports it and is killed as a stray
# child. Without openvino_telemetry OpenVINO uses its own no-op stub (telemetry_utils.py).
sys.modules["openvino_telemetry"] = None
import openvino as ov  # noqa: E402
import openvino.opset13 as ops  # noqa: E402
import openvino.opset15 as ops15  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gscheck  # noqa: E402
import tf_checks  # noqa: E402
from signature_cache import SignatureCache  # noqa: E402

CONTRACT = {
    "name": f"openvino {ov.__version__.split('-')[0]} CPU",
    "ops": tf_checks.OPS,
    # Not int64, uint64 or float64: the CPU plugin runs them as int32 and float32 (int64 data
    # keeps its low 32 bits, float64 is rounded to float32; docs/spec_notes.md), so it does not
    # implement them. Complex has no OpenVINO element type.
    "dtypes": ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
               "float32"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["tf-cpu"],
    "api": "python",
    "tf_messages": False,
    # GatherND with an index past params reads memory outside it: those outputs vary.
    "deterministic": False,
}
REDUCTION = {"scatter_nd": "sum", "tensor_scatter_nd_update": "none",
             "tensor_scatter_nd_add": "sum", "tensor_scatter_nd_sub": "sub",
             "tensor_scatter_nd_min": "min", "tensor_scatter_nd_max": "max"}
# ScatterNDUpdate's index checks (intel_cpu/src/nodes/scatter_update.cpp): static, dynamic shapes.
BAD_INDEX = re.compile(r"idxValue >= 0 && static_cast<size_t>\(idxValue\) < srcDataDim|"
                       r"indices contain values that points to non-existing data tensor element")

_core = ov.Core()
# Each compiled model keeps its own CPU streams (threads and their stacks): 64 of them fit the
# worker's address space with room, and a sweep reuses far fewer at a time.
_compiled = SignatureCache(64)


def _param(dtype, rank, last=-1):
    """A parameter of dynamic dimensions; `last` fixes the innermost one (an index depth: the
    CPU plugin needs it static to know GatherND's output rank)."""
    t = ov.Type.boolean if dtype == np.bool_ else ov.Type(dtype)
    return ops.parameter(ov.PartialShape([-1] * (rank - 1) + [last] if rank else []), t)


def _compiled_model(key, build, inputs):
    """The cached compiled model for a signature; inputs: [(dtype, rank[, last])]."""
    def make():
        params = [_param(*i) for i in inputs]
        model = ov.Model([build(*params)], params, key[0])
        # The plugin's default threads: with INFERENCE_NUM_THREADS 1, ScatterNDUpdate's failed
        # index check is lost and infer() returns the previous call's output
        # (docs/spec_notes.md).
        return _core.compile_model(model, "CPU")

    return _compiled.get(key, make)


def _run(compiled, arrays, out):
    try:
        # Copies: OpenVINO shares a 0-d input's memory and refuses a read-only one.
        result = compiled([np.array(a) for a in arrays])[0]
    except RuntimeError as e:
        if BAD_INDEX.search(str(e)):
            raise gscheck.BadIndex(f"openvino: {e}") from None
        raise RuntimeError(f"openvino: {e}") from None
    result = np.asarray(result)
    if result.size != out.size:
        raise RuntimeError(f"openvino returned shape {result.shape}, TensorFlow's is {out.shape}")
    out[...] = result.reshape(out.shape)
    return out


def gather(params, indices, axis, batch_dims):
    out, a, b = tf_checks.gather(params, indices, axis, batch_dims)
    key = ("gather", params.dtype.str, indices.dtype.str, params.ndim, indices.ndim, a, b)
    c = _compiled_model(key, lambda p, i: ops.gather(p, i, ops.constant(np.int64(a)), b),
                        [(params.dtype, params.ndim), (indices.dtype, indices.ndim)])
    return _run(c, (params, indices), out)


def gather_nd(params, indices, batch_dims, policy):
    out, b = tf_checks.gather_nd(params, indices, batch_dims, policy)
    if policy == "IGNORE":
        raise gscheck.Unimplemented("OpenVINO has no bad_indices_policy: GatherND cannot skip rows")
    if b > 0:  # tf.gather_nd's lowering: the batch dimensions as one
        batch = tf_checks.prod(params.shape[:b])
        params = params.reshape((batch,) + params.shape[b:])
        indices = indices.reshape((batch,) + indices.shape[b:])
    nb = 1 if b > 0 else 0
    depth = indices.shape[-1]
    if depth == 0 and out.size:
        raise gscheck.Unimplemented("OpenVINO's GatherND with empty index rows (indices.shape[-1] "
                                    "== 0) returns memory it never wrote")
    key = ("gather_nd", params.dtype.str, indices.dtype.str, params.ndim, indices.ndim, depth, nb)
    c = _compiled_model(key, lambda p, i: ops.gather_nd(p, i, nb),
                        [(params.dtype, params.ndim), (indices.dtype, indices.ndim, depth)])
    return _run(c, (params, indices), out)


def _colliding_rows(ix, s):
    """Whether every index row is in range and two of them address the same slice."""
    in_range = (ix >= 0) & (ix < np.array(s[:ix.shape[1]], np.int64))
    return bool(in_range.all()) and len(np.unique(ix, axis=0)) < len(ix)


def scatter(op, indices, updates, tensor, shape_input, policy):
    out, depth = tf_checks.scatter(op, indices, updates, tensor, shape_input, policy)
    if policy == "IGNORE":
        raise gscheck.Unimplemented("OpenVINO has no bad_indices_policy: ScatterNDUpdate cannot "
                                    "skip rows")
    s = out.shape
    rows = indices.size // depth if depth else 0
    ix = indices.reshape(rows, depth)
    up = updates.reshape((rows,) + s[depth:])
    dt = updates.dtype
    if dt == np.uint32 and op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max"):
        raise gscheck.Unimplemented("OpenVINO's CPU ScatterNDUpdate compares uint32 as int32 in "
                                    "its min/max reductions")
    if op == "tensor_scatter_nd_update" and _colliding_rows(ix, s):
        raise gscheck.Unimplemented("OpenVINO's CPU ScatterNDUpdate writes colliding rows in an "
                                    "order that varies from run to run; TensorFlow's CPU kernel "
                                    "keeps the last row")
    if dt == np.float16 and REDUCTION[op] in ("sum", "sub") and _colliding_rows(ix, s):
        raise gscheck.Unimplemented("OpenVINO's CPU ScatterNDUpdate sums float16 rows in float32, "
                                    "rounding once where TensorFlow rounds each add")
    key = (op, dt.str, ix.dtype.str, len(s), depth, up.ndim)
    red = REDUCTION[op]
    c = _compiled_model(key, lambda d, i, u: ops15.scatter_nd_update(d, i, u, red),
                        [(dt, len(s)), (ix.dtype, 2, depth), (dt, up.ndim)])
    # out holds the starting tensor (zeros for scatter_nd); the plugin gets a copy of it.
    return _run(c, (out.copy(), ix, up), out)


call = tf_checks.dispatch(gather, gather_nd, scatter)
