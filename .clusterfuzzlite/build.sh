#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build of gscheck's fuzz targets (docs/fuzzing.md). Uses only what
# the fuzzing infrastructure sets: CC, CXX, CFLAGS, CXXFLAGS (sanitizer and coverage flags),
# LIB_FUZZING_ENGINE (the engine to link), SRC (sources), OUT (what to ship), WORK (scratch).
# Writes to $OUT, for every target: <target> (linked with $LIB_FUZZING_ENGINE),
# <target>_seed_corpus.zip (corpus/fuzz/<target>/, the regression inputs saved next to the
# seeds included; case_json also gets the case files of corpus/regressions/ and corpus/golden/),
# <target>.options, and <target>.dict where a dictionary exists (case_json).
# scripts/oss_fuzz_build_test.sh runs it locally (ctest fuzz.oss_fuzz_build).

src="${GSCHECK_SRC:-$SRC/gscheck}"
build="$WORK/gscheck-build"
targets="gather gather_nd scatter_nd tensor_scatter case_json wire_result wire_call"

cmake -S "$src" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DGSCHECK_FUZZ=ON -DGSCHECK_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DGSCHECK_CUDA=OFF -DGSCHECK_TESTS=OFF -DGSCHECK_BENCH=OFF
fuzzers=()
for t in $targets; do fuzzers+=("${t}_fuzz"); done
cmake --build "$build" -j"${GSCHECK_BUILD_JOBS:-$(nproc)}" --target "${fuzzers[@]}"

for t in $targets; do
  cp "$build/fuzz/${t}_fuzz" "$OUT/${t}_fuzz"
  seeds=("$src/corpus/fuzz/$t")
  if [[ $t == case_json ]]; then
    seeds+=("$src/corpus/regressions" "$src/corpus/golden")
    cp "$src/fuzz/case_json.dict" "$OUT/${t}_fuzz.dict"
  fi
  # Flat names in the zip: the path below corpus/ with / turned into _, so they are unique.
  stage="$WORK/seeds/$t"
  rm -rf "$stage" && mkdir -p "$stage"
  while IFS= read -r -d '' f; do
    rel="${f#"$src"/corpus/}"
    cp "$f" "$stage/${rel//\//_}"
  done < <(find "${seeds[@]}" -type f ! -name README.md -print0)
  rm -f "$OUT/${t}_fuzz_seed_corpus.zip"
  (cd "$stage" && python3 -m zipfile -c "$OUT/${t}_fuzz_seed_corpus.zip" .)
  # The limits scripts/fuzz.sh uses: cases are small, one input runs in microseconds.
  {
    echo "[libfuzzer]"
    echo "max_len = 4096"
    echo "rss_limit_mb = 2560"
    echo "timeout = 25"
    [[ $t == case_json ]] && echo "dict = ${t}_fuzz.dict"
  } >"$OUT/${t}_fuzz.options"
done
echo "build.sh: ${#fuzzers[@]} fuzz targets in $OUT"
