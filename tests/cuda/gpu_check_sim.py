#!/usr/bin/env python3
"""scripts/gpu/gpu_check.sh, the script the first GPU machine runs, run here on the CUDA module
simulated on the CPU (libinstbench-cuda-sim.so, tests/fakes/cudasim) with a tiny model, so a mistake in
the script itself cannot cost that machine's time: every step it can take here passes, the steps
this machine cannot take (no compute-sanitizer, one GPU, no torchrun) are SKIP and not FAIL, and
summary.json lists every step with the samples/s of the measure steps.  (The real-shape
references and the PyTorch benchmark are skipped by flag: hours on the simulator.)
Usage: gpu_check_sim.py INSTBENCH SIM_MODULE REPO_ROOT"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testlib import check, failures  # noqa: E402

BIN, MODULE, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
STEPS = ["build", "ctest", "verify", "realistic", "sanitize", "sanitize12", "measure", "host_data", "auto_batch", "ranks",
         "dp_equal", "torchrun", "torch"]
MEASURED = ["measure", "host_data", "auto_batch"]
with tempfile.TemporaryDirectory() as out:
    # a small device, so --batch-size auto has something to find: 74 MiB held a batch above 8 with
    # unfused attention; 100 holds one above 8 with cuDNN's too (the module loads the stand-in,
    # whose workspace the plan holds as its graphs report it)
    env = dict(os.environ, INSTBENCH_CUDA_MODULE=MODULE, CUDASIM_FREE_MIB="100", AWS_EC2_METADATA_DISABLED="true",
               PATH="/usr/bin:/bin")   # no nvidia-smi, compute-sanitizer or torchrun: those steps SKIP
    p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "gpu", "gpu_check.sh"), "--bin", BIN, "--out", out,
                        "--model", "vit_tiny_patch16_224", "--model-args",
                        "--image-size 32 --patch-size 16 --embed-dim 32 --depth 1 --heads 2 --classes 10",
                        "--steps", "5", "--batch-size", "8",
                        # real-shape references and the PyTorch benchmark take hours on the simulator
                        "--skip", "realistic,torch"], capture_output=True, text=True, env=env, timeout=1200)
    check(p.returncode == 0, "gpu_check.sh exit %d:\n%s\n%s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    try:
        doc = json.load(open(os.path.join(out, "summary.json")))
    except (OSError, ValueError) as e:
        doc = {"steps": []}
        check(False, "no summary.json: %s" % e)
    got = {s["step"]: s for s in doc["steps"]}
    check(list(got) == STEPS, "steps %s, want %s" % (list(got), STEPS))
    for name in ["verify"] + MEASURED:
        check(got.get(name, {}).get("result") == "PASS", "%s: %s" % (name, got.get(name)))
    for name in MEASURED:
        check(got.get(name, {}).get("samples_per_second", 0) > 0, "%s: no samples/s in the summary" % name)
    check(got.get("auto_batch", {}).get("batch_size_per_device", 0) > 8,
          "auto_batch picked %s" % got.get("auto_batch", {}).get("batch_size_per_device"))
    for name in ["build", "ctest", "realistic", "sanitize", "sanitize12", "ranks", "dp_equal", "torchrun", "torch"]:
        check(got.get(name, {}).get("result") == "SKIP", "%s should be SKIP here: %s" % (name, got.get(name)))
    check(doc.get("passed") is True, "summary.json passed: %s" % doc.get("passed"))
print("gpu_check_sim: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
