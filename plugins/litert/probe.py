"""The facts docs/spec_notes.md and litert_known_failures.json record, mostly on params
arange(12).reshape(4, 3) float32 (run with the venv's python: scripts/litert_venv.sh):

    "$(scripts/litert_venv.sh | tail -1)/bin/python" plugins/litert/probe.py

Each model is what litert_backend.py runs: TensorFlow's converter on a tf.function whose inputs
have every dimension None, run by ai-edge-litert's Interpreter (one thread).
"""
import logging
import os
import re
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
from ai_edge_litert import interpreter as litert  # noqa: E402

logging.getLogger("absl").setLevel(logging.ERROR)
tf.get_logger().setLevel(logging.ERROR)


def convert(fn, *specs, saved_model=False):
    """The flatbuffer of fn, or the converter's refusal as a string: by the graph path, as the
    backend converts, or by the SavedModel path (a tf.Module as trackable_obj)."""
    module = tf.Module()
    module.f = tf.function(fn, input_signature=list(specs), autograph=False)
    try:
        return tf.lite.TFLiteConverter.from_concrete_functions(
            [module.f.get_concrete_function()], module if saved_model else None).convert()
    except Exception as e:  # noqa: BLE001
        m = re.search(r"TF Select ops: [^\n]+", str(e)) or re.search(r"Unsupported [^\n]+", str(e))
        return "refused: " + (m.group(0) if m else str(e).splitlines()[-1])


def spec(a):
    return tf.TensorSpec([None] * a.ndim, tf.as_dtype(a.dtype))


def ops_of(model):
    if isinstance(model, str):
        return model
    return [o["op_name"] for o in litert.Interpreter(model_content=model)._get_ops_details()]


def run(fn, *arrays, times=1):
    """The output (as a list; hex bits for float32 when asked by the caller), or the error."""
    model = convert(fn, *(spec(a) for a in arrays))
    if isinstance(model, str):
        return model
    it = litert.Interpreter(model_content=model, num_threads=1)
    names = {d["name"]: d["index"] for d in it.get_input_details()}
    index = [names[f"a{k}"] for k in range(len(arrays))]
    outs = []
    for _ in range(times):
        try:
            for i, a in zip(index, arrays):
                it.resize_tensor_input(i, a.shape, strict=False)
            it.allocate_tensors()
            for i, a in zip(index, arrays):
                it.set_tensor(i, a)
            it.invoke()
            outs.append(it.get_tensor(it.get_output_details()[0]["index"]))
        except (RuntimeError, ValueError, OverflowError) as e:
            return f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"
    return outs[0] if times == 1 else outs


def show(a):
    return a.tolist() if isinstance(a, np.ndarray) else a


def bits(a):
    return [hex(v) for v in np.asarray(a, np.float32).view(np.uint32).reshape(-1)] \
        if isinstance(a, np.ndarray) else a


f32 = np.float32
p = np.arange(12, dtype=f32).reshape(4, 3)
u = np.ones((1, 3), f32)
i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
gather = lambda a0, a1: tf.gather(a0, a1)  # noqa: E731
gather_nd = lambda a0, a1: tf.gather_nd(a0, a1)  # noqa: E731
scatter_nd = lambda a0, a1, a2: tf.scatter_nd(a0, a1, a2)  # noqa: E731
update = lambda a0, a1, a2: tf.tensor_scatter_nd_update(a0, a1, a2)  # noqa: E731
add = lambda a0, a1, a2: tf.tensor_scatter_nd_add(a0, a1, a2)  # noqa: E731
S = lambda r, d: tf.TensorSpec([None] * r, d)  # noqa: E731

print("tensorflow", tf.__version__, "converter; ai-edge-litert interpreter")
convert(update, S(1, tf.int32), S(2, tf.int32), S(1, tf.int32))  # the first conversion's setup
for saved_model in (False, True):
    start = time.perf_counter()
    emitted = [ops_of(convert(update, S(r, tf.float32), S(2, tf.int32), S(r, tf.float32),
                              saved_model=saved_model)) for r in (1, 2, 3)]
    print(f"conversion path {'SavedModel' if saved_model else 'graph'}: 3 TensorScatterUpdate "
          f"signatures in {time.perf_counter() - start:.2f} s, emitting {emitted[1]}")

# What the converter emits, and for which dtypes it refuses (TF Select ops, which ai-edge-litert's
# interpreter cannot run). Ranks 1 to 3 of params/tensor refuse alike.
raw = {"TensorScatterUpdate": tf.raw_ops.TensorScatterUpdate,
       "TensorScatterAdd": tf.raw_ops.TensorScatterAdd,
       "TensorScatterSub": tf.raw_ops.TensorScatterSub,
       "TensorScatterMin": tf.raw_ops.TensorScatterMin,
       "TensorScatterMax": tf.raw_ops.TensorScatterMax}
builders = {
    "GatherV2": lambda d, r: (gather, S(r, d), S(1, tf.int32)),
    "GatherNd": lambda d, r: (gather_nd, S(r, d), S(2, tf.int32)),
    "ScatterNd": lambda d, r: (scatter_nd, S(2, tf.int32), S(r, d), S(1, tf.int32)),
}
for name, op in raw.items():
    builders[name] = (lambda op: lambda d, r: (
        lambda a0, a1, a2: op(tensor=a0, indices=a1, updates=a2), S(r, d), S(2, tf.int32),
        S(r, d)))(op)
dtypes = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64"]
for name, build in builders.items():
    emitted, refused = None, []
    for d in dtypes:
        verdicts = {r: convert(*build(tf.as_dtype(d), r)) for r in (1, 2, 3)}
        if any(isinstance(v, str) for v in verdicts.values()):
            ranks = [r for r, v in verdicts.items() if isinstance(v, str)]
            refused.append(d if len(ranks) == 3 else f"{d} (ranks {ranks})")
        elif d == "float32":
            emitted = ops_of(verdicts[2])
    print(f"converter refusals, {name}: {refused}; float32 emits {emitted}")
for pol in ("", "DEFAULT", "ERROR", "IGNORE"):
    print(f"converted ops, bad_indices_policy {pol or chr(39) * 2}:", {
        "GatherNd": ops_of(convert(lambda a0, a1: tf.gather_nd(a0, a1, bad_indices_policy=pol),
                                   S(2, tf.float32), S(2, tf.int32))),
        "ScatterNd": ops_of(convert(lambda a0, a1, a2: tf.scatter_nd(a0, a1, a2,
                                                                    bad_indices_policy=pol),
                                    S(2, tf.int32), S(2, tf.float32), S(1, tf.int32))),
        "TensorScatterUpdate": ops_of(convert(
            lambda a0, a1, a2: tf.raw_ops.TensorScatterUpdate(tensor=a0, indices=a1, updates=a2,
                                                              bad_indices_policy=pol),
            S(2, tf.float32), S(2, tf.int32), S(2, tf.float32)))})
print("converted ops, ScatterNd int64 indices:",
      ops_of(convert(scatter_nd, S(2, tf.int64), S(2, tf.float32), S(1, tf.int64))))
print("converted ops, TensorScatterAdd int64 indices:",
      ops_of(convert(add, S(2, tf.float32), S(2, tf.int64), S(2, tf.float32))))
print("converted ops, gather_nd batch_dims 1:",
      ops_of(convert(lambda a0, a1: tf.gather_nd(a0, a1, batch_dims=1), S(2, tf.float32),
                     S(2, tf.int32))))

# Out-of-range indices (7 and -1 on 4 rows), each run twice on one interpreter.
for k in (7, -1):
    print(f"GATHER [{k}]:", show(run(gather, p, i32(k))))
    print(f"GATHER_ND [[{k}]]:", show(run(gather_nd, p, i32([k]))))
    print(f"SCATTER_ND [[{k}]] into shape [4, 3]:", show(run(scatter_nd, i32([k]), u, i32(4, 3))))
    print(f"TensorScatterUpdate [[{k}]]:", show(run(update, p, i32([k]), u)))
    print(f"TensorScatterAdd [[{k}]]:", show(run(add, p, i32([k]), u)))
print("GATHER [1, 3] twice, bits equal:",
      (lambda o: isinstance(o, list) and np.array_equal(o[0], o[1]))(run(gather, p, i32(1, 3),
                                                                         times=2)))
for k in (2**31 - 1, -2**31):
    print(f"GATHER_ND [[{k}]] (int32 extremes):", show(run(gather_nd, p, i32([k]))))
print("GATHER_ND [[7]] with IGNORE (TensorFlow: zeros):",
      show(run(lambda a0, a1: tf.gather_nd(a0, a1, bad_indices_policy="IGNORE"), p, i32([7]))))
print("SCATTER_ND [[7]] with IGNORE (TensorFlow: skips the row):",
      show(run(lambda a0, a1, a2: tf.scatter_nd(a0, a1, a2, bad_indices_policy="IGNORE"),
               i32([7]), u, i32(4, 3))))

# int64 indices past int32.
print("GATHER int64 index [2**32 + 1]:", show(run(gather, p, i64(2**32 + 1))))
print("GATHER_ND int64 index [[2**32 + 1]]:", show(run(gather_nd, p, i64([2**32 + 1]))))
print("SCATTER_ND int64 index [[2**32 + 1]] (TensorFlow: error):",
      show(run(scatter_nd, i64([2**32 + 1]), u, i64(4, 3))))
print("TensorScatterUpdate int64 index [[2**32 + 1]] (TensorFlow: error):",
      show(run(update, p, i64([2**32 + 1]), u * 100)))
print("TensorScatterAdd int64 index [[2**32 + 1]]:", show(run(add, p, i64([2**32 + 1]), u)))

# Empty index rows, empty outputs, int32 shapes.
print("GATHER_ND indices shape [2, 0] on [2, 3] (TensorFlow: two copies of params):",
      show(run(gather_nd, p[:2], np.zeros((2, 0), np.int32))))
print("GATHER_ND indices shape [0, 1] on [4, 3]:",
      show(run(gather_nd, p, np.zeros((0, 1), np.int32))))
print("TensorScatterAdd indices shape [0] on [0, 2] (TensorFlow: the empty tensor):",
      show(run(add, np.zeros((0, 2), f32), np.zeros((0,), np.int32), np.zeros((0, 2), f32))))
print("GATHER on params [4,0], index 7 (TensorFlow: the [1, 0] output):",
      show(run(gather, np.zeros((4, 0), f32), i32(7))))
print("SCATTER_ND indices [0], updates [0], shape [0]: get_tensor of the [0] output:",
      show(run(scatter_nd, np.zeros((0,), np.int32), np.zeros((0,), np.int32), i32(0))))
it = litert.Interpreter(model_content=convert(gather, S(1, tf.int8), S(1, tf.int32)))
try:
    it.resize_tensor_input(0, [2**31], strict=False)
    print("resize_tensor_input to [2**31]: accepted")
except (OverflowError, ValueError, RuntimeError) as e:
    print("resize_tensor_input to [2**31]:", type(e).__name__, e)

# The TensorScatterUpdate/Add lowering: tensor * (1 - SCATTER_ND(ones)) + SCATTER_ND(updates).
print("TensorScatterUpdate rows [1],[1] of 10, 20 into int32 [5, 6, 7] (TensorFlow: [5, 20, 7]):",
      show(run(update, i32(5, 6, 7), i32([1], [1]), i32(10, 20))))
print("TensorScatterAdd float32 rows [0],[0] of 2**24, 0.001 into [0.7] (TensorFlow: 16777216):",
      show(run(add, np.array([0.7], f32), i32([0], [0]), np.array([2**24, 0.001], f32))))
t = np.array([-0.0, np.inf, 1.0], f32)
print("TensorScatterUpdate float32 signs, [-0.0, inf, 1] row [1] := 5 (TensorFlow: -0.0, 5, 1):",
      show(run(update, t, i32([1]), np.array([5], f32))))
for r in (1, 6, 7):
    one = (1,) * (r - 1)
    print(f"TensorScatterUpdate float32 rank {r}, [inf, 1] row [1] := 2 (TensorFlow: inf, 2):",
          np.ravel(run(update, np.array([np.inf, 1], f32).reshape((2,) + one), i32([1]),
                       np.full((1,) + one, 2, f32))).tolist())
    print(f"TensorScatterAdd float32 rank {r}, [3e38, 1] row [0] += 3e38 (TensorFlow: inf, 1):",
          np.ravel(run(add, np.array([3e38, 1], f32).reshape((2,) + one), i32([0]),
                       np.full((1,) + one, 3e38, f32))).tolist())
print("TensorScatterUpdate float32 signs, [1, 2, 3] row [1] := -0.0 (TensorFlow: 0x80000000):",
      bits(run(update, np.array([1, 2, 3], f32), i32([1]), np.array([-0.0], f32))))
print("TensorScatterUpdate float32 subnormals, [1e-40, -1e-40] row [0] := 1e-41:",
      show(run(update, np.array([1e-40, -1e-40], f32), i32([0]), np.array([1e-41], f32))))
snan = np.array([0x7F80002A, 0x7FC00123], np.uint32).view(f32)
print("TensorScatterUpdate float32 NaN bits [0x7f80002a, 0x7fc00123] untouched:",
      bits(run(update, snan, np.zeros((0, 1), np.int32), np.zeros((0,), f32))),
      "; GATHER of them:", bits(run(gather, snan, i32(0, 1))))
