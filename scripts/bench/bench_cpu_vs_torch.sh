#!/bin/sh
# Side by side on this machine, in one run: instbench's CPU training step and the same step in
# PyTorch (timm ViT, CrossEntropyLoss, Adam, autocast bf16; scripts/bench/bench_torch_step.py), for
# vit_tiny b32 and vit_base b8, each in bf16 and fp32.  Prints samples/s of each, the ratio, how
# bf16 ran in instbench (native or emulated), and the fraction of the GEMM roofline each reaches
# (model FLOP/s over the oneDNN GEMM rate on the same shapes, which `instbench measure` reports
# as peak_tflops).  Timings are only as quiet as the machine is: run it with nothing else busy.
#
# The PyTorch side is the one a user would install today: PyPI's torch and timm in a virtual
# environment outside the repository (MKL + oneDNN inside), not Debian's python3-torch 1.13.
#   scripts/bench/bench_cpu_vs_torch.sh --setup      creates it ($TORCH_VENV, ~5.5 GB download)
#
# usage: scripts/bench/bench_cpu_vs_torch.sh [--bin PATH] [--steps N] [--warmup N] [--repeat N] [--quick]
#                                      [--python PY] [--setup]
#   --bin         the instbench binary (default: build/instbench)
#   --steps       timed steps per run (default 6; vit_base runs half as many)
#   --warmup      warm-up steps (default 2)
#   --repeat      runs of each side per configuration, alternating instbench and PyTorch; the
#                 best samples/s of each is reported (default 2: on a shared machine the best
#                 run is the one least disturbed by others)
#   --quick       3 timed steps, 1 warm-up, 1 run (a smoke run)
#   --python      the Python with torch and timm (default: $TORCH_VENV/bin/python, where
#                 TORCH_VENV defaults to ~/.cache/instbench/torch-venv)
#   --setup       create that virtual environment (python3 -m venv; pip install torch timm)
# Environment: TORCH_MAX_S (default 90) ends PyTorch's timed loop after that many seconds (at
# least one step): its bf16 step on CPUs without bf16 hardware takes minutes at vit_base.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BIN="$here/../../build/instbench"
STEPS=6
WARMUP=2
REPEAT=2
TORCH_VENV=${TORCH_VENV:-$HOME/.cache/instbench/torch-venv}
PY=${PYTHON:-$TORCH_VENV/bin/python}
SETUP=0
TORCH_MAX_S=${TORCH_MAX_S:-90}   # PyTorch's timed loop stops after this (bf16 without bf16 hardware is slow)
while [ $# -gt 0 ]; do
    case "$1" in
        --bin|--steps|--warmup|--repeat|--python)
            [ $# -ge 2 ] || { echo "bench_cpu_vs_torch.sh: $1 needs a value" >&2; exit 2; } ;;
    esac
    case "$1" in
        --bin) BIN=$2; shift 2 ;;
        --steps) STEPS=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --repeat) REPEAT=$2; shift 2 ;;
        --quick) STEPS=3; WARMUP=1; REPEAT=1; shift ;;
        --python) PY=$2; shift 2 ;;
        --setup) SETUP=1; shift ;;
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

if [ "$SETUP" = 1 ]; then
    [ -x "$TORCH_VENV/bin/python" ] || python3 -m venv "$TORCH_VENV"
    "$TORCH_VENV/bin/python" -m pip install -q --upgrade torch timm
    PY=$TORCH_VENV/bin/python
fi
"$PY" -c "import torch, timm" 2>/dev/null ||
    { echo "bench_cpu_vs_torch.sh: no torch + timm in $PY (run with --setup, or give --python)" >&2; exit 2; }
flags=$(grep -m1 '^flags' /proc/cpuinfo)
isa=""
for f in amx_bf16 avx512_bf16 avx512f avx2; do
    case " $flags " in *" $f "*) isa="$isa $f" ;; esac
done
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $CORES cores; ISA:${isa:- none of avx2/avx512f/avx512_bf16/amx_bf16}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); DNNL_MAX_CPU_ISA=${DNNL_MAX_CPU_ISA:-unset}"
"$PY" - <<'PYEOF'
import re, timm, torch
cfg = torch.__config__.show()
blas = re.search(r"BLAS_INFO=(\w+)", cfg)
dnn = re.search(r"MKL-DNN v([\d.]+)", cfg)
print(f"PyTorch {torch.__version__} (BLAS {blas.group(1) if blas else '?'}, oneDNN {dnn.group(1) if dnn else '?'}, "
      f"CPU capability {torch.backends.cpu.get_cpu_capability()}), timm {timm.__version__}")
PYEOF
printf '%-22s %5s %5s %-8s | %12s %12s %7s | %10s %10s\n' MODEL BATCH PREC BF16 "INSTBENCH/S" "PYTORCH/S" RATIO "IB ROOF" "PT ROOF"
for cfg in "vit_tiny_patch16_224 32 bf16" "vit_tiny_patch16_224 32 fp32" "vit_base_patch16_224 8 bf16" \
           "vit_base_patch16_224 8 fp32"; do
    set -- $cfg
    model=$1 batch=$2 prec=$3
    rm -f "$tmp"/ib.*.json "$tmp"/pt.*.json
    steps=$STEPS
    [ "$model" = vit_base_patch16_224 ] && steps=$(( (STEPS + 1) / 2 ))
    for run in $(seq "$REPEAT"); do
        "$BIN" measure --backend cpu --data device --model "$model" --batch-size "$batch" --precision "$prec" \
            --steps "$steps" --warmup "$WARMUP" --format json --output - > "$tmp/ib.$run.json" 2> "$tmp/ib.err" ||
            { echo "instbench measure failed:" >&2; cat "$tmp/ib.err" >&2; exit 1; }
        # PyTorch's bf16 on a CPU without bf16 hardware takes minutes per step (its own fallback
        # path): one run of one step, no warm-up (first-step set-up is under 1% of such a step)
        pt_steps=$steps pt_warmup=$WARMUP
        if [ "$prec" = bf16 ] && grep -q '"cpu_bf16":[[:space:]]*"emulated"' "$tmp/ib.$run.json"; then
            [ "$run" = 1 ] || continue
            pt_steps=1 pt_warmup=0
            echo "  ($model bf16: this CPU has no bf16 matmul; PyTorch runs 1 step, no warm-up)"
        fi
        "$PY" "$here/bench_torch_step.py" --model "$model" --batch-size "$batch" --precision "$prec" \
            --steps "$pt_steps" --warmup "$pt_warmup" --threads "$CORES" --max-seconds "$TORCH_MAX_S" \
            > "$tmp/pt.$run.json" 2> "$tmp/pt.err" ||
            { echo "PyTorch step failed:" >&2; cat "$tmp/pt.err" >&2; exit 1; }
    done
    python3 - "$tmp" "$REPEAT" "$model" "$batch" "$prec" <<'PYEOF'
import json, os, sys
tmp, repeat = sys.argv[1], int(sys.argv[2])
model, batch, prec = sys.argv[3:6]
ibs = [json.load(open(f"{tmp}/ib.{r}.json"))["measurement"] for r in range(1, repeat + 1)]
pts = [json.loads(open(f"{tmp}/pt.{r}.json").read().strip().splitlines()[-1]) for r in range(1, repeat + 1)
       if os.path.exists(f"{tmp}/pt.{r}.json")]
ib = max(ibs, key=lambda m: m["samples_per_second"])
ib_sps, pt_sps = ib["samples_per_second"], max(p["samples_per_second"] for p in pts)
# oneDNN GEMM rate on this config's shapes (TFLOP/s): the best of the runs, the least disturbed
peak = max((m.get("peak_tflops") or 0) for m in ibs)
flops_per_sample = ib["model_tflops"] / ib_sps if ib_sps else 0   # TFLOP per sample (3 x forward)
roof = lambda sps: f"{sps * flops_per_sample / peak:9.1%}" if peak else "      n/a"
bf16 = json.load(open(f"{tmp}/ib.1.json"))["hardware"].get("cpu_bf16") or "-"
print(f"{model:<22} {batch:>5} {prec:>5} {bf16:<8} | {ib_sps:12.2f} {pt_sps:12.2f} {ib_sps / pt_sps:6.2f}x | {roof(ib_sps):>10} {roof(pt_sps):>10}")
PYEOF
done
echo "(samples/s over the timed steps, best of $REPEAT run(s) each; ROOF = model FLOP/s / oneDNN GEMM rate"
echo " on the same shapes and precision, as instbench measure reports it; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
