#!/usr/bin/env bash
# Grade TensorFlow's own kernels through the TensorFlow plugin (plugins/tensorflow) on the case
# files of the Python cross-check (scripts/tf_crosscheck.sh): its exported sweep, corpus/golden
# and corpus/tf, with TensorFlow 2.21's known failures (plugins/tensorflow/tf_2_21_known_failures.json).
# Passes when no case FAILED and, where the Python cross-check's report is there for the same
# files, every known TensorFlow bug it lists is an XFAIL here and both found the same
# disagreements. See docs/vendor.md ("TensorFlow plugin").
#
# Usage: scripts/tf_plugin_check.sh [--gscheck BIN] [--build-dir DIR] [--count N] [--seed S]
#                                   [--crosscheck DIR] [--out DIR] [--repeat K]
#   --gscheck BIN     the gscheck CLI (default: build/default/tools/gscheck)
#   --build-dir DIR   the CMake build folder holding plugins/libgscheck_tf_plugin.so (default:
#                     the CLI's build folder); re-configured and built there when the plugin is
#                     missing because CMake ran before the venv existed
#   --count N --seed S  the sweep to export when the cross-check's is absent (default 3000,
#                     20261130: what the tf_crosscheck ctest exports)
#   --crosscheck DIR  the cross-check's --out folder: sweep/ and report.json (default:
#                     DIR-of-build/tools/tf_crosscheck)
#   --out DIR         where report.json, junit.xml go (default: build/tf_plugin_check)
#   --repeat K        gscheck's --repeat (default 1: one TensorFlow call per case)
# Exit status: 0 pass, 1 a case FAILED or the verdicts differ from the cross-check's, 2 setup
# error, 77 skipped (no venv can be had).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gscheck="$root/build/default/tools/gscheck"
build=""
count=3000
seed=20261130
crosscheck=""
out=""
repeat=1
while (($#)); do
  case "$1" in
    --gscheck) gscheck="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --count) count="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --crosscheck) crosscheck="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "tf_plugin_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! -x "$gscheck" ]]; then
  echo "tf_plugin_check: no gscheck CLI at $gscheck (build it, or pass --gscheck)" >&2
  exit 2
fi
[[ -n "$build" ]] || build="$(cd "$(dirname "$gscheck")/.." && pwd)"
[[ -n "$crosscheck" ]] || crosscheck="$build/tools/tf_crosscheck"
[[ -n "$out" ]] || out="$root/build/tf_plugin_check"

rc=0
venv_out="$("$root/scripts/tf_venv.sh")" || rc=$?
if ((rc != 0)); then echo "$venv_out"; exit "$rc"; fi
venv="$(echo "$venv_out" | tail -n1)"

plugin="$build/plugins/libgscheck_tf_plugin.so"
if [[ ! -f "$plugin" ]]; then
  echo "tf_plugin_check: building the plugin (CMake ran before the venv existed)"
  cmake "$build" >/dev/null
  cmake --build "$build" --target gscheck_tf_plugin
fi
if [[ ! -f "$plugin" ]]; then
  echo "tf_plugin_check: no plugin at $plugin after building it" >&2
  exit 2
fi

paths=()
if [[ -d "$crosscheck/sweep" ]]; then
  paths+=("$crosscheck/sweep")
else
  echo "tf_crosscheck's sweep is absent: exporting $count cases (seed $seed)"
  rm -rf "$out/sweep"
  mkdir -p "$out"
  "$gscheck" export --count "$count" --seed "$seed" --include-invalid --out "$out/sweep" >/dev/null
  paths+=("$out/sweep")
fi
paths+=("$root/corpus/golden" "$root/corpus/tf" "$root/plugins/tensorflow/cases")

mkdir -p "$out"
# TensorFlow logs every failed op's check at WARNING; keep the test's output readable.
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
t0=$(date +%s.%N)
rc=0
# --timeout 120: this check grades what TensorFlow computes, not how fast; the default (10 s plus
# 1 s per 64 MiB) timed out the over-budget trap case once while an ASan build loaded both cores.
"$gscheck" eval --backend "plugin:$plugin" --repeat "$repeat" --quiet --timeout 120 \
  --known-failures "$root/plugins/tensorflow/tf_2_21_known_failures.json" --lint-known-failures \
  --report "$out/report.json" --junit "$out/junit.xml" "${paths[@]}" >"$out/eval.txt" || rc=$?
t1=$(date +%s.%N)
grep -E "^(FAILED|MISTRUSTED|NONDETERMINISTIC|DECLINED|UNSAFE) " -A4 "$out/eval.txt" | head -60 || true
grep -E "^[0-9]+ cases:" "$out/eval.txt" || true
# The lint of the known-failures file (gscheck known-failures check): its table and findings.
sed -n '/^known failures /,/^known-failures check:/p' "$out/eval.txt"
lint_clean=1
grep -q "^known-failures check: 0 finding(s)" "$out/eval.txt" || lint_clean=0
echo "tf_plugin_check: gscheck eval took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (exit $rc)"
# 4: the only failures are UNSAFE cases the file describes (TensorFlow's CHECK aborts and its
# segfault): gscheck never calls them green, and they are compared below as the file's.
if ((rc != 0 && rc != 1 && rc != 4)); then exit 2; fi
rc=0  # a FAILED case fails this check below unless the cross-check saw the same difference

# Against the Python cross-check: same files, same known bugs, same disagreements.
"$venv/bin/python" - "$out/report.json" "$crosscheck/report.json" "${paths[@]}" <<'PY' || rc=1
import json, os, sys
plugin_report, py_report, *paths = sys.argv[1:]
cases = json.load(open(plugin_report))["cases"]
def real(p): return os.path.realpath(p)
described = lambda c: c["verdict"] == "UNSAFE" and c.get("known_failure")
xfail = {real(c["file"]) for c in cases if c["verdict"] == "XFAIL" or described(c)}
failed = {real(c["file"]) for c in cases if c["verdict"] in ("FAILED", "MISTRUSTED", "NONDETERMINISTIC", "DECLINED", "UNSAFE")
          and not described(c)}
from collections import Counter
print("plugin verdicts:", dict(Counter(c["verdict"] for c in cases)))
if not os.path.exists(py_report):
    print("no Python cross-check report at", py_report, "- nothing to compare with")
    sys.exit(1 if failed else 0)
py = json.load(open(py_report))
roots = [real(p) for p in paths]
def ours(f): return any(real(f).startswith(r) for r in roots)
known = {real(e["file"]) for e in py["known_tf_bugs"] if ours(e["file"])}
# A sum's NaN payload is a known kind of the cross-check the plugin passes (the comparator admits
# any NaN for sums). TensorFlow's CPU flushing subnormals (FTZ/DAZ) is XFAIL by the shipped file's
# "flushed_subnormals" entry; a flush the entry does not recognise (the plugin FAILED where the
# cross-check saw output_subnormal_flushed) is listed too, so the two checks can be told apart.
# Neither is a mismatch between the two checks.
inexpressible = {real(e["file"]) for e in py["known_tf_bugs"] if ours(e["file"])
                 and e.get("kind") in ("output_subnormal_flushed", "output_nan_bits_differ")}
seen_both = inexpressible & (failed | {real(c["file"]) for c in cases if c["verdict"] == "PASSED"})
known -= seen_both
failed_known = failed & seen_both
failed -= seen_both
disagree = {real(e["file"]) for e in py["disagreements"] if ours(e["file"])}
if seen_both:
    print(f"FTZ / sum NaN payload cases both checks see ({len(seen_both)}; plugin FAILED on "
          f"{len(failed_known)}, not compared as XFAIL):", *sorted(seen_both)[:10], sep="\n  ")
print(f"Python cross-check: {len(known)} known TensorFlow bugs, {len(disagree)} disagreements; "
      f"plugin: {len(xfail)} XFAIL, {len(failed)} failures")
bad = False
# Every bug the cross-check sees must be an XFAIL here, and the failures must be the same. An
# XFAIL the cross-check does not list is reported, not failed: it skips budget cases (the golden
# 2^31-offset trap TensorFlow segfaults on), and corpus/tf files record TensorFlow's own result
# as expect where the reference keeps another admissible one.
for what, a, fatal in (("known bugs only the cross-check saw", known - xfail, True),
                       ("disagreements only the cross-check saw", disagree - failed, True),
                       ("failures the cross-check did not see", failed - disagree, True),
                       ("XFAIL the cross-check does not list (not compared)", xfail - known, False)):
    if a:
        bad = bad or fatal
        print(f"{what} ({len(a)}):", *sorted(a)[:10], sep="\n  ")
sys.exit(1 if bad else 0)
PY
if ((lint_clean == 0)); then
  echo "tf_plugin_check: known-failures check found problems in the shipped file (above)"
  rc=1
fi
exit "$rc"
