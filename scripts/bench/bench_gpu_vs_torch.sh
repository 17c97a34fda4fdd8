#!/bin/sh
# instbench's CUDA training step against PyTorch's on the same GPU, one after the other: timm's
# ViT (vit_base_patch16_224 by default), batch 128, bf16 autocast, Adam, synthetic data on the GPU
# (instbench measure --data device; scripts/bench/bench_torch_gpu_step.py).  Prints samples/s of
# instbench (and, in bf16, of its unfused attention, of cuDNN's non-deterministic backward and of
# GEMM algorithms chosen by timing for comparison: INSTBENCH_CUDA_ATTENTION,
# INSTBENCH_CUDNN_NONDETERMINISTIC, INSTBENCH_GEMM_TUNE), of PyTorch eager (Adam's
# defaults) and of torch.compile (Adam(fused=True): PyTorch at its best, issue 37), instbench's MFU
# and share of cuBLASLt's in-situ GEMM rate, and the ratios instbench / PyTorch; with --profile also where
# each step's GPU time goes per kernel class, side by side (scripts/gpu/kernel_classes.py over a CUPTI
# trace of instbench, scripts/gpu/kernel_trace, and torch.profiler's of PyTorch eager; and of
# instbench with cuDNN's non-deterministic backward where it ran: OUT/kernels_nondet.{txt,json}).
# Run it with nothing else on the GPU.
#
# usage: scripts/bench/bench_gpu_vs_torch.sh [--bin PATH] [--model NAME] [--batch-size N]
#                                      [--precision bf16|fp32] [--steps N] [--warmup N] [--out DIR]
#                                      [--no-compile]
#   --bin     the instbench binary (default: build/instbench)
#   --steps   timed steps of each (default 20), --warmup warm-up steps (default 5)
#   --out     keep the JSON results in DIR (default: a temporary directory)
#   --no-compile  skip the torch.compile run (it compiles for minutes on a cold cache)
#   --profile LIB the per-kernel-class side-by-side, LIB the kernel trace library
#                 (libkernel_trace.so, built by scripts/gpu/gpu_bundle.sh); into OUT/kernels.{txt,json}
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BIN="$here/../../build/instbench"
MODEL=vit_base_patch16_224
BATCH=128
PREC=bf16
STEPS=20
WARMUP=5
OUTDIR=
COMPILE=1
PROFILE=
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
        --no-compile) COMPILE=0; shift ;;
        --profile) PROFILE=$2; shift 2 ;;
        -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench_gpu_vs_torch.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$BIN" ] || { echo "bench_gpu_vs_torch.sh: no instbench binary at $BIN (use --bin)" >&2; exit 2; }
case "$STEPS$WARMUP$BATCH" in *[!0-9]*) echo "bench_gpu_vs_torch.sh: --steps/--warmup/--batch-size take whole numbers" >&2; exit 2 ;; esac
case "$PREC" in bf16|fp32) ;; *) echo "bench_gpu_vs_torch.sh: --precision is bf16 or fp32" >&2; exit 2 ;; esac
if [ -n "$OUTDIR" ]; then mkdir -p "$OUTDIR"; tmp=$OUTDIR; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' || true
ib_run() {   # NAME [ENV=VALUE]: one instbench measure into $tmp/NAME.json
    name=$1; shift
    env "$@" "$BIN" measure --backend cuda --data device --model "$MODEL" --batch-size "$BATCH" --precision "$PREC" \
        --steps "$STEPS" --warmup "$WARMUP" --format json --output "$tmp/$name.json" > /dev/null 2> "$tmp/$name.err" ||
        { echo "instbench measure ($name) failed:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
}
torch_run() {   # NAME [FLAGS]: one PyTorch step into $tmp/NAME.json (its last line)
    name=$1; shift
    "$PY" "$here/bench_torch_gpu_step.py" --model "$MODEL" --batch-size "$BATCH" --precision "$PREC" \
        --steps "$STEPS" --warmup "$WARMUP" "$@" > "$tmp/$name.json" 2> "$tmp/$name.err" ||
        { echo "PyTorch step ($name) failed:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
}
ib_trace() {   # NAME [ENV=VALUE]: the same run, 10 steps, every GPU activity recorded by CUPTI into
               # $tmp/NAME_kernels.tsv (result NAME_traced.json, stderr NAME_traced.err)
    name=$1; shift
    env "$@" CUDA_INJECTION64_PATH="$PROFILE" KERNEL_TRACE_OUT="$tmp/${name}_kernels.tsv" "$BIN" measure --backend cuda \
        --data device --model "$MODEL" --batch-size "$BATCH" --precision "$PREC" --steps 10 --warmup 3 --format json \
        --output "$tmp/${name}_traced.json" > /dev/null 2> "$tmp/${name}_traced.err"
}
ib_run instbench
if [ "$PREC" = bf16 ]; then
  ib_run instbench_unfused INSTBENCH_CUDA_ATTENTION=unfused
  # the price of cuDNN's deterministic backward (the default), where cuDNN ran
  if "$PY" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["hardware"].get("attention") != "cudnn")' \
       "$tmp/instbench.json"; then
    ib_run instbench_nondet INSTBENCH_CUDNN_NONDETERMINISTIC=1
  fi
  # what timing cuBLASLt's top algorithms per shape (not its heuristic's first) is worth; opt-in
  # and first run on a GPU here, so its failure is reported and the comparison goes on
  ( ib_run instbench_tuned INSTBENCH_GEMM_TUNE=1 ) ||
      { echo "instbench with GEMM algorithms chosen by timing failed (above); the rest goes on" >&2; rm -f "$tmp/instbench_tuned.json"; }
fi
if [ -n "$PROFILE" ]; then
  torch_run torch --profile "$tmp/torch_kernels.tsv"
  ib_trace instbench || { echo "instbench measure (traced) failed:" >&2; cat "$tmp/instbench_traced.err" >&2; exit 1; }
  # cuDNN's non-deterministic backward traced too: on the H200 (2026-11-28) the deterministic one ran
  # a separate dQ GEMM (cudnn::fusion::matmul_dq, 1.4 ms a step) that PyTorch's trace has not, yet
  # leaving determinism gained only 0.34 ms; this trace says where the rest went
  if [ -f "$tmp/instbench_nondet.json" ]; then
    ib_trace instbench_nondet INSTBENCH_CUDNN_NONDETERMINISTIC=1 ||
        { echo "instbench measure (non-deterministic, traced) failed; the rest goes on:" >&2;
          cat "$tmp/instbench_nondet_traced.err" >&2; rm -f "$tmp/instbench_nondet_kernels.tsv"; }
  fi
else
  torch_run torch
fi
# torch.compile builds kernels with Triton on the machine at hand: where that fails, the rest of the
# comparison (eager, the unfused and tuned runs) is still printed, the compile columns "-"
if [ "$COMPILE" = 1 ]; then
  ( torch_run torch_compile --compile ) ||
      { echo "torch.compile failed (above); the table goes on without it" >&2; rm -f "$tmp/torch_compile.json"; }
fi
"$PY" - "$tmp" "$MODEL" "$BATCH" "$PREC" <<'PYEOF'
import json, os, sys
tmp, model, batch, prec = sys.argv[1:5]
def load(name, last_line=False):
    path = os.path.join(tmp, name + ".json")
    if not os.path.exists(path):
        return None
    text = open(path).read()
    return json.loads(text.strip().splitlines()[-1]) if last_line else json.load(open(path))
ib = load("instbench")
unf, pt, pc = load("instbench_unfused"), load("torch", True), load("torch_compile", True)
nd, tu = load("instbench_nondet"), load("instbench_tuned")
ib_sps, pt_sps = ib["measurement"]["samples_per_second"], pt["samples_per_second"]
mfu = ib["measurement"].get("mfu")
print(f"{'MODEL':<22} {'BATCH':>5} {'PREC':>5} | {'INSTBENCH/S':>12} {'PYTORCH/S':>12} {'RATIO':>7} | "
      f"{'COMPILE/S':>10} {'RATIO':>7} | {'UNFUSED/S':>10} {'MFU':>6}")
cols = [f"{model:<22} {batch:>5} {prec:>5} | {ib_sps:12.1f} {pt_sps:12.1f} {ib_sps / pt_sps:6.2f}x | "]
cols.append(f"{pc['samples_per_second']:10.1f} {ib_sps / pc['samples_per_second']:6.2f}x | " if pc else f"{'-':>10} {'-':>7} | ")
cols.append(f"{unf['measurement']['samples_per_second']:10.1f} " if unf else f"{'-':>10} ")
cols.append(f"{mfu * 100:5.1f}%" if mfu else f"{'-':>6}")
print("".join(cols))
gs = ib["measurement"].get("gemm_share")
print(f"instbench: attention {ib['hardware'].get('attention')} (cuDNN {ib['hardware'].get('cudnn')}), "
      f"{'%.0f%%' % (100 * gs) if gs else 'no share'} of cuBLASLt's "
      f"{ib['hardware'].get('gemm_tflops_measured') or 0:.0f} TFLOP/s on its GEMMs; pytorch: "
      f"torch {pt['torch']}, cuDNN {pt.get('cudnn_version')}, SDPA {pt.get('sdpa_backend', '?')}, model from "
      f"{pt['model_source']}, peak memory {pt['peak_memory_gib']:.1f} GiB, Adam {pt.get('adam')} eager"
      f"{', %s compiled' % pc.get('adam') if pc else ''}")
if nd:
    print(f"instbench with cuDNN's non-deterministic backward: {nd['measurement']['samples_per_second']:.1f} samples/s "
          f"(deterministic costs {100 * (1 - ib_sps / nd['measurement']['samples_per_second']):.1f}%)")
if tu:
    tu_sps, tg = tu["measurement"]["samples_per_second"], tu["hardware"].get("gemm") or {}
    print(f"instbench with GEMM algorithms chosen by timing (INSTBENCH_GEMM_TUNE=1): {tu_sps:.1f} samples/s "
          f"({100 * (tu_sps / ib_sps - 1):+.1f}%; {tg.get('tuned', '?')} of {tg.get('shapes', '?')} shapes "
          f"changed algorithm" + (f", {tu_sps / pc['samples_per_second']:.2f}x torch.compile)" if pc else ")"))
PYEOF
if [ -n "$PROFILE" ]; then
  "$PY" - "$tmp" "$BATCH" > "$tmp/walls" <<'PYEOF'
import json, os, sys
tmp, batch = sys.argv[1], int(sys.argv[2])
ib = json.load(open(os.path.join(tmp, "instbench.json")))
pt = json.loads(open(os.path.join(tmp, "torch.json")).read().strip().splitlines()[-1])
st = sorted(pt["step_time_s"])
print(batch / ib["measurement"]["samples_per_second"], st[len(st) // 2], pt.get("profile_steps", 5))
PYEOF
  read -r ibwall ptwall ptsteps < "$tmp/walls"
  classes() {   # TRACE WALL OUT: the per-class table of an instbench trace against PyTorch's, into OUT.{txt,json}
    "$PY" "$here/../gpu/kernel_classes.py" --instbench "$1" --instbench-wall "$2" --steps 5 \
        --torch "$tmp/torch_kernels.tsv" --torch-wall "$ptwall" --torch-steps "$ptsteps" --json "$3.json" | tee "$3.txt"
  }
  classes "$tmp/instbench_kernels.tsv" "$ibwall" "$tmp/kernels"
  if [ -s "$tmp/instbench_nondet_kernels.tsv" ]; then
    ndwall=$("$PY" -c 'import json, sys; print(int(sys.argv[2]) / json.load(open(sys.argv[1]))["measurement"]["samples_per_second"])' \
        "$tmp/instbench_nondet.json" "$BATCH")
    echo "--- instbench with cuDNN's non-deterministic backward against the same PyTorch run"
    classes "$tmp/instbench_nondet_kernels.tsv" "$ndwall" "$tmp/kernels_nondet"
  fi
fi
