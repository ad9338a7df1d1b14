#!/usr/bin/env bash
# The whole test suite: install what is missing, configure, build, run ctest (quick profile),
# then the sanitizer pass (scripts/sanitize_check.sh: ASan + UBSan, about 6 minutes here).
# Usage: scripts/test.sh [preset]   (default: "default"; "no-cuda" skips the CUDA toolkit)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
scripts/setup.sh
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)"
scripts/sanitize_check.sh
