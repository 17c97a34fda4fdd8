#!/usr/bin/env bash
# Installs the S3 tests' stand-in for AWS, moto's server (PyPI moto[server], pinned), into a
# project-local venv: build-venv/moto (git-ignored).  Debian's python3 is used so the venv does not
# depend on a user's pyenv; --system-site-packages is NOT used, so moto's own botocore/flask pins
# cannot clash with Debian's python3-botocore that the signing tests use as their reference.
# Safe to re-run: does nothing when the pinned version is there.  Prints the venv's moto_server.
# Usage: scripts/ci/moto_env.sh [VENV_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."

MOTO_VERSION=5.2.5
VENV=${1:-build-venv/moto}
PY=/usr/bin/python3

have() { [ -x "$VENV/bin/moto_server" ] && "$VENV/bin/python" -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('moto') != '$MOTO_VERSION')" 2>/dev/null; }

if ! have; then
  echo "moto_env: installing moto[server]==$MOTO_VERSION into $VENV" >&2
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2
fi
echo "$VENV/bin/moto_server"
