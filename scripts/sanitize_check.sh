#!/usr/bin/env bash
# The sanitizer pass of the README's test command: the `sanitize` preset (ASan + UBSan, Debug,
# no nvcc) builds the unit tests, the CLI and the worker, then runs
#   1. every unit-test program of the list below,
#   2. `gscheck run` over the golden corpus and the regressions on the reference and on cuda-emu
#      (the default backend), and a short seeded sweep on every in-tree backend
#      (list-backends: cuda-emu's modes included) and on the example plugin through the worker,
#   3. the hostile-plugin suite (tests/plugin/hostile), every mode with --isolate worker.
# Any sanitizer report fails it (halt_on_error; UBSan too), with the report on stderr. A memory
# error whose value is discarded (a prefetch one row past the end, a store past the output) is
# what this finds and the release build does not.
# Cost on the 2-core CI-like machine: 2026-12-03 build 408 s cold, the rest about 2 minutes;
# 2026-12-04 (quiet) build 251 s cold, 340 s in all.
# Usage: scripts/sanitize_check.sh [SWEEP=200]
set -euo pipefail
cd "$(dirname "$0")/.."
sweep="${1:-200}"
start=$(date +%s)
B=build/sanitize

cmake --preset sanitize >/dev/null
tests=(core_test reference_test compare_test reports_test harness_test backends_test
  cuda_emu_test fuzz_wire_test tools_test)
cmake --build --preset sanitize -j "$(nproc)" --target gscheck gscheck-worker gather_nd_plugin \
  hostile_plugins "${tests[@]}"
built=$(date +%s)
echo "sanitize_check: built in $((built - start)) s"

# Leaks count too; a report stops the program with exit 1 (UBSan's default would go on).
# Exit status 66 tells a sanitizer's stop from a failing test or case (exit 1).
export ASAN_OPTIONS="exitcode=66:allow_user_segv_handler=1:detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export GSCHECK_WORKER="$PWD/$B/tools/gscheck-worker"  # backends_test's plugin host
export UBSAN_OPTIONS="exitcode=66:halt_on_error=1:print_stacktrace=1"
# As the test presets: where this machine gives no namespaces, plugins run in a process group
# (and the hostile modes only namespaces stop are skipped) instead of being refused.
export GSCHECK_UNSAFE_NO_SANDBOX=1

# The exhaustive float16/bfloat16 text tests (every bit pattern and every midpoint, 2.4 min under
# ASan at -O0) run the same few functions 2^17 times: the release build runs them; here the
# other HalfText and CaseJson tests put the same code under the sanitizers.
# CrashGuard plants real signals and siglongjmps out of their handlers, which ASan does not
# follow (it stops at the planted SIGFPE): the release build runs those tests.
declare -A filter=([core_test]="-HalfText.*EveryPattern*:HalfText.*ReadsTensorFlowsText:HalfText.*Midpoints*"
  [harness_test]="-CrashGuard.*")
failed=()
for t in "${tests[@]}"; do
  exe=$(find "$B/tests" -type f -name "$t" -perm -u+x | head -1)
  [[ -n "$exe" ]] || { echo "sanitize_check: no $t in $B" >&2; exit 2; }
  t0=$(date +%s)
  # Death tests fork a sanitized child; the threadsafe style re-executes instead of forking.
  if ! "$exe" --gtest_brief=1 --gtest_death_test_style=threadsafe \
    --gtest_filter="${filter[$t]:-*}" >"$B/$t.log" 2>&1; then
    failed+=("$t")
    tail -60 "$B/$t.log" >&2
  fi
  echo "sanitize_check: $t $(($(date +%s) - t0)) s"
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/none"  # a run given no case folder reads the default corpus
backends=$("$B/tools/gscheck" list-backends | grep -E '^[a-z]' | grep -v '^cuda$\|^cuda-det$')
# The example plugin (built with the sanitizers too) through the sanitized worker, in its
# contained process: the host's wire, guards and sandbox under ASan, on both sides of the pipe.
backends+=" plugin:$B/examples/libgather_nd_plugin.so"
for b in $backends; do
  t0=$(date +%s)
  rc=0
  corpus=()
  [[ "$b" == reference || "$b" == cuda-emu ]] && corpus=(corpus/golden corpus/regressions)
  [[ "$b" == plugin:* ]] && corpus=(corpus/golden/gather_nd)
  # Exit 1 is a FAILED case: graded elsewhere (the main job); here only a sanitizer counts.
  "$B/tools/gscheck" run --backend "$b" --seed 20261203 --sweep "$sweep" --quiet \
    --report "$scratch/report.json" "${corpus[@]}" "$scratch/none" >"$scratch/out.txt" 2>&1 ||
    rc=$?
  # A sanitizer stop in the worker is a FAILED case: its exit status 66, its stderr tail.
  if ((rc != 0 && rc != 1)) || grep -qE \
    'ERROR: (Address|Leak)Sanitizer|LeakSanitizer has encountered|runtime error:|status 66' \
    "$scratch/out.txt" "$scratch/report.json"; then
    failed+=("run --backend $b")
    tail -60 "$scratch/out.txt" >&2
  fi
  echo "sanitize_check: gscheck run --backend $b: exit $rc, $(($(date +%s) - t0)) s"
done

# The hostile suite (tests/plugin/hostile: one plugin per containment break) against the
# sanitized gscheck and worker, --isolate worker: every verdict, exit status and leftover check
# holds, and no sanitizer report (gscheck's exit 66 fails the mode). 13 s here (2026-12-05).
t0=$(date +%s)
modes=$(cd tests/plugin/hostile && python3 -c 'import hostile_test; print(" ".join(sorted(hostile_test.EXPECT)))')
for m in $modes; do
  rc=0
  python3 tests/plugin/hostile/hostile_test.py --gscheck "$B/tools/gscheck" \
    --plugin "$B/tests/plugin/hostile/libhostile_$m.so" --mode "$m" --isolate worker \
    >"$scratch/hostile.txt" 2>&1 || rc=$?
  if ((rc != 0 && rc != 77)); then  # 77: skipped, this machine gives no namespaces
    failed+=("hostile $m")
    tail -30 "$scratch/hostile.txt" >&2
  fi
done
echo "sanitize_check: hostile suite ($(wc -w <<<"$modes") modes) $(($(date +%s) - t0)) s"

echo "sanitize_check: $(($(date +%s) - start)) s in all (build $((built - start)) s)"
if ((${#failed[@]})); then
  echo "sanitize_check: FAILED under ASan+UBSan: ${failed[*]}" >&2
  exit 1
fi
echo "sanitize_check: clean under ASan+UBSan"
