#!/usr/bin/env python3
"""Cross-check gscheck case files against real TensorFlow on the CPU.

Every case file (docs/case_format.md) that carries an `expect` and follows tf-cpu semantics is run
through TensorFlow's eager ops (tf.gather, tf.gather_nd, tf.scatter_nd, tf.tensor_scatter_nd_*, or
the tf.raw_ops kernel where an attribute such as bad_indices_policy needs it, and always for a case
with "api": "kernel": GatherV2, GatherNd, ScatterNd, TensorScatter*). TensorFlow's outcome
is compared with `expect`: outputs bit for bit, errors by class and by the expected message regex.

TensorFlow is the authority: a disagreement means the case file (and the reference that wrote it)
is wrong, unless the disagreement is a TensorFlow bug listed in a --known file.

TensorFlow aborts the whole process on some inputs (CHECK failures), so cases run in worker
processes; a worker that dies is reported as a `tf_crash` for the case it was running and replaced.

Usage: tf_crosscheck.py [options] PATH...   (files, or folders searched for *.json)
Exit status: 0 all agree (or only known differences), 1 disagreements, 2 bad usage.
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import math
import os
import re
import select
import sys
import tempfile
import time
from pathlib import Path

# Error classes of docs/case_format.md that describe TensorFlow's behaviour; the others
# (resource_exhausted, unimplemented, internal, parse) describe a backend or harness, so a case
# expecting one of them says nothing TensorFlow can confirm.
TF_ERROR_CLASSES = ("invalid_argument", "bad_index", "unsupported")
# Classes whose message is TensorFlow's kernel text, so the expected regex is checked.
MESSAGE_CLASSES = ("invalid_argument", "bad_index")

# ---------------------------------------------------------------------------------------------
# Case decoding (numpy only; TensorFlow is imported by workers alone).


class CaseError(Exception):
    """A case file that cannot be decoded."""


def _np():
    import numpy as np  # noqa: PLC0415  (workers and the parent import lazily)

    return np


def numpy_dtype(name: str):
    """The numpy dtype for a gscheck dtype name (bfloat16 through ml_dtypes)."""
    np = _np()
    if name == "bfloat16":
        import ml_dtypes  # noqa: PLC0415

        return np.dtype(ml_dtypes.bfloat16)
    table = {
        "bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
        "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
        "uint64": np.uint64, "float16": np.float16, "float32": np.float32,
        "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128,
    }
    if name not in table:
        raise CaseError(f"unknown dtype {name!r}")
    return np.dtype(table[name])


_FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0.0": -0.0}


def _float_value(v):
    if isinstance(v, str):
        if v == "-nan":
            return math.copysign(math.nan, -1.0)
        if v in _FLOAT_WORDS:
            return _FLOAT_WORDS[v]
        raise CaseError(f"bad float value {v!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise CaseError(f"bad float value {v!r}")
    return float(v)


def _int_value(v):
    if isinstance(v, bool):
        raise CaseError(f"bad integer value {v!r}")
    if isinstance(v, str):
        try:
            return int(v, 10)
        except ValueError as e:
            raise CaseError(f"bad integer value {v!r}") from e
    if isinstance(v, float) and not v.is_integer():
        raise CaseError(f"bad integer value {v!r}")
    if not isinstance(v, (int, float)):
        raise CaseError(f"bad integer value {v!r}")
    return int(v)


def _to_dtype(values, dt_name):
    """Convert decoded Python scalars to a flat numpy array of dt_name, as gscheck's core does:
    integers exactly (out-of-range is an error), floats rounded to nearest even, complex from
    [re, im] pairs."""
    np = _np()
    dt = numpy_dtype(dt_name)
    if dt_name == "bool":
        if any(not isinstance(v, bool) for v in values):
            raise CaseError("bool tensor with a non-bool value")
        return np.array(values, dtype=np.bool_)
    if dt.kind in "iu":
        ints = [_int_value(v) for v in values]
        info = np.iinfo(dt)
        if any(i < info.min or i > info.max for i in ints):
            raise CaseError(f"integer value out of range for {dt_name}")
        return np.array(ints, dtype=dt)
    if dt.kind == "c":
        parts = []
        for v in values:
            if not (isinstance(v, list) and len(v) == 2):
                raise CaseError("complex values are [re, im] pairs")
            parts.append(complex(_float_value(v[0]), _float_value(v[1])))
        return np.array(parts, dtype=dt)
    return _narrow_floats(np.array([_float_value(v) for v in values], dtype=np.float64), dt_name)


def _narrow_floats(floats, dt_name):
    """float64 -> dt_name, correctly rounded (nearest even) as core/case_json.cc does: half types
    go through float32 rounded to odd, which makes the second rounding exact."""
    np = _np()
    dt = numpy_dtype(dt_name)
    with np.errstate(over="ignore", invalid="ignore"):
        if dt_name not in ("float16", "bfloat16"):
            return floats.astype(dt)
        f = floats.astype(np.float32)
        inexact = (f.astype(np.float64) != floats) & ~np.isnan(floats)
        toward_zero = inexact & (np.abs(f.astype(np.float64)) > np.abs(floats))
        f = np.where(toward_zero, np.nextafter(f, np.float32(0)), f)
        bits = f.view(np.uint32) | np.where(inexact, np.uint32(1), np.uint32(0))
        return bits.view(np.float32).astype(dt)


# numpy arrays stop at 64 dimensions and TensorFlow tensors at 254: a tensor of higher rank is
# carried as its flat elements and its shape, and reshaped inside TensorFlow.
NUMPY_MAX_RANK = 64


class HighRank:
    """The elements (flat) and shape of a tensor numpy cannot shape."""

    def __init__(self, flat, shape):
        self.flat_array = flat.reshape(-1)
        self.shape = tuple(shape)
        self.dtype = flat.dtype
        self.size = self.flat_array.size

    def reshape(self, shape):
        if shape not in (-1, [-1], (-1,)):
            raise CaseError("a tensor above numpy's rank limit can only be flattened")
        return self.flat_array


def _shaped(arr, shape):
    """arr reshaped to shape, or a HighRank where numpy cannot hold the rank."""
    if len(shape) > NUMPY_MAX_RANK:
        return HighRank(arr, shape)
    return arr.reshape(shape)


def to_tf(tf, v):
    """A tf constant of a decoded tensor (numpy array or HighRank)."""
    if isinstance(v, HighRank):
        # Reshape refuses rank 254 ("must be < 254"): reshape to the dims other than 1, then
        # insert the 1s one at a time.
        core = [d for d in v.shape if d != 1]
        if len(core) > NUMPY_MAX_RANK:
            raise CaseError(f"rank {len(v.shape)} with {len(core)} dims other than 1")
        t = tf.reshape(tf.constant(v.flat_array), core)
        for i, d in enumerate(v.shape):
            if d == 1:
                t = tf.expand_dims(t, i)
        return t
    return tf.constant(v)


def from_tf(tf, out):
    """A numpy array (HighRank above numpy's rank limit) of a TensorFlow result."""
    np = _np()
    if out.shape.rank is not None and out.shape.rank > NUMPY_MAX_RANK:
        return HighRank(np.asarray(tf.reshape(out, [-1]).numpy()), out.shape.as_list())
    return np.asarray(out.numpy())


def decode_tensor(obj, what="tensor"):
    """A tensor object -> numpy array (string tensors: object array of bytes)."""
    np = _np()
    if not isinstance(obj, dict):
        raise CaseError(f"{what}: not a tensor object")
    dt_name = obj.get("dtype")
    shape = obj.get("shape")
    if not isinstance(dt_name, str) or not isinstance(shape, list):
        raise CaseError(f"{what}: needs dtype and shape")
    if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in shape):
        raise CaseError(f"{what}: bad shape {shape}")
    count = math.prod(shape)
    fields = [k for k in ("data", "data_b64", "fill", "iota") if k in obj]
    if len(fields) != 1:
        raise CaseError(f"{what}: needs exactly one of data, data_b64, fill, iota")
    field = fields[0]
    if dt_name == "string":
        if field == "data":
            vals = obj["data"]
            if not isinstance(vals, list) or any(not isinstance(v, str) for v in vals):
                raise CaseError(f"{what}: string data must be a list of strings")
        elif field == "fill":
            if not isinstance(obj["fill"], str):
                raise CaseError(f"{what}: string fill must be a string")
            vals = [obj["fill"]] * count
        elif field == "iota":
            s = _int_value(obj["iota"])
            vals = [str(s + i) for i in range(count)]
        else:  # data_b64 of a string tensor: one base64 text per element
            vals = obj["data_b64"]
            if not isinstance(vals, list) or any(not isinstance(v, str) for v in vals):
                raise CaseError(f"{what}: string data_b64 must be a list of base64 strings")
            try:
                raw = [base64.b64decode(v, validate=True) for v in vals]
            except ValueError as e:
                raise CaseError(f"{what}: bad base64") from e
            if len(raw) != count:
                raise CaseError(f"{what}: {len(raw)} elements for shape {shape}")
            arr = np.empty(count, dtype=object)
            arr[:] = raw
            return _shaped(arr, shape)
        if len(vals) != count:
            raise CaseError(f"{what}: {len(vals)} elements for shape {shape}")
        arr = np.empty(count, dtype=object)
        arr[:] = [v.encode("utf-8") for v in vals]
        return _shaped(arr, shape)
    dt = numpy_dtype(dt_name)
    if field == "data_b64":
        try:
            raw = base64.b64decode(obj["data_b64"], validate=True)
        except (ValueError, TypeError) as e:
            raise CaseError(f"{what}: bad base64") from e
        if len(raw) != count * dt.itemsize:
            raise CaseError(f"{what}: {len(raw)} bytes for shape {shape} of {dt_name}")
        return _shaped(np.frombuffer(raw, dtype=dt.newbyteorder("<")).astype(dt), shape)
    if field == "data":
        vals = obj["data"]
        if not isinstance(vals, list) or len(vals) != count:
            raise CaseError(f"{what}: data must list {count} elements")
        return _shaped(_to_dtype(vals, dt_name), shape)
    if field == "fill":
        one = _to_dtype([obj["fill"]], dt_name)
        return _shaped(np.full(count, one[0], dtype=dt), shape)
    start = obj["iota"]
    if dt_name == "bool":
        raise CaseError(f"{what}: iota is not defined for bool")
    if dt.kind in "iu":
        first = _int_value(start)
        info = np.iinfo(dt)
        if first < info.min or (count and first + count - 1 > info.max):
            raise CaseError(f"{what}: iota leaves the range of {dt_name}")
        return _shaped(np.array([first + i for i in range(count)], dtype=dt), shape)
    if isinstance(start, bool) or not isinstance(start, (int, float)):
        raise CaseError(f"{what}: iota needs a number")
    vals = np.arange(count, dtype=np.float64) + float(start)
    if dt.kind == "c":
        return _shaped(vals.astype(dt), shape)
    return _shaped(_narrow_floats(vals, dt_name), shape)


def tensor_nbytes(obj) -> int:
    """Approximate bytes of a tensor object without decoding it."""
    try:
        count = math.prod(int(d) for d in obj.get("shape", []))
        size = 16 if obj.get("dtype") == "string" else numpy_dtype(obj["dtype"]).itemsize
        return count * size
    except (CaseError, KeyError, TypeError, ValueError):
        return 0


# ---------------------------------------------------------------------------------------------
# TensorFlow side (worker processes).

_TF_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\} ")
_TF_OP_SUFFIX = re.compile(r" \[Op:[A-Za-z0-9_]+\]( name: .*)?$", re.S)
_TF_NODE_SUFFIX = re.compile(r", node name: [A-Za-z0-9_/]+$")


def clean_tf_message(msg: str) -> str:
    """TensorFlow's eager message without the decorations it adds around the kernel's text:
    the '{{function_node ...}} ' prefix and the ' [Op:X] name: Y' and ', node name: X' suffixes.
    Whitespace inside the kernel's text (a policy "IGNORE " is quoted with its space) stays."""
    msg = _TF_PREFIX.sub("", msg)
    msg = _TF_OP_SUFFIX.sub("", msg)
    return _TF_NODE_SUFFIX.sub("", msg)


_BAD_INDEX_TEXT = re.compile(r"is not in \[|does not index into")


def classify_tf_error(kind: str, msg: str) -> tuple[str, str]:
    """(error class, cleaned message) for an exception type name and its text."""
    text = clean_tf_message(msg)
    if kind == "InvalidArgumentError":
        if "is not in the list of allowed values" in text:
            return "unsupported", text
        if _BAD_INDEX_TEXT.search(text):
            return "bad_index", text
        return "invalid_argument", text
    if kind in ("NotFoundError", "TypeError", "UnimplementedError"):
        # No kernel for the dtype/attribute combination; keep the first line (the list of
        # registered kernels that follows is long and version dependent).
        return "unsupported", text.splitlines()[0] if text else text
    if kind == "ValueError":
        return "invalid_argument", text
    if kind == "ResourceExhaustedError":
        return "resource_exhausted", text
    return "internal", f"{kind}: {text}"


def _tf_call(tf, case, arrays):
    op = case["op"]
    attrs = case.get("attrs") or {}
    policy = attrs.get("bad_indices_policy", "") or ""
    batch_dims = attrs.get("batch_dims", 0)
    t = {k: to_tf(tf, v) for k, v in arrays.items() if k != "axis"}
    if case.get("api", "python") == "kernel":
        return _tf_kernel_call(tf, op, t, attrs, arrays, policy, batch_dims)
    if op == "gather":
        # A tensor-valued axis goes through tf.gather too: its NumPy test `axis != 0` raises
        # ValueError for 0 or 2+ elements, and a one-element 0 drops batch_dims.
        axis = tf.constant(arrays["axis"]) if "axis" in arrays else attrs.get("axis")
        return tf.gather(t["params"], t["indices"], axis=axis, batch_dims=batch_dims)
    if op == "gather_nd":
        return tf.gather_nd(t["params"], t["indices"], batch_dims=batch_dims,
                            bad_indices_policy=policy)
    if op == "scatter_nd":
        return tf.scatter_nd(t["indices"], t["updates"], t["shape"], bad_indices_policy=policy)
    public = {
        "tensor_scatter_nd_update": (tf.tensor_scatter_nd_update, tf.raw_ops.TensorScatterUpdate),
        "tensor_scatter_nd_add": (tf.tensor_scatter_nd_add, tf.raw_ops.TensorScatterAdd),
        "tensor_scatter_nd_sub": (tf.tensor_scatter_nd_sub, tf.raw_ops.TensorScatterSub),
        "tensor_scatter_nd_min": (tf.tensor_scatter_nd_min, tf.raw_ops.TensorScatterMin),
        "tensor_scatter_nd_max": (tf.tensor_scatter_nd_max, tf.raw_ops.TensorScatterMax),
    }
    if op not in public:
        raise CaseError(f"unknown op {op!r}")
    api, raw = public[op]
    if policy == "":
        return api(t["tensor"], t["indices"], t["updates"])
    # The Python wrappers have no bad_indices_policy argument; the kernel attribute does.
    return raw(tensor=t["tensor"], indices=t["indices"], updates=t["updates"],
               bad_indices_policy=policy)


KERNELS = {
    "scatter_nd": "ScatterNd", "tensor_scatter_nd_update": "TensorScatterUpdate",
    "tensor_scatter_nd_add": "TensorScatterAdd", "tensor_scatter_nd_sub": "TensorScatterSub",
    "tensor_scatter_nd_min": "TensorScatterMin", "tensor_scatter_nd_max": "TensorScatterMax",
}


def _tf_kernel_call(tf, op, t, attrs, arrays, policy, batch_dims):
    """A kernel-level case ("api": "kernel"): the raw op through tf.raw_ops, with none of the
    Python wrappers' rules (gather's axis is given and batch_dims is never dropped)."""
    if op == "gather":
        if "axis" in arrays:
            axis = tf.constant(arrays["axis"])
        elif attrs.get("axis") is None:
            raise CaseError("a kernel-level gather needs attrs.axis")
        else:
            a = attrs["axis"]
            axis = tf.constant(a, dtype=tf.int32 if -2**31 <= a < 2**31 else tf.int64)
        return tf.raw_ops.GatherV2(params=t["params"], indices=t["indices"], axis=axis,
                                   batch_dims=batch_dims)
    if op == "gather_nd":
        if batch_dims:
            raise CaseError("a kernel-level gather_nd has no batch_dims")
        return tf.raw_ops.GatherNd(params=t["params"], indices=t["indices"],
                                   bad_indices_policy=policy)
    if op == "scatter_nd":
        return tf.raw_ops.ScatterNd(indices=t["indices"], updates=t["updates"], shape=t["shape"],
                                    bad_indices_policy=policy)
    if op not in KERNELS:
        raise CaseError(f"unknown op {op!r}")
    return getattr(tf.raw_ops, KERNELS[op])(tensor=t["tensor"], indices=t["indices"],
                                            updates=t["updates"], bad_indices_policy=policy)


INPUT_NAMES = {
    "gather": ("params", "indices"),
    "gather_nd": ("params", "indices"),
    "scatter_nd": ("indices", "updates", "shape"),
}


def run_in_tensorflow(tf, case):
    """TensorFlow's outcome for a case: {"output": array} or {"error": {class, message}}."""
    np = _np()
    op = case.get("op")
    names = INPUT_NAMES.get(op, ("tensor", "indices", "updates"))
    inputs = case.get("inputs") or {}
    arrays = {}
    for n in names:
        if n not in inputs:
            raise CaseError(f"{op} needs input {n!r}")
        arrays[n] = decode_tensor(inputs[n], n)
    axis = (case.get("attrs") or {}).get("axis")
    if isinstance(axis, dict):
        arrays["axis"] = decode_tensor(axis, "axis")
    try:
        out = _tf_call(tf, case, arrays)
        if out.dtype == tf.string:  # a scalar string comes back as bytes, not an array
            return {"output": np.array(out.numpy(), dtype=object)}
        return {"output": from_tf(tf, out)}
    except (tf.errors.OpError, TypeError, ValueError) as e:
        kind = type(e).__name__
        text = e.message if isinstance(e, tf.errors.OpError) else str(e)
        cls, msg = classify_tf_error(kind, text)
        return {"error": {"class": cls, "message": msg, "exception": kind}}


# ---------------------------------------------------------------------------------------------
# Comparison.

NUMPY_TO_NAME = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128", "object": "string", "bytes": "string",
}


def _dtype_name(arr):
    name = arr.dtype.name
    if name.startswith("bytes"):
        return "string"
    return NUMPY_TO_NAME.get(name, name)


def _element_text(arr, i):
    v = arr.reshape(-1)[i]
    if arr.dtype == object:
        return repr(v)
    raw = arr.reshape(-1)[i : i + 1].tobytes()
    if arr.dtype.kind == "c":  # real and imaginary parts, each as its bits
        half = len(raw) // 2
        parts = (int.from_bytes(raw[:half], "little"), int.from_bytes(raw[half:], "little"))
        return f"{v} (0x{parts[0]:0{2 * half}x}, 0x{parts[1]:0{2 * half}x})"
    return f"{v} (0x{int.from_bytes(raw, 'little'):0{2 * len(raw)}x})"


def summarize_output(arr, limit=8):
    flat = arr.reshape(-1)
    shown = [_element_text(arr, i) for i in range(min(limit, flat.size))]
    return {"dtype": _dtype_name(arr), "shape": list(arr.shape), "first": shown,
            "elements": int(flat.size)}


def _is_nan(v):
    """NaN test for any float, bfloat16 or complex element (a complex is NaN if a part is)."""
    c = complex(float(v.real), float(v.imag)) if hasattr(v, "imag") else complex(float(v), 0.0)
    return math.isnan(c.real) or math.isnan(c.imag)


def compare_outputs(tf_out, want, subnormal_inputs=False):
    """None when bit-identical; otherwise a description of the first differences."""
    np = _np()
    if _dtype_name(tf_out) != _dtype_name(want):
        return {"why": "dtype", "tf": _dtype_name(tf_out), "reference": _dtype_name(want)}
    if tuple(tf_out.shape) != tuple(want.shape):
        return {"why": "shape", "tf": list(tf_out.shape), "reference": list(want.shape)}
    a, b = tf_out.reshape(-1), want.reshape(-1)
    if a.size == 0:
        diff = []
    elif a.dtype == object or b.dtype == object:
        diff = [i for i in range(a.size) if bytes(a[i]) != bytes(b[i])]
    else:
        # Compare the bits as unsigned integers of the element size (complex: two halves), in
        # chunks, without copying gigabyte outputs.
        item = a.dtype.itemsize
        word = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(item, np.uint64)
        wa = np.ascontiguousarray(a).view(word).reshape(a.size, -1)
        wb = np.ascontiguousarray(b).view(word).reshape(b.size, -1)
        diff, chunk = [], 1 << 22
        for start in range(0, a.size, chunk):
            neq = (wa[start:start + chunk] != wb[start:start + chunk]).any(axis=1)
            diff.extend((np.flatnonzero(neq) + start).tolist())
    if not diff:
        return None
    first = diff[:5]
    nan_only = a.dtype.kind in "fcV" and a.dtype != object and all(
        _is_nan(a[i]) and _is_nan(b[i]) for i in diff)
    why = "nan_bits" if nan_only else \
        "subnormal" if subnormal_inputs and _subnormal_only(a, b, diff) else "elements"
    return {
        "why": why,
        "differing": len(diff),
        "examples": [{"flat_index": int(i), "tf": _element_text(tf_out, i),
                      "reference": _element_text(want, i)} for i in first],
    }


def has_subnormals(case):
    """Whether the case's tensor or updates hold a subnormal float (a part of one, for complex)."""
    np = _np()
    inputs = case.get("inputs") or {}
    for key in ("tensor", "updates", "params"):
        if not isinstance(inputs.get(key), dict):
            continue
        try:
            arr = decode_tensor(inputs[key], key)
        except CaseError:
            continue
        if isinstance(arr, HighRank):
            arr = arr.flat_array
        if arr.dtype == object or arr.dtype.kind not in "fcV" or arr.size == 0:
            continue
        parts = [arr.real, arr.imag] if arr.dtype.kind == "c" else [arr]
        for p in parts:
            f = np.abs(p.astype(np.float64)).reshape(-1)
            real = p.dtype
            try:
                tiny = float(np.finfo(real).tiny)
            except ValueError:
                import ml_dtypes  # noqa: PLC0415

                tiny = float(ml_dtypes.finfo(real).tiny)
            if ((f > 0) & (f < tiny)).any():
                return True
    return False


def _subnormal_only(a, b, diff):
    """Every differing part is finite and within the smallest normal, or TensorFlow's zero for a
    reference value of a few smallest normals: what flushing subnormal operands or results to
    zero (FTZ/DAZ) changes (the caller requires subnormal inputs). A part whose bits agree (a NaN or infinity included), or a NaN on both sides (its
    payload is the separate nan_bits kind: TensorFlow's vectorised bfloat16 max returns the
    canonical NaN), is no objection: large outputs mix both in one case."""
    np = _np()
    if a.dtype == object or a.dtype.kind not in "fcV":
        return False
    real = np.float32 if a.dtype == np.complex64 else np.float64 if a.dtype == np.complex128 \
        else a.dtype
    try:
        tiny = float(np.finfo(real).tiny)
    except ValueError:
        import ml_dtypes  # noqa: PLC0415  (bfloat16)

        tiny = float(ml_dtypes.finfo(real).tiny)
    for i in diff:
        for x, y in ((a[i].real, b[i].real), (a[i].imag, b[i].imag)) if a.dtype.kind == "c" \
                else ((a[i], b[i]),):
            x, y = float(x), float(y)
            if x == y and math.copysign(1, x) == math.copysign(1, y):
                continue  # this part agrees
            if math.isnan(x) and math.isnan(y):
                continue  # the same NaN, or another NaN's bits
            # A flushed operand also turns a strict order into a tie (+0 kept for -0). Each
            # flushed operand is below the smallest normal; subnormal operands that sum past it
            # (-0x007fffff - 0x00000002 is a normal) read as zeros, so TensorFlow's zero stands
            # for a reference value of a few smallest normals.
            if not (math.isfinite(x) and math.isfinite(y)):
                return False
            if abs(x - y) > tiny and not (x == 0 and abs(y) <= 64 * tiny):
                return False
    return True


def _normalize(msg: str) -> str:
    """A message template for grouping: numbers and bracketed lists replaced."""
    msg = re.sub(r"\[[^\]]*\]", "[..]", msg)
    return re.sub(r"-?\d+", "#", msg)


def expect_side(expect):
    """The reference's side of a disagreement, from the case's expect."""
    if "output" in expect:
        try:
            return {"output": summarize_output(decode_tensor(expect["output"], "expect.output"))}
        except CaseError as e:
            return {"unreadable": str(e)}
    err = expect.get("error") or {}
    return {"error": {"class": err.get("class"), "message": err.get("message")}}


def compare_case(case, tf_outcome):
    """(agree, details). details explains a disagreement: kind and both sides."""
    expect = case["expect"]
    if "error" in tf_outcome:
        tf_side = {"error": {k: tf_outcome["error"][k] for k in ("class", "message")}}
    else:
        tf_side = {"output": summarize_output(tf_outcome["output"])}
    if "output" in expect:
        want = decode_tensor(expect["output"], "expect.output")
        ref_side = {"output": summarize_output(want)}
        if "error" in tf_outcome:
            return False, {"kind": "tf_error_reference_output", "tf": tf_side,
                           "reference": ref_side}
        diff = compare_outputs(tf_outcome["output"], want, has_subnormals(case))
        if diff is None:
            return True, None
        # Both sides NaN at every differing element: only the NaN's bits (payload, sign) differ.
        kind = {"nan_bits": "output_nan_bits_differ",
                "subnormal": "output_subnormal_flushed"}.get(diff["why"], "output_differs")
        return False, {"kind": kind, "tf": tf_side, "reference": ref_side, "difference": diff}
    err = expect.get("error") or {}
    ref_side = {"error": {"class": err.get("class"), "message": err.get("message")}}
    if "output" in tf_outcome:
        return False, {"kind": "tf_output_reference_error", "tf": tf_side, "reference": ref_side}
    tf_err = tf_outcome["error"]
    if tf_err["class"] != err.get("class"):
        return False, {"kind": "error_class_differs", "tf": tf_side, "reference": ref_side}
    pattern = err.get("message")
    # An unsupported dtype's text is TensorFlow's kernel registry, not a kernel message: the
    # contract (spec: "Comparing outcomes") promises TensorFlow's text only for these classes.
    if pattern and tf_err["class"] in MESSAGE_CLASSES:
        try:
            hit = re.search(pattern, tf_err["message"]) is not None
        except re.error as e:
            hit = False
            ref_side["error"]["regex_error"] = str(e)
        if not hit:
            return False, {"kind": "error_message_differs", "tf": tf_side, "reference": ref_side}
    return True, None


# ---------------------------------------------------------------------------------------------
# Workers. TensorFlow aborts the process on some inputs, so cases run in child processes. The
# parent imports TensorFlow once (importing runs no op and starts no thread pool) and forks a
# fresh child whenever one dies: a restart costs a fork, not a 10 s import.


def check_case_file(tf, path):
    """The verdict on one case file, as a JSON-able dict (runs in a worker)."""
    try:
        case = json.loads(Path(path).read_text(encoding="utf-8"))
        tf_outcome = run_in_tensorflow(tf, case)
        agree, details = compare_case(case, tf_outcome)
        tf_result = ({"error": tf_outcome["error"]} if "error" in tf_outcome
                     else {"output": summarize_output(tf_outcome["output"])})
        return {"agree": agree, "details": details, "tf": tf_result}
    except (CaseError, json.JSONDecodeError, OSError, KeyError) as e:
        return {"unreadable": f"{type(e).__name__}: {e}"}
    except MemoryError:
        return {"skipped": "checker out of memory (worker cap, see --max-bytes)"}
    except Exception as e:  # noqa: BLE001  (a checker bug must not pass for a TensorFlow crash)
        return {"unreadable": f"checker error: {type(e).__name__}: {e}"}


def import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")  # CPU semantics, whatever is installed
    import tensorflow as tf  # noqa: PLC0415

    return tf


class _Child:
    def __init__(self, pid, to_child, from_child, stderr):
        self.pid, self.to_child, self.from_child, self.stderr = pid, to_child, from_child, stderr
        self.buffer = b""
        self.job = None
        self.started = 0.0

    def stderr_tail(self):
        self.stderr.seek(0)
        lines = self.stderr.read().decode("utf-8", "replace").splitlines()
        fatal = [ln for ln in lines if re.match(r"^F\d{4} ", ln) or "Check failed" in ln]
        if fatal:
            return fatal[-3:]
        # A Python traceback or other last words, without TensorFlow's routine log lines.
        return [ln for ln in lines if not re.match(r"^[IWE]\d{4} |^WARNING: All log", ln)][-4:]


class ForkPool:
    """Runs case files in forked TensorFlow workers; a dead or hung worker is replaced."""

    def __init__(self, jobs, timeout, tf_bytes):
        self.tf = import_tensorflow()
        self.jobs, self.timeout, self.tf_bytes = max(1, jobs), timeout, tf_bytes
        self.children = []

    def _limit_memory(self):
        """Cap the worker's data segment so that a case on which TensorFlow would allocate
        gigabytes fails with ResourceExhaustedError instead of swapping the machine."""
        import resource  # noqa: PLC0415

        with open("/proc/self/status", encoding="ascii") as f:
            data_kb = next(int(ln.split()[1]) for ln in f if ln.startswith("VmData:"))
        cap = data_kb * 1024 + self.tf_bytes
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))

    def _spawn(self):
        r_in, w_in = os.pipe()    # parent -> child: case paths, one per line
        r_out, w_out = os.pipe()  # child -> parent: one JSON line per case
        err = tempfile.TemporaryFile()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            for c in self.children:
                os.close(c.to_child)
                os.close(c.from_child)
            os.close(w_in)
            os.close(r_out)
            os.dup2(err.fileno(), 2)
            self._limit_memory()
            code = 0
            try:
                with os.fdopen(r_in, "r") as inp, os.fdopen(w_out, "w") as out:
                    for line in inp:
                        out.write(json.dumps(check_case_file(self.tf, line.rstrip("\n"))) + "\n")
                        out.flush()
            except BaseException:  # noqa: BLE001  (report, then leave without parent cleanup)
                import traceback  # noqa: PLC0415

                traceback.print_exc()
                code = 70
            finally:
                os._exit(code)
        os.close(r_in)
        os.close(w_out)
        child = _Child(pid, w_in, r_out, err)
        self.children.append(child)
        return child

    def _retire(self, child, kill):
        if kill:
            os.kill(child.pid, 9)
        _, status = os.waitpid(child.pid, 0)
        os.close(child.to_child)
        os.close(child.from_child)
        self.children.remove(child)
        return status

    def run(self, paths, on_result):
        """Check every path; on_result(index, verdict) is called as verdicts arrive."""
        pending = collections.deque(range(len(paths)))
        while len(self.children) < min(self.jobs, len(paths)):
            self._spawn()
        while pending or any(c.job is not None for c in self.children):
            for c in self.children:
                if c.job is None and pending:
                    c.job, c.started = pending.popleft(), time.monotonic()
                    os.write(c.to_child, (str(paths[c.job]) + "\n").encode())
            busy = [c for c in self.children if c.job is not None]
            wait = max(0.0, min(c.started + self.timeout for c in busy) - time.monotonic())
            ready, _, _ = select.select([c.from_child for c in busy], [], [], wait)
            for c in busy:
                if c.from_child in ready:
                    data = os.read(c.from_child, 1 << 16)
                    if data:
                        c.buffer += data
                        while b"\n" in c.buffer and c.job is not None:
                            line, c.buffer = c.buffer.split(b"\n", 1)
                            on_result(c.job, json.loads(line))
                            c.job = None
                        continue
                    status = self._retire(c, kill=False)
                    why = (f"TensorFlow died by signal {os.WTERMSIG(status)}"
                           if os.WIFSIGNALED(status)
                           else f"TensorFlow exited with status {os.WEXITSTATUS(status)}")
                    on_result(c.job, {"crash": why, "stderr": c.stderr_tail()})
                    self._spawn()
                elif time.monotonic() - c.started >= self.timeout:
                    self._retire(c, kill=True)
                    on_result(c.job, {"crash": f"no answer within {self.timeout:.0f} s (killed)"})
                    self._spawn()

    def close(self):
        for c in list(self.children):
            os.close(c.to_child)  # EOF: the worker leaves its loop and exits
            os.waitpid(c.pid, 0)
            os.close(c.from_child)
        self.children.clear()


# ---------------------------------------------------------------------------------------------
# Driver.


def collect_files(paths):
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*.json") if q.is_file()))
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(p)
    return files


def load_known(path):
    if not path:
        return []
    entries = json.loads(Path(path).read_text(encoding="utf-8"))["known"]
    for e in entries:
        e["_re"] = re.compile(e["tf_message"])
    return entries


def match_known(known, kind, op, tf_text):
    for e in known:
        if e["kind"] == kind and op in e.get("ops", [op]) and e["_re"].search(tf_text or ""):
            return e
    return None


def screen(case, max_bytes):
    """A reason to skip the case, or None."""
    if not isinstance(case, dict) or case.get("gscheck_case") != 1:
        return "not a gscheck case file"
    if case.get("semantics", "tf-cpu") != "tf-cpu":
        return "tf-gpu semantics (TensorFlow runs here on the CPU)"
    expect = case.get("expect")
    if not isinstance(expect, dict) or not ("output" in expect or "error" in expect):
        return "no expect"
    if "error" in expect and (expect["error"] or {}).get("class") not in TF_ERROR_CLASSES:
        return f"expects {expect['error'].get('class')} (not a TensorFlow outcome)"
    # The inputs and an expected output are built in memory here; what TensorFlow allocates
    # beyond them is bounded by the workers' memory limit (ForkPool).
    inputs = case.get("inputs") or {}
    total = sum(tensor_nbytes(t) for t in inputs.values() if isinstance(t, dict))
    total += tensor_nbytes(expect.get("output") or {})
    if total > max_bytes:
        return f"{total} bytes of tensors, over --max-bytes"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="case files or folders")
    ap.add_argument("--report", help="write the JSON report here")
    ap.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 1))),
                    help="TensorFlow worker processes (default: min(4, cores))")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    ap.add_argument("--max-bytes", type=int, default=256 << 20,
                    help="skip cases whose input and expected output tensors exceed this; "
                         "a worker may allocate 3x this plus 1 GiB (default 256 MiB)")
    ap.add_argument("--known", help="JSON file of known TensorFlow bugs that are not failures")
    ap.add_argument("--show", type=int, default=3, help="examples printed per disagreement group")
    args = ap.parse_args(argv)
    if not args.paths:
        ap.error("no case files given")
    try:
        files = collect_files(args.paths)
        known = load_known(args.known)
    except (FileNotFoundError, KeyError, json.JSONDecodeError, re.error) as e:
        print(f"tf_crosscheck: {e}", file=sys.stderr)
        return 2

    started = time.monotonic()
    jobs, skipped, unreadable = [], collections.Counter(), []
    for f in files:
        try:
            case = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
            unreadable.append({"file": str(f), "why": str(e)})
            continue
        why = screen(case, args.max_bytes)
        if why:
            skipped[why.split(" (")[0] if "bytes" not in why else "too large (--max-bytes)"] += 1
            continue
        jobs.append((f, case))

    results = [None] * len(jobs)
    done = [0]

    def on_result(k, verdict):
        results[k] = verdict
        done[0] += 1
        if done[0] % 2000 == 0:
            print(f"  ... {done[0]}/{len(jobs)} cases", file=sys.stderr, flush=True)

    if jobs:
        # Room for the case's tensors, TensorFlow's copies of them, and its thread stacks.
        pool = ForkPool(args.jobs, args.timeout, tf_bytes=3 * args.max_bytes + (1 << 30))
        try:
            pool.run([f for f, _ in jobs], on_result)
        finally:
            pool.close()

    agree, disagreements, known_hits, unchecked = 0, [], [], 0
    by_kind = collections.Counter()
    groups = collections.OrderedDict()
    for (f, case), r in zip(jobs, results):
        op = case.get("op")
        if "unreadable" in r:
            unreadable.append({"file": str(f), "why": r["unreadable"]})
            continue
        if "skipped" in r:
            skipped[r["skipped"]] += 1
            unchecked += 1
            continue
        if r.get("agree"):
            agree += 1
            continue
        if "crash" in r:
            details = {"kind": "tf_crash", "tf": {"crash": r["crash"], "stderr": r.get("stderr")},
                       "reference": expect_side(case["expect"])}
            tf_text = " ".join(r.get("stderr") or [r["crash"]])
        else:
            details = r["details"]
            tf_err = details["tf"].get("error")
            # Known-bug patterns match an error's text, or an output's dtype name.
            tf_text = tf_err["message"] if tf_err else details["tf"]["output"]["dtype"]
        entry = {"file": str(f), "name": case.get("name"), "op": op, **details}
        hit = match_known(known, details["kind"], op, tf_text)
        if hit:
            entry["known"] = hit["why"]
            known_hits.append(entry)
            continue
        disagreements.append(entry)
        by_kind[details["kind"]] += 1
        ref_err = (details.get("reference") or {}).get("error") or {}
        tf_err = (details.get("tf") or {}).get("error") or {}
        key = (details["kind"], op, tf_err.get("class"), ref_err.get("class"),
               _normalize(tf_text)[:160])
        groups.setdefault(key, []).append(entry)

    elapsed = time.monotonic() - started
    summary = {
        "files": len(files),
        "checked": len(jobs) - unchecked,
        "agree": agree,
        "disagree": len(disagreements),
        "known_tf_bugs": len(known_hits),
        "unreadable": len(unreadable),
        "skipped": dict(skipped),
        "disagreements_by_kind": dict(by_kind),
        "seconds": round(elapsed, 1),
    }
    report = {
        "tool": "tf_crosscheck",
        "versions": versions(),
        "summary": summary,
        "groups": [
            {"kind": k[0], "op": k[1], "tf_class": k[2], "reference_class": k[3],
             "tf_message_template": k[4], "count": len(v), "files": [e["file"] for e in v]}
            for k, v in groups.items()
        ],
        "disagreements": disagreements,
        "known_tf_bugs": known_hits,
        "unreadable": unreadable,
    }
    print_summary(report, args.show)
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"report: {args.report}")
    return 1 if disagreements or unreadable else 0


def versions():
    """Versions of the Python packages the verdicts depend on (read without importing TF)."""
    from importlib import metadata  # noqa: PLC0415

    out = {"python": sys.version.split()[0]}
    for pkg in ("tensorflow-cpu", "tensorflow", "numpy", "ml_dtypes"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _side_text(side):
    if side is None:
        return "?"
    if "error" in side and side["error"]:
        e = side["error"]
        return f"error {e.get('class')}: {e.get('message')!r}"
    if "output" in side:
        o = side["output"]
        return f"output {o['dtype']}{o['shape']} {', '.join(o['first'][:4])}"
    if "crash" in side:
        return f"crash: {side['crash']} {' | '.join(side.get('stderr') or [])}"
    return json.dumps(side)[:300]


def print_summary(report, show):
    s = report["summary"]
    v = report["versions"]
    tf_v = v.get("tensorflow-cpu") or v.get("tensorflow") or "?"
    print(f"tf_crosscheck: TensorFlow {tf_v} (CPU), numpy {v.get('numpy', '?')}, "
          f"python {v['python']}")
    print(f"  files {s['files']}, checked {s['checked']}, agree {s['agree']}, "
          f"disagree {s['disagree']}, known TF bugs {s['known_tf_bugs']}, "
          f"unreadable {s['unreadable']}, {s['seconds']} s")
    for why, n in sorted(s["skipped"].items()):
        print(f"  skipped {n}: {why}")
    for kind, n in sorted(s["disagreements_by_kind"].items()):
        print(f"  disagreements {kind}: {n}")
    for g in report["groups"]:
        print(f"\n[{g['kind']}] {g['op']}: {g['count']} case(s); TF {g['tf_class']}, "
              f"reference {g['reference_class']}")
        shown = [d for d in report["disagreements"] if d["file"] in set(g["files"][:show])]
        for d in shown:
            print(f"  {d['file']}")
            print(f"    TF:        {_side_text(d.get('tf'))}")
            print(f"    reference: {_side_text(d.get('reference'))}")
            if d.get("difference"):
                print(f"    difference: {json.dumps(d['difference'])[:400]}")
    for u in report["unreadable"][:show]:
        print(f"unreadable: {u['file']}: {u['why']}")


if __name__ == "__main__":
    sys.exit(main())
