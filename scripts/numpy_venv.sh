#!/usr/bin/env bash
# Make (or reuse) the numpy virtual environment of Python-hosted backends (the Python host's
# tests, examples/python/numpy_backend.py): tools/requirements-numpy.txt installed into
# ${GSCHECK_NUMPY_VENV:-${XDG_CACHE_HOME:-~/.cache}/gscheck/numpy-venv}. The venv is made with
# the Python the host embeds (Debian's python3.11 when present: numpy's extension modules are
# built for one minor version). Prints the venv's path as the last line of stdout.
# Environment: GSCHECK_NUMPY_VENV, GSCHECK_PYTHON (the Python that creates it).
# Exit status: 0 ready, 2 installing failed, 77 PyPI not reachable and no usable venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -z "${GSCHECK_PYTHON:-}" && -x /usr/bin/python3.11 ]]; then export GSCHECK_PYTHON=/usr/bin/python3.11; fi
exec "$root/scripts/pinned_venv.sh" numpy_venv numpy \
  "${GSCHECK_NUMPY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/numpy-venv}" \
  "$root/tools/requirements-numpy.txt" numpy
