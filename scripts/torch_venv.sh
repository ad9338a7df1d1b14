#!/usr/bin/env bash
# Make (or reuse) the virtual environment of the PyTorch plugin: tools/requirements-torch.txt (the
# pinned torch wheel and the two CUDA runtime wheels its libtorch_cpu.so links) installed with
# --no-deps into ${GSCHECK_TORCH_VENV:-${XDG_CACHE_HOME:-~/.cache}/gscheck/torch-venv}. Only
# libtorch's shared libraries and headers are used (no `import torch`), so torch's Python and CUDA
# dependencies are left out: 554 MB of downloads, 1.2 GB installed. Prints the venv's path as the
# last line of stdout; a stamp of the requirements' hash tells a stale venv. One installer at a
# time. Environment: GSCHECK_TORCH_VENV, GSCHECK_PYTHON (the Python that creates it; python3).
# Exit status: 0 ready, 2 installing failed, 77 PyPI not reachable and no usable venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${GSCHECK_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/torch-venv}"
requirements="$root/tools/requirements-torch.txt"
want_stamp="$(sha256sum "$requirements" | cut -d' ' -f1)"
stamp_file="$venv/.gscheck-requirements.sha256"

venv_ready() {
  [[ -x "$venv/bin/python" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$want_stamp" ]]
}

pypi_reachable() {
  local index="${PIP_INDEX_URL:-https://pypi.org/simple}"
  timeout 15 "${GSCHECK_PYTHON:-python3}" - "$index" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=8).read(1)
PY
}

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if venv_ready; then
  echo "torch_venv: reusing $venv"
else
  if ! pypi_reachable; then
    echo "SKIPPED: PyPI not reachable (and no PyTorch venv at $venv)"
    exit 77
  fi
  echo "torch_venv: installing libtorch (the torch wheel, --no-deps) into $venv (first run only)"
  rm -rf "$venv"
  if ! "${GSCHECK_PYTHON:-python3}" -m venv "$venv" ||
     ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
       --only-binary :all: -r "$requirements"; then
    echo "torch_venv: installing tools/requirements-torch.txt into $venv failed" >&2
    rm -rf "$venv"
    exit 2
  fi
  echo "$want_stamp" >"$stamp_file"
fi
echo "$venv"
