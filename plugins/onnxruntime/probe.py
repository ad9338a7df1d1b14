"""The facts docs/spec_notes.md and onnxruntime_known_failures.json record, on params
arange(12).reshape(4, 3) float32 (run with the venv's python: scripts/onnxruntime_venv.sh):

    "$(scripts/onnxruntime_venv.sh | tail -1)/bin/python" plugins/onnxruntime/probe.py
"""
import numpy as np
import onnxruntime as ort
from onnx import helper

ort.set_default_logger_severity(4)


def run(op, arrays, **attrs):
    names = [f"x{i}" for i in range(len(arrays))]
    vi = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
          for n, a in zip(names, arrays)]
    out = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(arrays[0].dtype),
                                        None)
    graph = helper.make_graph([helper.make_node(op, names, ["y"], **attrs)], op, vi, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    try:
        s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return s.run(None, dict(zip(names, arrays)))[0].tolist()
    except Exception as e:
        text = str(e).splitlines()[0]
        return f"{type(e).__name__}: {text.split('Status Message: ')[-1][-110:]}"


p = np.arange(12, dtype=np.float32).reshape(4, 3)
u = np.ones((1, 3), np.float32)
print("onnxruntime", ort.__version__, "CPUExecutionProvider, opset 18")
for k in (7, -1):
    print(f"Gather axis 0 [{k}]:", run("Gather", [p, np.array([k], np.int64)], axis=0))
    print(f"GatherND [[{k}]]:", run("GatherND", [p, np.array([[k]], np.int64)]))
    print(f"ScatterND add [[{k}]]:", run("ScatterND", [p, np.array([[k]], np.int64), u],
                                         reduction="add"))
print("ScatterND add [[1],[1]] (duplicates sum):",
      run("ScatterND", [p, np.array([[1], [1]], np.int64), np.ones((2, 3), np.float32)],
          reduction="add"))
print("ScatterND none [[1],[1]], updates 1 then 2 (tf2onnx's ScatterNd; TF sums to 3):",
      run("ScatterND", [np.zeros((4, 3), np.float32), np.array([[1], [1]], np.int64),
                        np.array([[1] * 3, [2] * 3], np.float32)]))
print("Gather on params [4,0], index 7 (TF: an empty [1,0] output):",
      run("Gather", [np.zeros((4, 0), np.float32), np.array([7], np.int64)], axis=0))
print("ScatterND add float16:", run("ScatterND", [p.astype(np.float16), np.array([[1]], np.int64),
                                                  u.astype(np.float16)], reduction="add"))
print("Neg uint8 (tf2onnx's TensorScatterSub lowering):",
      run("Neg", [np.array([1], np.uint8)]))
