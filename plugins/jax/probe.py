"""The facts jax_known_failures.json, jax_lax_known_failures.json and docs/spec_notes.md record,
mostly on params arange(12).reshape(4, 3) float32 and index rows [[1], [7], [-1]] (in range, past
the end, negative), one line each (run with the venv's python: scripts/jax_venv.sh):

    "$(scripts/jax_venv.sh | tail -1)/bin/python" plugins/jax/probe.py
"""
import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

P = np.arange(12, dtype=np.float32).reshape(4, 3)
ROWS = np.array([[1], [7], [-1]])
ONES = np.ones((3, 3), np.float32)
DN = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
SDN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                  scatter_dims_to_operand_dims=(0,))


def show(label, f, *args):
    """f jitted on args: inputs are arguments, as in the backends (XLA folds constants by
    other rules: no flush to zero, other NaN bits)."""
    try:
        r = np.asarray(jax.jit(f)(*args))
        text = r.tolist()
    except Exception as e:  # the error is the observation
        text = f"{type(e).__name__}: {str(e).splitlines()[0][:110]}"
    print(f"{label}: {text}")


def bits(a):
    a = np.asarray(a)
    return [hex(v) for v in a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])]


def show_bits(label, f, *args):
    print(f"{label}: {bits(jax.jit(f)(*args))}")


r = ROWS[:, 0]
i0 = np.array([0])
print("jax", jax.__version__, "CPU, x64")
show("x[[1, 7, -1]] (gather_nd rows [[1],[7],[-1]])", lambda x, i: x[i], P, r)
show("x.at[[1,7,-1]].get(mode='fill', fill_value=0)",
     lambda x, i: x.at[i].get(mode="fill", fill_value=0), P, r)
show("x.at[[1,7,-1]].get(mode='fill', fill_value=0, wrap_negative_indices=False)",
     lambda x, i: x.at[i].get(mode="fill", fill_value=0, wrap_negative_indices=False), P, r)
show("zeros.at[[1,7,-1]].add(ones)", lambda z, i, u: z.at[i].add(u), 0 * P, r, ONES)
show("x.at[[1,7,-1]].subtract(ones)", lambda x, i, u: x.at[i].subtract(u), P, r, ONES)
show("x.at[[1,7,-1]].add(ones, mode='drop', wrap_negative_indices=False)",
     lambda x, i, u: x.at[i].add(u, mode="drop", wrap_negative_indices=False), P, r, ONES)
for m in ("clip", "fill", "drop", "promise_in_bounds"):
    show(f"x.at[[1,7,-1]].get(mode={m!r})", lambda x, i, m=m: x.at[i].get(mode=m), P, r)
    show(f"zeros.at[[1,7,-1]].add(ones, mode={m!r})",
         lambda z, i, u, m=m: z.at[i].add(u, mode=m), 0 * P, r, ONES)
show("int32 x.at[[1,7,-1]].get(mode='fill')", lambda x, i: x.at[i].get(mode="fill"),
     P.astype(np.int32), r)
far = np.array([2**32 + 1], np.int64)
show("x[[2**32 + 1]] (int64)", lambda x, i: x[i], P, far)
show("x[[-2**63]] (int64)", lambda x, i: x[i], P, np.array([-2**63], np.int64))
show("zeros(4).at[[2**32 + 1]].add(1) (int64)", lambda z, i: z.at[i].add(1.0),
     np.zeros(4, np.float32), far)
print("jaxpr of x[i], i int64:",
      [str(e.primitive) + (f"[{e.params['new_dtype']}]" if "new_dtype" in e.params else "")
       for e in jax.make_jaxpr(lambda x, i: x[i])(P, far).eqns])
show("lax.gather rows [[2**32 + 1]] mode='clip' (int64)",
     lambda x, i: lax.gather(x, i, DN, (1, 3), mode="clip"), P, far[:, None])
show("lax.gather rows [[2**32 + 1]] mode='fill', fill_value=0 (int64)",
     lambda x, i: lax.gather(x, i, DN, (1, 3), mode="fill", fill_value=0), P, far[:, None])
show("lax.gather rows [[-2**63 + 1]] mode='fill', fill_value=0 (int64)",
     lambda x, i: lax.gather(x, i, DN, (1, 3), mode="fill", fill_value=0), P,
     np.array([[-2**63 + 1]], np.int64))
show("lax.scatter_add rows [[2**32 + 1]] of ones mode='drop' (int64)",
     lambda x, i, u: lax.scatter_add(x, i, u, SDN, mode="drop"), P, far[:, None], ONES[:1])
show("lax.gather rows [[1],[7],[-1]] mode='clip'",
     lambda x, i: lax.gather(x, i, DN, (1, 3), mode="clip"), P, ROWS)
show("lax.gather rows [[1],[7],[-1]] mode='fill', fill_value=0",
     lambda x, i: lax.gather(x, i, DN, (1, 3), mode="fill", fill_value=0), P, ROWS)
show("lax.scatter_add rows [[1],[7],[-1]] of ones mode='drop'",
     lambda x, i, u: lax.scatter_add(x, i, u, SDN, mode="drop"), P, ROWS, ONES)
show("params zeros((0, 3))[[0]]", lambda x, i: x[i], np.zeros((0, 3), np.float32), i0)
show("lax.gather on params [0,3], rows [[0]] mode='clip'",
     lambda x, i: lax.gather(x, i, DN, (1, 3), mode="clip"), np.zeros((0, 3)), i0[:, None])
b2 = np.array([True, False])
i11 = np.array([1, 1])
show("zeros(4, bool).at[[1,1]].add([True, False])", lambda z, i, u: z.at[i].add(u),
     np.zeros(4, bool), i11, b2)
show("ones(4, bool).at[[1,1]].min([True, False]) (AND)", lambda z, i, u: z.at[i].min(u),
     np.ones(4, bool), i11, b2)
show("zeros(4, bool).at[[1,1]].max([True, False]) (OR)", lambda z, i, u: z.at[i].max(u),
     np.zeros(4, bool), i11, b2)
show("[1+2j].at[[0]].min([1+1j]) (complex min)", lambda z, i, u: z.at[i].min(u),
     np.array([1 + 2j]), i0, np.array([1 + 1j]))
show_bits("float64 [-5e-324].at[[0]].min([1.0])", lambda z, i, u: z.at[i].min(u),
          np.array([-5e-324]), i0, np.array([1.0]))
show_bits("float64 [0.0].at[[0]].add([5e-324])", lambda z, i, u: z.at[i].add(u),
          np.array([0.0]), i0, np.array([5e-324]))
show_bits("float32 [1e-45].at[[0]].add([1e-45])", lambda z, i, u: z.at[i].add(u),
          np.array([1e-45], np.float32), i0, np.array([1e-45], np.float32))
show_bits("float64 [5e-324, 0].at[[1]].add([1.0]) (untouched subnormal)",
          lambda z, i, u: z.at[i].add(u), np.array([5e-324, 0.0]), np.array([1]),
          np.array([1.0]))
neg_nan = np.array([0xFFF80000DEADBEEF], np.uint64).view(np.float64)
show_bits("float64 [37.0].at[[0]].max([nan 0xfff80000deadbeef])",
          lambda z, i, u: z.at[i].max(u), np.array([37.0]), i0, neg_nan)
show_bits("float64 [37.0].at[[0]].min([nan 0xfff80000deadbeef])",
          lambda z, i, u: z.at[i].min(u), np.array([37.0]), i0, neg_nan)
snan = np.array([0x7C15], np.uint16).view(np.float16)
show_bits("float16 [3.0].at[[0]].min([snan 0x7c15])", lambda z, i, u: z.at[i].min(u),
          np.array([3.0], np.float16), i0, snan)
show_bits("float16 [snan 0x7c15][[0]] (gather)", lambda x, i: x[i], snan, i0)
show("float16 [2048].at[[0,0]].add([1, 1]) (per-step rounding: 2048)",
     lambda z, i, u: z.at[i].add(u), np.array([2048.0], np.float16), np.array([0, 0]),
     np.ones(2, np.float16))
show("x.at[[2,2]].set([100, 200] rows) (duplicates)", lambda x, i, u: x.at[i].set(u), P,
     np.array([2, 2]), np.array([[100.0] * 3, [200.0] * 3], np.float32))
