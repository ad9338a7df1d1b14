#!/usr/bin/env bash
# Make (or reuse) a virtual environment holding pinned requirements: the shared body of
# scripts/tf_venv.sh and scripts/torch_venv.sh. Only the first run pays for the download; a stamp
# of the requirements' hash tells a stale venv. One installer at a time (parallel ctest runs share
# the cache). Prints the venv's path as the last line of stdout.
# Usage: pinned_venv.sh NAME PRODUCT VENV REQUIREMENTS PYPI_PROJECT [PIP_ARGS...]
#   NAME          the prefix of its messages (tf_venv)
#   PRODUCT       what the messages say is installed (TensorFlow)
#   PYPI_PROJECT  the project whose index page tells whether PyPI is reachable (tensorflow-cpu)
#   PIP_ARGS      more arguments for pip install (--no-deps)
# Environment: GSCHECK_PYTHON (the Python that creates it; default python3), PIP_INDEX_URL.
# Exit status: 0 ready, 2 installing failed, 77 PyPI not reachable and no usable venv.
set -euo pipefail
name="$1" product="$2" venv="$3" requirements="$4" project="$5"
shift 5
root="$(cd "$(dirname "$0")/.." && pwd)"
want_stamp="$(sha256sum "$requirements" | cut -d' ' -f1)"
stamp_file="$venv/.gscheck-requirements.sha256"

venv_ready() {
  [[ -x "$venv/bin/python" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$want_stamp" ]]
}

pypi_reachable() {
  local index="${PIP_INDEX_URL:-https://pypi.org/simple}"
  timeout 15 "${GSCHECK_PYTHON:-python3}" - "$index" "$project" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/" + sys.argv[2] + "/", timeout=8).read(1)
PY
}

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if venv_ready; then
  echo "$name: reusing $venv"
else
  if ! pypi_reachable; then
    echo "SKIPPED: PyPI not reachable (and no $product venv at $venv)"
    exit 77
  fi
  echo "$name: installing $product${*:+ (pip $*)} into $venv (first run only)"
  rm -rf "$venv"
  if ! "${GSCHECK_PYTHON:-python3}" -m venv "$venv" ||
     ! "$venv/bin/pip" install --quiet --disable-pip-version-check "$@" -r "$requirements"; then
    echo "$name: installing ${requirements#"$root"/} into $venv failed" >&2
    rm -rf "$venv"
    exit 2
  fi
  echo "$want_stamp" >"$stamp_file"
fi
echo "$venv"
