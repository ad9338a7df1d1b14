#!/usr/bin/env bash
# Grade PyTorch through the PyTorch plugin (plugins/pytorch): `gscheck known-failures check` (a
# `gscheck run` on the golden corpus, the regressions, plugins/pytorch/cases and a seeded sweep, with PyTorch's known
# differences from TensorFlow, plugins/pytorch/torch_known_failures.json, and --strict, plus the
# lint of that file). Passes when no case FAILED (or was DECLINED, NONDETERMINISTIC, MISTRUSTED,
# XPASS) and the lint finds nothing: every entry explains a difference this run shows, and none
# would forgive an injected bug on a case PyTorch gets right.
# See docs/vendor.md ("Worked example: grading PyTorch").
#
# Usage: scripts/torch_plugin_check.sh [--gscheck BIN] [--build-dir DIR] [--sweep N] [--seed S]
#                                      [--out DIR] [--repeat K] [--jobs N] [--max-bytes B]
#                                      [--timeout S]
#   --gscheck BIN     the gscheck CLI (default: build/default/tools/gscheck)
#   --build-dir DIR   the CMake build folder holding plugins/libgscheck_torch_plugin.so (default:
#                     the CLI's build folder); re-configured and built there when the plugin is
#                     missing because CMake ran before the venv existed
#   --sweep N --seed S  the seeded sweep (default 5000, 1: what the known-failures file was
#                     measured on; another sweep may not show every difference)
#   --out DIR         where report.json, junit.xml, run.txt go (default: build/torch_plugin_check)
#   --repeat K        gscheck's --repeat (default 2: the plugin declares itself deterministic)
#   --jobs N          gscheck's --jobs (default: gscheck's, the number of cores)
#   --max-bytes B     gscheck's --max-bytes (default 1073741824: gscheck's own 4 GiB default
#                     lets PyTorch build a 4 GiB gather_nd output no TensorFlow limit stops,
#                     42 of the run's 44 s and 12.6 GB peak RSS; at 1 GiB the run takes 1.4 s)
#   --timeout S       gscheck's --timeout (default: gscheck's, 10 s plus 1 s per 64 MiB)
# Exit status: 0 pass, 1 a case failed or a known difference was not seen, 2 setup error,
# 77 skipped (no venv can be had).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gscheck="$root/build/default/tools/gscheck"
build=""
sweep=5000
seed=1
out=""
repeat=2
max_bytes=1073741824
jobs=()
timeout=()
while (($#)); do
  case "$1" in
    --gscheck) gscheck="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --sweep) sweep="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --jobs) jobs=(--jobs "$2"); shift 2 ;;
    --max-bytes) max_bytes="$2"; shift 2 ;;
    --timeout) timeout=(--timeout "$2"); shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "torch_plugin_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! -x "$gscheck" ]]; then
  echo "torch_plugin_check: no gscheck CLI at $gscheck (build it, or pass --gscheck)" >&2
  exit 2
fi
[[ -n "$build" ]] || build="$(cd "$(dirname "$gscheck")/.." && pwd)"
[[ -n "$out" ]] || out="$root/build/torch_plugin_check"
known="$root/plugins/pytorch/torch_known_failures.json"

rc=0
venv_out="$("$root/scripts/torch_venv.sh")" || rc=$?
if ((rc != 0)); then echo "$venv_out"; exit "$rc"; fi
venv="$(echo "$venv_out" | tail -n1)"

plugin="$build/plugins/libgscheck_torch_plugin.so"
if [[ ! -f "$plugin" ]]; then
  echo "torch_plugin_check: building the plugin (CMake ran before the venv existed)"
  cmake "$build" >/dev/null
  cmake --build "$build" --target gscheck_torch_plugin
fi
if [[ ! -f "$plugin" ]]; then
  echo "torch_plugin_check: no plugin at $plugin after building it" >&2
  exit 2
fi

mkdir -p "$out"
rm -rf "$out/failed_cases"
t0=$(date +%s.%N)
rc=0
# known-failures check: the run (case files and the sweep, --strict) plus the lint of the file:
# every entry must explain something, list no dtype no case needed, and forgive none of the
# injected bugs on the cases PyTorch gets right.
"$gscheck" known-failures check "$known" --backend "plugin:$plugin" --sweep "$sweep" \
  --seed "$seed" --repeat "$repeat" --max-bytes "$max_bytes" "${jobs[@]}" "${timeout[@]}" --quiet \
  --strict --report "$out/report.json" --junit "$out/junit.xml" \
  "$root/corpus/golden" "$root/corpus/regressions" "$root/plugins/pytorch/cases" \
  >"$out/run.txt" 2>&1 || rc=$?
t1=$(date +%s.%N)
grep -E "^(FAILED|MISTRUSTED|NONDETERMINISTIC|XPASS|DECLINED|UNSAFE) " -A4 "$out/run.txt" | head -60 || true
grep -E "^[0-9]+ cases:" "$out/run.txt" || tail -n5 "$out/run.txt"
sed -n '/^known failures /,/^known-failures check:/p' "$out/run.txt"
echo "torch_plugin_check: gscheck known-failures check took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (exit $rc)"
exit "$rc"
