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
exec "$root/scripts/pinned_venv.sh" torch_venv PyTorch \
  "${GSCHECK_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/torch-venv}" \
  "$root/tools/requirements-torch.txt" torch --no-deps --only-binary :all:
