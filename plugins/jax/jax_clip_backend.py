"""jax_backend.py with JAX's index mode "clip" on every `.at[...]` gather and scatter (instead
of jnp's defaults), as a backend of its own so that the report names it and its cases replay:

    gscheck run --backend python:plugins/jax/jax_clip_backend.py \\
        --python-venv "$(scripts/jax_venv.sh | tail -1)" \\
        --known-failures plugins/jax/jax_clip_known_failures.json

bad_indices_policy IGNORE still reads zeros (mode "fill") and skips rows (mode "drop").
"""
import jax_backend as _jb

MODE = "clip"
CONTRACT = _jb.contract(f"jax {_jb.jax.__version__} CPU (jnp indexing, mode={MODE})")
call = _jb.make_backend(MODE)
