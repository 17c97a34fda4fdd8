#!/usr/bin/env bash
# check_cuda12.sh [BUILD_DIR]: the CUDA module's host code still builds against CUDA 12.x.
# check_cuda12.sh --fetch [BUILD_DIR]: only download and unpack the wheels (scripts/test.sh does
# it while the release build compiles).
#
# The machines that build instbench have CUDA 13, but many GPU instances (older AMIs, drivers)
# run CUDA 12.  PyPI's nvidia-cuda-runtime-cu12, nvidia-cublas-cu12 and nvidia-nccl-cu12 wheels
# carry the CUDA 12.9 headers and libraries; this downloads them (pinned, cached under
# BUILD_DIR/cuda12-wheels, default build/), compiles src/cuda/*.c with the host compiler against
# those headers and links the objects against those libraries with -z defs, so any CUDA-13-only
# type, enumerator, macro or function (a missing declaration is an error: -Werror=implicit-function-
# declaration) or any library symbol CUDA 12.9 lacks fails loudly.
#
# What it cannot check: kernels/*.cu need nvcc, which the wheels lack.  Their launchers (cuk_*,
# declared in src/cuda/kernels.h) are the only symbols the C objects need from them; they are
# stubbed by name from the objects' own undefined symbols (nothing else is ignored: -z defs still
# rejects every other unresolved symbol, which --unresolved-symbols=ignore-in-object-files would
# not).  The cuDNN glue is checked as a compile only, its functions stubbed by name the same way
# (below).  The core helpers the module uses come from BUILD_DIR's util, model and comm libraries,
# as in the real module.  The result is never run.
#
# No network: prints a SKIP line and exits 0, except under CI (CI set and not "false"/"0"), where
# a check that silently did not run would read as a pass: it fails there, unless
# INSTBENCH_SKIP_CUDA12=1 says the CI machine is offline on purpose.
set -euo pipefail
cd "$(dirname "$0")/../.."
fetch_only=0
if [ "${1:-}" = --fetch ]; then fetch_only=1; shift; fi   # download and unpack the wheels, no more
build=${1:-build}
cache=$build/cuda12-wheels
pins=(nvidia-cuda-runtime-cu12==12.9.79 nvidia-cublas-cu12==12.9.1.4 nvidia-nccl-cu12==2.27.3)
cc=${CC:-cc}

skip() {
  if [ "${INSTBENCH_SKIP_CUDA12:-}" = 1 ] || [ -z "${CI:-}" ] || [ "${CI:-}" = false ] || [ "${CI:-}" = 0 ]; then
    echo "SKIP: check_cuda12: $* (the CUDA 12.9 compatibility check did not run)"
    exit 0
  fi
  echo "FAIL: check_cuda12: $* (CI is set: the CUDA 12.9 check must run; INSTBENCH_SKIP_CUDA12=1 skips it)" >&2
  exit 1
}

core=("$build/libinstbench_comm.a" "$build/libinstbench_model.a" "$build/libinstbench_util.a")
for a in "${core[@]}"; do
  [ "$fetch_only" = 1 ] || [ -f "$a" ] || { echo "FAIL: check_cuda12: no $a (build first)" >&2; exit 1; }
done

# ---- the wheels: download once, unpack once ----
mkdir -p "$cache"
root=$cache/root
stamp=$root/.pins
if [ "$(cat "$stamp" 2>/dev/null)" != "${pins[*]}" ]; then
  pip=$(command -v pip3 || command -v pip || true)
  [ -n "$pip" ] || skip "no pip to download the wheels"
  for p in "${pins[@]}"; do
    name=${p%%==*} ver=${p##*==}
    if ! ls "$cache/${name//-/_}-$ver-"*.whl >/dev/null 2>&1; then
      echo "check_cuda12: downloading $p"
      "$pip" download --no-deps --only-binary=:all: --disable-pip-version-check -q -d "$cache" "$p" ||
        skip "cannot download $p (no network?)"
    fi
  done
  rm -rf "$root"
  mkdir -p "$root"
  for p in "${pins[@]}"; do
    name=${p%%==*} ver=${p##*==}
    unzip -q -o "$cache/${name//-/_}-$ver-"*.whl 'nvidia/*' -d "$root"
  done
  echo "${pins[*]}" > "$stamp"
fi
[ "$fetch_only" = 0 ] || exit 0
nv=$root/nvidia
inc=(-I"$nv/cuda_runtime/include" -I"$nv/cublas/include" -I"$nv/nccl/include")
libs=(-L"$nv/cuda_runtime/lib" -L"$nv/cublas/lib" -L"$nv/nccl/lib"
      -l:libcudart.so.12 -l:libcublasLt.so.12 -l:libcublas.so.12 -l:libnccl.so.2)

work=$cache/work
rm -rf "$work"
mkdir -p "$work/private"
# the CUDA module's private headers as CMake gives them to it (build/private/cuda/cuda -> src/cuda)
ln -s "$PWD/src/cuda" "$work/private/cuda"

# ---- the headers really are CUDA 12 (not the system's CUDA 13 through a default path) ----
cat > "$work/version.c" <<'C'
#include <cuda_runtime_api.h>
#include <cublasLt.h>
#include <nccl.h>
#if CUDART_VERSION < 12090 || CUDART_VERSION >= 13000
#error "cuda_runtime_api.h is not CUDA 12.9"
#endif
#if CUBLAS_VER_MAJOR != 12
#error "cublasLt.h is not CUDA 12"
#endif
int check_cuda12_versions;
C
"$cc" -c "${inc[@]}" "$work/version.c" -o "$work/version.o"

# ---- the cuDNN glue (the module's one C++ file) against the same CUDA 12.9 headers, with the
# cudnn-frontend headers the build fetched and the system's cudnn.h (its API is CUDA-version free).
# -fsyntax-only: every template it uses is instantiated and checked, no code is generated (37 s of
# one core against 71 s for an -O0 object), in the background while the C sources compile on the
# other.  Its CUDA runtime calls (cudaGetDevice, cudaGetLastError) are the C sources' too, which
# link below; its own functions (cudnn_sdpa_*) are stubbed there by name, as the launchers are.
fe=$(scripts/ci/cudnn_frontend_env.sh 2>/dev/null || true)
cudnn_h=
for d in /usr/local/cuda/include /usr/include /usr/include/x86_64-linux-gnu; do [ -f "$d/cudnn.h" ] && { cudnn_h=$d; break; }; done
cxx=${CXX:-c++}
glue_pid=
if [ -n "$fe" ] && [ -f "$fe/cudnn_frontend.h" ] && [ -n "$cudnn_h" ]; then
  # CUDA 12.9's headers first: cudnn.h's own #include <cuda_runtime_api.h> must find them, not 13's
  "$cxx" -std=c++17 -fsyntax-only -fvisibility=hidden -DNV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING=1 -Iinclude \
      -I"$work/private" "${inc[@]}" -isystem "$fe" -idirafter "$cudnn_h" src/cuda/cudnn_sdpa.cpp &
  glue_pid=$!
  trap 'kill "$glue_pid" 2>/dev/null || true' EXIT   # a C source that fails ends it too
else
  echo "check_cuda12: no cudnn-frontend or cudnn.h here: src/cuda/cudnn_sdpa.cpp not checked"
fi

# ---- compile the module's C sources as CMake does, with declarations enforced ----
flags=(-std=gnu11 -O1 -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare
       -Werror=implicit-function-declaration -Werror=int-conversion -Werror=incompatible-pointer-types
       -Werror=missing-field-initializers -DINSTBENCH_HAVE_CUDA=1 -DINSTBENCH_HAVE_NCCL=1
       -Iinclude -I"$work/private" "${inc[@]}")
objs=()
for src in src/cuda/*.c; do
  obj=$work/$(basename "${src%.c}").o
  "$cc" "${flags[@]}" -c "$src" -o "$obj" || { echo "FAIL: check_cuda12: $src does not compile against CUDA 12.9" >&2; exit 1; }
  objs+=("$obj")
done

glue=""
if [ -n "$glue_pid" ]; then
  glue_rc=0
  wait "$glue_pid" || glue_rc=$?
  trap - EXIT   # reaped: its pid is no longer ours to kill
  [ "$glue_rc" = 0 ] || { echo "FAIL: check_cuda12: src/cuda/cudnn_sdpa.cpp does not compile against CUDA 12.9" >&2; exit 1; }
  glue=" and src/cuda/cudnn_sdpa.cpp compiles against them (-fsyntax-only)"
fi

# ---- stubs for the nvcc-built kernel launchers and the glue's functions, by name ----
defined=$(nm --defined-only "${objs[@]}" | awk 'NF == 3 {print $3}' | sort -u)
undefined=$(nm -u "${objs[@]}" | awk '{print $2}' | sort -u | comm -23 - <(echo "$defined"))
launchers=$(grep '^cuk_' <<<"$undefined" || true)
for f in $launchers $(grep '^cudnn_sdpa_' <<<"$undefined" || true); do echo "int $f(void) { return 0; }"; done \
  > "$work/launchers.c"
"$cc" -fPIC -c "$work/launchers.c" -o "$work/launchers.o"

# ---- link against the CUDA 12.9 libraries; every other symbol must resolve ----
if ! "$cc" -shared -o "$work/libinstbench-cuda12.so" "${objs[@]}" "$work/launchers.o" \
     -Wl,-z,defs -Wl,--version-script=src/cuda/module.map \
     "${core[@]}" "${libs[@]}" -lm -lpthread 2> "$work/link.log"; then
  cat "$work/link.log" >&2
  echo "FAIL: check_cuda12: the module's host code does not link against the CUDA 12.9 libraries" \
       "(a CUDA-13-only symbol?)" >&2
  exit 1
fi
n=$(echo "$launchers" | wc -w)
echo "check_cuda12: ok: ${#objs[@]} sources of src/cuda compile against CUDA 12.9 headers and link against" \
     "libcudart.so.12, libcublasLt.so.12, libcublas.so.12, libnccl.so.2 ($n kernel launchers stubbed)$glue"
