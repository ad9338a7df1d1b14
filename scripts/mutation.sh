#!/usr/bin/env bash
# The mutation suite on an existing Ninja build: every mutant of tools/mutants.json (or --fast),
# one at a time, killed by the checks a user's CI runs. Writes the kill table as JSON.
# Usage: scripts/mutation.sh [--preset P] [--fast|--memory] [--only ID,...] [--json FILE]
#   --preset P   the build to mutate (default: default; configured if need be, built first)
#   --memory     the mutants marked memory (discarded out-of-bounds reads and stores), for
#                `--preset sanitize`: ASan and UBSan kill what no check's values show
#   --json FILE  the kill table (default: build/<preset>/mutation/table.json)
# Environment: GSCHECK_BUILD_LOCK  a lock file held while compiling (shared machines).
# Exit status: tools/mutate.py's (0 every non-equivalent mutant killed, 1 otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=default
args=()
json=""
while (($#)); do
  case "$1" in
    --preset) preset="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
build="build/$preset"
json="${json:-$build/mutation/table.json}"
lock=()
if [[ -n "${GSCHECK_BUILD_LOCK:-}" ]]; then lock=(--lock "$GSCHECK_BUILD_LOCK"); fi
[[ -f "$build/build.ninja" ]] || cmake --preset "$preset" >/dev/null
if [[ -n "${GSCHECK_BUILD_LOCK:-}" ]]; then
  flock "$GSCHECK_BUILD_LOCK" cmake --build --preset "$preset" -j 2
else
  cmake --build --preset "$preset" -j 2
fi
exec python3 tools/mutate.py --build "$build" --json "$json" "${lock[@]}" "${args[@]}"
