#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh the way OSS-Fuzz and ClusterFuzzLite do (their environment
# variables, a fresh $SRC/$OUT/$WORK), checks every file it must write to $OUT, then runs each
# fuzz target for a few seconds on its unpacked seed corpus with the flags of its .options
# (-seed=1: the same mutations every run; a crash or mismatch found fails the test).
#
#   scripts/oss_fuzz_build_test.sh [--sanitizer address|undefined] [--seconds N] [--jobs N]
#
# Exit 0 when everything checks, 1 on a failed check, 77 (ctest: skipped) without clang.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
sanitizer=address
seconds=3
jobs=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sanitizer) sanitizer=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    *) echo "oss_fuzz_build_test: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
  echo "SKIPPED: clang not installed (scripts/setup.sh installs it)"
  exit 77
fi

# OSS-Fuzz's flags for a libFuzzer build (infra/base-images/base-clang, SANITIZER_FLAGS_*).
common="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
case "$sanitizer" in
  address) san="-fsanitize=address -fsanitize-address-use-after-scope" ;;
  undefined)
    checks=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr
    san="-fsanitize=$checks -fno-sanitize-recover=$checks" ;;
  *) echo "oss_fuzz_build_test: --sanitizer address or undefined, not $sanitizer" >&2; exit 2 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gscheck_oss_fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/out" "$tmp/work"
ln -s "$src" "$tmp/src/gscheck"
export CC=clang CXX=clang++
export CFLAGS="$common $san -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export SRC="$tmp/src" OUT="$tmp/out" WORK="$tmp/work" SANITIZER="$sanitizer"
export GSCHECK_BUILD_JOBS="$jobs"

start=$(date +%s)
(cd "$SRC/gscheck" && bash "$SRC/gscheck/.clusterfuzzlite/build.sh") >"$tmp/build.log" 2>&1 || {
  tail -50 "$tmp/build.log"
  echo "FAILED: build.sh exited non-zero"
  exit 1
}
echo "build.sh ($sanitizer): $(($(date +%s) - start)) s"

fail=0
check() {  # check <condition text> <command...>
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
for t in gather gather_nd scatter_nd tensor_scatter case_json wire_result wire_call; do
  f="$OUT/${t}_fuzz"
  check "$t: executable $f" test -x "$f"
  n_seeds=$(python3 -c "import zipfile,sys; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))" \
            "${f}_seed_corpus.zip" 2>/dev/null || echo 0)
  check "$t: seed corpus zip is not empty ($n_seeds files)" test "$n_seeds" -gt 0
  n_src=$(find "$src/corpus/fuzz/$t" -type f | wc -l)
  check "$t: every corpus/fuzz/$t input is a seed ($n_seeds >= $n_src)" test "$n_seeds" -ge "$n_src"
  check "$t: options file has a [libfuzzer] section" grep -qx '\[libfuzzer\]' "${f}.options"
  if [[ $t == case_json ]]; then
    check "$t: dictionary" cmp -s "$src/fuzz/case_json.dict" "${f}.dict"
    check "$t: options name the dictionary" grep -qx "dict = ${t}_fuzz.dict" "${f}.options"
  fi
  # The flags ClusterFuzz derives from the .options file.
  flags=()
  while IFS='=' read -r key value; do
    key=${key// /}
    value=${value// /}
    [[ -z $key || $key == \[* ]] && continue
    [[ $key == dict ]] && value="$OUT/$value"
    flags+=("-$key=$value")
  done <"${f}.options"
  mkdir -p "$WORK/run/$t/seeds" "$WORK/run/$t/corpus"
  python3 -m zipfile -e "${f}_seed_corpus.zip" "$WORK/run/$t/seeds"
  if (cd "$WORK/run/$t" && GSCHECK_REGRESSIONS_DIR="$WORK/run/$t/cases" \
        "$f" "${flags[@]}" -seed=1 -max_total_time="$seconds" -print_final_stats=1 \
        corpus seeds >"$WORK/run/$t/log" 2>&1); then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$WORK/run/$t/log" | grep -o '[0-9]*$')
    check "$t: ran ${seconds}s on its seeds (${execs:-?} executions)" test "${execs:-0}" -gt 0
  else
    grep -B2 -A12 -m1 "gscheck fuzz: MISMATCH\|ERROR: AddressSanitizer\|runtime error" \
      "$WORK/run/$t/log" || tail -30 "$WORK/run/$t/log"
    check "$t: ran ${seconds}s without a crash or mismatch" false
  fi
done
exit $fail
