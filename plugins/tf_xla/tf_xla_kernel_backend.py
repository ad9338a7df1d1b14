"""TensorFlow's XLA path at the kernel level: the raw ops (GatherV2, GatherNd, ScatterNd,
TensorScatter*) inside tf.function(jit_compile=True), as a framework that lowers its own graph
through tf2xla calls them, graded against the `xla` profile and against tf-cpu:

    gscheck run --backend python:plugins/tf_xla/tf_xla_kernel_backend.py \\
        --python-venv "$(scripts/tf_venv.sh | tail -1)" \\
        --known-failures plugins/tf_xla/tf_xla_kernel_known_failures.json

Kernel level ("api": "kernel", docs/vendor.md "API level"): the axis is always a tensor,
batch_dims is never dropped, gather_nd has no batch_dims. The same compiled-function cache and
checks as tf_xla_backend.py, which holds the lowering (make_call(kernel=True)).
"""
import tf_xla_backend as tx

CONTRACT = dict(tx.CONTRACT, name=tx.CONTRACT["name"] + " (raw ops)", api="kernel")
call = tx.make_call(kernel=True)
