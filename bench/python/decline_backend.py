"""A Python-hosted backend that declines every call, under the contract of
bench/python/decline_plugin.c: timed against that plugin on the same sweep, the difference per
call is the Python host's own overhead (bench/python/host_bench.sh)."""
import gscheck

CONTRACT = {
    "name": "decline",
    "ops": ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
            "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
            "tensor_scatter_nd_max"],
    "dtypes": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["tf-cpu"],
    "deterministic": True,
}


def call(op, **inputs):
    raise gscheck.Unimplemented("declines every case")
