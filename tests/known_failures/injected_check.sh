#!/usr/bin/env bash
# One injected bug in a real library's plugin must FAIL the run, with the library's shipped
# known-failures file: the file explains the library's real departures and nothing else.
# Usage: injected_check.sh GSCHECK INJECT_PLUGIN TARGET_PLUGIN KNOWN_FAILURES KIND OUT [CASES...]
#   KIND: none (no bug: the clean run, which the others assume) | abort | wrong_value | bad_index | flush16 | declined | wrapped_garbage | flush_untouched | large_one_element (tests/known_failures/inject_plugin.c)
#   CASES: case files or folders for `gscheck eval`, or `--run` and `gscheck run` options (the
#   same runs as the plugin's own check, so the clean run is that check's); default: an export
#   of 2000 seeded cases and corpus/golden
# Exit status: 0 the injected bug failed cases (and only as that bug), 1 it was forgiven or
# missed, 77 the target plugin is not built (no venv).
set -euo pipefail
gscheck="$1" inject="$2" target="$3" known="$4" kind="$5" out="$6"
shift 6
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ ! -f "$target" ]]; then
  echo "SKIPPED: no plugin at $target (its venv is made by the plugin's check)"
  exit 77
fi
mkdir -p "$out"
cases=("$@")
if ((${#cases[@]} == 0)); then
  if [[ ! -d "$out/sweep" ]]; then
    "$gscheck" export --count 2000 --seed 20261201 --include-invalid --out "$out/sweep.tmp" >/dev/null
    mv "$out/sweep.tmp" "$out/sweep"
  fi
  cases=("$out/sweep" "$root/corpus/golden")
fi
export TF_CPP_MIN_LOG_LEVEL=2
grade() {  # grade KIND REPORT: gscheck eval (or run) through the injecting plugin
  local rc=0
  if [[ "${cases[0]}" == "--run" ]]; then
    GSCHECK_INJECT_TARGET="$target" GSCHECK_INJECT="$1" \
      "$gscheck" run --backend "plugin:$inject" --quiet --shrink-time 0 --known-failures "$known" \
      --report "$2" "${cases[@]:1}" >"$2.txt" 2>&1 || rc=$?
  else
    GSCHECK_INJECT_TARGET="$target" GSCHECK_INJECT="$1" \
      "$gscheck" eval --backend "plugin:$inject" --repeat 1 --quiet --timeout 120 --shrink-time 0 \
      --known-failures "$known" --report "$2" "${cases[@]}" >"$2.txt" 2>&1 || rc=$?
  fi
  echo "$1: $(tail -n1 "$2.txt") (exit $rc)" >&2
  return "$rc"
}
# KIND none is the run without an injection: the shipped file must explain every departure, so
# that every failure of an injected run is the injected bug's. ctest runs it once per library,
# as the fixture of the injected runs (tests/known_failures/CMakeLists.txt).
# Exit 4 is a clean run too: its only failures are UNSAFE cases the file describes (TensorFlow's
# CHECK aborts), which gscheck never calls green.
if [[ "$kind" == none ]]; then
  crc=0
  grade none "$out/clean.json" || crc=$?
  if ((crc != 0 && crc != 4)); then
    echo "injected_check: the run without an injection fails; see $out/clean.json.txt"
    grep -E "^(FAILED|DECLINED|MISTRUSTED|NONDETERMINISTIC|UNSAFE) " -A4 "$out/clean.json.txt" | head -40
    exit 1
  fi
  exit 0
fi
rc=0
grade "$kind" "$out/report.json" || rc=$?
if ((rc != 1)); then
  echo "injected_check: the injected $kind did not fail the run (gscheck exit $rc)"
  exit 1
fi
python3 "$root/tests/known_failures/injected_verdicts.py" "$out/report.json" "$kind"
