#!/usr/bin/env bash
# numpy's str() of every finite non-negative float16 (0x0000..0x7bff), from the pinned TensorFlow
# venv, against the C++ text HalfText.* reads as TensorFlow's. Usage: half_text_numpy.sh CORE_TEST
# Exit status: 0 equal, 1 different, 77 no venv (PyPI not reachable).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
core_test="$1"
rc=0
venv_out="$("$root/scripts/tf_venv.sh")" || rc=$?
if ((rc != 0)); then echo "$venv_out"; exit "$rc"; fi
venv="$(echo "$venv_out" | tail -n1)"
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
"$venv/bin/python" -c '
import sys, numpy as np
h = np.arange(0x7c00, dtype=np.uint16).view(np.float16)
sys.stdout.write("".join(str(x) + "\n" for x in h))' >"$table"
env GSCHECK_FLOAT16_NUMPY_TABLE="$table" "$core_test" --gtest_filter=HalfText.Float16MatchesNumpy
