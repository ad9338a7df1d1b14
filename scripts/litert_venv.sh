#!/usr/bin/env bash
# Make (or reuse) the virtual environment of the LiteRT backend (plugins/litert/):
# tools/requirements-litert.txt installed into
# ${GSCHECK_LITERT_VENV:-${XDG_CACHE_HOME:-~/.cache}/gscheck/litert-venv}, made with the Python the
# host embeds (python3.11 when present). Prints the venv's path as the last line of stdout.
# Environment: GSCHECK_LITERT_VENV, GSCHECK_PYTHON (the Python that creates it).
# Exit status: 0 ready, 2 installing failed, 77 PyPI not reachable and no usable venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -z "${GSCHECK_PYTHON:-}" && -x /usr/bin/python3.11 ]]; then export GSCHECK_PYTHON=/usr/bin/python3.11; fi
exec "$root/scripts/pinned_venv.sh" litert_venv "LiteRT" \
  "${GSCHECK_LITERT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/litert-venv}" \
  "$root/tools/requirements-litert.txt" ai-edge-litert
