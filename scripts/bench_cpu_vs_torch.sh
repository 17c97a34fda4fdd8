#!/bin/sh
# Side by side on this machine, in one run: instbench's CPU training step and the seed's PyTorch
# step (timm ViT, CrossEntropyLoss, Adam, autocast bf16; scripts/bench_torch_step.py) on the three
# configurations of issue 2.  Prints samples/s of each, the ratio, and the fraction of the GEMM
# roofline each reaches (model FLOP/s over the oneDNN GEMM rate on the same shapes, which
# `instbench measure` reports as peak_tflops).  Timings are only as quiet as the machine is:
# run it with nothing else busy.
#
# usage: scripts/bench_cpu_vs_torch.sh [--bin PATH] [--steps N] [--warmup N] [--repeat N] [--quick]
#                                      [--torch-blas DIR]
#   --bin         the instbench binary (default: build/instbench)
#   --steps       timed steps per run (default 6; vit_base runs half as many)
#   --warmup      warm-up steps (default 2)
#   --repeat      runs of each side per configuration, alternating instbench and PyTorch; the
#                 best samples/s of each is reported (default 2: on a shared machine the best
#                 run is the one least disturbed by others)
#   --quick       3 timed steps, 1 warm-up, 1 run (a smoke run)
#   --torch-blas  a directory holding another libblas.so.3 (e.g. OpenBLAS) for PyTorch's fp32
#                 matmuls: Debian's torch uses the system BLAS, netlib's reference one by default
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BIN="$here/../build/instbench"
STEPS=6
WARMUP=2
REPEAT=2
PY=${PYTHON:-/usr/bin/python3}
TORCH_BLAS=""
while [ $# -gt 0 ]; do
    case "$1" in
        --bin|--steps|--warmup|--repeat|--torch-blas)
            [ $# -ge 2 ] || { echo "bench_cpu_vs_torch.sh: $1 needs a value" >&2; exit 2; } ;;
    esac
    case "$1" in
        --bin) BIN=$2; shift 2 ;;
        --steps) STEPS=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --repeat) REPEAT=$2; shift 2 ;;
        --quick) STEPS=3; WARMUP=1; REPEAT=1; shift ;;
        --torch-blas) TORCH_BLAS=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -eu/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench_cpu_vs_torch.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$BIN" ] || { echo "bench_cpu_vs_torch.sh: no instbench binary at $BIN (use --bin)" >&2; exit 2; }
case "$STEPS$WARMUP$REPEAT" in *[!0-9]*) echo "bench_cpu_vs_torch.sh: --steps/--warmup/--repeat take whole numbers" >&2; exit 2 ;; esac
[ "$STEPS" -ge 1 ] && [ "$REPEAT" -ge 1 ] || { echo "bench_cpu_vs_torch.sh: --steps and --repeat must be at least 1" >&2; exit 2; }
CORES=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -z "$TORCH_BLAS" ] || [ -f "$TORCH_BLAS/libblas.so.3" ] ||
    { echo "bench_cpu_vs_torch.sh: no libblas.so.3 in $TORCH_BLAS" >&2; exit 2; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $CORES cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$TORCH_BLAS" ]; then
    echo "PyTorch fp32 BLAS: $TORCH_BLAS/libblas.so.3"
else
    blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
    echo "PyTorch fp32 BLAS: $blas"
    case "$blas" in */blas/libblas.so*) echo "  (netlib's reference BLAS: PyTorch's fp32 matmuls are far from this CPU's best; see --torch-blas)" ;; esac
fi
printf '%-22s %5s %5s | %12s %12s %7s | %10s %10s\n' MODEL BATCH PREC "INSTBENCH/S" "PYTORCH/S" RATIO "IB ROOF" "PT ROOF"
for cfg in "vit_tiny_patch16_224 32 bf16" "vit_base_patch16_224 8 bf16" "vit_tiny_patch16_224 32 fp32"; do
    set -- $cfg
    model=$1 batch=$2 prec=$3
    steps=$STEPS
    [ "$model" = vit_base_patch16_224 ] && steps=$(( (STEPS + 1) / 2 ))
    for run in $(seq "$REPEAT"); do
        "$BIN" measure --backend cpu --data device --model "$model" --batch-size "$batch" --precision "$prec" \
            --steps "$steps" --warmup "$WARMUP" --format json --output - > "$tmp/ib.$run.json" 2> "$tmp/ib.err" ||
            { echo "instbench measure failed:" >&2; cat "$tmp/ib.err" >&2; exit 1; }
        LD_LIBRARY_PATH="${TORCH_BLAS:+$TORCH_BLAS${LD_LIBRARY_PATH:+:}}${LD_LIBRARY_PATH:-}" \
        "$PY" "$here/bench_torch_step.py" --model "$model" --batch-size "$batch" --precision "$prec" \
            --steps "$steps" --warmup "$WARMUP" --threads "$CORES" > "$tmp/pt.$run.json" 2> "$tmp/pt.err" ||
            { echo "PyTorch step failed:" >&2; cat "$tmp/pt.err" >&2; exit 1; }
    done
    "$PY" - "$tmp" "$REPEAT" "$model" "$batch" "$prec" <<'PYEOF'
import json, sys
tmp, repeat = sys.argv[1], int(sys.argv[2])
model, batch, prec = sys.argv[3:6]
ibs = [json.load(open(f"{tmp}/ib.{r}.json"))["measurement"] for r in range(1, repeat + 1)]
pts = [json.loads(open(f"{tmp}/pt.{r}.json").read().strip().splitlines()[-1]) for r in range(1, repeat + 1)]
ib = max(ibs, key=lambda m: m["samples_per_second"])
ib_sps, pt_sps = ib["samples_per_second"], max(p["samples_per_second"] for p in pts)
# oneDNN GEMM rate on this config's shapes (TFLOP/s): the best of the runs, the least disturbed
peak = max((m.get("peak_tflops") or 0) for m in ibs)
flops_per_sample = ib["model_tflops"] / ib_sps if ib_sps else 0   # TFLOP per sample (3 x forward)
roof = lambda sps: f"{sps * flops_per_sample / peak:9.1%}" if peak else "      n/a"
print(f"{model:<22} {batch:>5} {prec:>5} | {ib_sps:12.2f} {pt_sps:12.2f} {ib_sps / pt_sps:6.2f}x | {roof(ib_sps):>10} {roof(pt_sps):>10}")
PYEOF
done
echo "(samples/s over the timed steps, best of $REPEAT run(s) each; ROOF = model FLOP/s / oneDNN GEMM rate"
echo " on the same shapes and precision, as instbench measure reports it; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
