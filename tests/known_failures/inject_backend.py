"""A forwarding Python-hosted backend that injects one bug into another's answers: the Python
twin of inject_plugin.c, for the shipped Python-hosted runtimes (plugins/*/NAME_backend.py).

    GSCHECK_INJECT_TARGET=plugins/jax/jax_backend.py GSCHECK_INJECT=wrong_value \\
        gscheck run --backend python:tests/known_failures/inject_backend.py ...

The target's contract and answers pass through, except for the kind's bug (GSCHECK_INJECT):
  none               nothing (the clean run the others assume)
  abort              a gather of int32 params aborts the process
  bad_index          a gather with a non-empty output raises BadIndex
  declined           every tensor_scatter_nd_add is declined (Unimplemented)
  declined_own_words every gather is declined in the words of the shipped files' host-rank
                     entries ("numpy allows at most 64 dimensions"): an entry selected by its
                     text alone would forgive it
  wrong_value        tensor_scatter_nd_min/max: 1 added to element 0 (a wrong value)
  flush16            float16 subnormals of a scatter's output flushed to zero
  flush_untouched    float32 subnormals of an add/sub/min/max output flushed (untouched too)
  wrapped_garbage    a call with a negative index: 1 added to element 0 (garbage where a wrap
                     rule predicts the row)
  large_one_element  the low bit of the middle byte flipped in outputs of 100,000 elements or more
tests/known_failures/injected_module_check.sh runs one kind per ctest.
"""
import importlib.util
import os
import sys

import numpy as np

_TARGET = os.environ.get("GSCHECK_INJECT_TARGET", "")
_KIND = os.environ.get("GSCHECK_INJECT", "")
_KINDS = {"none", "abort", "bad_index", "declined", "declined_own_words", "wrong_value",
          "flush16", "flush_untouched", "wrapped_garbage", "large_one_element"}
if not _TARGET or _KIND not in _KINDS:
    raise RuntimeError("inject_backend: set GSCHECK_INJECT_TARGET (a backend module) and "
                       f"GSCHECK_INJECT (one of {sorted(_KINDS)}), not {_KIND!r}")

# The target as the host loads a module by path: its folder first on sys.path (its own helpers).
_path = os.path.abspath(_TARGET)
_name = os.path.splitext(os.path.basename(_path))[0]
sys.path.insert(0, os.path.dirname(_path))
_spec = importlib.util.spec_from_file_location(_name, _path)
if _spec is None:
    raise RuntimeError(f"inject_backend: cannot load {_path}")
_target = importlib.util.module_from_spec(_spec)
sys.modules[_name] = _target
_spec.loader.exec_module(_target)
CONTRACT = _target.CONTRACT

import gscheck  # noqa: E402  (the host's module, present once a backend is loaded)


def _flush(a, bits, exponent_mask, mantissa_mask):
    v = a.view(bits).reshape(-1)
    sub = ((v & exponent_mask) == 0) & ((v & mantissa_mask) != 0)
    v[sub] &= ~(exponent_mask | mantissa_mask)  # keep the sign: a zero of its sign


def call(op, **inputs):
    if _KIND == "declined" and op == "tensor_scatter_nd_add":
        raise gscheck.Unimplemented("declined by the injecting module")
    if _KIND == "declined_own_words" and op == "gather":
        raise gscheck.Unimplemented("numpy allows at most 64 dimensions (injected)")
    result = _target.call(op, **inputs)
    if _KIND == "none":
        return result
    out = np.asarray(result)
    if not out.flags.writeable or not out.flags.c_contiguous:  # not gscheck.output()
        out = np.ascontiguousarray(out).copy()
        result = out
    if out.size == 0 or out.dtype.kind in "OSU":
        return result
    params, indices = inputs.get("params"), inputs.get("indices")
    if _KIND == "abort" and op == "gather" and params is not None and params.dtype == np.int32:
        os.abort()
    if _KIND == "bad_index" and op == "gather":
        raise gscheck.BadIndex("indices[0] = 0 is not in [0, 0) (injected)")
    flat = out.reshape(-1)
    bump = (_KIND == "wrong_value" and op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max")) \
        or (_KIND == "wrapped_garbage" and indices is not None and indices.size
            and np.asarray(indices).min() < 0)
    if bump:
        if flat.dtype == np.bool_:
            flat[0] = not flat[0]
        else:
            flat[0] = flat[0] + flat.dtype.type(1)
    if _KIND == "flush16" and out.dtype == np.float16 and op not in ("gather", "gather_nd"):
        _flush(flat, np.uint16, 0x7C00, 0x03FF)
    if _KIND == "flush_untouched" and out.dtype == np.float32 and op in (
            "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
            "tensor_scatter_nd_max"):
        _flush(flat, np.uint32, 0x7F800000, 0x007FFFFF)
    if _KIND == "large_one_element" and out.size >= 100000:
        b = flat.view(np.uint8)
        b[out.size // 2 * out.itemsize] ^= 1
    return result
