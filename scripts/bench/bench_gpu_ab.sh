#!/bin/sh
# Two instbench builds on the same GPU in the same call, run in turns (A B A B ...), so that what a
# change to the CUDA step is worth is measured against the code before it, not against a figure
# from another day or another GPU (the 2026-11-28 H200 call did this by hand: call1-2/call1.txt).
# A is the baseline, B the build under test; each run is `instbench measure --backend cuda` of
# ViT-B/16, batch 128, bf16, synthetic data on the GPU, 60 timed steps after 10 warm-up (MEASURE
# flags after -- replace that workload).  Each binary loads the CUDA module beside it, unless
# INSTBENCH_CUDA_MODULE names one for both.  Prints samples/s, MFU and GEMM share of every run, then
# B against A: the mean of each over the pairs, the change in samples/s and in ms a step.
#
# usage: scripts/bench/bench_gpu_ab.sh --a BIN --b BIN [--pairs N] [--out DIR] [-- MEASURE_FLAGS...]
#   --pairs  A/B pairs (default 2)
#   --out    keep each run's result as DIR/a1.json, b1.json, ... (default: a temporary directory)
# Exit status: 0, 1 when a run fails (its error printed), 2 for bad arguments.
set -eu
A=
B=
PAIRS=2
OUTDIR=
PY=${PYTHON:-python3}
while [ $# -gt 0 ]; do
    case "$1" in
        --a) A=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --b) B=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --pairs) PAIRS=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --out) OUTDIR=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --) shift; break ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench_gpu_ab.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for bin in "$A" "$B"; do
    [ -n "$bin" ] && [ -x "$bin" ] || { echo "bench_gpu_ab.sh: --a and --b name instbench binaries ('$bin' is not one)" >&2; exit 2; }
done
case "$PAIRS" in ''|*[!0-9]*|0) echo "bench_gpu_ab.sh: --pairs takes a whole number above 0" >&2; exit 2 ;; esac
if [ $# -eq 0 ]; then
    set -- --model vit_base_patch16_224 --batch-size 128 --precision bf16 --steps 60 --warmup 10
fi
if [ -n "$OUTDIR" ]; then mkdir -p "$OUTDIR"; tmp=$OUTDIR; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi

i=1
while [ $i -le "$PAIRS" ]; do
    for side in a b; do
        if [ $side = a ]; then bin=$A; else bin=$B; fi
        "$bin" measure --backend cuda --data device "$@" --format json --output "$tmp/$side$i.json" \
            > /dev/null 2> "$tmp/$side$i.err" ||
            { echo "bench_gpu_ab.sh: run $side$i ($bin) failed:" >&2; cat "$tmp/$side$i.err" >&2; exit 1; }
    done
    i=$((i + 1))
done
"$PY" - "$tmp" "$PAIRS" "$A" "$B" <<'PYEOF'
import json, os, sys
tmp, pairs, a_bin, b_bin = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = {}
print(f"{'RUN':<5} {'SAMPLES/S':>10} {'MFU':>6} {'GEMM SHARE':>10}")
for i in range(1, pairs + 1):
    for side in "ab":
        m = json.load(open(os.path.join(tmp, f"{side}{i}.json")))["measurement"]
        runs.setdefault(side, []).append(m)
        pct = lambda x: f"{100 * x:.1f}%" if isinstance(x, (int, float)) else "-"
        print(f"{side}{i:<4} {m['samples_per_second']:10.1f} {pct(m.get('mfu')):>6} {pct(m.get('gemm_share')):>10}")
mean = {s: sum(m["samples_per_second"] for m in runs[s]) / pairs for s in "ab"}
batch = json.load(open(os.path.join(tmp, "a1.json")))
gb = (batch.get("workload") or {}).get("global_batch_size") or (batch.get("workload") or {}).get("batch_size_per_device")
step = "" if not gb else f"; {1000 * gb / mean['a']:.1f} -> {1000 * gb / mean['b']:.1f} ms a step"
print(f"A: {a_bin}\nB: {b_bin}")
print(f"B against A: {100 * (mean['b'] / mean['a'] - 1):+.1f}% (mean of {pairs} pair{'s' if pairs > 1 else ''}: "
      f"{mean['a']:.1f} -> {mean['b']:.1f} samples/s{step})")
PYEOF
