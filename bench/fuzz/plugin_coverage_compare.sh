#!/usr/bin/env bash
# Does a plugin's own coverage find what the rest does not? (docs/fuzzing.md, "Fuzz your own
# kernel".) The example gather_nd plugin with a bug behind five nested conditions
# (GSC_EXAMPLE_NESTED_BUG), searched for SECONDS per seed four ways:
#   cov       gather_nd_fuzz on the plugin built with SanitizerCoverage's counters and trace-cmp
#             (its branches and compares guide libFuzzer)
#   counters  the same with the plugin's counters only
#   plain     gather_nd_fuzz on the same plugin uninstrumented (the reference's and decoder's
#             coverage)
#   sweep     gscheck run --time on the plain plugin (seeded random cases, no guidance)
# Prints, per seed and way, the seconds to the first finding or "-" (none). Needs the fuzz preset
# built (scripts/fuzz.sh builds it) and the default one (gscheck).
# usage: bench/fuzz/plugin_coverage_compare.sh [SECONDS] [SEEDS...]   (default: 300, seeds 1 2 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
seconds=${1:-300}
shift || true
seeds=("$@")
[[ ${#seeds[@]} -gt 0 ]] || seeds=(1 2 3)
fuzz="$root/build/fuzz/fuzz/gather_nd_fuzz"
cov="$root/build/fuzz/fuzz/libnested_bug_plugin_cov.so"
counters="$root/build/fuzz/fuzz/libnested_bug_plugin_counters.so"
plain="$root/build/fuzz/fuzz/libnested_bug_plugin_plain.so"
gscheck="$root/build/default/tools/gscheck"
# The example's declines (batch_dims, the ERROR policy) are known, not findings.
declines="$root/examples/plugins/gather_nd_plugin_declines.json"
for f in "$fuzz" "$cov" "$counters" "$plain" "$gscheck"; do
  [[ -e $f ]] || { echo "plugin_coverage_compare: $f is not built" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/gscheck_cov_compare.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Seconds to the first FINDING of a libFuzzer run on an empty corpus (seeds from corpus/fuzz), or -.
fuzz_run() { # plugin seed
  local dir="$tmp/$(basename "$1")-$2"
  mkdir -p "$dir/corpus" "$dir/cases"
  GSCHECK_FUZZ_BACKEND="plugin:$1" GSCHECK_FUZZ_KNOWN_FAILURES="$declines" \
    GSCHECK_REGRESSIONS_DIR="$dir/cases" "$fuzz" -seed="$2" \
    -max_total_time="$seconds" -timeout=30 "$dir/corpus" "$root/corpus/fuzz/gather_nd" \
    >"$dir/log" 2>&1 || true
  local at execs
  at=$(sed -n 's/^gscheck fuzz: FINDING 1 after \([0-9.]*\) s.*/\1/p' "$dir/log" | head -1)
  execs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 execs in \2 s/p' "$dir/log")
  echo "${at:--} ($execs)"
}

# Seconds to the first FAILED case of a timed sweep, or -.
sweep_run() { # seed
  local dir="$tmp/sweep-$1"
  mkdir -p "$dir/none"
  "$gscheck" run --backend "plugin:$plain" --time "$seconds" --seed "$1" --quiet --jobs 1 \
    --shrink-time 0 --repeat 1 --known-failures "$declines" --report "$dir/r.json" "$dir/none" \
    >"$dir/log" 2>&1 || true
  python3 - "$dir/r.json" "$seconds" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cases = r["cases"]
first = next((i for i, c in enumerate(cases) if c["verdict"] == "FAILED"), None)
# Cases run at an even pace over the budget: the first failure's share of it.
at = "-" if first is None else "%.1f" % (float(sys.argv[2]) * (first + 1) / len(cases))
print(at + " (%d cases)" % len(cases))
PY
}

echo "seconds to the first finding, ${seconds} s per run, two runs at a time" \
  "($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores)"
printf '%-5s %-34s %-34s %-34s %s\n' seed cov counters plain sweep
for s in "${seeds[@]}"; do
  # Two at a time (a fuzzer and its worker take turns, about one core between them; the sweep
  # runs one worker): the pairs share the machine alike.
  fuzz_run "$cov" "$s" >"$tmp/out-cov-$s" &
  fuzz_run "$counters" "$s" >"$tmp/out-counters-$s" &
  wait
  fuzz_run "$plain" "$s" >"$tmp/out-plain-$s" &
  sweep_run "$s" >"$tmp/out-sweep-$s" &
  wait
  printf '%-5s %-34s %-34s %-34s %s\n' "$s" "$(cat "$tmp/out-cov-$s")" "$(cat "$tmp/out-counters-$s")" \
    "$(cat "$tmp/out-plain-$s")" "$(cat "$tmp/out-sweep-$s")"
done
