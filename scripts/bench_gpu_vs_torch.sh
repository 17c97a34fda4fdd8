#!/bin/sh
# instbench's CUDA training step against PyTorch's on the same GPU, one after the other: timm's
# ViT (vit_base_patch16_224 by default), batch 128, bf16 autocast, Adam, synthetic data on the GPU
# (instbench measure --data device; scripts/bench_torch_gpu_step.py).  Prints samples/s of each
# and the ratio instbench / PyTorch.  Run it with nothing else on the GPU.
#
# usage: scripts/bench_gpu_vs_torch.sh [--bin PATH] [--model NAME] [--batch-size N]
#                                      [--precision bf16|fp32] [--steps N] [--warmup N] [--out DIR]
#   --bin     the instbench binary (default: build/instbench)
#   --steps   timed steps of each (default 20), --warmup warm-up steps (default 5)
#   --out     keep both JSON results in DIR (default: a temporary directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BIN="$here/../build/instbench"
MODEL=vit_base_patch16_224
BATCH=128
PREC=bf16
STEPS=20
WARMUP=5
OUTDIR=
PY=${PYTHON:-python3}
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) BIN=$2; shift 2 ;;
        --model) MODEL=$2; shift 2 ;;
        --batch-size) BATCH=$2; shift 2 ;;
        --precision) PREC=$2; shift 2 ;;
        --steps) STEPS=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --out) OUTDIR=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench_gpu_vs_torch.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$BIN" ] || { echo "bench_gpu_vs_torch.sh: no instbench binary at $BIN (use --bin)" >&2; exit 2; }
case "$STEPS$WARMUP$BATCH" in *[!0-9]*) echo "bench_gpu_vs_torch.sh: --steps/--warmup/--batch-size take whole numbers" >&2; exit 2 ;; esac
case "$PREC" in bf16|fp32) ;; *) echo "bench_gpu_vs_torch.sh: --precision is bf16 or fp32" >&2; exit 2 ;; esac
if [ -n "$OUTDIR" ]; then mkdir -p "$OUTDIR"; tmp=$OUTDIR; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' || true
"$BIN" measure --backend cuda --data device --model "$MODEL" --batch-size "$BATCH" --precision "$PREC" \
    --steps "$STEPS" --warmup "$WARMUP" --format json --output "$tmp/instbench.json" > /dev/null 2> "$tmp/instbench.err" ||
    { echo "instbench measure failed:" >&2; cat "$tmp/instbench.err" >&2; exit 1; }
"$PY" "$here/bench_torch_gpu_step.py" --model "$MODEL" --batch-size "$BATCH" --precision "$PREC" \
    --steps "$STEPS" --warmup "$WARMUP" > "$tmp/torch.json" 2> "$tmp/torch.err" ||
    { echo "PyTorch step failed:" >&2; cat "$tmp/torch.err" >&2; exit 1; }
"$PY" - "$tmp/instbench.json" "$tmp/torch.json" "$MODEL" "$BATCH" "$PREC" <<'PYEOF'
import json, sys
ib = json.load(open(sys.argv[1]))["measurement"]
pt = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
model, batch, prec = sys.argv[3:6]
ib_sps, pt_sps = ib["samples_per_second"], pt["samples_per_second"]
print(f"{'MODEL':<22} {'BATCH':>5} {'PREC':>5} | {'INSTBENCH/S':>12} {'PYTORCH/S':>12} {'RATIO':>7}")
print(f"{model:<22} {batch:>5} {prec:>5} | {ib_sps:12.1f} {pt_sps:12.1f} {ib_sps / pt_sps:6.2f}x")
print(f"pytorch: torch {pt['torch']}, model from {pt['model_source']}, peak memory {pt['peak_memory_gib']:.1f} GiB")
PYEOF
