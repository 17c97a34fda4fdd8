#!/usr/bin/env bash
# Prints the folder of NVIDIA's cudnn-frontend headers (pinned; cmake/cudnn_frontend.cmake fetches
# them once into build-venv/cudnn-frontend, as the build's configure step does).  Exit 3 (and a
# line on stderr) when they cannot be had (no network): the callers decide what that means.
# Usage: scripts/ci/cudnn_frontend_env.sh [DIR]   (default build-venv/cudnn-frontend)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-$PWD/build-venv/cudnn-frontend}
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
out=$(cmake -DCUDNN_FRONTEND_DIR="$dir" -P cmake/cudnn_frontend.cmake 2>/dev/null) || { echo "cudnn_frontend_env: cannot fetch the cudnn-frontend headers (no network?)" >&2; exit 3; }
echo "${out##*$'\n'}"
