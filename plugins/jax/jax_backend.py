"""JAX on the CPU as a gscheck backend: each TensorFlow op written as a JAX user writes it with
jax.numpy indexing (`x[...]`, `x.at[...]`), at TensorFlow's Python API level, graded against the
`jax` profile (jnp's rule: a negative index wraps once, gathers clamp, scatters drop bad rows) and
against `tf-cpu` (to list where JAX departs from TensorFlow's kernels):

    gscheck run --backend python:plugins/jax/jax_backend.py \\
        --python-venv "$(scripts/jax_venv.sh | tail -1)" \\
        --known-failures plugins/jax/jax_known_failures.json

The lowerings (one traced function per op and constant attributes, under jax.jit, which compiles
once per shape and dtype and caches it):
- gather(axis=a, batch_dims=b): `p[:, ..., :, i]` (a - b slices, then the index array), under
  jax.vmap once per batch dim. Indexing, not jnp.take: take's default mode fills bad rows with
  NaN and its mode="clip" does not wrap negatives, while `x[...]` is what the jax profile is.
- gather_nd(batch_dims=b): `p[i[..., 0], ..., i[..., depth - 1]]` (depth 0: every row is all
  of p, a broadcast), under one vmap over the batch dims reshaped into one, as tf.gather_nd's
  own lowering does (indices' batch dims need only match params' in product).
  bad_indices_policy IGNORE is `p.at[...].get(mode="fill", fill_value=0)` and scatters'
  `mode="drop"`, with `wrap_negative_indices=False` under tf-cpu (TensorFlow's bad rows include
  the negative ones; the jax profile wraps first).
- scatter_nd: `zeros(shape).at[...].add(updates)`; tensor_scatter_nd_{update,add,sub,min,max}:
  `tensor.at[...].{set,add,subtract,min,max}(updates)` (jax 0.10.2 has `.subtract`, its own
  scatter-sub, so sub is not written as an add of -updates).
Variants with one of JAX's index modes are thin modules over make_backend() (jax_clip_backend.py
etc.): the mode goes to every `.at[...]` call and the gathers become `.at[...].get(mode=...)`.

Shape, dtype and attribute checks are TensorFlow's (plugins/python/tf_checks.py: what a program
ported from TensorFlow has already passed). Under the jax profile two of TensorFlow's dtype and
attribute rules give way to the profile's, as the reference has them (reference/validate.cc):
min/max take bool (JAX's AND/OR), and any bad_indices_policy but IGNORE means the default.
What index values do is JAX's, and jax_known_failures.json names each departure. One is declined
rather than graded: jnp cuts int64 indices to int32 (check_int32_coordinates).
"""
import os
import re
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)  # int64, uint64, float64, complex128 are real


def _compilation_cache():
    """XLA compiling one program per shape is most of a run's time (~0.1 s a program on the CPU,
    the call itself ~1 ms), so compiled programs go to JAX's persistent cache, shared by the
    workers, the repeats and later runs: $GSCHECK_JAX_CACHE (empty: none), else
    $XDG_CACHE_HOME/gscheck/jax-compile-cache or ~/.cache/gscheck/jax-compile-cache. The cache
    holds what XLA compiled for the same program: the results are the same. The worker's root is
    read-only: the cache is written only where gscheck names it with --worker-writable
    (scripts/runtime_backend_check.sh does); elsewhere it is read, or JAX warns and compiles."""
    d = os.environ.get("GSCHECK_JAX_CACHE")
    if d is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "gscheck", "jax-compile-cache")
    if d:
        jax.config.update("jax_compilation_cache_dir", d)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


_compilation_cache()
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gscheck  # noqa: E402
import tf_checks  # noqa: E402

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
SCATTER_METHOD = {"scatter_nd": "add", "tensor_scatter_nd_update": "set",
                  "tensor_scatter_nd_add": "add", "tensor_scatter_nd_sub": "subtract",
                  "tensor_scatter_nd_min": "min", "tensor_scatter_nd_max": "max"}
# A gather from a dim of 0, refused when tracing: lax.gather's shape rule for a slice of 1 from
# it (jax/_src/lax/slicing.py), or jnp's own IndexError under vmap (jax/_src/numpy/indexing.py
# _index_to_gather): the jax profile's invalid_argument (reference/validate.cc
# gather_from_empty_dim).
EMPTY_DIM = re.compile(r"in gather op is out of range|index is out of bounds for axis \d+ with "
                       r"size 0")


def contract(name):
    return {
        "name": name,
        "ops": tf_checks.OPS,
        "dtypes": DTYPES,
        "index_dtypes": ["int32", "int64"],
        "semantics": ["jax", "tf-cpu"],
        "api": "python",
        "tf_messages": False,
        # XLA's CPU gather and scatter are sequential loops: the same program, the same bits.
        "deterministic": True,
    }


def profile_policy(policy, semantics):
    """The jax and xla profiles read bad_indices_policy as IGNORE or not (parse_policy)."""
    if semantics in ("jax", "xla"):
        return "IGNORE" if policy == "IGNORE" else ""
    return policy


def checked_scatter(op, indices, updates, tensor, shape, policy, semantics):
    """tf_checks.scatter; under the jax/xla profiles bool min/max passes TensorFlow's dtype check
    (update's checks are the same but for the dtype rule)."""
    check_op = op
    if (semantics in ("jax", "xla") and updates.dtype == np.bool_
            and op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max")):
        check_op = "tensor_scatter_nd_update"
    return tf_checks.scatter(check_op, indices, updates, tensor, shape, policy)


_signatures = set()
MAX_SIGNATURES = 256


def bound_caches(arrays):
    """Called before each call: after MAX_SIGNATURES new (shape, dtype) signatures, JAX's
    in-memory caches are emptied (jax.clear_caches). Each compiled program holds memory and a
    default sweep draws thousands of shapes, while the worker's address space is capped
    (RLIMIT_AS); the persistent cache on disk keeps a recompile to ~15 ms."""
    sig = tuple((a.shape, a.dtype.str) for a in arrays)
    if sig in _signatures:
        return
    if len(_signatures) >= MAX_SIGNATURES:
        jax.clear_caches()
        _signatures.clear()
    _signatures.add(sig)


def run(fn, *arrays, out):
    """fn (a jitted function) on the inputs, written into out (gscheck.output's array).
    JAX gets copies: compiling a new shape leaves its arguments in reference cycles, and the
    host then runs gc.collect() after the call (~50 ms with JAX loaded) to free its views."""
    bound_caches(arrays)
    try:
        result = fn(*[np.array(a) for a in arrays])
    except (TypeError, ValueError, IndexError) as e:
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        if EMPTY_DIM.search(text):
            raise gscheck.InvalidArgument(f"jax: {text}") from None
        if "does not accept dtype" in text:
            raise gscheck.Unsupported(f"jax: {text}") from None
        raise
    result = np.asarray(result)
    if result.shape != out.shape:
        raise RuntimeError(f"jax returned shape {result.shape}, TensorFlow's is {out.shape}")
    out[...] = result
    return out


def _batched(f, b):
    for _ in range(b):
        f = jax.vmap(f)
    return f


def _coordinates(indices, dims, wrap):
    """indices[..., k] as jnp sees them: int64 after the wrap (if wrap) against dims[k]."""
    ix = indices.reshape(-1, indices.shape[-1]).astype(np.int64)
    if wrap:
        ix = np.where(ix < 0, ix + np.array(dims, np.int64), ix)
    return ix


def check_int32_coordinates(indices, dims, wrap, clamp, slice_example_rank=None):
    """jnp indexes with int32 when the array's dims fit it (jax/_src/numpy/indexing.py: the
    indices are cast with astype after the wrap): an int64 index outside int32 keeps its low 32
    bits (probe.py, 'x[[2**32 + 1]] (int64)'). Declined (jax-int64-index-truncated) where that
    changes the answer: a clamped coordinate that lands elsewhere (clamp: gathers, scatters in
    mode clip), or a bad row (dropped or filled) that the cut brings into range. The
    kernel-level lax backend keeps int64. slice_example_rank: a gather whose batch example reads
    one scalar per coordinate, with params of that rank per example, takes jnp's
    lax.dynamic_slice path (indexing.py, to_dynamic_slice): its start indices, one per dim, are
    cast to int32 together, before the wrap, when there are two or more, and stay int64 when
    there is one (rule int64_indices=jax_numpy)."""
    if indices.dtype != np.int64 or indices.size == 0 or not len(dims):
        return
    if slice_example_rank is not None and slice_example_rank < 2:
        return  # one start index: no cut
    ix = _coordinates(indices, dims, wrap)
    if slice_example_rank is not None:
        cut = _coordinates(indices.astype(np.int32), dims, wrap)
    else:
        cut = ix.astype(np.int32).astype(np.int64)  # two's complement: the low 32 bits
    d = np.array(dims, np.int64)
    if clamp:
        changed = (np.clip(ix, 0, d - 1) != np.clip(cut, 0, d - 1)).any()
    else:
        def bad(v):
            return ((v < 0) | (v >= d)).any(axis=1)
        changed = (bad(ix) & ~bad(cut)).any()
    if changed:
        raise gscheck.Unimplemented("JAX cuts int64 indices outside int32 to their low 32 bits "
                                    "here (another row)")


def jit_cache():
    """jitted(key, build): jax.jit(build()) made once per key (an op and its constant
    attributes: few, all kept; the compiled programs inside are bounded by bound_caches)."""
    cache = {}

    def jitted(key, build):
        f = cache.get(key)
        if f is None:
            f = cache[key] = jax.jit(build())
        return f
    return jitted


def make_backend(mode=None):
    """The backend's call() with JAX's index mode `mode` (None: jnp's defaults)."""
    jitted = jit_cache()

    def take(p, idx, ignore, wrap):
        if ignore:  # bad_indices_policy IGNORE: a bad row reads zeros
            return p.at[idx].get(mode="fill", fill_value=0, wrap_negative_indices=wrap)
        if mode is None:
            return p[idx]
        return p.at[idx].get(mode=mode)

    def gather(params, indices, axis, batch_dims, graded):
        out, a, b = tf_checks.gather(params, indices, axis, batch_dims)
        # An empty output needs no gather, unless jnp refuses it first: a 0-d index into a dim
        # of size 0 raises IndexError when tracing, whatever the output's size.
        if out.size == 0 and not (indices.ndim == b and params.shape[a] == 0):
            return out
        slices = mode in (None, "clip") and indices.ndim == b
        if graded:
            check_int32_coordinates(indices.reshape(indices.shape + (1,)), params.shape[a:a + 1],
                                    True, clamp=mode not in ("fill", "drop"),
                                    slice_example_rank=params.ndim - b if slices else None)

        def build():
            lead = (slice(None),) * (a - b)
            return _batched(lambda p, i: take(p, lead + (i,), False, True), b)

        return run(jitted(("gather", a, b), build), params, indices, out=out)

    def gather_nd(params, indices, batch_dims, policy, wrap, graded):
        out, b = tf_checks.gather_nd(params, indices, batch_dims, policy)
        depth = indices.shape[-1]
        if out.size == 0 and not (indices.ndim == b + 1 and 0 in params.shape[b:b + depth]):
            return out
        ignore = policy == "IGNORE"
        slices = not ignore and mode in (None, "clip") and indices.ndim == b + 1
        if graded:
            check_int32_coordinates(indices, params.shape[b:b + depth], wrap,
                                    clamp=not ignore and mode not in ("fill", "drop"),
                                    slice_example_rank=params.ndim - b if slices else None)

        def one(p, i):
            if depth == 0:
                return jnp.broadcast_to(p, i.shape[:-1] + p.shape)
            return take(p, tuple(i[..., k] for k in range(depth)), ignore, wrap)

        def build():
            if b == 0:
                return one

            def batched(p, i):
                # tf.gather_nd's lowering: one batch dim of prod(params.shape[:b]) rows, to
                # which indices are reshaped (their own batch dims need only match in product).
                n = tf_checks.prod(p.shape[:b])
                r = jax.vmap(one)(p.reshape((n,) + p.shape[b:]), i.reshape((n,) + i.shape[b:]))
                return r.reshape(p.shape[:b] + r.shape[1:])
            return batched

        return run(jitted(("gather_nd", b, depth, ignore, wrap), build), params, indices, out=out)

    def scatter(op, indices, updates, tensor, shape, policy, semantics, wrap, graded):
        out, depth = checked_scatter(op, indices, updates, tensor, shape, policy, semantics)
        if out.size == 0 or indices.size == 0:
            return out
        if graded:
            check_int32_coordinates(indices, out.shape[:depth], wrap,
                                    clamp=policy != "IGNORE" and mode == "clip")
        method = SCATTER_METHOD[op]
        if policy == "IGNORE":  # skip a bad row: JAX's drop
            kw = {"mode": "drop", "wrap_negative_indices": wrap}
        else:
            kw = {} if mode is None else {"mode": mode}

        def build():
            def f(t, i, u):
                ref = t.at[tuple(i[..., k] for k in range(depth))]
                return getattr(ref, method)(u, **kw)
            return f

        # out holds the starting tensor (zeros for scatter_nd).
        key = ("scatter", method, depth, tuple(sorted(kw.items())))
        return run(jitted(key, build), out, indices, updates, out=out)

    def call(op, *, params, indices, updates, tensor, shape, axis, batch_dims,
             bad_indices_policy, semantics):
        tf_checks.check_ranks(params, indices, updates, tensor, shape, axis)
        policy = profile_policy(bad_indices_policy, semantics)
        # TensorFlow's IGNORE treats a negative index as bad, as
        # .at[...](wrap_negative_indices=False) does; the jax profile wraps first.
        wrap = not (semantics == "tf-cpu" and policy == "IGNORE")
        # Where TensorFlow raises for a bad index (tf-cpu but IGNORE), any output is the known
        # departure; elsewhere the values are graded, and the int32 cut is declined.
        graded = semantics != "tf-cpu" or policy == "IGNORE"
        if op == "gather":
            return gather(params, indices, axis, batch_dims, graded)
        if op == "gather_nd":
            return gather_nd(params, indices, batch_dims, policy, wrap, graded)
        return scatter(op, indices, updates, tensor, shape, policy, semantics, wrap, graded)

    return call


CONTRACT = contract(f"jax {jax.__version__} CPU (jnp indexing)")
call = make_backend()
