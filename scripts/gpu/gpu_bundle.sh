#!/usr/bin/env bash
# gpu_bundle.sh [--arch x86_64|aarch64] [--build-dir DIR] [--no-build] [--baseline REV] [OUTDIR]: one folder that runs scripts/gpu/gpu_check.sh on
# a GPU machine which has the NVIDIA driver and CUDA's libraries (as Python wheels, or a toolkit)
# but no package registry and none of oneDNN, cJSON, libcurl or expat (issue 25).
#
# It builds here (CUDA on, Release, into build-gpu unless --build-dir; --no-build packs that build
# as it is) and copies into OUTDIR (default build-gpu-bundle/, replaced).  --arch aarch64 (Grace,
# Graviton GPU hosts: p6e-gb200, g5g) builds for 64-bit Arm: natively on such a host, or from
# x86-64 with cmake/aarch64-linux-gnu.cmake (Debian's cross compilers and arm64 libraries, as
# scripts/ci/check_aarch64.sh installs them) and a CUDA toolkit that has the sbsa-linux target (NVIDIA's
# cuda-cross-sbsa); into build-gpu-aarch64 and build-gpu-bundle-aarch64/ by default.  The libraries
# are then listed by the arm64 loader under qemu-aarch64 (ldd cannot run a foreign binary).
# scripts/ci/check_aarch64.sh checks that the CUDA module's host code cross-compiles for aarch64.
# The folder:
#   bin/      instbench, libinstbench-cuda.so beside it (where the loader looks), and
#             cuda_dp_module when the build has it (gpu_check's dp_equal step, two GPUs);
#             bin/cuda12/libinstbench-cuda.so, the module built with a CUDA 12 toolkit, where
#             CUDA12_HOME names one (for sm_90 only, GPU_CUDA12_ARCH to change: gpu_check's
#             sanitize12 step runs compute-sanitizer's memcheck on it with cuDNN attention, issue 37);
#             with --baseline REV, bin/baseline/ holds the instbench and module of commit REV (built
#             from `git archive REV`, REV in its REVISION file, into build-gpu-baseline, for sm_90
#             only, GPU_BASELINE_ARCH to change) and baseline/REVISION says which: gpu_session.sh
#             then runs the two side by side in the same call (scripts/bench/bench_gpu_ab.sh), so a
#             change to the step is measured against what ran before it, not another day's GPU figure
#   lib/      every shared library those need that is neither glibc's nor CUDA's (cudart, cuBLAS,
#             cuBLASLt and NCCL come from the GPU machine: the module must match its driver)
#   scripts/  gpu/gpu_check.sh and the scripts its steps call, in their folders; tests/data/ the timm fixtures;
#   configs/  the GPU peaks (MFU)
#   run       the runner: LD_LIBRARY_PATH = lib/ + every site-packages/nvidia/*/lib of the
#             python3 on PATH + /usr/local/cuda's lib dirs, then
#               ./run            scripts/gpu/gpu_check.sh --bin bin/instbench (args after "check" pass on)
#               ./run session ARGS  scripts/gpu/gpu_session.sh: gpu_check's steps in phases under
#                                a deadline, packed as a device call returns them (one lent GPU call)
#               ./run instbench ARGS   the bundled binary
#               ./run libs       where every library of the binary and the module resolves
#               ./run CMD ARGS   any other command in that environment
# It also writes build-gpu-carry/bundle.tgz beside OUTDIR, the folder compressed (about 22 MiB): a GPU session
# carries the repository's tracked files (about 7 MiB) with what it names, 64 MiB in all, and the
# folder alone is about 63 MiB, so the archive is what travels (carry build-gpu-carry, then
# `tar xzf build-gpu-carry/bundle.tgz && build-gpu-bundle/run` there).  The archive plus the tracked
# files are checked to stay under that budget.  Nothing in the folder needs a network or a compiler.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=
do_build=1
baseline=
out=
arch=$(uname -m)
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
    --build-dir) build=$(cd "$2" 2>/dev/null && pwd) || { echo "gpu_bundle: no directory $2" >&2; exit 2; }; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --baseline) baseline=${2:-}; [ -n "$baseline" ] || { echo "gpu_bundle: --baseline takes a revision" >&2; exit 2; }; shift 2 ;;
    -h|--help) sed -n '2,41p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gpu_bundle: unknown option '$1'" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
case "$arch" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) echo "gpu_bundle: --arch x86_64 or aarch64, not '$arch'" >&2; exit 2 ;;
esac
suffix=
[ "$arch" = x86_64 ] || suffix=-$arch
build=${build:-$root/build-gpu$suffix}
out=${out:-$root/build-gpu-bundle$suffix}
limit_mib=64
cross=()       # the cmake flags of a cross build, empty for this machine's own architecture
ldd_of=(ldd)   # how the libraries of a bundled program are listed
cc=cc
if [ "$arch" != "$(uname -m)" ]; then
  [ "$arch" = aarch64 ] || { echo "gpu_bundle: cross builds are for aarch64 from x86_64 only" >&2; exit 2; }
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 ||
    { echo "gpu_bundle: no aarch64-linux-gnu-gcc: scripts/ci/check_aarch64.sh installs the cross toolchain" >&2; exit 1; }
  qemu=$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)
  [ -n "$qemu" ] || { echo "gpu_bundle: no qemu-aarch64 to list an aarch64 binary's libraries" >&2; exit 1; }
  # the arm64 loader lists what it would load when LD_TRACE_LOADED_OBJECTS is set (what ldd does);
  # -E sets it for the guest alone (in the environment, the host's loader would list qemu's own)
  ldd_of=("$qemu" -E LD_TRACE_LOADED_OBJECTS=1)
  cc=aarch64-linux-gnu-gcc
  cross=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" -DCMAKE_CUDA_HOST_COMPILER=aarch64-linux-gnu-g++)
fi

if [ $do_build = 1 ]; then
  command -v nvcc >/dev/null 2>&1 || { echo "gpu_bundle: no nvcc on PATH: the CUDA module cannot be built" >&2; exit 1; }
  if [ ${#cross[@]} -gt 0 ]; then
    sbsa=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")/targets/sbsa-linux
    [ -d "$sbsa/lib" ] || { echo "gpu_bundle: the CUDA toolkit has no aarch64 target ($sbsa): install NVIDIA's" \
                                 "cuda-cross-sbsa package, or run this on the aarch64 host itself" >&2; exit 1; }
    cross+=(-DCUDAToolkit_ROOT="$sbsa" "-DCMAKE_CUDA_FLAGS=--target-directory sbsa-linux")
  fi
  launcher=()   # ccache, where there is one: a rebuild for five architectures is slow
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$root" -B "$build" -DINSTBENCH_CUDA=ON -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${cross[@]}" >&2
  cmake --build "$build" -j "${JOBS:-2}" --target instbench instbench_cuda >&2
  # the two-GPU equality check is a test program: built when this configuration has it
  if grep -q '^cuda_dp_module:' "$build/Makefile" 2>/dev/null || [ -f "$build/build.ninja" ]; then
    cmake --build "$build" -j "${JOBS:-2}" --target cuda_dp_module >&2 || echo "gpu_bundle: no cuda_dp_module (dp_equal will SKIP)" >&2
  fi
fi
for f in instbench libinstbench-cuda.so; do
  [ -f "$build/$f" ] || { echo "gpu_bundle: no $build/$f (a CUDA build is needed)" >&2; exit 1; }
done
# --no-build packs what is there: it must be the architecture asked for
want=X86-64
[ "$arch" = aarch64 ] && want=AArch64
readelf -h "$build/instbench" 2>/dev/null | grep -q "Machine:.*$want" ||
  { echo "gpu_bundle: $build/instbench is not a $want executable (--arch $arch)" >&2; exit 1; }
# the module again with a CUDA 12 toolkit (PyTorch keeps cuDNN's SDPA off below CUDA 12.9 for a
# memcheck fault: gpu_check's sanitize12 step looks for it on such a build)
build12=${build}-cuda12
if [ $do_build = 1 ] && [ -n "${CUDA12_HOME:-}" ]; then
  [ -x "$CUDA12_HOME/bin/nvcc" ] || { echo "gpu_bundle: CUDA12_HOME=$CUDA12_HOME has no bin/nvcc" >&2; exit 1; }
  cmake -S "$root" -B "$build12" -DINSTBENCH_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DINSTBENCH_TESTS=OFF \
    -DCMAKE_CUDA_COMPILER="$CUDA12_HOME/bin/nvcc" -DCUDAToolkit_ROOT="$CUDA12_HOME" \
    -DCMAKE_CUDA_ARCHITECTURES="${GPU_CUDA12_ARCH:-90}" "${launcher[@]}" >&2
  cmake --build "$build12" -j "${JOBS:-2}" --target instbench_cuda >&2
fi

# the baseline of a same-call A/B: another commit's binary and module, built apart from this tree
if [ -n "$baseline" ]; then
  rev=$(git -C "$root" rev-parse --verify --quiet "$baseline^{commit}") ||
    { echo "gpu_bundle: --baseline $baseline is no commit of this repository" >&2; exit 2; }
  bsrc=${build}-baseline-src
  bbuild=${build}-baseline
  if [ $do_build = 1 ]; then
    # a tree already unpacked for this commit is kept, so a rebuild is incremental; its REVISION
    # says which commit it is, to this script and to the build (cmake/revision.cmake: a tree without
    # .git, inside this checkout, would otherwise report no revision)
    if [ "$(cat "$bsrc/REVISION" 2>/dev/null)" != "$rev" ]; then
      rm -rf "$bsrc" "$bbuild"
      mkdir -p "$bsrc"
      git -C "$root" archive "$rev" | tar x -C "$bsrc"
      echo "$rev" > "$bsrc/REVISION"
    fi
    cmake -S "$bsrc" -B "$bbuild" -DINSTBENCH_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DINSTBENCH_TESTS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="${GPU_BASELINE_ARCH:-90}" "${launcher[@]}" "${cross[@]}" >&2
    cmake --build "$bbuild" -j "${JOBS:-2}" --target instbench instbench_cuda >&2
  fi
  [ "$(cat "$bsrc/REVISION" 2>/dev/null)" = "$rev" ] && [ -f "$bbuild/instbench" ] && [ -f "$bbuild/libinstbench-cuda.so" ] ||
    { echo "gpu_bundle: no baseline build of $rev in $bbuild (run without --no-build)" >&2; exit 1; }
fi

# glibc's own libraries (present on every Linux the binary can run on) and CUDA's (the GPU
# machine's, matching its driver) stay out; everything else ldd resolves is copied
is_glibc() { case "$1" in ld-linux*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|libutil.so.*|libanl.so.*|libmvec.so.*) return 0 ;; esac; return 1; }
is_cuda() { case "$1" in libcuda.so.*|libcudart.so.*|libcublas.so.*|libcublasLt.so.*|libnccl.so.*|libcupti.so.*|libnvidia-*) return 0 ;; esac; return 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/scripts/gpu" "$out/scripts/bench" "$out/scripts/data" "$out/tests/data" "$out/configs"
cp "$build/instbench" "$build/libinstbench-cuda.so" "$out/bin/"
[ ! -x "$build/tests/cuda_dp_module" ] || cp "$build/tests/cuda_dp_module" "$out/bin/"
if [ -n "${CUDA12_HOME:-}" ] && [ -f "$build12/libinstbench-cuda.so" ]; then
  mkdir -p "$out/bin/cuda12"
  cp "$build12/libinstbench-cuda.so" "$out/bin/cuda12/"
fi

if [ -n "$baseline" ]; then
  mkdir -p "$out/bin/baseline"
  cp "$bbuild/instbench" "$bbuild/libinstbench-cuda.so" "$out/bin/baseline/"
  git -C "$root" log -1 --format='%H %cd %s' "$rev" > "$out/bin/baseline/REVISION"
fi

missing=
for obj in "$out"/bin/instbench "$out"/bin/*.so "$out"/bin/cuda12/*.so "$out"/bin/baseline/instbench \
           "$out"/bin/baseline/*.so "$out"/bin/cuda_dp_module; do
  [ -f "$obj" ] || continue
  # "name => path (addr)" or "name => not found"; glibc's loader lines have no "=>"
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    is_glibc "$name" && continue
    is_cuda "$name" && continue
    if [ "$path" = not ]; then missing="$missing $name"; continue; fi
    [ -f "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done < <("${ldd_of[@]}" "$obj")
done
[ -z "$missing" ] || { echo "gpu_bundle: ldd finds no$missing here: cannot bundle them" >&2; exit 1; }

# the scripts keep their folders (scripts/README.md): gpu_check.sh finds its siblings by them
cp scripts/gpu/gpu_check.sh scripts/gpu/gpu_session.sh scripts/gpu/kernel_classes.py "$out/scripts/gpu/"
cp scripts/bench/bench_gpu_vs_torch.sh scripts/bench/bench_gpu_ab.sh scripts/bench/bench_torch_gpu_step.py scripts/bench/bench_torch_step.py "$out/scripts/bench/"
cp scripts/data/make_reference.py "$out/scripts/data/"
# the CUPTI kernel trace (scripts/gpu/kernel_trace) for gpu_check's per-kernel-class side-by-side, where
# CUPTI's headers are here; libcupti itself comes from the GPU machine, as cudart does
cupti_inc=
for d in ${CUDA_HOME:+$CUDA_HOME/include} /usr/local/cuda/include /usr/local/cuda/extras/CUPTI/include; do
  [ -f "$d/cupti.h" ] && { cupti_inc=$d; break; }
done
if [ -n "$cupti_inc" ] && [ "$arch" = "$(uname -m)" ] && "$cc" -shared -fPIC -O2 scripts/gpu/kernel_trace/kernel_trace.c -I"$cupti_inc" \
     -L"$cupti_inc/../lib64" -L"$cupti_inc/../lib" -lcupti -o "$out/bin/libkernel_trace.so" 2>&1; then :; else
  echo "gpu_bundle: no CUPTI here: the bundle has no kernel trace (gpu_check's kernels step will SKIP)" >&2
  rm -f "$out/bin/libkernel_trace.so"
fi
cp tests/data/ref_*.safetensors "$out/tests/data/"
cp configs/gpu-peak-flops.json "$out/configs/"
git -C "$root" log -1 --format='instbench %H (%cd)' > "$out/VERSION" 2>/dev/null || echo "instbench (no git)" > "$out/VERSION"
"$build/instbench" --version >> "$out/VERSION" 2>/dev/null || true

cat > "$out/run" <<'RUNNER'
#!/bin/sh
# The bundle's runner (scripts/gpu/gpu_bundle.sh): the bundled libraries first, then CUDA's from the
# python3 on PATH (its site-packages/nvidia/*/lib wheels, PyTorch's) and from a toolkit.
here=$(cd "$(dirname "$0")" && pwd)
wheels=$(python3 - 2>/dev/null <<'EOF'
import glob, os, site, sys
dirs = list(site.getsitepackages()) + [site.getusersitepackages()] + [p for p in sys.path if p.endswith("site-packages")]
seen = []
for d in dirs:
    for lib in sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib"))):
        if lib not in seen:
            seen.append(lib)
print(":".join(seen))
EOF
)
cuda=
m=$(uname -m)   # the toolkit's target directory and Debian's multiarch one: this machine's
case "$m" in aarch64) target=sbsa-linux ;; *) target=$m-linux ;; esac
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/$target/lib; do
  [ -d "$d" ] && cuda="$cuda:$d"
done
LD_LIBRARY_PATH="$here/lib${wheels:+:$wheels}$cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
INSTBENCH_GPU_PEAK_FLOPS=${INSTBENCH_GPU_PEAK_FLOPS:-$here/configs/gpu-peak-flops.json}
export LD_LIBRARY_PATH INSTBENCH_GPU_PEAK_FLOPS
case "${1:-check}" in
  check) [ $# -eq 0 ] || shift; exec sh "$here/scripts/gpu/gpu_check.sh" --bin "$here/bin/instbench" "$@" ;;
  session) shift; exec bash "$here/scripts/gpu/gpu_session.sh" --bin "$here/bin/instbench" "$@" ;;
  instbench) shift; exec "$here/bin/instbench" "$@" ;;
  libs) echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
        for f in "$here"/bin/*; do echo "--- $f"; ldd "$f"; done
        # cuDNN is loaded at run time (dlopen), so ldd cannot show it: say which one the loader finds
        cudnn=
        for d in $(echo "$LD_LIBRARY_PATH" | tr ':' ' ') /usr/lib/$m-linux-gnu /usr/local/cuda/lib64; do
          [ -e "$d/libcudnn.so.9" ] && { cudnn=$d/libcudnn.so.9; break; }
        done
        if [ -n "$cudnn" ]; then echo "--- cuDNN (loaded at run time): $(readlink -f "$cudnn")"
        elif [ -n "${INSTBENCH_CUDNN_LIBRARY:-}" ]; then echo "--- cuDNN: INSTBENCH_CUDNN_LIBRARY=$INSTBENCH_CUDNN_LIBRARY"
        else echo "--- cuDNN: no libcudnn.so.9 on the path: attention will run unfused unless a Python install's site-packages has one"; fi
        ! ldd "$here"/bin/* | grep -q 'not found' || { echo "run: some libraries are not found (above)" >&2; exit 1; } ;;
  *) exec "$@" ;;
esac
RUNNER
chmod +x "$out/run"

# what a GPU session carries: the archive and the tracked tree (git ls-files), 64 MiB together
carry=$(dirname "$out")/build-gpu-carry
mkdir -p "$carry"
tar czf "$carry/bundle.tgz.tmp" -C "$(dirname "$out")" "$(basename "$out")"
mv "$carry/bundle.tgz.tmp" "$carry/bundle.tgz"
size=$(du -sb "$out" | cut -f1)
mib=$(( (size + 1048575) / 1048576 ))
arch=$(stat -c %s "$carry/bundle.tgz")
tree=$(git -C "$root" ls-files -z 2>/dev/null | (cd "$root" && xargs -0 -r stat -c %s 2>/dev/null) | awk '{s += $1} END {print s + 0}')
total=$(( arch + tree ))
if [ "$total" -gt $(( limit_mib * 1048576 )) ]; then
  echo "gpu_bundle: the archive ($(( arch >> 20 )) MiB) and the tracked files ($(( tree >> 20 )) MiB) are over the $limit_mib MiB a GPU session can carry" >&2
  exit 1
fi
echo "gpu_bundle: $out ($mib MiB, $(ls "$out/lib" | wc -l) libraries) and $carry/bundle.tgz ($(( (arch + 1048575) >> 20 )) MiB):"
echo "  on the GPU machine: tar xzf build-gpu-carry/bundle.tgz && build-gpu-bundle/run"
