#!/usr/bin/env bash
# `gscheck run` on a Python-hosted backend with the numpy venv: the default sweep plus the corpus,
# exit status as gscheck's. Exit 77 (skipped) when the venv cannot be had (PyPI unreachable).
# Usage: python_backend_check.sh GSCHECK MODULE [gscheck run options...]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gscheck="$1" module="$2"
shift 2
venv_out="$("$root/scripts/numpy_venv.sh")"
rc=$?
if ((rc != 0)); then
  echo "$venv_out"
  exit "$rc"
fi
venv="$(tail -1 <<<"$venv_out")"
exec "$gscheck" run --backend "python:$module" --python-venv "$venv" --seed 1 "$@"
