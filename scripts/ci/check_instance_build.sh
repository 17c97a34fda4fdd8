#!/usr/bin/env bash
# check_instance_build.sh [WORK_DIR]: the source builds the way a sweep instance builds it
# (src/sweep/userdata.sh), as far as this Debian machine can show it (Ubuntu cannot run here):
#   jammy     gcc-11 (Ubuntu 22.04's GCC generation; Debian's gcc-11 package) and CMake 3.22.1
#             (what Ubuntu 22.04's apt installs on the AMI), with oneDNN (2.x), CPU-only;
#             then `instbench --version`, a one-step measure on the CPU backend, and verify
#             against two of the timm fixtures (tests/data/ref_*.safetensors).
#   no-onednn the same compiler and CMake with INSTBENCH_ONEDNN=OFF, as on an AMI whose oneDNN is
#             not 2.x (Ubuntu 24.04 ships 3.1): the CUDA backend when nvcc is here (one
#             architecture, CMAKE_CUDA_ARCHITECTURES, default 80, to keep it short), the CPU
#             backend reporting itself not built and `measure --backend cpu` refused.
#   minimum   CMake 3.18, the cmake_minimum_required of CMakeLists.txt: configure and pack the
#             source archive (the build's steps are the same generator's).
# Each builds from the source archive the default build packs (what an instance gets), with
# INSTBENCH_TESTS=OFF as the instance does, and ccache when there is one.  CMake 3.22.1 and 3.18.4
# come from PyPI (pip's `cmake` wheels) into WORK_DIR/cmake-<version>/ (default build/instance-check/).
# Needs: gcc-11 (apt-get install gcc-11; g++-11 too where nvcc is, its host compiler), python3 -m venv, PyPI, this tree configured in build/
# (the archive is packed there first), -j2 at most (CMAKE_BUILD_PARALLEL_LEVEL, default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
work=$(realpath -m "${1:-build/instance-check}")
mkdir -p "$work"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
archive=build/instbench-src.tar.gz

fail() { echo "FAIL: check_instance_build: $*" >&2; exit 1; }
command -v gcc-11 >/dev/null || fail "gcc-11 is missing (apt-get install gcc-11)"
[ -f build/CMakeCache.txt ] || fail "configure this tree in build/ first (the archive is packed there)"
cmake --build build --target instbench_source_archive >/dev/null || fail "packing $archive failed"

# cmake_for VERSION: the path of that CMake, installed from PyPI into its own venv once.
cmake_for() {
  local v=$1 venv=$work/cmake-$1
  if [ ! -x "$venv/bin/cmake" ]; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "cmake==$v" >&2 || fail "pip install cmake==$v failed"
  fi
  echo "$venv/bin/cmake"
}

# unpack NAME: a fresh copy of the archive's tree in $work/NAME/src; prints that dir.
unpack() {
  rm -rf "$work/$1"
  mkdir -p "$work/$1/src"
  tar -xzf "$archive" -C "$work/$1/src"
  echo "$work/$1/src"
}

launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
tiny=(--backend cpu --model vit_tiny_patch16_224 --depth 2 --image-size 32 --patch-size 8 --embed-dim 64
      --heads 2 --classes 10 --batch-size 4 --steps 1 --warmup 0)

echo "== jammy: gcc-11, CMake 3.22.1, oneDNN, CPU-only"
cm=$(cmake_for 3.22.1)
src=$(unpack jammy)
CC=gcc-11 "$cm" -S "$src" -B "$work/jammy/build" -DCMAKE_BUILD_TYPE=Release -DINSTBENCH_TESTS=OFF \
  -DINSTBENCH_CUDA=OFF -DINSTBENCH_ONEDNN=ON "${launcher[@]}" >"$work/jammy/configure.log" 2>&1 ||
  { tail -30 "$work/jammy/configure.log"; fail "jammy: configure failed"; }
"$cm" --build "$work/jammy/build" >"$work/jammy/build.log" 2>&1 ||
  { grep -E "error|Error" "$work/jammy/build.log" | head -30; fail "jammy: build failed"; }
grep -q "The C compiler identification is GNU 11" "$work/jammy/configure.log" || fail "jammy: not built with GCC 11"
grep -E "warning:" "$work/jammy/build.log" | sort -u | sed 's/^/  gcc-11 /' || true
"$work/jammy/build/instbench" --version
(cd "$work/jammy" && AWS_EC2_METADATA_DISABLED=true build/instbench measure "${tiny[@]}" --output r.json >/dev/null 2>&1) ||
  fail "jammy: a one-step measure failed"
# GCC 11's kernels are other clones (src/cpu/simd.h): the timm fixtures still pass
for ref in a_adam_fp32 b_adamw_bf16; do
  "$work/jammy/build/instbench" verify --reference "tests/data/ref_$ref.safetensors" --format table 2>&1 | grep -q "PASS: " ||
    fail "jammy: verify --reference ref_$ref does not pass"
done
echo "ok: jammy"

echo "== no-onednn: gcc-11, CMake 3.22.1, INSTBENCH_ONEDNN=OFF"
src=$(unpack noonednn)
cuda=(-DINSTBENCH_CUDA=OFF)
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
if [ -n "$nvcc" ]; then
  cuda=(-DINSTBENCH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_HOST_COMPILER=g++-11
        -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-80}")
  echo "   with CUDA: $nvcc"
else
  echo "   no nvcc here: the CUDA backend is not part of this check"
fi
CC=gcc-11 "$cm" -S "$src" -B "$work/noonednn/build" -DCMAKE_BUILD_TYPE=Release -DINSTBENCH_TESTS=OFF \
  -DINSTBENCH_ONEDNN=OFF "${cuda[@]}" "${launcher[@]}" >"$work/noonednn/configure.log" 2>&1 ||
  { tail -30 "$work/noonednn/configure.log"; fail "no-onednn: configure failed"; }
"$cm" --build "$work/noonednn/build" >"$work/noonednn/build.log" 2>&1 ||
  { grep -E "error|Error" "$work/noonednn/build.log" | head -30; fail "no-onednn: build failed"; }
bin=$work/noonednn/build/instbench
! nm -D --undefined-only "$bin" | grep -q dnnl || fail "no-onednn: the executable still needs libdnnl"
"$bin" --version | tee "$work/noonednn/version.txt"
grep -q "cpu: not in this build: built without oneDNN" "$work/noonednn/version.txt" || fail "no-onednn: --version does not say so"
set +e
out=$(cd "$work/noonednn" && AWS_EC2_METADATA_DISABLED=true "$bin" measure "${tiny[@]}" --output r.json 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] && [[ $out == *"oneDNN"* ]] || fail "no-onednn: measure --backend cpu was not refused naming oneDNN (exit $rc: $out)"
echo "   measure --backend cpu: exit $rc: $out"
if [ -n "$nvcc" ]; then
  [ -f "$work/noonednn/build/libinstbench-cuda.so" ] || fail "no-onednn: no CUDA module built"
fi
echo "ok: no-onednn"

echo "== minimum: CMake 3.18.4 (cmake_minimum_required), configure and pack"
cm=$(cmake_for 3.18.4.post1)
src=$(unpack minimum)
CC=gcc-11 "$cm" -S "$src" -B "$work/minimum/build" -DCMAKE_BUILD_TYPE=Release -DINSTBENCH_TESTS=OFF \
  -DINSTBENCH_CUDA=OFF "${launcher[@]}" >"$work/minimum/configure.log" 2>&1 ||
  { tail -30 "$work/minimum/configure.log"; fail "minimum: configure with CMake 3.18 failed"; }
"$cm" --build "$work/minimum/build" --target instbench_source_archive >"$work/minimum/build.log" 2>&1 ||
  { tail -30 "$work/minimum/build.log"; fail "minimum: packing with CMake 3.18 failed"; }
cmp -s "$work/minimum/build/instbench-src.tar.gz" "$archive" ||
  fail "minimum: the archive packed from the archive's own tree differs from the original"
echo "ok: minimum"
echo "PASS: check_instance_build ($root)"
