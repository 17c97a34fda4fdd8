#!/usr/bin/env python3
"""One yardstick on the GPUs AWS rents (issue 37; GPUS below, which lacks V100, T4G, B300 and RTX
PRO 4500), checked without a GPU: the real executable with the whole CUDA module on the CPU
(libinstbench-cuda-sim.so, as cuda_sim_cli.py runs it) and NVIDIA's cudnn-frontend on the CPU
stand-in of libcudnn (tests/fakes/cudnn_standin.c), the host runtime pretending to be each GPU in
turn (CUDASIM_DEVICE: the name its driver reports, its compute capability, its memory;
tests/fakes/cuda_host_runtime.c).  For each, against NVIDIA's published
facts (below, not instbench's tables):

- bf16 on Turing (sm_75, the T4 of g4dn) is refused at once, by the run and by the dry run, exit 2,
  naming --precision fp32; fp32 runs there, attention unfused, and the result says why;
- bf16 on 8.0 and newer runs cuDNN's fused attention with its deterministic backward (cuDNN's
  support matrix, backend 9.18.1: Ampere/Ada, Hopper, Blackwell B200/B300 and consumer/RTX PRO
  Blackwell all run the SDPA backward deterministic at this head dim; the stand-in is 9.19.0);
- the result records the device's name, compute capability and memory, and its MFU denominator is
  the datasheet's dense figure for that GPU and precision (bf16 tensor, or plain FP32 for an fp32
  run: instbench's fp32 GEMMs run without TF32, CUBLAS_COMPUTE_32F), with its source; a GPU
  without a datasheet figure in the table gets no MFU and a warning naming it, never another GPU's;
- --batch-size auto and the fit check plan with the pretended device's memory (docs/usage.md: the
  largest batch that fits in 90% of the free memory; the host runtime leaves three quarters of its
  total free).

Usage: cuda_gpus.py INSTBENCH SIM_MODULE STANDIN"""
import os
import re
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import check, failures, offline_env, read_result, scratch_dir  # noqa: E402

BIN, MODULE, STANDIN = sys.argv[1:4]
TMP = scratch_dir("cuda_gpus.")
ENV = {k: v for k, v in offline_env(TMP).items() if k not in ("VIRTUAL_ENV", "CUDA_HOME", "LD_LIBRARY_PATH")}
ENV.update(INSTBENCH_CUDA_MODULE=os.path.abspath(MODULE), CUDASIM_SEED="1", INSTBENCH_CUDNN_LIBRARY=STANDIN,
           INSTBENCH_GPU_GEMM_SECONDS="0.01")
TINY = ["--model", "vit_tiny_patch16_224", "--image-size", "32", "--patch-size", "16", "--embed-dim", "32",
        "--depth", "1", "--heads", "2", "--classes", "10", "--ranks", "1"]

# Each GPU as its driver names it (nvidia-smi / cudaGetDeviceProperties on the AWS instance), its
# compute capability (developer.nvidia.com/cuda-gpus), its memory in MiB (nvidia-smi's total), and
# the dense TFLOP/s of NVIDIA's datasheet: bf16 tensor cores with fp32 accumulate, and plain FP32
# (non-tensor).  Datasheets print tensor rates "with sparsity", twice the dense rate: halved here.
#   T4 datasheet: FP32 8.1 TFLOPS; FP16/FP32 mixed 65; Turing has no bf16 tensor cores.
#   A10 datasheet: BF16 125 | 250* TF, FP32 31.2 TF.  NVIDIA publishes no A10G sheet: AWS's
#     variant of the A10 is given the A10's figures, and its source says so.
#   L4 datasheet: BF16 242* TF, FP32 30.3 TF.   L40S datasheet: BF16 362.05 | 733* TF, FP32 91.6 TF.
#   A100 datasheet (40GB and 80GB SXM columns): BF16 312 | 624* TF, FP32 19.5 TF.
#   H100 datasheet: SXM BF16 1,979* TF, FP32 67 TF; PCIe 1,513*, 51; NVL 1,671*, 60.
#   H200 datasheet: SXM BF16 1,979* TF, FP32 67 TF; NVL 1,671*, 60.
#   HGX B200 datasheet, 8 GPUs: FP16/BF16 36 PFLOPS*, FP32 600 TFLOPS -> 2,250 and 75 per GPU.
#   RTX PRO 6000 Blackwell Server Edition (G7e): its datasheet prints FP32 120 TFLOPS and FP4 "AI
#     TOPS" only, no dense bf16 figure; the table has no entry, so no MFU (and a warning).
# (name, cc, MiB, bf16 dense, fp32, a word the peak's source must hold)
GPUS = [
    ("Tesla T4", "7.5", 15360, None, 8.1, "T4"),
    ("NVIDIA A10G", "8.6", 23028, 125, 31.2, "A10G"),
    ("NVIDIA L4", "8.9", 23034, 121, 30.3, "L4 Tensor Core"),
    ("NVIDIA L40S", "8.9", 46068, 362.05, 91.6, "L40S"),
    ("NVIDIA A100-SXM4-40GB", "8.0", 40960, 312, 19.5, "A100 40GB SXM"),
    ("NVIDIA A100-SXM4-80GB", "8.0", 81920, 312, 19.5, "A100 80GB SXM"),
    ("NVIDIA H100 80GB HBM3", "9.0", 81559, 989.5, 67, "H100 SXM"),
    ("NVIDIA H100 PCIe", "9.0", 81559, 756.5, 51, "H100 PCIe"),
    ("NVIDIA H100 NVL", "9.0", 95830, 835.5, 60, "H100 NVL"),
    ("NVIDIA H200", "9.0", 143771, 989.5, 67, "H200 SXM"),
    ("NVIDIA H200 NVL", "9.0", 143771, 835.5, 60, "H200 NVL"),
    ("NVIDIA B200", "10.0", 183359, 2250, 75, "HGX B200"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", 97887, None, None, None),
]


def run(args, env):
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)


def device_env(name, cc, mib, **extra):
    return dict(ENV, CUDASIM_DEVICE="%s,%s,%d" % (name, cc, mib), **extra)


def measure(what, env, precision):
    """(result or None, the process)"""
    out = os.path.join(TMP, "r.json")
    if os.path.exists(out):
        os.remove(out)
    p = run(["measure", "--backend", "cuda", *TINY, "--precision", precision, "--batch-size", "2", "--steps", "1",
             "--warmup", "1", "--checkpoint", "off", "--output", out, "--format", "json"], env)
    return (read_result(out, what) if p.returncode == 0 and os.path.exists(out) else None), p


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-9 * b


for name, cc, mib, bf16, fp32, source in GPUS:
    env = device_env(name, cc, mib)
    for precision, peak in (("bf16", bf16), ("fp32", fp32)):
        what = "%s %s" % (name, precision)
        doc, p = measure(what, env, precision)
        if precision == "bf16" and float(cc) < 8:
            # Turing: refused before anything runs, naming the flag that fixes it; the dry run agrees
            check(p.returncode == 2 and doc is None and "--precision fp32" in p.stderr and name in p.stderr and
                  "compute capability %s" % cc in p.stderr and "instbench measure:" in p.stderr and
                  "attention" not in p.stderr and "cuBLASLt" not in p.stderr,
                  "%s: exit %d, want 2 at once naming --precision fp32: %s" % (what, p.returncode, p.stderr[-600:]))
            q = run(["measure", "--backend", "cuda", *TINY, "--precision", "bf16", "--batch-size", "2", "--dry-run"],
                    env)
            check(q.returncode == 2 and "--precision fp32" in q.stderr and "would measure" not in q.stdout,
                  "%s --dry-run: exit %d, want 2 as the run: %s %s" % (what, q.returncode, q.stdout[-300:],
                                                                       q.stderr[-300:]))
            continue
        check(p.returncode == 0 and doc, "%s: measure exit %d: %s" % (what, p.returncode, p.stderr[-800:]))
        if not doc:
            continue
        hw, m = doc["hardware"], doc["measurement"]
        dev = hw["devices"][0] if hw.get("devices") else {}
        check(dev.get("name") == name and dev.get("compute_capability") == cc and
              dev.get("memory_bytes") == mib << 20,
              "%s: hardware.devices[0] %r, want %s, %s, %d MiB" % (what, dev, name, cc, mib))
        cd = hw.get("cudnn") or {}
        if precision == "bf16":
            check(hw.get("attention") == "cudnn" and cd.get("deterministic") is True and cd.get("fallback") is None,
                  "%s: attention %r, cudnn %r (want cuDNN's deterministic backward, as its support matrix "
                  "allows on %s)" % (what, hw.get("attention"), cd, cc))
        else:
            # fp32 runs attention unfused (cuDNN's SDPA is fp16/bf16/fp8 only), and says so; on a
            # GPU below 8.0 also that cuDNN's SDPA needs 8.0 ("requires SM80 (Ampere) or newer")
            fb = str(cd.get("fallback"))
            check(hw.get("attention") == "unfused" and "fp32" in fb and ("8.0" in fb) == (float(cc) < 8) and
                  cd.get("deterministic") is None,
                  "%s: attention %r, cudnn %r (want unfused, saying why)" % (what, hw.get("attention"), cd))
        if peak is None:
            check(m.get("peak_tflops") is None and m.get("mfu") is None and
                  re.search(r"no %s peak known for '%s'" % (precision, re.escape(name)), p.stderr),
                  "%s: peak %r (%r): want none, and a warning naming the GPU: %s"
                  % (what, m.get("peak_tflops"), m.get("peak_source"), p.stderr[-400:]))
        else:
            check(close(m.get("peak_tflops"), peak) and source in str(m.get("peak_source")) and
                  "datasheet" in str(m.get("peak_source")) and
                  close(m.get("mfu"), m["model_tflops"] / peak),
                  "%s: peak %r from %r, want the datasheet's dense %g (%s)"
                  % (what, m.get("peak_tflops"), m.get("peak_source"), peak, source))


# ---- --batch-size auto and the fit check plan with the pretended device's memory ----------------------
def dry(env, model, precision, batch):
    """(exit status, the batch per device a dry run reports, stderr)"""
    p = run(["measure", "--backend", "cuda", "--model", model, "--precision", precision, "--ranks", "1",
             "--batch-size", str(batch), "--dry-run"], dict(env, INSTBENCH_PROBE_SECONDS="off"))
    b = re.search(r"batch (\d+) per device", p.stdout)
    return p.returncode, int(b.group(1)) if b else None, p.stderr


for name, cc, mib, precision in (("NVIDIA L4", "8.9", 23034, "bf16"), ("NVIDIA A100-SXM4-80GB", "8.0", 81920, "bf16"),
                                 ("Tesla T4", "7.5", 15360, "fp32")):
    env = device_env(name, cc, mib)
    rc, b, err = dry(env, "vit_base_patch16_224", precision, "auto")
    check(rc == 0 and b and b > 1, "%s auto: exit %d, batch %r: %s" % (name, rc, b, err[-400:]))
    if not b:
        continue
    available = 0.9 * mib * 3 / 4 / 1024   # GiB: 90% of the free three quarters
    rc1, _, err1 = dry(env, "vit_base_patch16_224", precision, b + 1)
    said = re.search(r"needs about [0-9.]+ GiB but ([0-9.]+) GiB is available; the largest batch that fits is (\d+)",
                     err1)
    check(rc1 == 2 and said and abs(float(said.group(1)) - available) <= 0.051 and int(said.group(2)) == b,
          "%s: batch %d (one above auto's) should be refused with %.1f GiB available: exit %d: %s"
          % (name, b + 1, available, rc1, err1[-400:]))
    check(dry(env, "vit_base_patch16_224", precision, b)[0] == 0, "%s: auto's batch %d refused" % (name, b))
print("cuda_gpus: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
