"""A Python-hosted backend that misbehaves on purpose: examples/python/numpy_backend.py until a
gather's params[0] == 13, then what $GSC_PY_HOSTILE names (tests/python/python_host_test.cc)."""
import ctypes
import gc
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python"))
import numpy_backend  # noqa: E402

import gscheck  # noqa: E402

CONTRACT = dict(numpy_backend.CONTRACT, name="hostile-" + os.environ.get("GSC_PY_HOSTILE", ""))
_kept = []


def _misbehave(mode, params, indices):
    if mode == "raise":
        raise KeyError("hostile: no such key")
    if mode == "hang":
        print("hostile: hanging", file=sys.stderr)
        while True:
            time.sleep(1)
    if mode == "segv":
        print("hostile: reading address 0", file=sys.stderr)
        ctypes.string_at(0)
    if mode == "exit":
        os._exit(3)
    if mode == "fork":
        pid = os.fork()
        if pid == 0:  # a child that lingers, holding the worker's pipes
            with open(os.environ["GSC_PY_MARKER"], "w") as f:
                f.write(str(os.getpid()))
            time.sleep(600)
            os._exit(0)
        while not os.path.exists(os.environ["GSC_PY_MARKER"]):
            time.sleep(0.01)
        return np.take(params, indices, axis=0)
    if mode == "overrun":
        out = gscheck.output(indices.shape + params.shape[1:])
        out[...] = np.take(params, indices, axis=0)
        ctypes.memset(out.ctypes.data + out.nbytes, 0x41, 100)
        return out
    if mode == "write_input":
        ctypes.memset(params.ctypes.data, 0, 4)
    if mode == "wrong_dtype":
        return np.take(params, indices, axis=0).astype(np.float64)
    if mode == "wrong_shape":
        return np.take(params, indices, axis=0)[:-1]
    if mode == "keep":
        _kept.append(params)
        return np.take(params, indices, axis=0)
    if mode == "scalar_result":  # a numpy scalar, as a framework's .numpy() of a 0-d result
        return np.take(params, indices, axis=0)[()]
    if mode == "exit_call":
        sys.exit(4)
    if mode == "keep_unreported":  # keeps an input and silences the host's release() check
        for o in gc.get_objects():  # the host's bound release() runs this code from now on
            if type(o).__name__ == "Host" and hasattr(type(o), "release"):
                type(o).release.__code__ = (lambda self: None).__code__
        _kept.append(params)
        return np.take(params, indices, axis=0)
    if mode == "memory_error":  # "out of memory" on a 16-byte case, to be skipped
        raise MemoryError("hostile: out of memory")
    if mode == "huge_view":  # a zero-stride view of 2^40 elements: over any budget
        return np.broadcast_to(np.float32(0), (1 << 40,))
    raise AssertionError("unknown GSC_PY_HOSTILE mode " + mode)


def call(op, **kw):
    params = kw["params"]
    if op == "gather" and params.size and params.reshape(-1)[0] == 13:
        return _misbehave(os.environ.get("GSC_PY_HOSTILE", ""), params, kw["indices"])
    return numpy_backend.call(op, **kw)
