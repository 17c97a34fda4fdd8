#!/usr/bin/env bash
# check_cuda12_kernels.sh [--kernels DIR] [--out DIR] [--arch LIST]: every kernels/*.cu compiles
# with a CUDA 12 toolchain for 75,80,86,89,90,100,120 (Blackwell: CUDA >= 12.8, as the build's
# default architectures with nvcc >= 12.8), or the architectures LIST names, warnings as errors.
#
# The module is built here with CUDA 13 (driver >= 580), but AWS's Deep Learning AMIs ship CUDA
# 12.x with drivers 535-570, where users build with the instance's nvcc 12.x (README, "Which
# driver a build needs").  check_cuda12.sh covers the host code; this covers the kernels: the CUDA
# 12.9 front end (NVRTC, libnvrtc.so.12 from PyPI's nvidia-cuda-nvrtc-cu12) turns each file into
# PTX per compute capability and ptxas 12.9 (nvidia-cuda-nvcc-cu12, which has ptxas but no nvcc
# driver) assembles it to SASS, with --warning-as-error; a warning in NVRTC's log fails too, as
# nvcc --Werror=all-warnings does.  The CUDA 12.9 runtime headers (cuda_bf16.h, mma.h, ...) come
# from nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12 (crt/).  scripts/ci/cuda_tools_env.sh
# installs the three pinned wheels into build-venv/cuda12.
#
# NVRTC compiles device code only, so the launchers are compiled as device functions whose
# launches type-check their arguments and launch nothing (scripts/ci/nvrtc/nvrtc_pre.h); the C library
# headers nvcc would take from the host compiler are the few lines of scripts/ci/nvrtc/.  The host
# side of the .cu files (what g++ compiles under nvcc) is not covered here.
# PTX, cubins and ptxas -v logs (registers, shared memory, spills per kernel and arch) go to
# --out (default build-venv/cuda12-kernels).
#
# No network to install the wheels: SKIP (exit 77), except under CI (CI set and not false/0),
# where it fails unless INSTBENCH_SKIP_CUDA12=1 says the CI machine is offline on purpose.
set -euo pipefail
cd "$(dirname "$0")/../.."
kernels=kernels
out=build-venv/cuda12-kernels
archs=75,80,86,89,90,100,120
while [ $# -gt 0 ]; do
  case "$1" in
    --kernels) kernels=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --arch) archs=$2; shift 2 ;;
    *) echo "usage: scripts/ci/check_cuda12_kernels.sh [--kernels DIR] [--out DIR] [--arch 80,90,...]" >&2; exit 2 ;;
  esac
done

if ! nv=$(scripts/ci/cuda_tools_env.sh cuda12); then
  if [ "${INSTBENCH_SKIP_CUDA12:-}" = 1 ] || [ -z "${CI:-}" ] || [ "${CI:-}" = false ] || [ "${CI:-}" = 0 ]; then
    echo "SKIP: check_cuda12_kernels: the CUDA 12 wheels cannot be installed (the kernels' CUDA 12 compile did not run)"
    exit 77
  fi
  echo "FAIL: check_cuda12_kernels: the CUDA 12 wheels cannot be installed and CI is set (INSTBENCH_SKIP_CUDA12=1 skips)" >&2
  exit 1
fi
rm -rf "$out"
python3 scripts/ci/nvrtc_compile.py --nvrtc "$nv/cuda_nvrtc/lib/libnvrtc.so.12" --ptxas "$nv/cuda_nvcc/bin/ptxas" \
  --arch "$archs" --pre-include "$PWD/scripts/ci/nvrtc/nvrtc_pre.h" \
  -I "$PWD/scripts/ci/nvrtc" -I "$nv/cuda_runtime/include" -I "$nv/cuda_nvcc/include" -I "$PWD/src" -I "$PWD/include" \
  --out "$out" "$kernels"/*.cu
