"""scripts/gpu_traffic_model.py models the CUDA step it names kernel by kernel; this keeps that list
honest: for every timm fixture, cuda_vit_sim runs one training step (forward, backward, optimizer)
on the fixture's config with the real kernels and gemm.c, tracing every kernel launch and cuBLASLt
matmul (CUDASIM_TRACE), and the model's --check-trace must find the same kernels and the same GEMM
shapes, dtypes and bias epilogues, fused attention in bf16 and the unfused path in fp32.  The model
lists the built-in kernels, so bf16 runs with INSTBENCH_CUDA_ATTENTION=fused: the cuDNN path's
attention is cuDNN's own kernels, which the GPU run's kernel trace (scripts/kernel_trace) measures.
Usage: cuda_traffic_trace.py CUDA_VIT_SIM SCRIPT TEST_DATA_DIR"""
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile

from testlib import check, failures

SIM, SCRIPT, DATA = sys.argv[1:4]
refs = sorted(glob.glob(os.path.join(DATA, "ref_*.safetensors")))
check(len(refs) >= 4, "fixtures missing under %s" % DATA)
for i, ref in enumerate(refs):
    with open(ref, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        meta = json.loads(f.read(n))["__metadata__"]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.txt")
        # the fixtures alternate between cudasim's seeds 1 and 2
        p = subprocess.run([SIM, "--trace", ref, trace], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, CUDASIM_SEED=str(1 + i % 2), INSTBENCH_CUDA_ATTENTION=(
                               "fused" if meta["precision"] == "bf16" else "unfused")))
        if not check(p.returncode == 0 and os.path.exists(trace), "%s: cuda_vit_sim --trace: exit %d: %s"
                     % (os.path.basename(ref), p.returncode, p.stderr[-400:])):
            continue
        q = subprocess.run([sys.executable, SCRIPT, "--model", "custom", "--img", meta["img_size"], "--patch",
                            meta["patch_size"], "--dim", meta["embed_dim"], "--depth", meta["depth"], "--heads",
                            meta["num_heads"], "--classes", meta["num_classes"], "--mlp-ratio", meta["mlp_ratio"],
                            "--batch", meta["batch_size"], "--precision", meta["precision"], "--optimizer",
                            meta["optimizer"], "--check-trace", trace], capture_output=True, text=True, timeout=120)
        check(q.returncode == 0 and "trace matches the model" in q.stdout,
              "%s: the traffic model's kernel list differs from the step's launches (exit %d):\n%s%s"
              % (os.path.basename(ref), q.returncode, q.stdout[-1500:], q.stderr[-500:]))
        print("%s: %s" % (os.path.basename(ref), q.stdout.strip()))
print("cuda_traffic_trace: " + ("all checks passed" if not failures else "%d failed" % len(failures)))
sys.exit(1 if failures else 0)
