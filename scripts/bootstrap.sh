#!/usr/bin/env bash
# Installs every build and test dependency on a fresh Debian (12) machine, then builds build/.
# Safe to re-run: installs only what is missing.  Usage: scripts/bootstrap.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake pkg-config git
  libcurl4-openssl-dev libcjson-dev libssl-dev libexpat1-dev libdnnl-dev zlib1g-dev
  python3 python3-pip python3-venv python3-torch python3-torchvision python3-botocore python3-jsonschema
  awscli librsvg2-bin clang libclang-rt-14-dev
  jq python3-pandas python3-openpyxl libreoffice-calc-nogui
  slurmctld slurmd slurm-client munge
)
# jq, pandas, openpyxl and LibreOffice Calc (headless) are the independent readers of the JSON and
# CSV that `rank` and `prices` write: the tests feed them the output as a user would.
# Slurm (slurmctld, slurmd, srun) and munge: tests/measure/measure_slurm.py starts a real one-node
# cluster on loopback and runs measure under srun; nothing is enabled as a service.
# timm comes from PyPI without its dependencies (torch/torchvision are Debian's).
PIP_PACKAGES=(timm==0.9.16)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
if ! /usr/bin/python3 -c "import timm" 2>/dev/null; then
  echo "bootstrap: installing ${PIP_PACKAGES[*]} (no deps) for /usr/bin/python3" >&2
  $SUDO /usr/bin/python3 -m pip install -q --no-deps --break-system-packages "${PIP_PACKAGES[@]}" >&2
fi

# moto's server, the S3 the S3 tests talk to, pinned in its own venv (build-venv/moto).
scripts/moto_env.sh >/dev/null

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build build -j"$(nproc)" >&2
fi
