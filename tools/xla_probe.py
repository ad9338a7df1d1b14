#!/usr/bin/env python3
"""What TensorFlow's XLA path and JAX do with out-of-range and negative indices.

The probes behind docs/spec_notes.md ("XLA semantics"): params arange(12).reshape(4, 3) float32
and small index lists holding an in-range row, a row past the end and a negative row, through
every op, printed as one line per probe. Run it in the venv of the library it probes:

  $(scripts/tf_venv.sh | tail -1)/bin/python tools/xla_probe.py --lib tf-xla
  $(scripts/jax_venv.sh | tail -1)/bin/python tools/xla_probe.py --lib jax [--mode clip|fill|drop]

--lib tf-eager runs the same probes through TensorFlow's own kernels, for contrast.
"""
import argparse
import json
import sys

import numpy as np

PARAMS = np.arange(12, dtype=np.float32).reshape(4, 3)
GATHER_ROWS = [1, 9, -2]            # in range, past the end, negative
ND_ROWS = [[1], [7], [-1]]
ND_ELEMENTS = [[1, 2], [1, 5], [-1, 0], [5, -7]]
SCATTER_ROWS = [[1], [7], [-1]]
DUPLICATES = [[2], [2]]


def tf_ops(jit):
    import tensorflow as tf

    def run(f, *args):
        g = tf.function(f, jit_compile=True) if jit else f
        try:
            return np.asarray(g(*[tf.constant(a) for a in args])).tolist()
        except Exception as e:  # the error is the observation
            return "error: " + str(e).splitlines()[0][:120]

    ones = np.ones((3, 3), np.float32)
    return {
        "gather axis 0 [1, 9, -2]": run(lambda p, i: tf.gather(p, i, axis=0), PARAMS,
                                        np.array(GATHER_ROWS, np.int32)),
        "gather axis 1 [1, 3, -1]": run(lambda p, i: tf.gather(p, i, axis=1), PARAMS,
                                        np.array([1, 3, -1], np.int32)),
        "gather_nd rows [[1],[7],[-1]]": run(tf.gather_nd, PARAMS, np.array(ND_ROWS, np.int32)),
        "gather_nd elements [[1,2],[1,5],[-1,0],[5,-7]]": run(
            tf.gather_nd, PARAMS, np.array(ND_ELEMENTS, np.int32)),
        "scatter_nd rows [[1],[7],[-1]] of ones, shape [4,3]": run(
            lambda i, u: tf.scatter_nd(i, u, [4, 3]), np.array(SCATTER_ROWS, np.int32), ones),
        **{f"tensor_scatter_nd_{op} rows [[1],[7],[-1]] of ones": run(
            getattr(tf, f"tensor_scatter_nd_{op}"), PARAMS, np.array(SCATTER_ROWS, np.int32),
            ones) for op in ("update", "add", "sub", "min", "max")},
        "tensor_scatter_nd_update duplicates [[2],[2]] of 100, 200": run(
            tf.tensor_scatter_nd_update, PARAMS, np.array(DUPLICATES, np.int32),
            np.array([[100] * 3, [200] * 3], np.float32)),
    }


def jax_ops(mode):
    import jax
    import jax.numpy as jnp

    def run(f):
        try:
            return np.asarray(f()).tolist()
        except Exception as e:
            return "error: " + str(e).splitlines()[0][:120]

    p = jnp.asarray(PARAMS)
    ones = jnp.ones((3, 3), jnp.float32)
    rows = jnp.asarray([r[0] for r in SCATTER_ROWS])
    kw = {} if mode is None else {"mode": mode}
    el = np.array(ND_ELEMENTS)
    out = {
        "x[[1, 9, -2]] (take along axis 0)": run(
            lambda: jnp.take(p, jnp.asarray(GATHER_ROWS), axis=0, **kw) if kw
            else p[jnp.asarray(GATHER_ROWS)]),
        "x[:, [1, 3, -1]]": run(lambda: jnp.take(p, jnp.asarray([1, 3, -1]), axis=1, **kw) if kw
                                else p[:, jnp.asarray([1, 3, -1])]),
        "x[[[1],[7],[-1]]] rows": run(lambda: p.at[jnp.asarray([1, 7, -1])].get(**kw)),
        "x[rows, cols] elements [[1,2],[1,5],[-1,0],[5,-7]]": run(
            lambda: p.at[jnp.asarray(el[:, 0]), jnp.asarray(el[:, 1])].get(**kw)),
        "zeros.at[[1,7,-1]].add(ones)": run(lambda: jnp.zeros((4, 3)).at[rows].add(ones, **kw)),
        **{f"x.at[[1,7,-1]].{op}(ones)": run(
            lambda op=op: getattr(p.at[rows], op)(ones, **kw)) for op in ("set", "add", "min", "max")},
        "x.at[[2,2]].set([100, 200] rows)": run(
            lambda: p.at[jnp.asarray([2, 2])].set(jnp.asarray([[100.] * 3, [200.] * 3]), **kw)),
    }
    # jax.lax.gather with explicit index modes (the ops under jnp indexing).
    dn = jax.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))
    for m in ("clip", "fill", "promise_in_bounds"):
        out[f"lax.gather rows [[1],[7],[-1]] mode={m}"] = run(
            lambda m=m: jax.lax.gather(p, jnp.asarray(ND_ROWS), dn, (1, 3), mode=m))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", choices=("tf-xla", "tf-eager", "jax"), required=True)
    ap.add_argument("--mode", choices=("clip", "fill", "drop", "promise_in_bounds"))
    ap.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    a = ap.parse_args()
    if a.lib == "jax":
        import jax
        got, version = jax_ops(a.mode), "jax " + jax.__version__
    else:
        import tensorflow as tf
        got, version = tf_ops(a.lib == "tf-xla"), "tensorflow " + tf.__version__
    print(f"# {a.lib} ({version}); params = arange(12).reshape(4, 3) float32")
    if a.json:
        json.dump(got, sys.stdout, indent=1)
        print()
        return
    for k, v in got.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
