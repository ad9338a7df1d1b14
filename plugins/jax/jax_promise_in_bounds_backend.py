"""jax_backend.py with JAX's index mode "promise_in_bounds" on every `.at[...]` gather and
scatter (instead of jnp's defaults), as a backend of its own so that the report names it and
its cases replay:

    gscheck run --backend python:plugins/jax/jax_promise_in_bounds_backend.py \\
        --python-venv "$(scripts/jax_venv.sh | tail -1)" \\
        --known-failures plugins/jax/jax_known_failures.json  # the same answers

bad_indices_policy IGNORE still reads zeros (mode "fill") and skips rows (mode "drop").
"""
import jax_backend as _jb

MODE = "promise_in_bounds"
CONTRACT = _jb.contract(f"jax {_jb.jax.__version__} CPU (jnp indexing, mode={MODE})")
call = _jb.make_backend(MODE)
