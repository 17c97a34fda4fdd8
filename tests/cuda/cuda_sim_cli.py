#!/usr/bin/env python3
"""The real executable with the whole CUDA module running on the CPU (libinstbench-cuda-sim.so:
src/cuda/*.c with the kernels through tests/fakes/cudasim, gemm.c on the cuBLASLt stand-in, NCCL's
collectives between threads), loaded through INSTBENCH_CUDA_MODULE:

- `verify --backend cuda --compare-backend cpu` passes every timm fixture, fp32 and bf16: the CUDA
  step against timm's reference and against the CPU backend, tensor by tensor, and records which
  attention ran (cuDNN's fused SDPA in bf16, here NVIDIA's cudnn-frontend on the CPU stand-in of
  libcudnn, tests/fakes/cudnn_standin.c; unfused in fp32 or with INSTBENCH_CUDA_ATTENTION=unfused);
- `measure --backend cuda` runs end to end and writes a result that validates against
  schemas/result-v1.json: one rank with --data host, two ranks (data parallel over the NCCL
  stand-in) with --data device, and --batch-size auto on a device reporting little free memory
  (the batch it picks must fit: its estimate at that batch within 90% of the free memory, and
  the next batch not); with INSTBENCH_GEMM_TUNE=1 the CUDA graph captured after the timed warm-up
  replays the algorithm the timing chose.

Usage: cuda_sim_cli.py INSTBENCH SIM_MODULE TEST_DATA_DIR"""
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testlib import absent_path, check, failures, read_result  # noqa: E402

BIN, MODULE, DATA = sys.argv[1:4]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# INSTBENCH_TEST_CUDNN=1: the module carries the cuDNN glue (the build had cudnn-frontend's headers)
CUDNN = os.environ.get("INSTBENCH_TEST_CUDNN") == "1"
ENV = dict(os.environ, INSTBENCH_CUDA_MODULE=os.path.abspath(MODULE), AWS_EC2_METADATA_DISABLED="true",
           NO_COLOR="1", INSTBENCH_GPU_GEMM_SECONDS="0.05")
TINY = ["--model", "vit_tiny_patch16_224", "--image-size", "32", "--patch-size", "16", "--embed-dim", "32",
        "--depth", "1", "--heads", "2", "--classes", "10", "--steps", "5", "--warmup", "3"]


_runs = [0]


def run(args, env=ENV, timeout=600):
    """instbench ARGS; the runs alternate between cudasim's seeds 1 and 2 (its schedule, block order
    and stream order), so every part of this test runs under both over the fixtures"""
    _runs[0] += 1
    env = dict(env)
    env.setdefault("CUDASIM_SEED", str(1 + _runs[0] % 2))
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=env, timeout=timeout,
                          stdin=subprocess.DEVNULL)


# ---- --version -v: the module asked, its GPUs counted in words (the host runtime's count) ---------
with open(os.path.join(ROOT, "tests", "fakes", "cuda_host_runtime_internal.h")) as f:
    gpus = int(re.search(r"#define SHIM_DEVICES (\d+)", f.read()).group(1))
p = run(["-v", "--version"])
cuda_line = next((ln for ln in p.stdout.splitlines() if ln.startswith("cuda:")), "")
check(p.returncode == 0 and cuda_line.endswith(", %d GPU%s" % (gpus, "" if gpus == 1 else "s")),
      "--version -v: exit %d, want %d GPU(s) in words: %r" % (p.returncode, gpus, cuda_line))
# the host runtime reports no driver or runtime version (0, as a driver too old to say would):
# "unknown", not an empty word
check("driver supports CUDA unknown, runtime unknown," in cuda_line, "--version -v, versions unknown: %r" % cuda_line)

# ---- verify: every fixture, the CUDA step against timm and the CPU backend ------------------------
refs = sorted(glob.glob(os.path.join(DATA, "ref_*.safetensors")))
check(len(refs) >= 4, "fixtures missing under %s" % DATA)
for ref in refs:
    p = run(["verify", "--reference", ref, "--backend", "cuda", "--compare-backend", "cpu", "--format", "table"])
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    check(p.returncode == 0 and last.startswith("PASS") and "cuda vs cpu ok" in last,
          "verify --backend cuda %s: exit %d: %s\n%s" % (os.path.basename(ref), p.returncode, last, p.stderr[-600:]))

# verify records which attention ran: cuDNN in bf16 (the module loads the stand-in), the unfused
# path in fp32, on both sides of --compare-backend (the CPU backend is always unfused)
for ref in refs[:2]:   # fixture a, bf16 and fp32
    p = run(["verify", "--reference", ref, "--backend", "cuda", "--compare-backend", "cpu", "--format", "json"])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    want = "cudnn" if CUDNN and "bf16" in os.path.basename(ref) else "unfused"
    check(doc.get("attention") == want and doc.get("compare", {}).get("attention") == "unfused",
          "verify --format json %s: attention %r (want %r), cpu's %r" % (os.path.basename(ref), doc.get("attention"),
                                                                         want, doc.get("compare", {}).get("attention")))
# the built-in path by name, on the bf16 fixture
p = run(["verify", "--reference", refs[0], "--backend", "cuda"], env=dict(ENV, INSTBENCH_CUDA_ATTENTION="unfused"))
check(p.returncode == 0 and "(attention unfused)" in p.stderr,
      "INSTBENCH_CUDA_ATTENTION=unfused: exit %d, %s" % (p.returncode, p.stderr[-300:]))
# a path that is not one: refused before anything runs, naming the accepted values; `fused` (the
# built-in flash-attention kernels, removed in issue 37) is one no longer, and says so
for path in ("flash", "fused"):
    p = run(["verify", "--reference", refs[0], "--backend", "cuda"], env=dict(ENV, INSTBENCH_CUDA_ATTENTION=path))
    check(p.returncode != 0 and "expected cudnn or unfused" in p.stderr
          and (path != "fused" or "removed" in p.stderr) and "(attention" not in p.stderr,
          "INSTBENCH_CUDA_ATTENTION=%s: exit %d, %s" % (path, p.returncode, p.stderr[-300:]))
# no cuDNN to load: bf16 falls back to the unfused path and says why; asked for cuDNN, it refuses
if CUDNN:
    absent = absent_path("libcudnn.so.9")
    no_cudnn = dict(ENV, INSTBENCH_CUDNN_LIBRARY=absent)
    p = run(["verify", "--reference", refs[0], "--backend", "cuda"], env=no_cudnn)
    check(p.returncode == 0 and "(attention unfused)" in p.stderr and absent in p.stderr,
          "no cuDNN: exit %d, %s" % (p.returncode, p.stderr[-400:]))
    p = run(["verify", "--reference", refs[0], "--backend", "cuda"], env=dict(no_cudnn, INSTBENCH_CUDA_ATTENTION="cudnn"))
    check(p.returncode != 0 and "INSTBENCH_CUDA_ATTENTION=cudnn" in p.stderr,
          "no cuDNN, cudnn asked for: exit %d, %s" % (p.returncode, p.stderr[-400:]))

# ---- measure --------------------------------------------------------------------------------------
def measure(extra, env=ENV, fmt="json"):
    """the result written to --output and the run (FMT: what it printed, json or the table)"""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        p = run(["measure", "--backend", "cuda", *TINY, *extra, "--output", out, "--format", fmt], env=env)
        check(p.returncode == 0, "measure %s: exit %d: %s" % (" ".join(extra), p.returncode, p.stderr[-800:]))
        if p.returncode:
            return None, p
        doc = read_result(out, "measure %s" % " ".join(extra))
        m = doc["measurement"]
        check(doc["hardware"]["backend"] == "cuda" and m["samples_per_second"] > 0 and
              math.isfinite(m["first_loss"]) and math.isfinite(m["last_loss"]),
              "measure %s: backend %s, %s samples/s, losses %s %s" % (" ".join(extra), doc["hardware"]["backend"],
                                                                    m["samples_per_second"], m["first_loss"],
                                                                    m["last_loss"]))
        return doc, p


doc, _ = measure(["--batch-size", "8", "--data", "host", "--ranks", "1"])
if doc:
    check(doc["workload"]["data"] == "host" and doc["topology"]["world_size"] == 1, "host data, 1 rank: %s %s"
          % (doc["workload"]["data"], doc["topology"]))
    check(doc["workload"]["precision"] == "bf16" and doc["hardware"].get("attention") == ("cudnn" if CUDNN else "unfused"),
          "bf16 measure: attention %r" % doc["hardware"].get("attention"))
    cd = doc["hardware"].get("cudnn") or {}
    check(not CUDNN or (cd.get("version") == "9.19.0" and str(cd.get("library")).endswith("libcudnn-standin.so") and
                        cd.get("fallback") is None),
          "bf16 measure: hardware.cudnn %r (want the stand-in, 9.19.0)" % cd)
    check(doc["hardware"].get("cuda_graphs") is True, "one rank: cuda_graphs %r" % doc["hardware"].get("cuda_graphs"))
    # cuBLASLt's rate on the model's GEMMs, measured on the stand-in before the run, and the
    # step's share of it (model FLOP/s over that rate x the job's GPUs)
    g, m = doc["hardware"].get("gemm_tflops_measured"), doc["measurement"]
    check(isinstance(g, float) and g > 0 and isinstance(m.get("gemm_share"), float) and
          abs(m["gemm_share"] - m["model_tflops"] / (g * doc["topology"]["world_size"])) <= 1e-9 * m["gemm_share"],
          "gemm_tflops_measured %r, gemm_share %r, model_tflops %r" % (g, m.get("gemm_share"), m["model_tflops"]))
    # the roads the step's GEMMs took: every shape on cuBLASLt's algorithms, every bias in the epilogue
    gp = doc["hardware"].get("gemm") or {}
    check(gp.get("shapes", 0) > 6 and gp.get("cublas_fallback") == 0 and gp.get("bias_kernel") == 0
          and "gemm_fallback" not in m.get("warning_codes", []),
          "hardware.gemm %r, warnings %r: want every shape on cuBLASLt" % (gp, m.get("warning_codes")))
    check(gp.get("tuned") == 0, "hardware.gemm %r: tuned without INSTBENCH_GEMM_TUNE" % gp)
doc, _ = measure(["--batch-size", "8", "--data", "device", "--ranks", "1", "--cuda-graphs", "off"])
if doc:
    check(doc["hardware"].get("cuda_graphs") is False, "--cuda-graphs off: %r" % doc["hardware"].get("cuda_graphs"))
# INSTBENCH_GEMM_TUNE=1 with a cuBLASLt offering three algorithms, the second the fastest (the
# stand-in's virtual clock): the step's first, eager call of each shape times them, the CUDA graph
# captured after it records the chosen ones, and the result counts the shapes tuned.  The stand-in
# logs every GEMM as it runs (CUBLASLT_STANDIN_RUNS): each step the graph replays runs the second
# algorithm for every GEMM that writes C whole (beta 0: timed), and the heuristic's first for those
# that accumulate (never timed).
with tempfile.TemporaryDirectory() as tmp:
    runs_log = os.path.join(tmp, "runs.log")
    doc, p = measure(["--batch-size", "8", "--data", "device", "--ranks", "1"],
                     env=dict(ENV, INSTBENCH_GEMM_TUNE="1", CUBLASLT_STANDIN_ALGOS="0.1,0.4,0.2",
                              CUBLASLT_STANDIN_RUNS=runs_log), fmt="table")
    runs = [dict(kv.split("=") for kv in line.split()) for line in open(runs_log)] if os.path.exists(runs_log) else []
if doc:
    gp = doc["hardware"].get("gemm") or {}
    check(doc["hardware"].get("cuda_graphs") is True and gp.get("cublas_fallback") == 0 and
          0 < gp.get("tuned", 0) <= gp.get("shapes", 0),
          "INSTBENCH_GEMM_TUNE=1: hardware.gemm %r, cuda_graphs %r" % (gp, doc["hardware"].get("cuda_graphs")))
    check("GEMM tuning  %d shape" % gp.get("tuned", 0) in p.stdout,
          "INSTBENCH_GEMM_TUNE=1: no 'GEMM tuning' line in measure's table:\n%s" % p.stdout[-900:])
    replayed = [r for r in runs if r["replay"] == "1"]
    wrong = sorted({"%s (beta %s): algorithm %s" % (" ".join("%s=%s" % (k, r[k]) for k in ("batch", "M", "N", "K")),
                                                   r["beta"], int(r["algo"]) + 1)
                    for r in replayed if r["algo"] != ("1" if r["beta"] == "0" else "0")})
    timed = {tuple(r[k] for k in ("batch", "M", "N", "K")) for r in replayed if r["beta"] == "0"}
    check(timed and gp.get("tuned", 0) > 0 and not wrong,
          "INSTBENCH_GEMM_TUNE=1: the replayed steps ran %d GEMMs of %d shapes writing C whole (hardware.gemm %r); "
          "not the algorithm timed as fastest (2) or, accumulating, the heuristic's first (1): %s"
          % (len(replayed), len(timed), gp, "; ".join(wrong[:6]) or "none"))
# a cuBLASLt that offers no algorithm (the stand-in told so): every shape through cuBLAS, and the
# bias of each of the six Linears with one (patch embedding, qkv, proj, fc1, fc2, head: distinct
# shapes at depth 1) written by a kernel; the result says so and warns, and rank carries the code
doc, p = measure(["--batch-size", "8", "--data", "device", "--ranks", "1"],
                 env=dict(ENV, CUBLASLT_STANDIN_HEURISTIC="zero"), fmt="table")
if doc:
    gp, m = doc["hardware"].get("gemm") or {}, doc["measurement"]
    check(gp.get("shapes", 0) > 6 and gp.get("cublas_fallback") == gp.get("shapes") and gp.get("bias_kernel") == 6,
          "no cuBLASLt algorithm: hardware.gemm %r, want every shape through cuBLAS, 6 bias kernels" % gp)
    check("gemm_fallback" in m.get("warning_codes", []) and "gemm_fallback" not in p.stderr
          and "ran through cuBLAS" in p.stderr, "no cuBLASLt algorithm: warning codes %r, stderr %s"
          % (m.get("warning_codes"), p.stderr[-600:]))
    want = "GEMM roads   %d shapes: %d through cuBLAS, 6 with a bias kernel" % (gp.get("shapes"), gp.get("shapes"))
    check(want in p.stdout, "measure's table: no %r line:\n%s" % (want, p.stdout[-900:]))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        json.dump(doc, open(out, "w"))
        r = run(["rank", out, "--price", "%s=1.0" % doc["instance"]["hostname"], "--format", "json"])
        rows = json.loads(r.stdout).get("rows", []) if r.returncode == 0 and r.stdout.strip() else []
        check(len(rows) == 1 and "gemm_fallback" in (rows[0].get("warnings") or []),
              "rank of that result: exit %d, rows %r, %s" % (r.returncode, rows, r.stderr[-400:]))
        r = run(["rank", out, "--price", "%s=1.0" % doc["instance"]["hostname"], "--format", "table"])
        check(r.returncode == 0 and "gemm_fallback: some of the step's GEMM shapes" in r.stdout,
              "rank --format table: no note on the GEMM roads: exit %d\n%s" % (r.returncode, r.stdout[-800:]))
doc, _ = measure(["--batch-size", "8", "--data", "device", "--ranks", "2"])
if doc:
    check(doc["topology"]["world_size"] == 2 and doc["workload"]["global_batch_size"] == 16,
          "2 ranks: topology %s, global batch %s" % (doc["topology"], doc["workload"]["global_batch_size"]))
    check(doc["hardware"].get("cuda_graphs") is False, "2 ranks launch eagerly: cuda_graphs %r"
          % doc["hardware"].get("cuda_graphs"))

# --batch-size auto on a device with 80 MiB free: the batch measure picks fits, the next does not
# (the estimate each would need is what `measure --dry-run --batch-size N` reports as needed memory).
# fp32: its larger activations keep the batch, and the CPU-run step, small.
free = 80
env = dict(ENV, CUDASIM_FREE_MIB=str(free))
doc, p = measure(["--batch-size", "auto", "--ranks", "1", "--precision", "fp32"], env=env)
if doc:
    b = doc["workload"]["batch_size_per_device"]
    check(0 < b < 8192, "auto batch %d on a device with %d MiB free" % (b, free))

    def refused(batch):
        q = run(["measure", "--backend", "cuda", *TINY, "--batch-size", str(batch), "--ranks", "1", "--dry-run",
                 "--precision", "fp32"], env=env)
        return q.returncode != 0 and re.search(r"needs about [0-9.]+ GiB but", q.stderr) is not None
    check(not refused(b), "the auto batch %d is itself refused as too big" % b)
    check(refused(b + 1), "batch %d (one more than auto's %d) still fits: auto did not pick the largest" % (b + 1, b))

# a device too small for batch 1: a usage error in MiB (GiB with one decimal would read "0.1 GiB
# needed, 0.1 GiB available"), naming what grows with the tokens: with cuDNN attention not their square
q = run(["measure", "--backend", "cuda", *TINY, "--batch-size", "auto", "--ranks", "1", "--dry-run"],
        env=dict(ENV, CUDASIM_FREE_MIB="66"))
grows = "activation memory grows with them" if CUDNN else "attention memory grows with their square"
check(q.returncode == 2 and re.search(r"batch 1 needs about \d+ MiB but \d+ MiB is available", q.stderr) and
      grows in q.stderr, "too small a device: exit %d: %s" % (q.returncode, q.stderr))

print("cuda_sim_cli: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
