#!/usr/bin/env bash
# The Python host's cost and the Python-hosted backends' speed, from `gscheck run` wall times
# (median of RUNS, --jobs 1, --repeat 1), everything in one run of this script:
# 1. per call: bench/python/decline_backend.py against bench/python/decline_plugin.c, which
#    declare one contract and decline every call, on the same seeded sweep: both see the same
#    calls and gscheck grades each the same way (UNIMPLEMENTED), so (difference of the times) /
#    calls is the host's own overhead: view the inputs, call Python, turn its exception into a
#    code, check that no view was kept. Then the no-op module (noop_backend.py, an unwritten
#    output of the right shape) against the example C plugin: the output path too, but the two
#    are graded differently (the no-op fails its cases), so that difference is an upper bound.
# 2. cases/s on the same N cases written by `gscheck export`: TensorFlow's C plugin (when built),
#    the numpy example, and every shipped Python backend whose venv exists (none is installed
#    here: scripts/<name>_venv.sh makes them). Each is given its known-failures file, so the
#    exit status says whether the run was clean; the time is the point.
# Usage: host_bench.sh BUILD_DIR [N=5000] [RUNS=3] [NAME...]
#   NAME: only these of tf, numpy and plugins/*/NAME_backend.py (tf_xla, tf_xla_kernel, jax, ...)
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
calls_of() {  # calls that reached the backend: graded, or declined by the backend itself
  python3 -c 'import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
print(sum(1 for c in cases if c["verdict"] not in ("UNIMPLEMENTED", "SKIPPED")
          or "declines every case" in c["reason"]))' "$tmp/report.json"
}
pair() {  # LABEL SEMANTICS C_BACKEND PY_BACKEND: the two medians and the difference per call
  local label=$1 sem=$2 c=$3 py=$4 b t calls c_s="" c_calls="" py_s=""
  for b in "$c" "$py"; do
    t=$(for i in $(seq "$runs"); do
      timed --backend "$b" --python-venv "$numpy_venv" --sweep "$n" --seed 1 --semantics "$sem" \
        --report "$tmp/report.json" "$tmp/none"
    done | median)
    calls=$(calls_of)
    echo "  $b: median $t s for the sweep, $calls calls reaching the backend"
    if [[ -z "$c_s" ]]; then c_s=$t c_calls=$calls; else py_s=$t; fi
  done
  [[ "$calls" == "$c_calls" ]] || echo "  (the two saw different calls: $c_calls and $calls)"
  if ((calls > 0)); then
    echo "$label: $(echo "scale=1; ($py_s - $c_s) * 1000000 / $calls" | bc) us per call" \
      "(($py_s - $c_s) s / $calls calls)"
  fi
}
decline_lib="$build/bench/python/libdecline_plugin.so"
[[ -f "$decline_lib" ]] || { echo "$0: no $decline_lib (build with GSCHECK_BENCH)" >&2; exit 2; }
pair "host overhead, declined calls" tf-cpu "plugin:$decline_lib" \
  "python:$root/bench/python/decline_backend.py"
pair "no-op with its output vs the example plugin (upper bound)" tf-gpu \
  "plugin:$build/examples/libgather_nd_plugin.so" "python:$root/bench/python/noop_backend.py"

# 2. cases/s on the same exported cases.
"$g" export --count "$n" --seed 1 --out "$tmp/cases" >/dev/null
count=$(find "$tmp/cases" -name '*.json' | wc -l)
backends=()  # NAME|BACKEND|VENV|KNOWN_FAILURES
tf_lib="$build/plugins/libgscheck_tf_plugin.so"
[[ -f "$tf_lib" ]] && backends+=("tf|plugin:$tf_lib||$root/plugins/tensorflow/tf_2_21_known_failures.json")
backends+=("numpy|python:$root/examples/python/numpy_backend.py|$numpy_venv|")
source "$root/scripts/backend_files.sh"
for module in "$root"/plugins/*/*_backend.py; do
  name="$(basename "$module" _backend.py)"
  venv_script="$(backend_venv_script "$root" "$name")"  # its venv is the one that script makes
  venv="$cache/$(basename "${venv_script:-${name%%_*}_venv.sh}" _venv.sh)-venv"
  known="$(backend_known_failures "$module")"
  backends+=("$name|python:$module|$venv|$known")
done
printf '%-22s %9s %9s %s\n' backend "median s" "cases/s" "gscheck exit (known failures given)"
for spec in "${backends[@]}"; do
  IFS='|' read -r name backend venv known <<<"$spec"
  [[ "$only" == "  " || "$only" == *" $name "* ]] || continue
  if [[ -n "$venv" && ! -x "$venv/bin/python" ]]; then
    printf '%-22s skipped: no venv %s\n' "$name" "$venv"
    continue
  fi
  args=(--backend "$backend" --sweep 0 "$tmp/cases")
  [[ -n "$venv" ]] && args+=(--python-venv "$venv")
  [[ -n "$known" ]] && args+=(--known-failures "$known")
  t=$(for i in $(seq "$runs"); do timed "${args[@]}"; done | median)
  printf '%-22s %9.1f %9.0f exit %s: %s\n' "$name" "$t" "$(echo "$count / $t" | bc -l)" \
    "$(cat "$tmp/rc")" "$(grep -E '^[0-9]+ cases:' "$tmp/out.txt" | tail -1)"
done
