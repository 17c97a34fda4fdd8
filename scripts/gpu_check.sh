#!/bin/sh
# What a session with a GPU runs in one go to prove the CUDA backend (nothing of it has run where
# it was written).  Each step logs to OUT/<step>.log and the run ends with a PASS/FAIL line per
# step; the exit status is 1 if any step failed.  Steps:
#   build    configure + build with CUDA (-DINSTBENCH_CUDA=ON) into build-gpu
#   ctest    the whole test suite of that build
#   verify   instbench verify --backend cuda --compare-backend cpu on every tests/data fixture
#            (CUDA vs timm, CPU vs timm, CUDA vs CPU per tensor)
#   realistic  the same on timm references at real shapes (vit_tiny_patch16_224: 197 tokens,
#            head dim 64), fp32 and bf16, made here by scripts/make_reference.py when timm imports
#   measure  instbench measure --backend cuda, vit_base_patch16_224, batch 128, bf16
#   ranks    the same over every local GPU (--ranks N, NCCL), when there are several
#   torch    scripts/bench_gpu_vs_torch.sh (instbench vs PyTorch samples/s)
#
# usage: scripts/gpu_check.sh [--out DIR] [--jobs N] [--skip STEP,...]
#   --out   where logs and JSON go (default: $OUT when set, else build-gpu/check)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
OUTDIR=${OUT:-$root/build-gpu/check}
JOBS=$(nproc 2>/dev/null || echo 4)
SKIP=
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUTDIR=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --skip) SKIP=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu_check.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
mkdir -p "$OUTDIR"
BUILD=$root/build-gpu
BIN=$BUILD/instbench
PY=${PYTHON:-python3}
summary=$OUTDIR/summary.txt
: > "$summary"
status=0

skipped() { case ",$SKIP," in *",$1,"*) return 0 ;; esac; return 1; }
# step NAME COMMAND...: runs it with its output in OUT/NAME.log, records PASS/FAIL and the time.
step() {
    name=$1; shift
    if skipped "$name"; then echo "SKIP  $name" | tee -a "$summary"; return 0; fi
    echo "== $name: $*" >&2
    t0=$(date +%s)
    if "$@" > "$OUTDIR/$name.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
    echo "$r  $name ($(( $(date +%s) - t0 )) s)" | tee -a "$summary"
    [ $r = PASS ] || tail -n 30 "$OUTDIR/$name.log" >&2
}

{ nvidia-smi || true; nvcc --version || true; } > "$OUTDIR/machine.log" 2>&1
step build sh -c "cmake -S '$root' -B '$BUILD' -DINSTBENCH_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build '$BUILD' -j $JOBS"
[ -x "$BIN" ] || { echo "FAIL  no binary: the remaining steps need the build" | tee -a "$summary"; exit 1; }
step ctest sh -c "cd '$BUILD' && ctest --output-on-failure -j $JOBS"

verify_all() {   # verify_all FILE...: every reference through cuda, compared with cpu
    rc=0
    for ref in "$@"; do
        base=$(basename "$ref" .safetensors)
        echo "--- $base"
        "$BIN" verify --reference "$ref" --backend cuda --compare-backend cpu || rc=1
        "$BIN" verify --reference "$ref" --backend cuda --compare-backend cpu --format json > "$OUTDIR/verify_$base.json" || rc=1
    done
    return $rc
}
step verify verify_all "$root"/tests/data/ref_*.safetensors

realistic() {
    "$PY" -c 'import timm' 2>/dev/null || { echo "timm is not installed: no realistic-shape references"; return 1; }
    for prec in fp32 bf16; do
        "$PY" "$here/make_reference.py" --model vit_tiny_patch16_224 --batch-size 4 --steps 3 --precision $prec \
            --output "$OUTDIR/ref_vit_tiny_$prec.safetensors" || return 1
    done
    verify_all "$OUTDIR"/ref_vit_tiny_fp32.safetensors "$OUTDIR"/ref_vit_tiny_bf16.safetensors
}
step realistic realistic

step measure "$BIN" measure --backend cuda --data device --model vit_base_patch16_224 --batch-size 128 \
    --precision bf16 --steps 30 --warmup 5 --format json --output "$OUTDIR/measure_vit_base_b128_bf16.json"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 0)
if [ "$ngpu" -gt 1 ]; then
    step ranks "$BIN" measure --backend cuda --ranks "$ngpu" --data device --model vit_base_patch16_224 \
        --batch-size 128 --precision bf16 --steps 30 --warmup 5 --format json \
        --output "$OUTDIR/measure_vit_base_b128_bf16_x$ngpu.json"
fi
step torch "$here/bench_gpu_vs_torch.sh" --bin "$BIN" --out "$OUTDIR/bench"

echo "--- summary ($OUTDIR/summary.txt)"
cat "$summary"
exit $status
