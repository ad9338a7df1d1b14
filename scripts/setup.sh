#!/usr/bin/env bash
# Installs every Debian package gscheck's build and tests need (idempotent: only what is missing).
# The CUDA toolkit is optional and not installed here; without nvcc the cuda backend is skipped.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev clang-format
  libgtest-dev libgmock-dev librapidcheck-dev nlohmann-json3-dev libbenchmark-dev libre2-dev
  pkg-config libxml2-utils python3-junitparser libseccomp-dev libssl-dev
  python3 python3-venv libpython3-dev  # libpython3-dev: the Python host (plugins/python)
  chromium  # the conformance page's browser test (tests/conformance)
  dpkg-dev  # dpkg-shlibdeps: the .deb's Depends (CPack, tests/install)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# With a CUDA toolkit that lacks NVIDIA's binary tools (nvcc alone, as on the CI machine),
# cuobjdump and nvdisasm from PyPI, for the sm_90 machine-code test (tests/cuda/sass_check.py).
readonly cuda_tools=/opt/gscheck-cuda-tools
if command -v nvcc >/dev/null && ! command -v cuobjdump >/dev/null &&
  [[ ! -x /usr/local/cuda/bin/cuobjdump ]] &&
  ! compgen -G "$cuda_tools/lib/python3*/site-packages/nvidia/*/bin/cuobjdump" >/dev/null; then
  echo "setup: installing cuobjdump and nvdisasm (PyPI) into $cuda_tools"
  "${sudo_cmd[@]}" /usr/bin/python3 -m venv "$cuda_tools"
  "${sudo_cmd[@]}" "$cuda_tools/bin/pip" install -q nvidia-cuda-cuobjdump==13.4.92 \
    nvidia-cuda-nvdisasm==13.4.92
fi
