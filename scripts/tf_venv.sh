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
venv="${GSCHECK_TF_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/tf-venv}"
requirements="$root/tools/requirements-tf.txt"
want_stamp="$(sha256sum "$requirements" | cut -d' ' -f1)"
stamp_file="$venv/.gscheck-requirements.sha256"

venv_ready() {
  [[ -x "$venv/bin/python" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$want_stamp" ]]
}

pypi_reachable() {
  local index="${PIP_INDEX_URL:-https://pypi.org/simple}"
  timeout 15 "${GSCHECK_PYTHON:-python3}" - "$index" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/tensorflow-cpu/", timeout=8).read(1)
PY
}

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if venv_ready; then
  echo "tf_venv: reusing $venv"
else
  if ! pypi_reachable; then
    echo "SKIPPED: PyPI not reachable (and no TensorFlow venv at $venv)"
    exit 77
  fi
  echo "tf_venv: installing TensorFlow into $venv (first run only)"
  rm -rf "$venv"
  if ! "${GSCHECK_PYTHON:-python3}" -m venv "$venv" ||
     ! "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"; then
    echo "tf_venv: installing tools/requirements-tf.txt into $venv failed" >&2
    rm -rf "$venv"
    exit 2
  fi
  echo "$want_stamp" >"$stamp_file"
fi
echo "$venv"
