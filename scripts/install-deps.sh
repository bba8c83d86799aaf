#!/usr/bin/env bash
# Installs what building and testing dgemm needs on Debian 12, skipping what is
# already there: LLVM/MLIR 22 (with FileCheck and lit), CMake, Ninja, g++,
# GoogleTest; with --python, pytest, numpy, torch and scikit-build-core from PyPI as well, and
# cuobjdump/nvdisasm (NVIDIA's PyPI wheels) where the CUDA toolkit lacks them.
# The CUDA toolkit (/usr/local/cuda: cuda.h, ptxas) is expected on the machine.
set -euo pipefail

want_python=0
[[ "${1:-}" == "--python" ]] && want_python=1

pkgs=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools cmake ninja-build
      g++ libgtest-dev python3 python3-pip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

if [[ ! -x /usr/local/cuda/bin/ptxas && -z "$(command -v ptxas)" ]]; then
  echo "warning: no CUDA toolkit found (ptxas, cuda.h): PTX is generated but not assembled" >&2
fi

if ((want_python)); then
  py=${PYTHON:-python3}
  need=()
  for m in pytest numpy torch; do
    "$py" -c "import $m" >/dev/null 2>&1 || need+=("$m")
  done
  # The wheel's build backend (python/pyproject.toml), for the wheel test.
  "$py" -c "import scikit_build_core" >/dev/null 2>&1 || need+=(scikit-build-core)
  # cuobjdump and nvdisasm (for the SASS tests, scripts/sass_report.py): the CUDA toolkit's
  # when it has them, else NVIDIA's wheels, which run without a GPU.
  if ! "$py" "$(dirname "$0")/sass_report.py" --find-cuobjdump >/dev/null 2>&1; then
    need+=(nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)
  fi
  if ((${#need[@]})); then
    echo "== installing Python packages: ${need[*]}"
    "$py" -m pip install -q --disable-pip-version-check "${need[@]}"
  fi
fi
