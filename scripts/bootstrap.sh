#!/usr/bin/env bash
# Installs what building and running instbench need on a fresh Debian (12) machine, then builds
# build/.  Safe to re-run: installs only what is missing.
# Usage: scripts/bootstrap.sh [--no-build] [--prefix DIR] [--test-deps] [--build-cache] [--list]
#   --prefix DIR  also install it: cmake --install build --prefix DIR (DIR/bin/instbench, with the
#                 CUDA module and the source archive sweep uploads beside it); put DIR/bin on PATH
#   --test-deps   also what the test suite needs (scripts/test.sh passes it): see TEST_APT_PACKAGES
#   --build-cache also ccache (BUILD_CACHE_PACKAGES; --test-deps includes it)
#   --list        print the Debian packages these flags need, one a line, and exit
set -euo pipefail
cd "$(dirname "$0")/.."

# Building (compiler, CMake, the libraries instbench links) and running (CA certificates for
# HTTPS to AWS; python3: CMake's test tree and scripts/quickstart_rank.py; pip: where nvcc is
# found, the configure step fetches cudnn-frontend's headers with it, cmake/cudnn_frontend.cmake).
APT_PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  libcurl4-openssl-dev libcjson-dev libssl-dev libexpat1-dev libdnnl-dev zlib1g-dev
  python3 python3-pip
)
# The tests' independent references, installed only with --test-deps:
# - torch/torchvision (+ timm from PyPI, without its dependencies) make the reference files;
#   botocore and awscli are the AWS references, jsonschema checks the schemas;
# - jq, pandas, openpyxl and LibreOffice Calc (headless) read the JSON and CSV that `rank` and
#   `prices` write, as a user would; rsvg-convert renders the SVG;
# - clang with its runtime builds the libFuzzer targets; clang-format checks the one style;
# - Slurm (slurmctld, slurmd, srun) and munge: tests/measure/measure_slurm.py starts a real
#   one-node cluster on loopback; no service is left enabled or running (apt_install below);
# - locales: the German locale's source, from which tests/cli/cli_locale.py builds a decimal-comma
#   locale with localedef (no system locale is generated or changed).
TEST_APT_PACKAGES=(
  python3-venv python3-torch python3-torchvision python3-botocore python3-jsonschema
  awscli librsvg2-bin clang libclang-rt-14-dev clang-format
  jq python3-pandas python3-openpyxl libreoffice-calc-nogui
  slurmctld slurmd slurm-client munge locales
)
# ccache: scripts/test.sh installs it before its first build, through which the suite's builds (the
# release build, the mutation check's copy, the build from the source archive) share their objects.
BUILD_CACHE_PACKAGES=(ccache)
# The daemons of TEST_APT_PACKAGES: the tests start their own; none may run as a service.
TEST_DAEMON_UNITS=(slurmctld.service slurmd.service munge.service)
PIP_PACKAGES=(timm==0.9.16)

build=1 prefix="" test_deps=0 build_cache=0 list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --prefix) [ $# -ge 2 ] && [ -n "$2" ] || { echo "bootstrap: --prefix needs a directory" >&2; exit 2; }
              prefix=$2; shift ;;
    --prefix=*) prefix=${1#--prefix=}; [ -n "$prefix" ] || { echo "bootstrap: --prefix needs a directory" >&2; exit 2; } ;;
    --test-deps) test_deps=1 ;;
    --build-cache) build_cache=1 ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bootstrap: unknown option '$1' (see scripts/bootstrap.sh --help)" >&2; exit 2 ;;
  esac
  shift
done
wanted=("${APT_PACKAGES[@]}")
[ "$test_deps" = 1 ] && wanted+=("${TEST_APT_PACKAGES[@]}")
if [ "$test_deps" = 1 ] || [ "$build_cache" = 1 ]; then wanted+=("${BUILD_CACHE_PACKAGES[@]}"); fi
if [ "$list" = 1 ]; then printf '%s\n' "${wanted[@]}"; exit 0; fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Installs the packages named with no service started meanwhile, and leaves none of their units
# enabled: a policy-rc.d that refuses every start while apt runs (invoke-rc.d and
# deb-systemd-invoke ask it), removed after; the units the packages ship disabled after (package
# scripts enable them whatever policy-rc.d says).  An existing policy-rc.d is the machine's: kept.
POLICY=${INSTBENCH_TEST_POLICY_RC_D:-/usr/sbin/policy-rc.d}   # the variable: tests/bootstrap only
policy_ours=0
remove_policy() { if [ "$policy_ours" = 1 ]; then $SUDO rm -f "$POLICY"; policy_ours=0; fi; }
trap remove_policy EXIT
apt_install() {
  if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\n# written by instbench scripts/bootstrap.sh while it installs packages: no service starts\nexit 101\n' |
      $SUDO tee "$POLICY" >/dev/null
    $SUDO chmod 755 "$POLICY"
    policy_ours=1
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >&2
  remove_policy
  local units
  units=$(dpkg -L "$@" 2>/dev/null | sed -n 's#^/\(usr/\)\{0,1\}lib/systemd/system/\([^/]*\.\(service\|socket\|timer\)\)$#\2#p' | sort -u)
  for u in $units; do disable_unit "$u"; done
}
# A unit an install enabled: disabled (and stopped, where systemd runs).  One that runs a service
# someone configured here (active under a running systemd, and not just started by this install)
# is left alone, with a note.
disable_unit() {
  command -v systemctl >/dev/null 2>&1 || return 0
  if [ -d /run/systemd/system ] && [ "${2:-}" = keep-active ] && systemctl is-active --quiet "$1"; then
    echo "bootstrap: $1 runs as a service here (not started by this script): left as it is" >&2
    return 0
  fi
  case "$(systemctl is-enabled "$1" 2>/dev/null || true)" in
    enabled|enabled-runtime) $SUDO systemctl disable --quiet "$1" 2>/dev/null || $SUDO systemctl disable "$1" >/dev/null 2>&1 || true ;;
  esac
  if [ -d /run/systemd/system ]; then $SUDO systemctl stop "$1" >/dev/null 2>&1 || true; fi
}

missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  apt_install "${missing[@]}"
fi

if [ "$test_deps" = 1 ]; then
  # An earlier install (this script before it disabled them) may have left the test daemons
  # enabled: disabled too, unless one runs as a configured service.
  for u in "${TEST_DAEMON_UNITS[@]}"; do disable_unit "$u" keep-active; done
  if ! /usr/bin/python3 -c "import timm" 2>/dev/null; then
    echo "bootstrap: installing ${PIP_PACKAGES[*]} (no deps) for /usr/bin/python3" >&2
    $SUDO /usr/bin/python3 -m pip install -q --no-deps --break-system-packages "${PIP_PACKAGES[@]}" >&2
  fi
  # moto's server, the S3 the S3 tests talk to, pinned in its own venv (build-venv/moto).
  scripts/ci/moto_env.sh >/dev/null
fi

if [ "$build" = 1 ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build build -j"$(nproc)" >&2
  if [ -n "$prefix" ]; then
    cmake --install build --prefix "$prefix" >&2
    echo "bootstrap: installed $prefix/bin/instbench (add $prefix/bin to PATH, or run build/instbench)" >&2
  fi
elif [ -n "$prefix" ]; then
  echo "bootstrap: --prefix with --no-build: nothing built to install" >&2
  exit 2
fi
