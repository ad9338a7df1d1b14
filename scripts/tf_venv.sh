#!/usr/bin/env bash
# Make (or reuse) the TensorFlow virtual environment of the cross-check and the TensorFlow plugin:
# tools/requirements-tf.txt (the pinned tensorflow-cpu wheel) installed into
# ${GSCHECK_TF_VENV:-${XDG_CACHE_HOME:-~/.cache}/gscheck/tf-venv}. Prints the venv's path as the
# last line of stdout. Only the first run pays for the download; a stamp of the requirements'
# hash tells a stale venv. One installer at a time (parallel ctest runs share the cache).
# Environment: GSCHECK_TF_VENV, GSCHECK_PYTHON (the Python that creates it; default python3).
# Exit status: 0 ready, 2 installing failed, 77 PyPI not reachable and no usable venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec "$root/scripts/pinned_venv.sh" tf_venv TensorFlow \
  "${GSCHECK_TF_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/tf-venv}" \
  "$root/tools/requirements-tf.txt" tensorflow-cpu
