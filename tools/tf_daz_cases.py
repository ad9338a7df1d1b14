#!/usr/bin/env python3
# Writes the DAZ case files of plugins/tensorflow/cases (issue 34): subnormal operands whose IEEE
# sum is normal, each kept only where TensorFlow's CPU kernel, run here, differs from IEEE.
# Run in the TF venv: ~/.cache/gscheck/tf-venv/bin/python tools/tf_daz_cases.py OUT_DIR
import json, base64, sys, os
import numpy as np
import tensorflow as tf
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
def b64(a): return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()
def t(a, dt): return {"dtype": dt, "shape": list(a.shape), "data_b64": b64(a)}
def bf16(bits): return np.array(bits, dtype=np.uint16)
cases = []
f32max = np.array([0x007fffff], np.uint32).view(np.float32)[0]  # largest float32 subnormal
f64max = np.array([0x000fffffffffffff], np.uint64).view(np.float64)[0]
# (name, op, tensor or None, indices, updates, shape or None, dtype, description)
def add(name, op, dtype, tensor, indices, updates, shape=None, what=""):
    cases.append((name, op, dtype, tensor, np.array(indices, np.int32), updates, shape, what))
F = np.float32; D = np.float64
add("tensor_scatter_nd_add_float32_daz_normal_sum", "tensor_scatter_nd_add", "float32",
    np.array([f32max, 1.5], F), [[0]], np.array([f32max], F), what="the largest float32 subnormal twice")
add("tensor_scatter_nd_sub_float32_daz_normal_difference", "tensor_scatter_nd_sub", "float32",
    np.array([f32max, 2.0], F), [[0]], np.array([-f32max], F), what="x - (-x) for the largest float32 subnormal")
add("scatter_nd_float32_daz_duplicate_rows_normal_sum", "scatter_nd", "float32",
    None, [[1], [1]], np.array([f32max, f32max], F), shape=[3], what="two rows writing the largest float32 subnormal to one slot")
add("tensor_scatter_nd_add_float64_daz_normal_sum", "tensor_scatter_nd_add", "float64",
    np.array([f64max, 3.0], D), [[0]], np.array([f64max], D), what="the largest float64 subnormal twice")
add("scatter_nd_float64_daz_duplicate_rows_normal_sum", "scatter_nd", "float64",
    None, [[0], [0]], np.array([f64max, f64max], D), shape=[2], what="two rows writing the largest float64 subnormal to one slot")
add("tensor_scatter_nd_add_complex64_daz_normal_sum", "tensor_scatter_nd_add", "complex64",
    np.array([complex(f32max, 1.0), 2.0], np.complex64), [[0]], np.array([complex(f32max, 0.5)], np.complex64),
    what="complex64 whose real parts are the largest float32 subnormal")
add("tensor_scatter_nd_add_bfloat16_daz_normal_sum_slice", "tensor_scatter_nd_add", "bfloat16",
    bf16([[0x007f, 0x0040], [0x3f80, 0x0001]]), [[0]], bf16([[0x007f, 0x0040]]),
    what="a bfloat16 row of subnormals added to itself (0x007f + 0x007f, 0x0040 + 0x0040)")
add("tensor_scatter_nd_sub_bfloat16_daz_normal_difference", "tensor_scatter_nd_sub", "bfloat16",
    bf16([0x007f, 0x4000]), [[0]], bf16([0x807f]), what="bfloat16 0x007f - (-0x007f)")
add("scatter_nd_bfloat16_daz_duplicate_rows_normal_sum", "scatter_nd", "bfloat16",
    None, [[2], [2]], bf16([0x007f, 0x007f]), shape=[3], what="two rows writing bfloat16 0x007f to one slot")
add("tensor_scatter_nd_add_float32_daz_subnormal_plus_normal", "tensor_scatter_nd_add", "float32",
    np.array([np.array([0x00800000], np.uint32).view(F)[0], 0.0], F), [[0]], np.array([f32max], F),
    what="the smallest float32 normal plus the largest subnormal (the subnormal reads as 0)")
add("tensor_scatter_nd_add_float32_daz_2d_rows", "tensor_scatter_nd_add", "float32",
    np.array([[f32max, 1.0], [f32max / 2, f32max]], F), [[1, 1], [0, 0]], np.array([f32max, f32max], F),
    what="two index rows of depth 2, each adding the largest float32 subnormal to a subnormal")
add("tensor_scatter_nd_sub_float64_daz_normal_difference", "tensor_scatter_nd_sub", "float64",
    np.array([f64max, 0.25], D), [[0]], np.array([-f64max], D), what="x - (-x) for the largest float64 subnormal")
tfdt = {"float32": tf.float32, "float64": tf.float64, "bfloat16": tf.bfloat16, "complex64": tf.complex64}
def as_tf(a, dt):
    if dt == "bfloat16":
        return tf.bitcast(tf.constant(a.astype(np.uint16)), tf.bfloat16)
    return tf.constant(a, dtype=tfdt[dt])
def ieee(op, dt, tensor, idx, upd, shape):
    # IEEE arithmetic: float32 for bfloat16 rounded back (exact here), numpy otherwise.
    if dt == "bfloat16":
        f = lambda a: (a.astype(np.uint32) << 16).view(np.float32)
        base = np.zeros(shape, np.float32) if tensor is None else f(tensor).copy()
        u = f(upd)
    else:
        base = np.zeros(shape, upd.dtype) if tensor is None else tensor.copy()
        u = upd
    for r in range(idx.shape[0]):
        k = tuple(idx[r])
        base[k] = base[k] - u[r] if op.endswith("sub") else base[k] + u[r]
    if dt == "bfloat16":
        bits = base.astype(np.float32).view(np.uint32)
        assert (bits & 0xffff == 0).all()
        return (bits >> 16).astype(np.uint16)
    return base
written = 0
for name, op, dt, tensor, idx, upd, shape, what in cases:
    with tf.device("/CPU:0"):
        if op == "scatter_nd":
            got = tf.scatter_nd(tf.constant(idx), as_tf(upd, dt), tf.constant(shape, tf.int32))
        else:
            fn = {"tensor_scatter_nd_add": tf.tensor_scatter_nd_add,
                  "tensor_scatter_nd_sub": tf.tensor_scatter_nd_sub}[op]
            got = fn(as_tf(tensor, dt), tf.constant(idx), as_tf(upd, dt))
    got = (tf.bitcast(got, tf.uint16) if dt == "bfloat16" else got).numpy()
    want = ieee(op, dt, tensor, idx, upd, shape if shape else None)
    same = np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
    print(name, "TF differs from IEEE" if not same else "TF SAME as IEEE (no DAZ shown)")
    if same:
        continue
    inputs = {}
    if tensor is not None: inputs["tensor"] = t(tensor, dt)
    inputs["indices"] = {"dtype": "int32", "shape": list(idx.shape), "data": idx.reshape(-1).tolist()}
    inputs["updates"] = t(upd, dt)
    if shape is not None: inputs["shape"] = {"dtype": "int32", "shape": [len(shape)], "data": shape}
    case = {"gscheck_case": 1, "name": "tf/" + name,
            "description": f"{what}: the IEEE result is normal (the spec's and the expect block's); TensorFlow {tf.__version__}'s CPU kernel reads subnormal operands as zero (denormals-are-zero) and returns {b64(got)} (base64, measured 2026-12-07 by this case's generator). plugins/tensorflow/tf_2_21_known_failures.json's cpu-flush-to-zero says TensorFlow follows arithmetic=flush_denormals here; the reference under that rule gives TensorFlow's bits exactly.",
            "op": op, "semantics": "tf-cpu", "inputs": inputs,
            "expect": {"output": t(want, dt)}}
    json.dump(case, open(os.path.join(out, name + ".json"), "w"), indent=2)
    written += 1
print("written", written)
