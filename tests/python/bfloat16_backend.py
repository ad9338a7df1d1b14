"""A gather on bfloat16 only (tests/python/python_host_test.cc): the host must view bfloat16 as
ml_dtypes' numpy type, and take an array of that type back as the output."""
import numpy as np

import gscheck

CONTRACT = {"name": "bfloat16-gather", "ops": ["gather"], "dtypes": ["bfloat16"],
            "index_dtypes": ["int32", "int64"], "semantics": ["tf-cpu"], "deterministic": True}


def call(op, *, params, indices, updates, tensor, shape, axis, batch_dims, bad_indices_policy,
         semantics):
    if params.dtype.name != "bfloat16":
        raise RuntimeError(f"params came as {params.dtype}, not ml_dtypes' bfloat16")
    a = 0 if axis is None else int(axis)
    if batch_dims != 0 or a != 0:
        raise gscheck.Unimplemented("axis 0 without batch_dims only")
    if indices.size and (indices.min() < 0 or indices.max() >= params.shape[0]):
        raise gscheck.BadIndex("an index is out of range")
    return np.take(params, indices, axis=0)
