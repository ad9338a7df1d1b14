#!/usr/bin/env bash
# Coverage-guided fuzzing of every fuzz target on all cores, then triage: crashes are deduplicated
# by signature, minimised, and turned into case files with a replay command each.
#
#   scripts/fuzz.sh                      # overnight: 8 hours in all, every target, all cores
#   scripts/fuzz.sh --time 3600          # one hour in all
#   scripts/fuzz.sh --smoke              # ~20 s per target; prints execs/s; cases stay in the work dir
#   scripts/fuzz.sh --targets "gather gather_nd" --jobs 8 --rss-limit-mb 4096
#   scripts/fuzz.sh --backend plugin:libmine.so --time 600   # your plugin, with its own coverage
#       [--known-failures FILE]   # its declines and departures, as gscheck run takes them
#
# --backend plugin:PATH | python:MODULE: the differential targets grade that backend alone against
# the reference, in one contained worker per fuzzer; a finding (mismatch, crash, hang) is shrunk,
# saved as a case file with a replay line, and the search goes on. A plugin built with
# -fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp guides the search with its own
# branches and compares.
#
# Work dir (git-ignored): corpus/fuzz-work/<target>/{corpus,crashes,minimized,cases,logs}. The
# corpus there grows from night to night; seeds come from corpus/fuzz/<target>/.
# Case files for new failures go to corpus/regressions/ (--regressions-dir to change).
# See docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

all_targets="gather gather_nd scatter_nd tensor_scatter case_json known_failures report wire_result wire_call"
# Targets whose inputs are bytes, not cases: a crash input joins their seed corpus.
byte_targets=" case_json known_failures report wire_result wire_call "
targets=$all_targets
backend=""
total_time=$((8 * 3600))
jobs=$(nproc)
rss_limit_mb=2048
smoke=0
regressions_dir=""
build_dir="$root/build/fuzz"
work="$root/corpus/fuzz-work"

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --time) total_time=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --targets) targets=$2; shift ;;
    --rss-limit-mb) rss_limit_mb=$2; shift ;;
    --regressions-dir) regressions_dir=$2; shift ;;
    --backend) backend=$2; shift ;;
    --known-failures) export GSCHECK_FUZZ_KNOWN_FAILURES=$(realpath "$2"); shift ;;
    -h|--help) usage 0 ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; usage 2 ;;
  esac
  shift
done
if [[ -n $backend ]]; then
  case "$backend" in
    plugin:*)
      [[ -r ${backend#plugin:} ]] || { echo "fuzz.sh: --backend $backend: no such file" >&2; exit 2; }
      backend="plugin:$(realpath "${backend#plugin:}")" ;;
    python:*)
      host=${GSCHECK_PYTHON_PLUGIN:-$root/build/default/tools/libgscheck_python_plugin.so}
      [[ -r $host ]] || { echo "fuzz.sh: --backend $backend needs the Python host: build the default preset or set \$GSCHECK_PYTHON_PLUGIN" >&2; exit 2; }
      export GSCHECK_PYTHON_PLUGIN=$host ;;
    *) echo "fuzz.sh: --backend: expected plugin:PATH or python:MODULE, got '$backend'" >&2; exit 2 ;;
  esac
  export GSCHECK_FUZZ_BACKEND=$backend
  # Only the differential targets grade a backend (by default those with an op it claims, found
  # after the build); each keeps its corpus per backend.
  if [[ $targets == "$all_targets" ]]; then
    targets="gather gather_nd scatter_nd tensor_scatter"
    claimed_targets=1
  fi
  work="$work/backend-$(basename "${backend#*:}" | tr -c 'A-Za-z0-9._\n-' _)"
fi
for t in $targets; do
  [[ " $all_targets " == *" $t "* ]] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
  if [[ -n $backend && $byte_targets == *" $t "* ]]; then
    echo "fuzz.sh: --backend fuzzes the differential targets only, not $t" >&2
    exit 2
  fi
done
n_targets=$(wc -w <<<"$targets")
minimize_time=60
if [[ $smoke == 1 ]]; then
  per_target=20
  minimize_time=5
  work="$work/smoke"
  regressions_dir=${regressions_dir:-$work/regressions}
else
  per_target=$((total_time / n_targets))
  regressions_dir=${regressions_dir:-$root/corpus/regressions}
fi
(( per_target >= 1 )) || { echo "fuzz.sh: --time too short for $n_targets targets" >&2; exit 2; }
mkdir -p "$regressions_dir"
regressions_dir=$(cd "$regressions_dir" && pwd)

echo "== build (preset fuzz: clang, libFuzzer, ASan, UBSan) in $build_dir"
cmake --preset fuzz -B "$build_dir" >/dev/null
cmake --build "$build_dir" --target gscheck_fuzz_all -j "$(nproc)"
bin="$build_dir/fuzz"
replay="$bin/gscheck_fuzz_replay"
if [[ ${claimed_targets:-0} == 1 ]]; then
  # A target with no op the backend claims would only reject inputs: its time goes to the rest.
  targets=$("$replay" --backend-targets | tr '\n' ' ')
  [[ -n ${targets// /} ]] || { echo "fuzz.sh: $backend claims no op of any target" >&2; exit 2; }
  n_targets=$(wc -w <<<"$targets")
  [[ $smoke == 1 ]] || per_target=$((total_time / n_targets))
  echo "== targets with an op $backend claims: $targets"
fi

# One line that names a failure, for deduplication: the mismatch headline and its "kind:" line,
# the parser check's complaint, a sanitizer's SUMMARY (it has file:line), or else the first two
# project frames below the fuzz harness (aborts, uncaught exceptions, timeouts).
signature() {
  local log=$1
  if grep -q '^gscheck fuzz: MISMATCH' "$log"; then
    echo "$(grep -m1 '^gscheck fuzz: MISMATCH' "$log") $(grep -m1 '^  kind: ' "$log")"
  elif grep -q '^gscheck fuzz: case_json' "$log"; then
    grep -m1 '^gscheck fuzz: case_json' "$log"
  elif grep -qE '^SUMMARY: [A-Za-z]+Sanitizer' "$log"; then
    grep -m1 -E '^SUMMARY: [A-Za-z]+Sanitizer' "$log"
  else
    echo "$(grep -m1 -E '^(SUMMARY|==[0-9]+== ERROR): ' "$log" | sed 's/^==[0-9]*== //') at" \
      "$(grep -E "^ +#[0-9]+ .* $root/" "$log" | grep -v "$root/fuzz/" | head -2 |
        awk '{print $NF}' | tr '\n' ' ')"
  fi
}

# Run one input through the target once; its stderr (and any case file) tells what failed.
replay_input() {
  GSCHECK_REGRESSIONS_DIR="$tw/cases" timeout 300 "$bin/${t}_fuzz" -rss_limit_mb="$rss_limit_mb" \
    -timeout=30 "$1" >"$2" 2>&1 || true
}

declare -A rate
summary=()
for t in $targets; do
  tw="$work/$t"
  mkdir -p "$tw/corpus" "$tw/crashes" "$tw/minimized" "$tw/cases" "$tw/logs"
  extra=()
  [[ $t == case_json ]] && extra+=("-dict=$root/fuzz/case_json.dict")
  if [[ -n $backend ]]; then
    # One fuzzer process and its worker: findings never stop it, so no fork mode is needed.
    echo "== fuzz $t against $backend: ${per_target}s, rss limit ${rss_limit_mb} MB"
    GSCHECK_REGRESSIONS_DIR="$tw/cases" "$bin/${t}_fuzz" -max_total_time="$per_target" \
      -rss_limit_mb="$rss_limit_mb" -timeout=30 -artifact_prefix="$tw/crashes/" \
      "$tw/corpus" "$root/corpus/fuzz/$t" >"$tw/logs/fuzz.log" 2>&1 || true
    grep -m1 -E "^gscheck fuzz: .*(own coverage guides|has no SanitizerCoverage)" "$tw/logs/fuzz.log" || true
    last=$(grep -E '^#[0-9]+[[:space:]].*exec/s: [0-9]+' "$tw/logs/fuzz.log" | tail -1 || true)
    rate[$t]="$(sed -E 's/.*exec\/s: ([0-9]+).*/\1/' <<<"$last") execs/s ($(sed -E 's/^#([0-9]+).*/\1/' <<<"$last") execs, $(sed -E 's/.*(cov: [0-9]+).*/\1/' <<<"$last"))"
    echo "   ${rate[$t]}"
    while IFS= read -r case_file; do
      dest="$regressions_dir/$(basename "$case_file")"
      cp "$case_file" "$dest"
      when=$(grep -B40 -F "  case file: $case_file" "$tw/logs/fuzz.log" | grep '^gscheck fuzz: FINDING' | tail -1)
      kind=$(grep -A40 -F "$when" "$tw/logs/fuzz.log" | grep -m1 '^  kind: ')
      summary+=("$t: ${when#gscheck fuzz: } ${kind#  }"$'\n'"    file:   $dest"$'\n'"    replay: build/default/tools/gscheck eval --backend $backend $dest")
    done < <(sed -n 's/^  case file: //p' "$tw/logs/fuzz.log")
    continue
  fi
  echo "== fuzz $t: ${per_target}s on $jobs job(s), rss limit ${rss_limit_mb} MB"
  # Mismatches found while fuzzing write their cases into the work dir; triage below decides
  # which reach the regressions dir.
  GSCHECK_REGRESSIONS_DIR="$tw/cases" "$bin/${t}_fuzz" \
    -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$per_target" -rss_limit_mb="$rss_limit_mb" -timeout=10 \
    -artifact_prefix="$tw/crashes/" "${extra[@]}" \
    "$tw/corpus" "$root/corpus/fuzz/$t" >"$tw/logs/fuzz.log" 2>&1 || true
  # Fork mode reports "#<execs>: cov: ... time: <s>s"; the last such line has the totals.
  last=$(grep -E '^#[0-9]+: cov:' "$tw/logs/fuzz.log" | tail -1 || true)
  execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
  secs=$(sed -E 's/.* time: ([0-9]+)s.*/\1/' <<<"$last")
  if [[ -n $last && ${secs:-0} -gt 0 ]]; then
    rate[$t]="$((execs / secs)) execs/s ($execs execs in ${secs}s, $(sed -E 's/.*(cov: [0-9]+).*/\1/' <<<"$last"))"
  else
    rate[$t]="no stats (see $tw/logs/fuzz.log)"
  fi
  echo "   ${rate[$t]}"

  # Triage: replay every crash input to name its failure, keep the smallest input per name,
  # minimise only those (a night can leave thousands of inputs for one bug), write case files.
  declare -A kept=()
  for crash in "$tw"/crashes/crash-* "$tw"/crashes/timeout-* "$tw"/crashes/oom-*; do
    [[ -e $crash ]] || continue
    log="$tw/logs/replay-$(basename "$crash").log"
    replay_input "$crash" "$log"
    sig=$(signature "$log")
    prev=${kept[$sig]:-}
    if [[ -z $prev || $(stat -c%s "$crash") -lt $(stat -c%s "$prev") ]]; then kept[$sig]=$crash; fi
  done

  for sig in "${!kept[@]}"; do
    crash=${kept[$sig]}
    name=$(basename "$crash")
    min="$tw/minimized/$name"
    log="$tw/logs/replay-$name.log"
    if [[ $name == crash-* ]]; then
      GSCHECK_REGRESSIONS_DIR="$tw/cases" "$bin/${t}_fuzz" -minimize_crash=1 \
        -max_total_time="$minimize_time" -exact_artifact_path="$min" "$crash" \
        >"$tw/logs/minimize-$name.log" 2>&1 || true
    fi
    # Keep the minimised input only if it still fails the same way.
    if [[ -s $min ]]; then
      replay_input "$min" "$log.min"
      if [[ $(signature "$log.min") == "$sig" ]]; then log="$log.min"; else cp "$crash" "$min"; fi
    else
      cp "$crash" "$min"
    fi
    if [[ $byte_targets == *" $t "* ]]; then
      # A parser crash input is not a case; it joins the seed corpus that CTest replays.
      dest="$root/corpus/fuzz/$t/$name"
      [[ $smoke == 1 ]] && dest="$regressions_dir/$t-$name"
      mkdir -p "$(dirname "$dest")"
      cp "$min" "$dest"
      cmd="$bin/${t}_fuzz $dest"
    else
      case_file=$(sed -n 's/^  case file: //p' "$log" | head -1)
      if [[ -n $case_file && -e $case_file ]]; then
        dest="$regressions_dir/$(basename "$case_file")"
        cp "$case_file" "$dest"
        cmd="build/default/tools/gscheck eval --backend $(sed -n 's/.*: backend \([^ ]*\) disagrees.*/\1/p' "$log" | head -1) $dest"
      else
        # A crash, not a mismatch: write-case mode saves the decoded case before running it.
        dest="$regressions_dir/${t}_${name%%-*}_${name#*-}.json"
        "$replay" --target "$t" --write-case "$dest" "$min" >/dev/null 2>&1 || true
        cmd="$replay --case $dest"
      fi
    fi
    summary+=("$t: $sig"$'\n'"    file:   $dest"$'\n'"    replay: $cmd"$'\n'"    input:  $bin/${t}_fuzz $min")
  done
  unset kept
done

echo
echo "== execs/s"
for t in $targets; do printf '  %-15s %s\n' "$t" "${rate[$t]}"; done
echo "== distinct failures: ${#summary[@]}"
for s in "${summary[@]}"; do echo "  $s"; done
[[ ${#summary[@]} -eq 0 ]] || echo "Triage each case (docs/fuzzing.md) before committing it."
