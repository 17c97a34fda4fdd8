#!/usr/bin/env bash
# Installs the CUDA tools the CI checks use, from PyPI's NVIDIA wheels (pinned), into project-local
# venvs under build-venv/ (git-ignored), as scripts/ci/moto_env.sh does for moto.  No nvcc driver and
# no GPU are involved: the wheels carry the compilers and tools as plain executables and libraries.
#   cuda12  build-venv/cuda12: NVRTC 12.9 (the CUDA 12 front end, libnvrtc.so.12), ptxas 12.9 and
#           libnvvm (nvidia-cuda-nvcc-cu12, which has no nvcc driver), the CUDA 12.9 runtime
#           headers (nvidia-cuda-runtime-cu12): scripts/ci/check_cuda12_kernels.sh
#   audit   build-venv/cuda-audit: cuobjdump (nvidia-cuda-cuobjdump, CUDA 13): scripts/ci/audit_cuda_module.py
# Safe to re-run: does nothing when the pinned versions are there.  Prints the venv's
# site-packages/nvidia folder.  Exit 3 (and a line on stderr) when the wheels cannot be installed
# (no network): the callers decide whether that is a SKIP or a failure.
# Usage: scripts/ci/cuda_tools_env.sh cuda12|audit
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
case "${1:-}" in
  cuda12) VENV=build-venv/cuda12
          PINS=(nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-runtime-cu12==12.9.79) ;;
  audit) VENV=build-venv/cuda-audit
         PINS=(nvidia-cuda-cuobjdump==13.2.86) ;;
  *) echo "usage: scripts/ci/cuda_tools_env.sh cuda12|audit" >&2; exit 2 ;;
esac
stamp=$VENV/.instbench-pins
if [ "$(cat "$stamp" 2>/dev/null)" != "${PINS[*]}" ]; then
  echo "cuda_tools_env: installing ${PINS[*]} into $VENV" >&2
  "$PY" -m venv "$VENV"
  if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: "${PINS[@]}" >&2; then
    echo "cuda_tools_env: cannot install ${PINS[*]} (no network?)" >&2
    exit 3
  fi
  echo "${PINS[*]}" > "$stamp"
fi
"$VENV/bin/python" -c 'import glob, os, sys; print(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia"))[0])'
