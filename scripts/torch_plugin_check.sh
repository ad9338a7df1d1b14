#!/usr/bin/env bash
# Grade PyTorch through the PyTorch plugin (plugins/pytorch): `gscheck run` on the golden corpus,
# the regressions and a seeded sweep, with PyTorch's known differences from TensorFlow
# (plugins/pytorch/torch_known_failures.json) and --strict. Passes when no case FAILED (or was
# NONDETERMINISTIC, MISTRUSTED, XPASS) and every entry of the known-failures file matched at
# least one case: a difference the docs claim but the run no longer shows fails the check.
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
"$gscheck" run --backend "plugin:$plugin" --sweep "$sweep" --seed "$seed" --repeat "$repeat" \
  --max-bytes "$max_bytes" "${jobs[@]}" "${timeout[@]}" --quiet --strict --known-failures "$known" \
  --report "$out/report.json" --junit "$out/junit.xml" >"$out/run.txt" 2>&1 || rc=$?
t1=$(date +%s.%N)
grep -E "^(FAILED|MISTRUSTED|NONDETERMINISTIC|XPASS) " -A3 "$out/run.txt" | head -60 || true
grep -E "^[0-9]+ cases:" "$out/run.txt" || tail -n5 "$out/run.txt"
echo "torch_plugin_check: gscheck run took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (exit $rc)"
if ((rc != 0 && rc != 1)); then exit 2; fi

# Every known difference must be seen: count the cases each entry made XFAIL. A case's report
# names its entry by case pattern and reason, unique per entry (checked here). An entry naming
# case files that were all SKIPPED (over --max-bytes) is reported as not run, not as unseen.
"$venv/bin/python" - "$known" "$out/report.json" <<'PY' || rc=1
import collections, fnmatch, json, sys
entries = json.load(open(sys.argv[1]))["known"]
cases = json.load(open(sys.argv[2]))["cases"]
keys = [(e.get("case", "*"), e["reason"]) for e in entries]
if len(set(keys)) != len(keys):
    sys.exit("torch_plugin_check: two known-failure entries share case and reason")
seen = collections.Counter()
for c in cases:
    k = c.get("known_failure")
    if k and c["verdict"] == "XFAIL":
        seen[(k["entry"], k["reason"])] += 1
def named(pattern):
    # A case file skipped unread (over --max-bytes) is named by its path only.
    return [c for c in cases if any(fnmatch.fnmatchcase(t, p)
            for t in (c["name"], c.get("file") or "") for p in (pattern, "*/" + pattern + ".json"))]
print("XFAIL per known difference (entry: ops / dtypes / case -> cases):")
unseen = 0
for e, k in zip(entries, keys):
    pattern = e.get("case", "*")
    what = pattern if pattern != "*" else "sweep " + "/".join(e.get("ops", ["any op"]))
    if e.get("dtypes"): what += " [" + ",".join(e["dtypes"]) + "]"
    note = ""
    if seen[k] == 0:
        files = named(pattern) if pattern != "*" else []
        if files and all(c["verdict"] == "SKIPPED" for c in files):
            note = " (not run: SKIPPED for the memory budget)"
        else:
            unseen += 1
            note = " (NOT SEEN)"
    print(f"  {seen[k]:5d}  {what}: {e['reason'][:80]}{note}")
if unseen:
    print(f"torch_plugin_check: {unseen} known difference(s) matched no case: the docs claim "
          "differences this run does not show (fixed upstream? update the file and docs/vendor.md)")
    sys.exit(1)
PY
exit "$rc"
