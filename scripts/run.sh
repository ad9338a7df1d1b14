#!/usr/bin/env bash
# The main job: build the gscheck CLI, then run the conformance check (golden corpus, regressions
# and a seeded random sweep) on the default backend. Writes reports/out/report.json and junit.xml.
# Extra arguments go to `gscheck run` (e.g. --backend reference, --sweep 5000, --seed 7).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${GSCHECK_PRESET:-default}"
scripts/setup.sh >/dev/null
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" --target gscheck
mkdir -p reports/out
exec "build/$preset/tools/gscheck" run --report reports/out/report.json \
  --junit reports/out/junit.xml "$@"
