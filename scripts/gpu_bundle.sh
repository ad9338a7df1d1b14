#!/usr/bin/env bash
# Build the `gpu` preset (sm_90, Release) here, on the machine with nvcc, and gather what the
# one-shot GPU check needs into ONE folder that runs on the GPU machine without any configure,
# build or package install there:
#   bin/      gscheck, cuda_gpu_test, cuda_bench, cuda_large_gather (stripped)
#   lib/      every shared library they need that is not the C library or the CUDA driver
#             (ldd; the GPU machine has the driver but none of this project's Debian packages)
#   corpus/   golden and regressions
#   gpu_check.sh, peer_bench.py, bench_summary.py, MANIFEST (commit, toolchain, sizes, sha256)
# Usage: scripts/gpu_bundle.sh [--out DIR] [--from-build DIR]
#   --out DIR         the bundle folder (default build-gpu-bundle, git-ignored)
#   --from-build DIR  collect from an existing build instead of building preset gpu (the
#                     dry-run test collects from build/default)
# Run the build under the shared lock: flock /tmp/gscheck-build.lock scripts/gpu_bundle.sh
# Then, on the device: carry ["build-gpu-bundle"], command `bash build-gpu-bundle/gpu_check.sh`.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$SRC/build-gpu-bundle
from=""
while (($#)); do
  case "$1" in
    --out) out=$2; shift ;;
    --from-build) from=$2; shift ;;
    -h | --help) sed -n '2,16p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "gpu_bundle: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
readonly MAX_MIB=60  # the device tool carries at most 64 MiB in all
readonly TARGETS=(gscheck cuda_gpu_test cuda_bench cuda_large_gather)

build=$from
if [[ -z "$from" ]]; then
  build=$SRC/build/gpu
  (cd "$SRC" && cmake --preset gpu >/dev/null && cmake --build --preset gpu -j "$(nproc)" \
    --target "${TARGETS[@]}")
fi
declare -A path=(
  [gscheck]=$build/tools/gscheck
  [cuda_gpu_test]=$build/tests/cuda/cuda_gpu_test
  [cuda_bench]=$build/bench/cuda/cuda_bench
  [cuda_large_gather]=$build/tests/cuda/cuda_large_gather
)
for t in "${TARGETS[@]}"; do
  [[ -x "${path[$t]}" ]] || { echo "gpu_bundle: ${path[$t]} missing (build $t first)" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/corpus"
for t in "${TARGETS[@]}"; do
  cp "${path[$t]}" "$out/bin/$t"
  strip --strip-debug "$out/bin/$t"
done

# Libraries: everything ldd resolves except the C library family, the dynamic loader and the
# NVIDIA driver (libcuda, libnvidia-*), which the GPU machine provides and must not be shadowed.
is_system() {
  case "$(basename "$1")" in
    linux-vdso* | ld-linux* | libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | \
      libresolv.so* | libcuda.so* | libnvidia-*) return 0 ;;
  esac
  return 1
}
for f in "$out"/bin/*; do
  while read -r lib; do
    [[ -n "$lib" && -f "$lib" ]] || continue
    is_system "$lib" && continue
    cp -L "$lib" "$out/lib/$(basename "$lib")"
  done < <(ldd "$f" | awk '/=> \//{print $3}')
  if ldd "$f" | grep -q 'not found'; then
    echo "gpu_bundle: unresolved libraries of $f:" >&2
    ldd "$f" | grep 'not found' >&2
    exit 1
  fi
done

cp -r "$SRC/corpus/golden" "$SRC/corpus/regressions" "$out/corpus/"
cp "$SRC/scripts/gpu_check.sh" "$out/gpu_check.sh"
cp "$SRC/bench/cuda/peer_bench.py" "$SRC/bench/cuda/bench_summary.py" "$out/"
chmod +x "$out/gpu_check.sh"

{
  echo "gscheck GPU bundle"
  echo "  made      $(date -u +%Y-%m-%dT%H:%M:%SZ) from $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$SRC" diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
  echo "  build     $build"
  echo "  nvcc      $(nvcc --version 2>/dev/null | tail -1 || echo '?')"
  echo "  archs     $(grep -m1 '^GSCHECK_CUDA_ARCHITECTURES' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || echo '?'), $(grep -m1 '^CMAKE_BUILD_TYPE' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || echo '?')"
  echo "  glibc     $(ldd --version | head -1)"
  echo "  files:"
  (cd "$out" && find bin lib -type f -printf '%s %p\n' | sort -k2 | while read -r size p; do
    printf '    %9d  %s  %s\n' "$size" "$(sha256sum "$p" | cut -c1-16)" "$p"
  done)
} >"$out/MANIFEST"

mib=$(du -sm "$out" | cut -f1)
echo "  total     ${mib} MiB" >>"$out/MANIFEST"
cat "$out/MANIFEST"
if ((mib > MAX_MIB)); then
  echo "gpu_bundle: $out is ${mib} MiB, over the ${MAX_MIB} MiB the device tool can carry" >&2
  exit 1
fi
echo "gpu_bundle: $out ready (${mib} MiB): run 'bash $(basename "$out")/gpu_check.sh' on the GPU machine"
