# The Python half of gscheck's Python host (python_plugin.cc embeds this file): it loads the
# user's module, reads its CONTRACT, makes read-only numpy views of the inputs and turns what
# call() returns or raises into an output array or a (code, message) pair.
import gc
import importlib
import importlib.util
import os
import site
import sys
import traceback
import types

# Codes of include/gscheck/plugin.h's enum gsc_code.
_OK, _INVALID, _BAD_INDEX, _UNSUPPORTED, _UNIMPLEMENTED, _INTERNAL, _EXHAUSTED = range(7)

# gsc_dtype order; None where the host has no numpy type: string, and bfloat16 unless the venv
# has ml_dtypes (TensorFlow's and JAX's own numpy bfloat16, which their venvs install).
_DTYPE_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "string"]
_NO_VIEW = {"bfloat16", "string"}
_OPS = ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
        "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
        "tensor_scatter_nd_max"]
_SEMANTICS = ["tf-cpu", "tf-gpu", "xla", "jax"]  # gsc_semantics order
_KEYS = {"name", "ops", "dtypes", "index_dtypes", "semantics", "api", "tf_messages",
         "deterministic", "half_in_float"}


def _make_gscheck_module(alloc):
    """The `gscheck` module a backend imports: its error classes and output()."""
    m = types.ModuleType("gscheck", "gscheck's Python host: errors that are outcomes, output().")

    class Error(Exception):
        """An outcome the backend reports on purpose; its str() is the message."""
        code = _INTERNAL

    def cls(name, code, doc):
        return type(name, (Error,), {"code": code, "__doc__": doc, "__module__": "gscheck"})

    Error.__module__ = "gscheck"
    m.Error = Error
    m.InvalidArgument = cls("InvalidArgument", _INVALID, "a validation check failed")
    m.BadIndex = cls("BadIndex", _BAD_INDEX, "an index is out of range (tf-cpu semantics)")
    m.Unsupported = cls("Unsupported", _UNSUPPORTED, "TensorFlow has no kernel for this dtype")
    m.Unimplemented = cls("Unimplemented", _UNIMPLEMENTED, "the backend declines this case")
    m.ResourceExhausted = cls("ResourceExhausted", _EXHAUSTED, "over a memory budget")
    m.output = alloc
    return m


class Host:
    def __init__(self, alloc_output):
        self._alloc_output = alloc_output  # C: (shape tuple) -> writable memoryview or None
        self._out = None
        self._out_dtype = None
        self._views = []
        self.gscheck = _make_gscheck_module(self._output)
        sys.modules["gscheck"] = self.gscheck

    def load(self, venv, spec, helpers=""):
        """Imports the backend; returns the contract as a tuple (see python_plugin.cc). helpers:
        the folder of gscheck's helper modules (tf_checks), importable without a sys.path line;
        last on sys.path, so a module's own copy wins."""
        if helpers and os.path.isdir(helpers):
            sys.path.append(helpers)
        if venv:
            # Extension modules are built for one minor version: only that one's packages.
            mine = "python%d.%d" % sys.version_info[:2]
            sp = os.path.join(venv, "lib", mine, "site-packages")
            if not os.path.isdir(sp):
                raise RuntimeError(f"--python-venv {venv}: no lib/{mine}/site-packages in it "
                                   f"(the host embeds {sys.executable or 'Python'} "
                                   f"{sys.version.split()[0]}; make the venv with that minor "
                                   "version)")
            site.addsitedir(sp)
        try:
            import numpy
        except ImportError as e:
            raise RuntimeError(f"numpy is not importable ({e}); pass --python-venv DIR "
                               "(scripts/numpy_venv.sh makes one)") from None
        self.np = numpy
        self._dtypes = [None if n in _NO_VIEW else numpy.dtype(n) for n in _DTYPE_NAMES]
        try:
            import ml_dtypes
            self._dtypes[_DTYPE_NAMES.index("bfloat16")] = numpy.dtype(ml_dtypes.bfloat16)
        except (ImportError, AttributeError, TypeError):
            pass  # no bfloat16 view: a contract naming it is refused with the reason
        if spec.endswith(".py") or os.sep in spec:
            path = os.path.abspath(spec)
            name = os.path.splitext(os.path.basename(path))[0]
            sys.path.insert(0, os.path.dirname(path))
            loader_spec = importlib.util.spec_from_file_location(name, path)
            if loader_spec is None:
                raise RuntimeError(f"cannot load {path} as a Python module")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = module
            loader_spec.loader.exec_module(module)
        else:
            sys.path.insert(0, os.getcwd())
            module = importlib.import_module(spec)
        self.call = getattr(module, "call", None)
        if not callable(self.call):
            raise RuntimeError(f"{spec}: no function call(op, **inputs)")
        return self._contract(spec, getattr(module, "CONTRACT", None))

    def _contract(self, spec, c):
        if not isinstance(c, dict):
            raise RuntimeError(f"{spec}: CONTRACT must be a dict (docs/vendor.md)")
        unknown = set(c) - _KEYS
        if unknown:
            raise RuntimeError(f"{spec}: unknown CONTRACT keys {sorted(unknown)}")

        def mask(key, names, refuse=()):
            if key not in c:
                raise RuntimeError(f"{spec}: CONTRACT has no '{key}'")
            bits = 0
            for n in c[key]:
                if n not in names:
                    raise RuntimeError(f"{spec}: CONTRACT['{key}']: unknown name {n!r}")
                if n in refuse:
                    why = " (ml_dtypes is not importable from the venv)" if n == "bfloat16" else ""
                    raise RuntimeError(f"{spec}: CONTRACT['{key}']: the Python host has no "
                                       f"numpy view for {n}{why}")
                bits |= 1 << names.index(n)
            return bits

        api = c.get("api", "python")
        if api not in ("python", "kernel"):
            raise RuntimeError(f"{spec}: CONTRACT['api'] must be 'python' or 'kernel'")
        no_view = {n for n, d in zip(_DTYPE_NAMES, self._dtypes) if d is None}
        index = mask("index_dtypes", _DTYPE_NAMES)
        if index & ~((1 << 3) | (1 << 4)):
            raise RuntimeError(f"{spec}: CONTRACT['index_dtypes'] takes int32 and int64")
        return (str(c.get("name", spec)), mask("ops", _OPS),
                mask("dtypes", _DTYPE_NAMES, no_view), index, mask("semantics", _SEMANTICS),
                bool(c.get("deterministic", False)), bool(c.get("tf_messages", False)),
                bool(c.get("half_in_float", False)), 1 if api == "kernel" else 0)

    def _view(self, spec):
        if spec is None:
            return None
        mv, dtype, dims = spec
        if self._dtypes[dtype] is None:  # not admitted by the contract: a check, not a path
            raise self.gscheck.Unimplemented(
                f"the Python host has no numpy view for {_DTYPE_NAMES[dtype]}")
        if len(dims) > 64:  # numpy's own limit (NPY_MAXDIMS), not the backend's choice
            raise self.gscheck.Unimplemented(
                "the Python host cannot view a rank-%d tensor: numpy allows at most 64 "
                "dimensions" % len(dims))
        return self._track(mv, self.np.frombuffer(mv, self._dtypes[dtype])).reshape(dims)

    def _track(self, mv, flat):
        # numpy's array holds a memoryview of its own over mv (flat.base): every array made
        # from it keeps that object alive, so its reference count shows one kept past the call.
        self._views.append((mv, flat.base))
        return flat

    def _output(self, shape):
        """gscheck.output(shape): the call's output buffer as a writable array (once a call)."""
        if self._out_dtype is None:
            raise RuntimeError("gscheck.output() is only valid inside call()")
        if self._out is not None:
            raise RuntimeError("gscheck.output() may be called once per call")
        shape = tuple(int(d) for d in shape)
        mv = self._alloc_output(shape)
        if mv is None:
            raise self.gscheck.ResourceExhausted("the output is over the call's byte budget")
        self._out = self._track(mv, self.np.frombuffer(mv, self._out_dtype)).reshape(shape)
        return self._out

    def invoke(self, op, semantics, batch_dims, policy, out_dtype, params, indices, updates,
               tensor, shape, axis):
        """One call: an array to copy out, None (written into gscheck.output()), or a
        (code, message) pair."""
        np = self.np
        self._out_dtype = self._dtypes[out_dtype]
        try:
            result = self.call(_OPS[op], params=self._view(params),
                               indices=self._view(indices), updates=self._view(updates),
                               tensor=self._view(tensor), shape=self._view(shape),
                               axis=self._view(axis), batch_dims=batch_dims,
                               bad_indices_policy=policy, semantics=_SEMANTICS[semantics])
            if self._out is not None:
                if result is not self._out:
                    return (_INTERNAL, "call() returned another object than the array "
                                       "gscheck.output() gave it")
                return None
            result = np.asarray(result)
            if result.dtype != self._out_dtype:
                return (_INTERNAL, f"call() returned an array of dtype {result.dtype}; "
                                   f"this op's output dtype is {self._out_dtype}")
            # Not ascontiguousarray: it makes a 0-d result 1-d (a scalar gather's output).
            return result if result.flags.c_contiguous else result.copy(order="C")
        except self.gscheck.Error as e:
            return (e.code, str(e))
        except MemoryError as e:
            return (_EXHAUSTED, _describe(e))
        except BaseException as e:  # SystemExit and KeyboardInterrupt fail the call too
            return (_INTERNAL, _describe(e))
        finally:
            self._out_dtype = None
            self._out = None

    def release(self):
        """After the output is copied: the views must die with the call. None, or why not."""
        views, self._views = self._views, []
        # Here the list, the loop variable and getrefcount's argument hold each inner view.
        kept = [v for _, v in views if sys.getrefcount(v) > 3]
        if kept:
            del kept
            gc.collect()  # a cycle (a traceback's frames) may still hold a view
            kept = [v for _, v in views if sys.getrefcount(v) > 3]
        for mv, _ in views:
            try:
                mv.release()
            except BufferError:  # still exported: the kept array, reported below
                pass
        if not kept:
            return None
        return ("call() kept a reference to an input or output array past its return (a "
                "global, a cache): the arrays are valid only during the call")


def _describe(e):
    """'Type: message; traceback (last 3 frames): file:line in func: code | ...'."""
    text = f"{type(e).__name__}: {e}"
    frames = traceback.extract_tb(e.__traceback__)[1:][-3:]  # without invoke()'s own frame
    if frames:
        text += "; traceback (last %d frames): " % len(frames)
        text += " | ".join(f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}: "
                           f"{(f.line or '').strip()}" for f in frames)
    return text
