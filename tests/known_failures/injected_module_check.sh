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
module="$(compgen -G "$root/plugins/*/${name}_backend.py" | head -1)"
source "$root/scripts/backend_files.sh"
known="$(backend_known_failures "${module:-none}")"
venv_script="$(backend_venv_script "$root" "$name")"
if [[ -z "$module" || ! -f "$known" || ! -x "$venv_script" ]]; then
  echo "$0: no runtime backend '$name' (plugins/*/${name}_backend.py with its known failures and venv script)" >&2
  exit 2
fi
venv_out="$("$venv_script")"
rc=$?
if ((rc != 0)); then
  echo "$venv_out"
  exit "$rc"
fi
venv="$(tail -1 <<<"$venv_out")"
mkdir -p "$out"
# The runtime ctest's run (runtime_backend_check.sh): seed 1, 1 GiB, no shrinking.
args=(run --backend "python:$root/tests/known_failures/inject_backend.py" --python-venv "$venv"
      --seed 1 --quiet --max-bytes 1073741824 --shrink-time 0 --known-failures "$known"
      --report "$out/report.json" "$@")
if [[ "$module" == */plugins/jax/* ]]; then
  cache="${GSCHECK_JAX_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/jax-compile-cache}"
  [[ -n "$cache" ]] && mkdir -p "$cache" && args+=(--worker-writable "$cache")
fi
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
