#!/usr/bin/env bash
# The Python host's cost and the Python-hosted backends' speed, from `gscheck run` wall times
# (median of RUNS, --jobs 1, --repeat 1), everything in one run of this script:
# 1. per call: the no-op module (bench/python/noop_backend.py) against the example C plugin on the
#    same seeded tf-gpu gather_nd sweep; (difference of the times) / calls is the host's own
#    overhead: view the inputs, call Python, copy the output, check that no view was kept.
# 2. cases/s on the same N cases written by `gscheck export`: TensorFlow's C plugin (when built),
#    the numpy example, and every shipped Python backend whose venv exists (none is installed
#    here: scripts/<name>_venv.sh makes them). Each is given its known-failures file, so the
#    exit status says whether the run was clean; the time is the point.
# Usage: host_bench.sh BUILD_DIR [N=5000] [RUNS=3] [NAME...]
#   NAME: only these of tf, numpy, tf_xla, jax, jax_lax, onnxruntime, openvino, litert
# Environment: XDG_CACHE_HOME (where the venvs are, as scripts/*_venv.sh make them).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if (($# < 1)); then
  echo "usage: $0 BUILD_DIR [N=5000] [RUNS=3] [NAME...]" >&2
  exit 2
fi
build="$(cd "$1" && pwd)" n="${2:-5000}" runs="${3:-3}"
shift $(($# < 3 ? $# : 3))
only=" $* "
g="$build/tools/gscheck"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/gscheck"
numpy_venv="$cache/numpy-venv"
[[ -x "$g" ]] || { echo "$0: no $g (build first)" >&2; exit 2; }
[[ -x "$numpy_venv/bin/python" ]] || { echo "$0: no $numpy_venv (scripts/numpy_venv.sh)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/none"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() {  # seconds of one gscheck run; its exit status goes to $tmp/rc
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  "$g" run "$@" --jobs 1 --repeat 1 --quiet --max-bytes 1073741824 >"$tmp/out.txt" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  echo "$rc" >"$tmp/rc"
  echo "$t1 - $t0" | bc
}
echo "host_bench: $(date -u +%F) $(nproc) cores, $(uname -r), N=$n, median of $runs"

# 1. The host's own overhead.
sweep=(--sweep "$n" --seed 1 --semantics tf-gpu "$tmp/none")
declare -A sweep_s
for b in "plugin:$build/examples/libgather_nd_plugin.so" "python:$root/bench/python/noop_backend.py"; do
  t=$(for i in $(seq "$runs"); do timed --backend "$b" --python-venv "$numpy_venv" "${sweep[@]}"; done | median)
  calls=$(grep -oE '^gather_nd +[0-9]+ +[0-9]+' "$tmp/out.txt" | awk '{print $2 + $3}')
  sweep_s[$b]=$t
  echo "  $b: median $t s for the sweep, gather_nd calls reaching the backend: ${calls:-?}"
done
c_s=${sweep_s["plugin:$build/examples/libgather_nd_plugin.so"]}
py_s=${sweep_s["python:$root/bench/python/noop_backend.py"]}
if [[ -n "${calls:-}" && "$calls" -gt 0 ]]; then
  echo "host overhead per call: $(echo "scale=1; ($py_s - $c_s) * 1000000 / $calls" | bc) us" \
    "(($py_s - $c_s) s / $calls calls)"
fi

# 2. cases/s on the same exported cases.
"$g" export --count "$n" --seed 1 --out "$tmp/cases" >/dev/null
count=$(find "$tmp/cases" -name '*.json' | wc -l)
backends=()  # NAME|BACKEND|VENV|KNOWN_FAILURES
tf_lib="$build/plugins/libgscheck_tf_plugin.so"
[[ -f "$tf_lib" ]] && backends+=("tf|plugin:$tf_lib||$root/plugins/tensorflow/tf_2_21_known_failures.json")
backends+=("numpy|python:$root/examples/python/numpy_backend.py|$numpy_venv|")
for module in "$root"/plugins/*/*_backend.py; do
  name="$(basename "$module" _backend.py)"
  venv="$cache/${name%%_*}-venv"
  known="$(dirname "$module")/${name}_known_failures.json"
  [[ -f "$known" ]] || known=""
  backends+=("$name|python:$module|$venv|$known")
done
printf '%-12s %9s %9s %s\n' backend "median s" "cases/s" "gscheck exit (known failures given)"
for spec in "${backends[@]}"; do
  IFS='|' read -r name backend venv known <<<"$spec"
  [[ "$only" == "  " || "$only" == *" $name "* ]] || continue
  if [[ -n "$venv" && ! -x "$venv/bin/python" ]]; then
    printf '%-12s skipped: no venv %s\n' "$name" "$venv"
    continue
  fi
  args=(--backend "$backend" --sweep 0 "$tmp/cases")
  [[ -n "$venv" ]] && args+=(--python-venv "$venv")
  [[ -n "$known" ]] && args+=(--known-failures "$known")
  t=$(for i in $(seq "$runs"); do timed "${args[@]}"; done | median)
  printf '%-12s %9.1f %9.0f exit %s: %s\n' "$name" "$t" "$(echo "$count / $t" | bc -l)" \
    "$(cat "$tmp/rc")" "$(grep -E '^[0-9]+ cases:' "$tmp/out.txt" | tail -1)"
done
