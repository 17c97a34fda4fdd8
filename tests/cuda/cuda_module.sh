#!/usr/bin/env bash
# The CUDA module (libinstbench-cuda.so, dlopened by src/backend.c) from the outside.
#   cuda_module.sh deps BIN MODULE     CUDA builds: BIN's DT_NEEDED names no CUDA library, and MODULE
#                                      exports nothing but its entry point.
#   cuda_module.sh absent BIN CC       any build: BIN copied alone into an empty directory (no module
#                                      beside it) still runs --version, prices/rank --help, models and
#                                      a CPU measure; --backend cuda fails naming what is missing
#                                      (measure and verify exit 2); auto-detection falls back to
#                                      cpu and -v says why; a module whose dependency is missing or
#                                      whose ABI differs is refused with dlerror's / a clear message.
set -u
mode=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
here=$(cd "$(dirname "$0")" && pwd)

if [ "$mode" = deps ]; then
  bin=$2 module=$3
  needed=$(readelf -d "$bin" | grep '(NEEDED)')
  echo "$needed"
  if echo "$needed" | grep -Eq '\[lib(cuda|cudart|cublas|cublasLt|nccl|nvrtc|cusparse|curand)[^]]*\]'; then
    fail "$bin links a CUDA library directly (DT_NEEDED above); the CUDA backend belongs in the module"
  fi
  [ -f "$module" ] || fail "no module at $module (it must sit beside the executable)"
  if [ -f "$module" ]; then
    exported=$(nm -D --defined-only "$module" | awk '{print $3}' | sort -u | tr '\n' ' ')
    [ "$exported" = "instbench_cuda_module " ] || fail "$module exports '$exported', not only instbench_cuda_module"
    readelf -d "$module" | grep -q 'libcublasLt' || fail "$module does not link cuBLASLt"
  fi
  [ $fails -eq 0 ] && echo "cuda_module deps: all passed"
  exit $((fails > 0))
fi

bin=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/alone"
cp "$bin" "$tmp/alone/instbench"
ib="$tmp/alone/instbench"
ref="$here/../data/ref_a_adam_bf16.safetensors"
TINY=(--model vit_tiny_patch16_224 --depth 2 --image-size 32 --patch-size 8 --embed-dim 64 --heads 2
      --classes 10 --batch-size 4 --steps 2 --warmup 1)
export INSTBENCH_CPU_PEAK_SECONDS=0.05 NO_COLOR=1
unset INSTBENCH_CUDA_MODULE

# what needs no GPU runs with no module anywhere
for args in "--version" "prices --help" "rank --help" "models"; do
  # shellcheck disable=SC2086
  out=$("$ib" $args 2>&1) || fail "instbench $args without the module: exit $?: $out"
  [ -n "$out" ] || fail "instbench $args printed nothing"
done
out=$(cd "$tmp" && "$ib" measure --backend cpu "${TINY[@]}" --output "$tmp/cpu.json" 2>&1) ||
  fail "CPU measure without the module: exit $?: $out"
[ -s "$tmp/cpu.json" ] || fail "CPU measure wrote no result"

# default backend: cpu, and -v says why not cuda
out=$(cd "$tmp" && "$ib" measure -v "${TINY[@]}" --output "$tmp/auto.json" 2>&1) || fail "auto measure: exit $?: $out"
echo "$out" | grep -q "backend auto: cpu (cuda is not usable: cannot load the CUDA module: .*libinstbench-cuda.so" ||
  fail "auto-detection gave no reason naming libinstbench-cuda.so: $out"
grep -Eq '"backend":[[:space:]]*"cpu"' "$tmp/auto.json" || fail "auto-detection did not pick cpu"

# an explicit --backend cuda names what is missing: the module ...
check() {   # check WHAT EXPECTED_RC PATTERN -- command...
  local what=$1 want=$2 pat=$3
  shift 4
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  [ $rc -eq "$want" ] || fail "$what: exit $rc, want $want: $err"
  echo "$err" | grep -q -- "$pat" || fail "$what: message lacks '$pat': $err"
}
check "measure, no module beside it" 2 "libinstbench-cuda.so: cannot open shared object file" -- "$ib" measure --backend cuda "${TINY[@]}"
absent="$tmp/nonexistent/module.so"   # never made (/nonexistent itself can exist)
export INSTBENCH_CUDA_MODULE=$absent
check "measure, INSTBENCH_CUDA_MODULE=$absent" 2 "backend 'cuda' is not available: cannot load the CUDA module: $absent: cannot open shared object file" -- "$ib" measure --backend cuda "${TINY[@]}"
check "verify, INSTBENCH_CUDA_MODULE=$absent" 2 "backend 'cuda' is not available: cannot load the CUDA module: $absent" -- "$ib" verify --reference "$ref" --backend cuda
check "verify --compare-backend, INSTBENCH_CUDA_MODULE=$absent" 2 "$absent: cannot open" -- "$ib" verify --reference "$ref" --compare-backend cuda

# ... or a library the module needs (a stand-in for libcublasLt.so.13 on a machine without it)
printf 'int ib_missing_dep(void) { return 1; }\n' > "$tmp/dep.c"
printf 'int ib_missing_dep(void);\nconst void *instbench_cuda_module(int abi) { return ib_missing_dep() ? (const void *)0 : (const void *)0; }\n' > "$tmp/mod.c"
if "$cc" -shared -fPIC -o "$tmp/libib-missing-dep.so.13" -Wl,-soname,libib-missing-dep.so.13 "$tmp/dep.c" &&
   "$cc" -shared -fPIC -o "$tmp/libinstbench-cuda.so" "$tmp/mod.c" "$tmp/libib-missing-dep.so.13"; then
  rm "$tmp/libib-missing-dep.so.13"
  export INSTBENCH_CUDA_MODULE="$tmp/libinstbench-cuda.so"
  check "measure, module dependency missing" 2 "libib-missing-dep.so.13: cannot open shared object file" -- "$ib" measure --backend cuda "${TINY[@]}"
  # a module of another ABI (its entry point returns NULL for ours)
  printf 'const void *instbench_cuda_module(int abi) { return 0; }\n' > "$tmp/abi.c"
  "$cc" -shared -fPIC -o "$tmp/abi.so" "$tmp/abi.c"
  export INSTBENCH_CUDA_MODULE="$tmp/abi.so"
  check "verify, module of another ABI" 2 "was built for another version of instbench" -- "$ib" verify --reference "$ref" --backend cuda
else
  fail "cannot build the stand-in modules with $cc"
fi

[ $fails -eq 0 ] && echo "cuda_module absent: all passed"
exit $((fails > 0))
