"""The facts docs/spec_notes.md and openvino_known_failures.json record, mostly on params
arange(12).reshape(4, 3) float32 (run with the venv's python: scripts/openvino_venv.sh):

    "$(scripts/openvino_venv.sh | tail -1)/bin/python" plugins/openvino/probe.py
"""
import subprocess
import sys

import numpy as np

sys.modules["openvino_telemetry"] = None  # no telemetry process (see openvino_backend.py)
import openvino as ov  # noqa: E402
import openvino.opset13 as ops  # noqa: E402
import openvino.opset15 as ops15  # noqa: E402

core = ov.Core()


def run(build, *arrays, config=None, dynamic=False):
    params = [ops.parameter(ov.PartialShape([-1] * (a.ndim - 1) + [a.shape[-1]]) if dynamic
                            else a.shape, ov.Type(a.dtype)) for a in arrays]
    compiled = core.compile_model(ov.Model([build(*params)], params), "CPU", config or {})
    try:
        return compiled([np.array(a) for a in arrays])[0].tolist()
    except RuntimeError as e:
        return "RuntimeError: " + [line for line in str(e).splitlines() if line.strip()][-1][:100]


def compiled_twice(config):
    """ScatterNDUpdate compiled once with dynamic shapes, called with a good then a bad row."""
    d = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32)
    i = ops.parameter(ov.PartialShape([-1, 1]), ov.Type.i64)
    u = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32)
    c = core.compile_model(ov.Model([ops15.scatter_nd_update(d, i, u, "sum")], [d, i, u]), "CPU",
                           config)
    out = []
    for row in (1, 7):
        try:
            out.append(c([p, np.array([[row]], np.int64), np.full((1, 3), 10, np.float32)])[0]
                       .tolist())
        except RuntimeError:
            out.append("RuntimeError")
    return out


p = np.arange(12, dtype=np.float32).reshape(4, 3)
u = np.ones((1, 3), np.float32)
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
print("openvino", ov.__version__, "CPU")
print("Gather axis 0 [1, 9, -2]:", run(lambda a, i: ops.gather(a, i, 0), p, i64(1, 9, -2)))
for k in (7, -1, -5):
    print(f"GatherND [[{k}]]:", run(lambda a, i: ops.gather_nd(a, i), p, i64([k])))
    print(f"ScatterNDUpdate sum [[{k}]]:",
          run(lambda a, i, v: ops15.scatter_nd_update(a, i, v, "sum"), p, i64([k]), u))
print("ScatterNDUpdate sum [[1],[1]]:",
      run(lambda a, i, v: ops15.scatter_nd_update(a, i, v, "sum"), p, i64([1], [1]),
          np.ones((2, 3), np.float32)))
print("ScatterNDUpdate, INFERENCE_NUM_THREADS 1, row 1 then row 7:",
      compiled_twice({"INFERENCE_NUM_THREADS": 1}))
print("ScatterNDUpdate, default threads, row 1 then row 7:", compiled_twice({}))
print("GatherND indices shape [2, 0] on [2, 3] (TF: two copies of params):",
      run(lambda a, i: ops.gather_nd(a, i), p[:2], np.zeros((2, 0), np.int64)))
print("Gather int64 params [2**62 + 1, -2**62 - 3]:",
      run(lambda a, i: ops.gather(a, i, 0), i64(2**62 + 1, -2**62 - 3), i64(0, 1)))
print("Gather float64 params [1 + 2**-40] minus the input:",
      np.array(run(lambda a, i: ops.gather(a, i, 0), np.array([1 + 2**-40]), i64(0)))
      - (1 + 2**-40))
print("Gather int64 index 2**32 + 1:", run(lambda a, i: ops.gather(a, i, 0), p, i64(2**32 + 1)))
print("ScatterNDUpdate none int64 index [[2**32 + 1]]:",
      run(lambda a, i, v: ops15.scatter_nd_update(a, i, v), p, i64([2**32 + 1]), u * 100))
print("ScatterNDUpdate max uint32 [2**31 + 1] into [10]:",
      run(lambda a, i, v: ops15.scatter_nd_update(a, i, v, "max"), np.array([10], np.uint32),
          i64([0]), np.array([2**31 + 1], np.uint32)))
print("ScatterNDUpdate sum float16 2048 + 1 + 1 (TF: 2048):",
      run(lambda a, i, v: ops15.scatter_nd_update(a, i, v, "sum"), np.array([2048], np.float16),
          i64([0], [0]), np.array([1, 1], np.float16), dynamic=True))
snan = np.array([0x7C01], np.uint16).view(np.float16)
print("Gather float16 signalling NaN 0x7c01 ->",
      hex(np.array(run(lambda a, i: ops.gather(a, i, 0), snan, i64(0)), np.float16)
          .view(np.uint16)[0]))
child = ("import sys; sys.modules['openvino_telemetry'] = None; import numpy as np, openvino as ov,"
         " openvino.opset13 as o; a = o.parameter([19], ov.Type.i16);"
         " i = o.parameter([2], ov.Type.i32); c = ov.Core().compile_model("
         "ov.Model([o.gather(a, i, 0)], [a, i]), 'CPU');"
         " print(c([np.arange(19, dtype=np.int16), np.array([0, 2**31 - 1], np.int32)])[0])")
r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
print("Gather [0, 2**31 - 1] on 19 rows, in a child: exit status", r.returncode,
      "(-11: SIGSEGV)" if r.returncode == -11 else r.stdout.strip())
