#!/usr/bin/env bash
# The Python host's cost, from `gscheck run` wall times (median of RUNS, --jobs 1, --repeat 1):
# 1. per call: the no-op module (bench/python/noop_backend.py) against the example C plugin on the
#    same seeded tf-gpu gather_nd sweep; (difference of the times) / calls is the host's overhead.
# 2. cases/s of examples/python/numpy_backend.py on N cases written by `gscheck export`.
# Usage: host_bench.sh BUILD_DIR VENV [N=5000] [RUNS=3]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1" venv="$2" n="${3:-5000}" runs="${4:-3}"
g="$build/tools/gscheck"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/none"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() {  # seconds of one gscheck run (its exit status is not the point here)
  local t0 t1
  t0=$(date +%s.%N)
  "$g" run "$@" --jobs 1 --repeat 1 --quiet >"$tmp/out.txt" 2>&1 || true
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
sweep=(--sweep "$n" --seed 1 --semantics tf-gpu "$tmp/none")
for b in "plugin:$build/examples/libgather_nd_plugin.so" "python:$root/bench/python/noop_backend.py"; do
  t=$(for i in $(seq "$runs"); do timed --backend "$b" --python-venv "$venv" "${sweep[@]}"; done | median)
  calls=$(grep -oE '^gather_nd +[0-9]+ +[0-9]+' "$tmp/out.txt" | awk '{print $2 + $3}')
  echo "$b: median ${t} s for the sweep, gather_nd calls reaching the backend: ${calls:-?}"
done
"$g" export --count "$n" --seed 1 --out "$tmp/cases" >/dev/null
t=$(for i in $(seq "$runs"); do
  timed --backend "python:$root/examples/python/numpy_backend.py" --python-venv "$venv" --sweep 0 \
    "$tmp/cases"
done | median)
echo "numpy_backend.py: median ${t} s for $n exported cases: $(echo "$n / $t" | bc) cases/s"
tail -2 "$tmp/out.txt"
