#!/usr/bin/env bash
# Make (or reuse) the virtual environment of the OpenVINO backend (plugins/openvino/):
# tools/requirements-openvino.txt installed into
# ${GSCHECK_OPENVINO_VENV:-${XDG_CACHE_HOME:-~/.cache}/gscheck/openvino-venv}, made with the Python the
# host embeds (python3.11 when present). Prints the venv's path as the last line of stdout.
# Environment: GSCHECK_OPENVINO_VENV, GSCHECK_PYTHON (the Python that creates it).
# Exit status: 0 ready, 2 installing failed, 77 PyPI not reachable and no usable venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -z "${GSCHECK_PYTHON:-}" && -x /usr/bin/python3.11 ]]; then export GSCHECK_PYTHON=/usr/bin/python3.11; fi
exec "$root/scripts/pinned_venv.sh" openvino_venv "OpenVINO" \
  "${GSCHECK_OPENVINO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/openvino-venv}" \
  "$root/tools/requirements-openvino.txt" openvino
