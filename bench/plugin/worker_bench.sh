#!/usr/bin/env bash
# Plugin calls per second: persistent workers (--isolate worker) against fork-per-call
# (--isolate call), on the example plugin over the golden + regression corpus and a seeded
# sweep. Prints the median of RUNS timed runs per mode (docs/vendor.md records the numbers).
#
#   bench/plugin/worker_bench.sh [BUILD_DIR] [SWEEP] [RUNS] [JOBS]
set -euo pipefail
build=${1:-build/no-cuda}
sweep=${2:-5000}
runs=${3:-5}
jobs=${4:-1}
gscheck=$build/tools/gscheck
plugin=$build/examples/libgather_nd_plugin.so
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for mode in worker call; do
  for i in $(seq "$runs"); do
    "$gscheck" run --backend "plugin:$plugin" --sweep "$sweep" --seed 1 --repeat 1 \
      --jobs "$jobs" --isolate "$mode" --report "$out/$mode-$i.json" >/dev/null || true
  done
done
python3 - "$out" "$runs" "$jobs" <<'PY'
import json, statistics, sys
out, runs, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rates = {}
for mode in ("worker", "call"):
    r = []
    for i in range(1, runs + 1):
        rep = json.load(open(f"{out}/{mode}-{i}.json"))
        # Calls that reached the plugin: every case but those outside its capabilities.
        calls = sum(1 for c in rep["cases"] if not c["reason"].startswith("outside the backend"))
        r.append((calls / rep["run"]["elapsed_s"], calls, rep["run"]["elapsed_s"]))
    r.sort()
    med = r[len(r) // 2]
    rates[mode] = med[0]
    print(f"--isolate {mode:6} --jobs {jobs}: median {med[0]:8.0f} calls/s "
          f"({med[1]} calls in {med[2]:.2f} s; runs: " +
          ", ".join(f"{x[0]:.0f}" for x in r) + ")")
print(f"persistent worker / fork-per-call: {rates['worker'] / rates['call']:.2f}x")
PY
