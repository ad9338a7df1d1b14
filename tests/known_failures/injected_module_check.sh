#!/usr/bin/env bash
# One injected bug in a shipped Python-hosted runtime must FAIL the run with the runtime's own
# known-failures file (the twin of injected_check.sh, for plugins/*/NAME_backend.py): the bug is
# injected by the forwarding module tests/known_failures/inject_backend.py.
# Usage: injected_module_check.sh NAME KIND GSCHECK OUT [gscheck run options and paths...]
#   KIND: none (the clean run the others assume: exit 0, or 4 where its only failures are
#   UNSAFE cases the file describes) | abort | bad_index | declined | declined_own_words |
#   wrong_value | flush16 |
#   flush_untouched | wrapped_garbage | large_one_element
# Exit status: 0 pass, 1 the bug was forgiven or missed (or the clean run fails), 2 setup
# error, 77 skipped (no venv can be had: PyPI unreachable).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if (($# < 4)); then
  echo "usage: $0 NAME KIND GSCHECK OUT [gscheck run options and paths...]" >&2
  exit 2
fi
name="$1" kind="$2" gscheck="$3" out="$4"
shift 4
source "$root/scripts/backend_files.sh"
runtime_backend "$root" "$name"  # sets module, name, known, venv
mkdir -p "$out"
# The runtime ctest's run (runtime_backend_check.sh): seed 1, 1 GiB, no shrinking.
args=(run --backend "python:$root/tests/known_failures/inject_backend.py" --python-venv "$venv"
      --seed 1 --quiet --max-bytes 1073741824 --shrink-time 0 --known-failures "$known"
      --report "$out/report.json" "$@")
cache="$(backend_writable_cache "$module")"
[[ -n "$cache" ]] && args+=(--worker-writable "$cache")
# large_one_element runs its own clean run first: its options draw more large cases than the
# fixture's run (one in 200 at the default share), so that run does not vouch for them.
if [[ "$kind" == large_one_element ]]; then
  crc=0
  GSCHECK_INJECT_TARGET="$module" GSCHECK_INJECT=none "$gscheck" "${args[@]}" \
    >"$out/clean.txt" 2>&1 || crc=$?
  if ((crc != 0 && crc != 4)); then
    echo "injected_module_check: the run without an injection fails; see $out/clean.txt"
    grep -E "^(FAILED|DECLINED|MISTRUSTED|NONDETERMINISTIC|UNSAFE) " -A4 "$out/clean.txt" | head -40
    exit 1
  fi
fi
rc=0
GSCHECK_INJECT_TARGET="$module" GSCHECK_INJECT="$kind" "$gscheck" "${args[@]}" \
  >"$out/run.txt" 2>&1 || rc=$?
echo "$name $kind: $(grep -E '^[0-9]+ cases:' "$out/run.txt") (exit $rc)"
if [[ "$kind" == none ]]; then
  if ((rc != 0 && rc != 4)); then
    echo "injected_module_check: the run without an injection fails; see $out/run.txt"
    grep -E "^(FAILED|DECLINED|MISTRUSTED|NONDETERMINISTIC|UNSAFE) " -A4 "$out/run.txt" | head -40
    exit 1
  fi
  exit 0
fi
if ((rc != 1)); then
  echo "injected_module_check: the injected $kind did not fail the run (gscheck exit $rc)"
  exit 1
fi
python3 "$root/tests/known_failures/injected_verdicts.py" "$out/report.json" "$kind"
