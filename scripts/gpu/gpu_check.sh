#!/bin/sh
# What a session with a GPU runs in one go to prove the CUDA backend (first passed on one H100,
# 2026-11-27: docs/benchmarks.md).  Each step logs to OUT/<step>.log; the run ends with a PASS /
# FAIL / SKIP line per step and OUT/summary.json (every step, its result and seconds, samples/s,
# MFU, attention and GEMM roads of the measure steps, the data-parallel scaling of ranks over
# measure, PyTorch eager's and torch.compile's samples/s, and instbench's with unfused attention
# from the torch step); the exit status is 1 if any step failed.  SKIP is for what this machine
# cannot do (timm, torchrun, compute-sanitizer or a second GPU missing), never for a failure.  Steps:
#   build      configure + build with CUDA (-DINSTBENCH_CUDA=ON) into build-gpu
#   ctest      the whole test suite of that build
#   verify     instbench verify --backend cuda --compare-backend cpu on every tests/data fixture
#              (CUDA vs timm, CPU vs timm, CUDA vs CPU per tensor)
#   realistic  the same on timm references at real shapes (vit_tiny_patch16_224: 197 tokens,
#              head dim 64), fp32 and bf16, made here by scripts/data/make_reference.py (SKIP without timm)
#   sanitize   compute-sanitizer memcheck, racecheck and initcheck over verify of one fixture, and
#              memcheck over a 2-block ViT-S measure at batch 3 (an odd B*H*T)
#   sanitize12 memcheck on a CUDA 12 build of the module (--cuda12-module, else the bundle's
#              bin/cuda12/) with cuDNN attention asked for by name (below CUDA 12.9 it is off by
#              default, as PyTorch's, for pytorch#169849's out-of-bounds read): verify of one
#              fixture and ViT-S/16 steps at 197 and 257 tokens (SKIP without such a build, its
#              CUDA 12 runtime and cuBLASLt on the loader path, or compute-sanitizer)
#   measure    measure --backend cuda, vit_base_patch16_224, batch 128, bf16, 50 steps, --data device:
#              samples/s, the loss finite at the first and last step and falling (one batch,
#              trained on every step)
#   host_data  the same with --data host (the default: images made on the CPU, copied each step)
#   auto_batch --batch-size auto: the batch it picks must run (no out-of-memory)
#   ranks      one process over every local GPU (--ranks N, NCCL) (SKIP with one GPU)
#   dp_equal   cuda_dp_module (tests/cuda/cuda_dp_host.c) on the real module: 2 ranks' averaged gradients equal the mean
#              of each alone and 1 rank at twice the batch, parameters identical across ranks, also
#              as 2 processes over the rendezvous (SKIP with one GPU)
#   torchrun   the same as N processes under torchrun (SKIP with one GPU or without torchrun)
#   torch      scripts/bench/bench_gpu_vs_torch.sh: instbench (cuDNN attention where it runs, and unfused and
#              cuDNN's non-deterministic backward for comparison) vs PyTorch eager (Adam's defaults)
#              and torch.compile (Adam(fused=True)), samples/s, MFU and GEMM share, for ViT-S/16,
#              ViT-B/16 and ViT-L/16 in the same call (bench/ is ViT-B's, with the bundle's kernel
#              trace the per-kernel-class side-by-side: bench/kernels.txt; bench-<model>/ the
#              others'; summary.json "models") (SKIP without torch)
#
# usage: scripts/gpu/gpu_check.sh [--out DIR] [--jobs N] [--skip STEP,...] [--only STEP,...] [--bin PATH]
#                             [--model NAME] [--model-args "..."] [--steps N] [--batch-size N]
#                             [--cuda12-module PATH] [--torch-models NAME,...]
#   --out   where logs and JSON go (default: $OUT when set, else build-gpu/check)
#   --skip, --only  steps left out, or the only steps run (names as above; an unknown name is an
#           error, so a misspelt step never runs on a GPU's scarce minutes)
#   --bin   an instbench already built (skips build and ctest); --model, --model-args (extra measure
#           flags such as "--image-size 32 --depth 1"), --steps and --batch-size (default 128) make
#           the measure steps small: the gpu_check_sim test runs this script so, on the CUDA
#           module simulated on the CPU (tests/fakes/cudasim), to prove the script itself; a folder made
#           by scripts/gpu/gpu_bundle.sh runs this script so, with no build (its ./run)
#   --cuda12-module  a libinstbench-cuda.so built with CUDA 12 for sanitize12
#   --torch-models   the models of the torch step, in this order (default vit_base_patch16_224,
#           vit_small_patch16_224,vit_large_patch16_224): a device call of 10 minutes holds ViT-B
#           and not always all three, so a session may run `--torch-models vit_base_patch16_224`
#           and the others in a call of their own (ViT-B's in bench/, the others' in bench-<model>/)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUTDIR=${OUT:-$root/build-gpu/check}
JOBS=$(nproc 2>/dev/null || echo 4)
SKIP=
ONLY=
BIN=
MODEL=vit_base_patch16_224
MODEL_ARGS=
STEPS=50
BATCH=128
CUDA12_MODULE=
TORCH_MODELS=vit_base_patch16_224,vit_small_patch16_224,vit_large_patch16_224
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUTDIR=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --skip) SKIP=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --bin) BIN=$2; shift 2 ;;
        --model) MODEL=$2; shift 2 ;;
        --model-args) MODEL_ARGS=$2; shift 2 ;;
        --steps) STEPS=$2; shift 2 ;;
        --batch-size) BATCH=$2; shift 2 ;;
        --cuda12-module) CUDA12_MODULE=$2; shift 2 ;;
        --torch-models) TORCH_MODELS=$2; shift 2 ;;
        -h|--help) sed -n '2,53p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu_check.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
case "$STEPS$BATCH" in ''|*[!0-9]*) echo "gpu_check.sh: --steps and --batch-size take whole numbers" >&2; exit 2 ;; esac
case ",$TORCH_MODELS," in
    *,,*|*[!a-z0-9_,]*) echo "gpu_check.sh: --torch-models takes model names separated by commas" >&2; exit 2 ;;
esac
ALL_STEPS="build ctest verify realistic sanitize sanitize12 measure host_data auto_batch ranks dp_equal torchrun torch"
for list in "$SKIP" "$ONLY"; do
    for s in $(echo "$list" | tr ',' ' '); do
        case " $ALL_STEPS " in
            *" $s "*) ;;
            *) echo "gpu_check.sh: no step '$s' (steps: $ALL_STEPS)" >&2; exit 2 ;;
        esac
    done
done
[ -z "$ONLY" ] || [ -z "$SKIP" ] || { echo "gpu_check.sh: --skip and --only together: give one" >&2; exit 2; }
mkdir -p "$OUTDIR"
BUILD=$root/build-gpu
if [ -n "$BIN" ]; then SKIP="build,ctest,$SKIP"; else BIN=$BUILD/instbench; fi
PY=${PYTHON:-python3}
summary=$OUTDIR/summary.txt
steps_tsv=$OUTDIR/steps.tsv
: > "$summary"
: > "$steps_tsv"
status=0
SKIPPED=77   # a step's exit status for "this machine cannot do it"

skipped() {   # skipped NAME: named by --skip (or left out of --only; build and ctest under --bin)
    case ",$SKIP," in *",$1,"*) return 0 ;; esac
    [ -n "$ONLY" ] || return 1
    case ",$ONLY," in *",$1,"*) return 1 ;; esac
    return 0
}
record() {   # record NAME RESULT SECONDS
    echo "$2  $1 ($3 s)" | tee -a "$summary"
    printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$steps_tsv"
}
# step NAME COMMAND...: runs it with its output in OUT/NAME.log, records PASS/FAIL/SKIP and the time.
step() {
    name=$1; shift
    # the names --skip and --only accept: a step missing there could be neither left out nor chosen
    case " $ALL_STEPS " in *" $name "*) ;; *) echo "gpu_check.sh: step '$name' is not in ALL_STEPS" >&2; exit 2 ;; esac
    if skipped "$name"; then record "$name" SKIP 0; return 0; fi
    echo "== $name: $*" >&2
    t0=$(date +%s)
    "$@" > "$OUTDIR/$name.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then r=PASS; elif [ $rc -eq $SKIPPED ]; then r=SKIP; else r=FAIL; status=1; fi
    record "$name" $r $(( $(date +%s) - t0 ))
    [ $r != FAIL ] || tail -n 30 "$OUTDIR/$name.log" >&2
}

{ nvidia-smi || true; nvcc --version || true; } > "$OUTDIR/machine.log" 2>&1
step build sh -c "cmake -S '$root' -B '$BUILD' -DINSTBENCH_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build '$BUILD' -j $JOBS"
[ -x "$BIN" ] || { echo "FAIL  no binary at $BIN: the remaining steps need the build" | tee -a "$summary"; exit 1; }
step ctest sh -c "cd '$BUILD' && ctest --output-on-failure -j $JOBS"

verify_all() {   # verify_all FILE...: every reference through cuda, compared with cpu
    rc=0
    for ref in "$@"; do
        base=$(basename "$ref" .safetensors)
        echo "--- $base"
        "$BIN" verify --reference "$ref" --backend cuda --compare-backend cpu --format table || rc=1
        "$BIN" verify --reference "$ref" --backend cuda --compare-backend cpu --format json > "$OUTDIR/verify_$base.json" || rc=1
    done
    return $rc
}
step verify verify_all "$root"/tests/data/ref_*.safetensors

realistic() {
    "$PY" -c 'import timm' 2>/dev/null || { echo "timm is not installed: no realistic-shape references"; return $SKIPPED; }
    # the references (tens of MB each) stay out of OUT, which a GPU session brings back whole:
    # only the verify reports go there
    refs=$(mktemp -d) || return 1
    rc=0
    for prec in fp32 bf16; do
        "$PY" "$here/../data/make_reference.py" --model vit_tiny_patch16_224 --batch-size 4 --steps 3 --precision $prec \
            --output "$refs/ref_vit_tiny_$prec.safetensors" || rc=1
    done
    [ $rc = 0 ] && { verify_all "$refs"/ref_vit_tiny_fp32.safetensors "$refs"/ref_vit_tiny_bf16.safetensors || rc=1; }
    rm -rf "$refs"
    return $rc
}
step realistic realistic

sanitize() {   # every tool over one fixture: out-of-bounds, races in shared memory, uninitialised reads
    command -v compute-sanitizer >/dev/null 2>&1 || { echo "no compute-sanitizer on PATH"; return $SKIPPED; }
    rc=0
    for tool in memcheck racecheck initcheck; do
        echo "--- $tool"
        # racecheck does not model the mbarriers through which cuDNN's Hopper SDPA kernels
        # synchronise (55 hazards inside them on every H100/H200 run, docs/benchmarks.md): it
        # checks ours, with cuDNN's left out
        excl=
        [ $tool = racecheck ] && excl="--kernel-name-exclude kns=cudnn"
        # shellcheck disable=SC2086  # excl is a flag and its value
        compute-sanitizer --tool $tool $excl --error-exitcode 3 "$BIN" verify --backend cuda \
            --reference "$root/tests/data/ref_a_adam_bf16.safetensors" || rc=1
    done
    # measure's own buffers with cuDNN attention: two blocks at an odd batch, so B*H*T (3*6*197) is
    # no multiple of 4 and block 1's statistics start where only the plan's rounding aligns them
    echo "--- memcheck, measure ViT-S/16 2 blocks batch 3"
    compute-sanitizer --tool memcheck --error-exitcode 3 "$BIN" measure --backend cuda \
        --model vit_small_patch16_224 --depth 2 --batch-size 3 --precision bf16 --steps 2 --warmup 1 \
        --cuda-graphs off --checkpoint off --format json --output "$OUTDIR/sanitize_measure.json" || rc=1
    return $rc
}
step sanitize sanitize

sanitize12() {   # memcheck with cuDNN attention on a CUDA 12 build (issue 37, D6)
    command -v compute-sanitizer >/dev/null 2>&1 || { echo "no compute-sanitizer on PATH"; return $SKIPPED; }
    m=$CUDA12_MODULE
    [ -n "$m" ] || [ ! -f "$(dirname "$BIN")/cuda12/libinstbench-cuda.so" ] || m=$(dirname "$BIN")/cuda12/libinstbench-cuda.so
    [ -n "$m" ] || { echo "no CUDA 12 build of the module (--cuda12-module, or gpu_bundle.sh with CUDA12_HOME)"; return $SKIPPED; }
    if ldd "$m" | grep 'not found'; then
        echo "$m: its CUDA 12 libraries are not on the loader path (above)"; return $SKIPPED
    fi
    rc=0
    echo "--- verify, bf16 fixture"
    INSTBENCH_CUDA_MODULE=$m INSTBENCH_CUDA_ATTENTION=cudnn compute-sanitizer --tool memcheck --error-exitcode 3 \
        "$BIN" verify --backend cuda --reference "$root/tests/data/ref_a_adam_bf16.safetensors" || rc=1
    for px in 224 256; do   # 197 and 257 tokens, head dim 64 (pytorch#169849's fault was at 261)
        echo "--- ViT-S/16 at $px px"
        INSTBENCH_CUDA_MODULE=$m INSTBENCH_CUDA_ATTENTION=cudnn compute-sanitizer --tool memcheck --error-exitcode 3 \
            "$BIN" measure --backend cuda --model vit_small_patch16_224 --image-size $px --precision bf16 \
            --batch-size 4 --steps 2 --warmup 1 --cuda-graphs off --format json \
            --output "$OUTDIR/sanitize12_$px.json" || rc=1
    done
    return $rc
}
step sanitize12 sanitize12

# measure_check NAME ARGS...: a run whose result must exist with a finite first and last loss;
# with --data device (one batch made once and trained on every step) the loss must also fall
measure_check() {
    name=$1; shift
    case " $* " in *" --data device "*) falls=1 ;; *) falls=0 ;; esac
    # shellcheck disable=SC2086  # MODEL_ARGS is a list of flags
    "$BIN" measure --backend cuda --model "$MODEL" $MODEL_ARGS --precision bf16 --steps "$STEPS" --warmup 5 \
        --format json --output "$OUTDIR/$name.json" "$@" || return 1
    "$PY" - "$OUTDIR/$name.json" "$falls" <<'EOF'
import json, math, sys
m = json.load(open(sys.argv[1]))["measurement"]
ok = m["samples_per_second"] > 0 and math.isfinite(m["first_loss"]) and math.isfinite(m["last_loss"])
print("samples/s %.1f, loss %.4f -> %.4f" % (m["samples_per_second"], m["first_loss"], m["last_loss"]))
if sys.argv[2] == "1" and not m["last_loss"] < m["first_loss"]:
    print("FAIL: the same batch every step, yet the loss did not fall")
    ok = False
sys.exit(0 if ok else 1)
EOF
}
step measure measure_check measure --data device --batch-size "$BATCH"
step host_data measure_check host_data --data host --batch-size "$BATCH"
step auto_batch measure_check auto_batch --data device --batch-size auto --ranks 1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
ngpu=${ngpu:-0}
many() { [ "$ngpu" -gt 1 ] || { echo "one GPU here: no data parallelism to check"; return $SKIPPED; }; "$@"; }
step ranks many measure_check ranks --data device --batch-size "$BATCH" --ranks "$ngpu"
dp_equal() {   # 2 GPUs vs 1: averaged gradients, 1 rank at twice the batch, parameters across ranks
    prog=$(dirname "$BIN")/cuda_dp_module   # beside --bin (scripts/gpu/gpu_bundle.sh puts it there)
    [ -x "$prog" ] || prog=$BUILD/tests/cuda_dp_module
    [ -x "$prog" ] || { echo "no $prog (built by the build step)"; return $SKIPPED; }
    (cd "$root/tests" && INSTBENCH_CUDA_MODULE="$(dirname "$BIN")/libinstbench-cuda.so" "$prog")
}
step dp_equal many dp_equal
torchrun_check() {
    command -v torchrun >/dev/null 2>&1 || { echo "no torchrun on PATH"; return $SKIPPED; }
    # shellcheck disable=SC2086
    torchrun --standalone --nproc-per-node "$ngpu" --no-python "$BIN" measure --backend cuda --model "$MODEL" \
        $MODEL_ARGS --precision bf16 --steps "$STEPS" --warmup 5 --data device --batch-size "$BATCH" --format json \
        --output "$OUTDIR/torchrun.json"
}
step torchrun many torchrun_check
torch_bench() {
    "$PY" -c 'import torch, timm' 2>/dev/null || { echo "PyTorch + timm are not installed"; return $SKIPPED; }
    trace=$(dirname "$BIN")/libkernel_trace.so   # the bundle's (scripts/gpu/gpu_bundle.sh): per-kernel-class side-by-side
    # every size against the same PyTorch in one call (one yardstick across models), ViT-B (the
    # default workload) with the per-kernel-class side-by-side
    for m in $(echo "$TORCH_MODELS" | tr ',' ' '); do
        if [ "$m" != vit_base_patch16_224 ]; then
            "$here/../bench/bench_gpu_vs_torch.sh" --bin "$BIN" --model "$m" --out "$OUTDIR/bench-$m" || return 1
        elif [ -f "$trace" ]; then
            "$here/../bench/bench_gpu_vs_torch.sh" --bin "$BIN" --out "$OUTDIR/bench" --profile "$trace" || return 1
        else
            echo "no $trace: no per-kernel-class side-by-side"
            "$here/../bench/bench_gpu_vs_torch.sh" --bin "$BIN" --out "$OUTDIR/bench" || return 1
        fi
    done
}
step torch torch_bench

# One JSON document of every step, with the samples/s of the measure steps and PyTorch's.
"$PY" - "$OUTDIR" <<'EOF'
import json, os, sys
out = sys.argv[1]
steps = []
for line in open(os.path.join(out, "steps.tsv")):
    name, result, secs = line.rstrip("\n").split("\t")
    s = {"step": name, "result": result, "seconds": int(secs)}
    path = os.path.join(out, name + ".json")
    if name in ("measure", "host_data", "auto_batch", "ranks", "torchrun") and os.path.exists(path):
        doc = json.load(open(path))
        s["samples_per_second"] = doc["measurement"]["samples_per_second"]
        s["batch_size_per_device"] = doc["workload"]["batch_size_per_device"]
        s["world_size"] = doc["topology"]["world_size"]
        s["mfu"] = doc["measurement"].get("mfu")
        s["attention"] = doc["hardware"].get("attention")
        s["cudnn"] = doc["hardware"].get("cudnn")
        s["gemm"] = doc["hardware"].get("gemm")   # the GEMM roads: cuBLAS fallbacks, bias kernels
    steps.append(s)


def torch_sps(name):   # bench_gpu_vs_torch.sh --out: a PyTorch step's JSON is the last line of NAME.json
    try:
        return json.loads(open(os.path.join(out, "bench", name + ".json")).read().strip().splitlines()[-1])[
            "samples_per_second"]
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None


# data-parallel scaling: N ranks' samples/s over N times one rank's (the "measure" step)
by = {s["step"]: s for s in steps}
scaling = None
if by.get("ranks", {}).get("samples_per_second") and by.get("measure", {}).get("samples_per_second"):
    r = by["ranks"]
    scaling = r["samples_per_second"] / (r["world_size"] * by["measure"]["samples_per_second"])
def bench_sps(name):   # an instbench run of the torch step (instbench_unfused, instbench_nondet)
    try:
        return json.load(open(os.path.join(out, "bench", name + ".json")))["measurement"]["samples_per_second"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def bench_doc(name, last_line=False):
    try:
        text = open(os.path.join(out, "bench", name)).read()
        return json.loads(text.strip().splitlines()[-1]) if last_line else json.loads(text)
    except (OSError, ValueError, IndexError):
        return None


pt = bench_doc("torch.json", True) or {}


def model_row(folder):   # one model's instbench vs PyTorch from bench_gpu_vs_torch.sh --out FOLDER
    def last(name):
        try:
            return json.loads(open(os.path.join(out, folder, name + ".json")).read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            return None
    ib, pe, pc = last("instbench"), last("torch"), last("torch_compile")
    if not ib:
        return None
    sps = ib["measurement"]["samples_per_second"]
    row = {"instbench_samples_per_second": sps, "mfu": ib["measurement"].get("mfu"),
           "gemm_share": ib["measurement"].get("gemm_share"),
           "gemm_tflops_measured": ib["hardware"].get("gemm_tflops_measured"),
           "attention": ib["hardware"].get("attention")}
    for key, doc in (("pytorch_eager", pe), ("pytorch_compile", pc)):
        if doc and doc.get("samples_per_second"):
            row[key + "_samples_per_second"] = doc["samples_per_second"]
            row[key + "_adam"] = doc.get("adam")
            row["ratio_vs_" + key] = sps / doc["samples_per_second"]
    return row


models = {m: model_row(f) for m, f in (("vit_small_patch16_224", "bench-vit_small_patch16_224"),
                                        ("vit_base_patch16_224", "bench"),
                                        ("vit_large_patch16_224", "bench-vit_large_patch16_224"))}
json.dump({"steps": steps, "models": {m: r for m, r in models.items() if r}, "pytorch_samples_per_second": torch_sps("torch"),
           "pytorch_compile_samples_per_second": torch_sps("torch_compile"),
           "instbench_samples_per_second": bench_sps("instbench"),
           "instbench_unfused_samples_per_second": bench_sps("instbench_unfused"),
           "instbench_nondeterministic_samples_per_second": bench_sps("instbench_nondet"),
           "pytorch_cudnn_version": pt.get("cudnn_version"), "pytorch_sdpa_backend": pt.get("sdpa_backend"),
           "kernel_classes": bench_doc("kernels.json"), "dp_scaling": scaling,
           "passed": all(s["result"] != "FAIL" for s in steps)}, open(os.path.join(out, "summary.json"), "w"), indent=2)
EOF

echo "--- summary ($OUTDIR/summary.txt, $OUTDIR/summary.json)"
cat "$summary"
exit $status
