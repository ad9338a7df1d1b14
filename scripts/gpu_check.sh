#!/usr/bin/env bash
# The cuda backend on a machine WITH a GPU (sm_90, e.g. H100/H200), in about 8 minutes:
#   1. build preset gpu (the cuda backend, its tests and benchmarks; -j all cores)
#   2. golden corpus + seeded random sweeps on backend `cuda`, both semantics (gscheck run)
#   3. cuda_gpu_test (sweeps vs the reference, bit-equality with cuda-emu, the deterministic
#      variant) and cuda_emu_test
#   4. compute-sanitizer memcheck over a sample of GPU cases
#   5. bench/cuda against a device-to-device copy measured in the same run
# and prints a short table last. Exit status: non-zero if any check failed.
# Usage: scripts/gpu_check.sh [--skip-build]
set -uo pipefail

cd "$(dirname "$0")/.." || exit 2
readonly BUILD=build/gpu
readonly OUT=$BUILD/gpu_check
readonly BUDGET_S=480
readonly START=$SECONDS
mkdir -p "$OUT"

failures=()
declare -A result

left() { echo $((BUDGET_S - (SECONDS - START))); }

# step NAME SECONDS CMD...: run CMD under a time limit (capped by what is left of the budget).
step() {
  local name=$1 limit=$2
  shift 2
  local remaining
  remaining=$(left)
  if ((remaining < 10)); then
    result[$name]="SKIPPED (time budget spent)"
    failures+=("$name")
    return
  fi
  ((limit > remaining)) && limit=$remaining
  local t0=$SECONDS
  echo "== $name (limit ${limit}s)"
  if timeout "$limit" "$@" >"$OUT/$name.log" 2>&1; then
    result[$name]="ok ($((SECONDS - t0))s)"
  else
    local rc=$?
    result[$name]="FAILED rc=$rc ($((SECONDS - t0))s), see $OUT/$name.log"
    failures+=("$name")
    tail -n 20 "$OUT/$name.log"
  fi
}

if ! nvidia-smi -L >"$OUT/gpu.txt" 2>&1; then
  echo "gpu_check: no GPU visible (nvidia-smi -L failed); this script needs one" >&2
  exit 2
fi
echo "GPU: $(head -n 1 "$OUT/gpu.txt")"

if [[ "${1:-}" != "--skip-build" ]]; then
  step configure 60 cmake --preset gpu
  step build 240 cmake --build --preset gpu -j "$(nproc)" --target gscheck cuda_gpu_test \
    cuda_emu_test cuda_bench
fi

readonly GSCHECK=$BUILD/tools/gscheck
# Golden cases carry their own semantics; the sweep draws both tf-cpu and tf-gpu cases.
step golden_cuda 60 "$GSCHECK" run --backend cuda --sweep 0 --quiet \
  --report "$OUT/golden.json" --junit "$OUT/golden.xml" corpus/golden
step sweep_cuda 90 "$GSCHECK" run --backend cuda --sweep 3000 --seed 1 --size 60 --quiet \
  --report "$OUT/sweep.json" --junit "$OUT/sweep.xml"
step sweep_cuda_large 60 "$GSCHECK" run --backend cuda --sweep 300 --seed 2 --size 400 --quiet \
  --report "$OUT/sweep_large.json"
step gpu_tests 90 "$BUILD/tests/cuda/cuda_gpu_test"
step emu_tests 60 "$BUILD/tests/cuda/cuda_emu_test"

if command -v compute-sanitizer >/dev/null 2>&1; then
  step memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$BUILD/tests/cuda/cuda_gpu_test" --gtest_filter='CudaGpu.GathersMatchCudaEmuBitForBit'
else
  result[memcheck]="SKIPPED (compute-sanitizer not on PATH)"
fi

step bench 150 "$BUILD/bench/cuda/cuda_bench" --benchmark_format=console \
  --benchmark_out="$OUT/bench.json" --benchmark_out_format=json

echo
echo "== gpu_check summary ($((SECONDS - START))s of ${BUDGET_S}s)"
for k in configure build golden_cuda sweep_cuda sweep_cuda_large gpu_tests emu_tests memcheck bench; do
  [[ -n "${result[$k]:-}" ]] && printf '  %-18s %s\n' "$k" "${result[$k]}"
done
if [[ -s "$OUT/bench.json" ]] && command -v python3 >/dev/null 2>&1; then
  python3 - "$OUT/bench.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1])).get("benchmarks", [])
print("\n  %-46s %9s %8s" % ("benchmark", "GB/s", "vs copy"))
for b in rows:
    if "error_occurred" in b and b["error_occurred"]:
        print("  %-46s %s" % (b["name"], b.get("error_message", "error")))
        continue
    gbps = b.get("GBps", b.get("bytes_per_second", 0) / 1e9)
    print("  %-46s %9.1f %8.2f" % (b["name"].split("/iterations")[0], gbps, b.get("vs_copy", 0)))
PY
fi
if ((${#failures[@]})); then
  echo "gpu_check: FAILED: ${failures[*]}"
  exit 1
fi
echo "gpu_check: all checks passed"
