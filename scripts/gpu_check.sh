#!/usr/bin/env bash
# The one-shot GPU check. Runs ONLY from a bundle made by scripts/gpu_bundle.sh (binaries, their
# libraries, the corpus and the benchmark scripts in one folder): no configure, build or install
# on the GPU machine. In order:
#   1. GPU name, driver, clocks (read-only nvidia-smi query)
#   2. correctness: cuda_gpu_test (a skipped test is a failure), golden corpus and seeded sweeps
#      on `cuda` and `cuda-det` (both semantics), one gather over 2^31 elements with a checksum,
#      compute-sanitizer memcheck over a sample when the machine supports it
#   3. cuda_bench (CUDA events, medians, a hard time cap per row), then the peer libraries
#      (torch, cupy, jax) on the same shapes through python3
#   4. the summary table, printed last
# Every log goes under $OUT (default <bundle>/out) as at most 5 files: summary.txt, gpu.txt,
# bench.json, peers.json and logs.tar.gz (all step logs, re-packed after every step, so a run cut
# short still returns them). Whole run capped at --budget seconds (default 450).
#
# --dry-run: the same steps on a machine without a GPU: every file checked present, every
# library resolved, every command line run against cuda-emu (or with --help / --list), the
# summary built from the benchmark's row list. Run by ctest (gpu_check_dry_run).
#
# Device command (see docs/cuda.md): carry ["build-gpu-bundle"], timeout_s 540,
#   bash build-gpu-bundle/gpu_check.sh
# Exit status: 0 all checks passed, 1 a check failed, 2 bad usage or an incomplete bundle.
set -uo pipefail

B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DRY=0
BUDGET_S=450
while (($#)); do
  case "$1" in
    --dry-run) DRY=1 ;;
    --budget)
      shift
      [[ "${1:-}" =~ ^[0-9]+$ ]] || { echo "gpu_check: --budget takes seconds" >&2; exit 2; }
      BUDGET_S=$1
      ;;
    -h | --help)
      sed -n '2,24p' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *)
      echo "gpu_check: unknown argument '$1' (see --help)" >&2
      exit 2
      ;;
  esac
  shift
done

if [[ ! -x "$B/bin/gscheck" ]]; then
  echo "gpu_check: $B is not a bundle (no bin/gscheck). Make one with scripts/gpu_bundle.sh and" >&2
  echo "  run build-gpu-bundle/gpu_check.sh from it." >&2
  exit 2
fi

OUT=${OUT:-$B/out}
mkdir -p "$OUT" || exit 2
LOG=$(mktemp -d "${TMPDIR:-/tmp}/gscheck-gpu-check.XXXXXX") || exit 2
trap 'rm -rf "$LOG"' EXIT
readonly START=$SECONDS
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
failures=()
order=()
declare -A result

left() { echo $((BUDGET_S - (SECONDS - START))); }
note() { echo "$*" | tee -a "$SUMMARY"; }
pack_logs() { tar czf "$OUT/logs.tar.gz" -C "$LOG" . 2>/dev/null; }

# Our binaries get the bundle's libraries; python3 (the peers) must not.
bin() {
  local name=$1
  shift
  LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/bin/$name" "$@"
}

# step NAME CAP RESERVE CMD...: run CMD with its output in $LOG/NAME.log, under a limit of CAP
# seconds, less when the budget left minus RESERVE (kept for the later steps) is smaller.
step() {
  local name=$1 cap=$2 reserve=$3
  shift 3
  order+=("$name")
  local limit=$(($(left) - reserve))
  ((limit > cap)) && limit=$cap
  if ((limit < 5)); then
    result[$name]="SKIPPED (time budget spent)"
    failures+=("$name")
    return 1
  fi
  local t0=$SECONDS rc=0
  echo "== $name (limit ${limit}s)"
  # Through bash -c so CMD may be one of this script's (exported) functions.
  timeout -k 5 "$limit" bash -c '"$@"' "$name" "$@" >"$LOG/$name.log" 2>&1 || rc=$?
  if ((rc == 0)); then
    result[$name]="ok ($((SECONDS - t0))s)"
  else
    ((rc == 124 || rc == 137)) && result[$name]="FAILED: over its ${limit}s limit" ||
      result[$name]="FAILED rc=$rc ($((SECONDS - t0))s)"
    failures+=("$name")
    tail -n 15 "$LOG/$name.log"
  fi
  pack_logs
  return $rc
}

# A gtest run that skipped anything did not check anything: a failure here.
no_skips() {
  local log=$1
  if grep -q '\[  SKIPPED \]' "$log"; then
    echo "gpu_check: tests were SKIPPED in $log (no usable GPU?):"
    grep '\[  SKIPPED \]' "$log" | head -5
    return 1
  fi
  grep -q '\[  PASSED  \]' "$log" || { echo "gpu_check: no PASSED line in $log"; return 1; }
}
gpu_tests() {
  GSCHECK_REQUIRE_GPU=1 bin cuda_gpu_test --gtest_color=no "$@" >"$LOG/gpu_tests.gtest" 2>&1
  local rc=$?
  cat "$LOG/gpu_tests.gtest"
  ((rc == 0)) || return $rc
  no_skips "$LOG/gpu_tests.gtest"
}

# ---- the bundle itself
bundle_complete() {
  local missing=0 f
  for f in bin/gscheck bin/cuda_gpu_test bin/cuda_bench bin/cuda_large_gather peer_bench.py \
    bench_summary.py MANIFEST corpus/golden corpus/regressions; do
    [[ -e "$B/$f" ]] || { echo "missing: $f"; missing=1; }
  done
  local n
  n=$(find "$B/corpus/golden" -name '*.json' 2>/dev/null | wc -l)
  ((n > 0)) || { echo "corpus/golden has no case files"; missing=1; }
  echo "corpus/golden: $n case files"
  for f in "$B"/bin/*; do
    if LD_LIBRARY_PATH="$B/lib" ldd "$f" 2>&1 | grep -q 'not found'; then
      echo "unresolved libraries of $f:"
      LD_LIBRARY_PATH="$B/lib" ldd "$f" | grep 'not found'
      missing=1
    fi
  done
  cat "$B/MANIFEST"
  return $missing
}

export B LOG DRY
export -f bin no_skips gpu_tests bundle_complete

note "gpu_check $( ((DRY)) && echo "DRY RUN " )from $B, $(date -u +%Y-%m-%dT%H:%M:%SZ), budget ${BUDGET_S}s"
step bundle 20 0 bundle_complete || { note "gpu_check: the bundle is incomplete"; cat "$LOG/bundle.log"; exit 2; }

# ---- 1. the GPU (read-only queries; never changes clocks or modes)
readonly SMI_FIELDS=name,driver_version,memory.total,pstate,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,power.limit
gpu_info() {
  if ((DRY)); then
    echo "dry run: would run nvidia-smi --query-gpu=$SMI_FIELDS --format=csv and nvidia-smi -q -d CLOCK"
    command -v nvidia-smi || echo "(no nvidia-smi on this machine)"
    return 0
  fi
  nvidia-smi --query-gpu=$SMI_FIELDS --format=csv && nvidia-smi -q -d CLOCK,PERFORMANCE
}
export SMI_FIELDS
export -f gpu_info
step gpu_info 20 0 gpu_info
cp "$LOG/gpu_info.log" "$OUT/gpu.txt"
((DRY)) || note "GPU: $(sed -n 2p "$OUT/gpu.txt")"

# ---- 2. correctness
if ((DRY)); then
  BACKENDS=(cuda-emu cuda-emu-det)
  SWEEP=30 SWEEP_LARGE=3 LARGE_LOG2=16
else
  BACKENDS=(cuda cuda-det)
  SWEEP=3000 SWEEP_LARGE=200 LARGE_LOG2=31
fi
readonly KEEP_FOR_BENCH=210 # seconds the correctness steps leave for bench, peers and summary

step list_backends 15 "$KEEP_FOR_BENCH" bin gscheck list-backends
if ((DRY)); then
  # The binary must list its GPU tests, must FAIL when a GPU is required and absent, and a plain
  # run (which skips) must be caught by the skip detector.
  dry_gpu_tests() {
    bin cuda_gpu_test --gtest_list_tests | tee "$LOG/gpu_tests.list" || return 1
    grep -q 'SweepAgreesWithTheReference' "$LOG/gpu_tests.list" || return 1
    if gpu_tests; then
      echo "dry run: cuda_gpu_test passed with GSCHECK_REQUIRE_GPU=1 and no GPU"
      return 1
    fi
    bin cuda_gpu_test --gtest_color=no >"$LOG/gpu_tests.skip" 2>&1 || return 1
    if no_skips "$LOG/gpu_tests.skip"; then
      echo "dry run: the skip detector missed the SKIPPED tests"
      return 1
    fi
    echo "dry run: cuda_gpu_test fails without a GPU when required, and skips are detected"
  }
  export -f dry_gpu_tests
  step gpu_tests 60 "$KEEP_FOR_BENCH" dry_gpu_tests
else
  step gpu_tests 90 "$KEEP_FOR_BENCH" gpu_tests
fi
# gscheck run checks the case files named and then the sweep, in one process per backend; the
# large sweep names only the (small) regressions folder, so the golden corpus runs once.
for be in "${BACKENDS[@]}"; do
  step "golden_sweep_$be" 90 "$KEEP_FOR_BENCH" bin gscheck run --backend "$be" \
    --sweep "$SWEEP" --seed 1 --size 60 --report "$LOG/golden_sweep_$be.json" \
    --junit "$LOG/golden_sweep_$be.xml" "$B/corpus/golden" "$B/corpus/regressions"
  step "sweep_large_$be" 60 "$KEEP_FOR_BENCH" bin gscheck run --backend "$be" \
    --sweep "$SWEEP_LARGE" --seed 2 --size 400 --report "$LOG/sweep_large_$be.json" \
    "$B/corpus/regressions"
done
step large_gather 60 "$KEEP_FOR_BENCH" bin cuda_large_gather --backend "${BACKENDS[0]}" \
  --log2-elements "$LARGE_LOG2"
memcheck() {
  if ! command -v compute-sanitizer >/dev/null; then
    echo "compute-sanitizer not on PATH: not run"
    return 0
  fi
  if ((DRY)); then
    compute-sanitizer --version
    return
  fi
  LD_LIBRARY_PATH="$B/lib" compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$B/bin/cuda_gpu_test" --gtest_filter='CudaGpu.GathersMatchCudaEmuBitForBit'
  local rc=$?
  # gVisor machines refuse the device to the sanitizer: say so rather than fail the check.
  if ((rc != 0)) && grep -q 'Device not supported' "$LOG/memcheck.log" 2>/dev/null; then
    echo "compute-sanitizer: device not supported on this machine: not run"
    return 0
  fi
  return $rc
}
export -f memcheck
step memcheck 45 "$KEEP_FOR_BENCH" memcheck

# ---- 3. benchmark: ours, then the peers on the same rows
bin cuda_bench --list-json "$LOG/rows.json" >"$LOG/rows.log" 2>&1 ||
  { note "gpu_check: cuda_bench --list-json failed"; cat "$LOG/rows.log"; failures+=(rows); }
if ((DRY)); then
  step bench 30 0 bin cuda_bench --help
  step peers 60 0 env -u LD_LIBRARY_PATH python3 "$B/peer_bench.py" --rows "$LOG/rows.json" \
    --dry-run --json "$OUT/peers.json"
else
  step bench 150 75 bin cuda_bench --budget-s $(($(left) - 85 > 140 ? 140 : $(left) - 85)) \
    --row-cap-s 4 --json "$OUT/bench.json"
  step peers 90 8 env -u LD_LIBRARY_PATH python3 "$B/peer_bench.py" --rows "$LOG/rows.json" \
    --budget-s $(($(left) - 15 > 80 ? 80 : $(left) - 15)) --row-cap-s 3 --json "$OUT/peers.json"
fi

# ---- 4. summary, last
{
  echo
  echo "== gpu_check summary ($((SECONDS - START))s of ${BUDGET_S}s)"
  for k in "${order[@]}"; do printf '  %-26s %s\n' "$k" "${result[$k]}"; done
  grep -h -E 'checksum|^large gather' "$LOG/large_gather.log" 2>/dev/null | sed 's/^/  /'
  bench_json=$OUT/bench.json
  ((DRY)) && bench_json=$LOG/rows.json
  env -u LD_LIBRARY_PATH python3 "$B/bench_summary.py" --bench "$bench_json" \
    --peers "$OUT/peers.json" || echo "  (bench_summary.py failed)"
} 2>&1 | tee -a "$SUMMARY"
pack_logs
if ((${#failures[@]})); then
  note "gpu_check: FAILED: ${failures[*]}"
  exit 1
fi
note "gpu_check: all checks passed$( ((DRY)) && echo " (dry run: no GPU figure)")"
