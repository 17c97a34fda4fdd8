#!/usr/bin/env bash
# check_aarch64.sh [BUILD_DIR]: instbench built for 64-bit Arm (Graviton, Grace hosts) and its CPU
# tests run there, from an x86-64 Debian machine: Debian's cross compiler (gcc-aarch64-linux-gnu),
# the arm64 builds of its libraries (multiarch: dpkg --add-architecture arm64), and qemu-user to
# run the test programs (ctest puts the emulator before each: cmake/aarch64-linux-gnu.cmake).
# CUDA off (no aarch64 CUDA toolkit here; scripts/gpu/gpu_bundle.sh --arch aarch64 is the GPU side).
# BUILD_DIR defaults to build-aarch64.
#
# What runs: every test that is a test program of its own (ctest runs it under qemu-aarch64): the
# unit tests of util, aws (SigV4 suite), prices and rank parsers, output, comm, the CPU engine
# (gradient check, data-parallel, GEMMs, planner), measure's runner and rendezvous, sweep's
# planner, verify.  Left out, and why:
#   - engine_learn: 30 training steps of the CPU engine, over 5 minutes under qemu (the gradient
#     check and engine_dp cover the same kernels);
#   - engine_*_avx2: the same programs with oneDNN capped at x86's AVX2, which means nothing on Arm;
#   - measure_job_procs: it starts copies of itself (execve of /proc/self/exe, which qemu-user
#     does not run without binfmt_misc) and finds them by /proc/PID/exe, which under qemu names
#     the emulator; its /proc reading is the same C on every architecture;
#   - the Python-driven tests (CLI, moto, fake AWS, sweep end to end): they start the aarch64
#     programs themselves, which needs qemu registered in binfmt_misc, and a container or CI
#     machine cannot count on that.
# It also checks that the binary is an AArch64 one, that `instbench --version` under qemu names an
# Arm ISA (no x86 name: src/bench/sysinfo.c detects, never assumes), and that the CUDA module's host
# code (src/cuda/*.c) cross-compiles for aarch64 where CUDA's headers are (the GPU bundle's side).
#
# Packages: installs what is missing when it can (root and apt-get).  Where they truly cannot be
# had (no apt-get, not root, no arm64 packages in the configured sources) it prints SKIP and exits
# 0, except under CI (CI set and not "false"/"0"), where a check that did not run would read as a
# pass: it fails there, unless INSTBENCH_SKIP_AARCH64=1 says so on purpose.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${1:-build-aarch64}
triplet=aarch64-linux-gnu
libdir=/usr/lib/$triplet

skip() {
  if [ "${INSTBENCH_SKIP_AARCH64:-}" = 1 ] || [ -z "${CI:-}" ] || [ "${CI:-}" = false ] || [ "${CI:-}" = 0 ]; then
    echo "SKIP: check_aarch64: $* (the aarch64 build and tests did not run)"
    exit 0
  fi
  echo "FAIL: check_aarch64: $* (CI is set: the aarch64 check must run; INSTBENCH_SKIP_AARCH64=1 skips it)" >&2
  exit 1
}
fail() { echo "FAIL: check_aarch64: $*" >&2; exit 1; }

case "$(uname -m)" in
  aarch64|arm64) echo "check_aarch64: this machine is aarch64: the main suite (scripts/test.sh) is the aarch64 suite"; exit 0 ;;
esac

# ---- packages: the cross compiler, qemu-user, the arm64 libraries ----
# libdnnl-dev:arm64 cannot be installed beside the amd64 one (both ship a different
# /usr/include/oneapi/dnnl/dnnl_config.h): its runtime libdnnl2:arm64 is installed, its headers
# are unpacked into the build tree below.
pkgs=(gcc-$triplet qemu-user libcurl4-openssl-dev:arm64 libcjson-dev:arm64 libssl-dev:arm64 libexpat1-dev:arm64
      zlib1g-dev:arm64 libdnnl2:arm64 libgomp1:arm64)
have_all() {
  command -v $triplet-gcc >/dev/null && { command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null; } &&
    for f in libcurl.so libcjson.so libssl.so libexpat.so libz.so libdnnl.so.2 libgomp.so.1; do
      [ -e "$libdir/$f" ] || return 1
    done
}
if ! have_all; then
  command -v apt-get >/dev/null 2>&1 || skip "no apt-get to install ${pkgs[*]}"
  [ "$(id -u)" = 0 ] || skip "not root: cannot install ${pkgs[*]}"
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  echo "check_aarch64: installing ${pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq || skip "apt-get update failed (no arm64 packages in the sources?)"
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null ||
    skip "cannot install ${pkgs[*]}"
  have_all || fail "installed ${pkgs[*]}, yet the compiler, qemu or a library in $libdir is missing"
fi
qemu=$(command -v qemu-aarch64 || command -v qemu-aarch64-static)

mkdir -p "$build"
build=$(cd "$build" && pwd)
dnnl=$build/arm64-dnnl
ver=$(dpkg-query -W -f '${Version}' libdnnl2:arm64 2>/dev/null || true)
if [ "$(cat "$dnnl/.version" 2>/dev/null)" != "$ver" ] || [ ! -f "$dnnl/usr/include/oneapi/dnnl/dnnl.h" ]; then
  rm -rf "$dnnl" "$build/debs"
  mkdir -p "$build/debs"
  # apt's _apt user cannot write a root-owned build tree: the download lands in a temporary directory
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  (cd "$tmp" && apt-get download -qq "libdnnl-dev:arm64=$ver" 2>/dev/null) ||
    { rm -rf "$tmp"; skip "cannot download libdnnl-dev:arm64 $ver"; }
  mv "$tmp"/*.deb "$build/debs/" && rm -rf "$tmp"
  dpkg-deb -x "$build"/debs/libdnnl-dev_*_arm64.deb "$dnnl"
  echo "$ver" > "$dnnl/.version"
fi

# ---- configure and build (CUDA off) ----
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Release \
      -DINSTBENCH_CUDA=OFF -DINSTBENCH_ONEDNN=ON -DDNNL_INCLUDE_DIR="$dnnl/usr/include" \
      -DDNNL_LIBRARY="$libdir/libdnnl.so.2" "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" >/dev/null || { cmake --build "$build" -j1 2>&1 | tail -40; fail "the aarch64 build failed"; }

# ---- the binary is Arm's, and says so ----
readelf -h "$build/instbench" | grep -q 'Machine:.*AArch64' || fail "$build/instbench is not an AArch64 executable"
version=$("$qemu" "$build/instbench" --version) || fail "instbench --version under $qemu failed"
echo "$version" | sed 's/^/check_aarch64: /'
isa=$(echo "$version" | sed -n 's/^cpu: oneDNN [^,]*, CPU ISA \([^ ,]*\).*/\1/p')
case "$isa" in
  sve*|asimd|armv8) ;;
  *) fail "instbench --version on aarch64 names the CPU ISA '$isa', not an Arm one" ;;
esac

# ---- the tests ctest runs under the emulator, less those left out above ----
tests=$(cd "$build" && ctest --show-only=json-v1 | python3 -c '
import json, os, re, sys
skip = re.compile(r"^(engine_learn|engine_.*_avx2|measure_job_procs)$")
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or []
    if cmd and os.path.basename(cmd[0]).startswith("qemu-aarch64") and not skip.match(t["name"]):
        print(t["name"])')
n=$(echo "$tests" | grep -c . || true)
[ "$n" -ge 20 ] || fail "only $n test programs run under $qemu (expected the unit tests: is CMAKE_CROSSCOMPILING_EMULATOR set?)"
echo "check_aarch64: $n test programs under $(basename "$qemu")"
(cd "$build" && ctest -j "${JOBS:-$(nproc)}" --timeout 600 --output-on-failure -R "^($(echo "$tests" | paste -sd'|'))\$") ||
  fail "aarch64 tests failed"

# ---- the CUDA module's host code for aarch64 (scripts/gpu/gpu_bundle.sh --arch aarch64 builds the whole
# module where a toolkit has the sbsa-linux target; none here): src/cuda/*.c cross-compiled against
# this machine's CUDA headers (they are the same for every host architecture) with declarations
# enforced, as scripts/ci/check_cuda12.sh compiles them for x86-64.  The .cu kernels need nvcc. ----
cuda_inc=${CUDA_HOME:-/usr/local/cuda}/include
if [ -f "$cuda_inc/cuda_runtime_api.h" ] && [ -f "$cuda_inc/cublasLt.h" ]; then
  work=$build/cuda-host
  rm -rf "$work" && mkdir -p "$work/private"
  ln -s "$root/src/cuda" "$work/private/cuda"
  flags=(-std=gnu11 -O1 -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare
         -Werror=implicit-function-declaration -Werror=int-conversion -Werror=incompatible-pointer-types
         -DINSTBENCH_HAVE_CUDA=1 -Iinclude -I"$work/private" -I"$cuda_inc")
  [ -f "$cuda_inc/nccl.h" ] && flags+=(-DINSTBENCH_HAVE_NCCL=1)
  n=0
  for src in src/cuda/*.c; do
    $triplet-gcc "${flags[@]}" -c "$src" -o "$work/$(basename "${src%.c}").o" ||
      fail "$src does not cross-compile for aarch64 against $cuda_inc"
    n=$((n + 1))
  done
  readelf -h "$work/$(basename "${src%.c}").o" | grep -q 'Machine:.*AArch64' || fail "the CUDA host objects are not AArch64"
  echo "check_aarch64: ok: $n sources of src/cuda cross-compile for aarch64 against $cuda_inc"
else
  echo "check_aarch64: no CUDA headers in $cuda_inc: the CUDA module's host code was not cross-compiled"
fi
