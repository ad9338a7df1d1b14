"""A Python-hosted backend that does nothing: gather_nd under tf-gpu, the example C plugin's
contract, answering with an unwritten output of the right shape. Timing it against that plugin
on the same calls gives the Python host's own overhead per call (bench/python/host_bench.sh)."""
import gscheck

CONTRACT = {
    "name": "noop",
    "ops": ["gather_nd"],
    "dtypes": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"],
    "index_dtypes": ["int32", "int64"],
    "semantics": ["tf-gpu"],
}


def call(op, *, params, indices, batch_dims, bad_indices_policy, **_):
    if batch_dims != 0 or bad_indices_policy not in ("", "DEFAULT", "IGNORE"):
        raise gscheck.Unimplemented("as the example C plugin")
    depth = indices.shape[-1] if indices.ndim else 0
    return gscheck.output(indices.shape[:-1] + params.shape[depth:])
