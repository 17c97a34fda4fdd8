#!/usr/bin/env bash
# Installs NVIDIA's cudnn-frontend headers (PyPI nvidia-cudnn-frontend, pinned; header-only C++,
# MIT/Apache-2.0) into build-venv/cudnn-frontend/include, for the CUDA module's cuDNN attention
# (src/cuda/cudnn_sdpa.cpp), as scripts/cuda_tools_env.sh installs NVRTC.  Only the wheel's
# include/ is kept: its Python package and dependencies (cutlass-dsl, ...) are not needed to build.
# Safe to re-run: does nothing when the pinned version is there.  Prints the include folder.
# Exit 3 (and a line on stderr) when the wheel cannot be fetched (no network): the build then goes
# on without cuDNN attention and says so.
# Usage: scripts/cudnn_frontend_env.sh [DIR]   (default build-venv/cudnn-frontend)
set -euo pipefail
cd "$(dirname "$0")/.."
PIN=nvidia-cudnn-frontend==1.32.0
DIR=${1:-build-venv/cudnn-frontend}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
if [ "$(cat "$DIR/.instbench-pin" 2>/dev/null)" != "$PIN" ] || [ ! -f "$DIR/include/cudnn_frontend.h" ]; then
  echo "cudnn_frontend_env: fetching $PIN into $DIR" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # any platform wheel of this version carries the same headers; ask for the local interpreter's
  if ! "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$tmp" "$PIN" >&2; then
    echo "cudnn_frontend_env: cannot fetch $PIN (no network?)" >&2
    exit 3
  fi
  whl=$(ls "$tmp"/*.whl | head -n1)
  rm -rf "$DIR.new"
  mkdir -p "$DIR.new"
  "$PY" - "$whl" "$DIR.new" <<'PYEOF'
import sys, zipfile, os
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if (n.startswith("include/") or n.rsplit("/", 1)[-1].startswith("LICENSE")) and not n.endswith("/"):
            dst = os.path.normpath(os.path.join(out, n))
            if not dst.startswith(os.path.abspath(out) + os.sep) and not dst.startswith(out + os.sep):
                sys.exit("unsafe path in wheel: " + n)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with z.open(n) as src, open(dst, "wb") as f:
                f.write(src.read())
PYEOF
  [ -f "$DIR.new/include/cudnn_frontend.h" ] || { echo "cudnn_frontend_env: no include/cudnn_frontend.h in $whl" >&2; exit 3; }
  echo "$PIN" > "$DIR.new/.instbench-pin"
  rm -rf "$DIR"
  mv "$DIR.new" "$DIR"
fi
echo "$PWD/$DIR/include"
