#!/usr/bin/env bash
# The speed table across implementations: `gscheck bench` on the same problems file for the
# reference, numpy and every shipped runtime installed here (TensorFlow's CPU kernels and PyTorch
# through their plugins, the Python-hosted plugins/*/*_backend.py in their pinned venvs), one
# after another on the same machine; then speed_table.py merges the reports into a markdown table
# (GB/s and speed over a memcpy of the same bytes, measured in each run) written between the
# markers of docs/performance.md. Every call is checked against the reference, as in any bench.
#
# Usage: bench/runtimes/speed_table.sh [--only NAMES] [--out DIR] [--problems FILE]
#                                      [--gscheck BIN] [--md FILE] [bench options...]
#   --only NAMES     comma-separated: reference, numpy, tf, torch, and the <name> of each
#                    plugins/*/<name>_backend.py (default: all)
#   --out DIR        reports and logs, DIR/<name>.json and .txt (default build/speed_table)
#   --problems FILE  default bench/problems/runtimes.json
#   --md FILE        the markdown file whose markers get the table (default docs/performance.md;
#                    with --only: DIR/speed_table.md)
#   bench options    passed to every `gscheck bench` (--min-time, --repetitions, --filter ...)
# An implementation whose venv or plugin is missing is skipped with the reason.
# Exit status: 0 table written, 1 an implementation FAILED or gave no report, 2 bad usage.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
gscheck="$root/build/default/tools/gscheck"
out="$root/build/speed_table"
problems="$root/bench/problems/runtimes.json"
only="" md=""
extra=()
while (($#)); do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --problems) problems="$2"; shift 2 ;;
    --gscheck) gscheck="$2"; shift 2 ;;
    --md) md="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done
[[ -x "$gscheck" ]] || { echo "speed_table.sh: no gscheck CLI at $gscheck (build it, or pass --gscheck)" >&2; exit 2; }
[[ -f "$problems" ]] || { echo "speed_table.sh: no problems file $problems" >&2; exit 2; }
[[ -n "$md" ]] || { [[ -n "$only" ]] && md="$out/speed_table.md" || md="$root/docs/performance.md"; }
build="$(cd "$(dirname "$gscheck")/.." && pwd)"
mkdir -p "$out"
source "$root/scripts/backend_files.sh"

wanted() { [[ -z "$only" || ",$only," == *",$1,"* ]]; }
reports=() skipped=() failed=()
skip() { skipped+=("$1: $2"); echo "speed_table: skipping $1: $2"; }

# bench NAME BACKEND [gscheck options...]
bench() {
  local name="$1" backend="$2"
  shift 2
  echo "speed_table: $name: gscheck bench --backend ${backend/"$root"\//} --against none $*"
  local rc=0 t0=$SECONDS
  TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}" "$gscheck" bench --backend "$backend" \
    --against none --problems "$problems" --report "$out/$name.json" "$@" "${extra[@]}" \
    >"$out/$name.txt" 2>&1 || rc=$?
  echo "speed_table: $name: exit $rc in $((SECONDS - t0)) s ($out/$name.txt)"
  if [[ -f "$out/$name.json" ]] && ((rc == 0 || rc == 1)); then
    reports+=("$name=$out/$name.json")
    ((rc == 0)) || failed+=("$name: a problem FAILED (see $out/$name.txt)")
  else
    failed+=("$name: gscheck exited $rc without a report: $(head -n1 "$out/$name.txt")")
  fi
}

# venv SCRIPT: the venv's path, or nothing (and the reason on stderr).
venv() {
  local log rc=0
  log="$("$1" 2>&1)" || rc=$?
  ((rc == 0)) || { echo "${1#"$root"/} failed (exit $rc): $(tail -n1 <<<"$log")" >&2; return 1; }
  tail -n1 <<<"$log"
}

wanted reference && bench reference reference
if wanted numpy; then
  if v="$(venv "$root/scripts/numpy_venv.sh" 2>"$out/why")"; then
    bench numpy "python:$root/examples/python/numpy_backend.py" --python-venv "$v"
  else skip numpy "$(cat "$out/why")"; fi
fi
for spec in "tf gscheck_tf_plugin tf_venv.sh" "torch gscheck_torch_plugin torch_venv.sh"; do
  read -r name target script <<<"$spec"
  wanted "$name" || continue
  lib="$build/plugins/lib$target.so"
  if ! v="$(venv "$root/scripts/$script" 2>"$out/why")"; then skip "$name" "$(cat "$out/why")"; continue; fi
  if [[ ! -f "$lib" ]]; then
    cmake "$build" >/dev/null 2>&1 && cmake --build "$build" --target "$target" >/dev/null 2>&1
  fi
  [[ -f "$lib" ]] || { skip "$name" "no $lib (build target $target)"; continue; }
  bench "$name" "plugin:$lib"
done
shopt -s nullglob
for module in "$root"/plugins/*/*_backend.py; do
  name="$(basename "$module" _backend.py)"
  wanted "$name" || continue
  # Variants that only change what a bad index does (jax_clip, jax_fill, jax_promise_in_bounds)
  # time the same XLA programs as jax on in-bounds problems: skipped unless asked for.
  if [[ -z "$only" && "$name" =~ ^jax_(clip|fill|promise_in_bounds)$ ]]; then continue; fi
  script="$(backend_venv_script "$root" "$name")"
  [[ -n "$script" ]] || { skip "$name" "no venv script"; continue; }
  if ! v="$(venv "$script" 2>"$out/why")"; then skip "$name" "$(cat "$out/why")"; continue; fi
  args=(--python-venv "$v")
  if [[ "$module" == */plugins/jax/* ]]; then
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/jax-compile-cache"
    mkdir -p "$cache" && args+=(--worker-writable "$cache")
  fi
  bench "$name" "python:$module" "${args[@]}"
done
rm -f "$out/why"

((${#reports[@]})) || { echo "speed_table.sh: no implementation produced a report" >&2; exit 1; }
python3 "$root/bench/runtimes/speed_table.py" --md "$md" \
  --command "bench/runtimes/speed_table.sh${only:+ --only $only}${extra[*]:+ ${extra[*]}}" \
  "${reports[@]}" || exit 1
((${#skipped[@]})) && printf 'speed_table: skipped %s\n' "${skipped[@]}"
((${#failed[@]})) && { printf 'speed_table: %s\n' "${failed[@]}" >&2; exit 1; }
exit 0
