#!/usr/bin/env bash
# Make (or reuse) the JAX virtual environment: tools/requirements-jax.txt installed into
# ${GSCHECK_JAX_VENV:-${XDG_CACHE_HOME:-~/.cache}/gscheck/jax-venv}. Prints the venv's path as the
# last line of stdout. Exit status: 0 ready, 2 installing failed, 77 PyPI not reachable and no
# usable venv (scripts/pinned_venv.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec "$root/scripts/pinned_venv.sh" jax_venv JAX \
  "${GSCHECK_JAX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/jax-venv}" \
  "$root/tools/requirements-jax.txt" jaxlib
