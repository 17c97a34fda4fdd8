#!/usr/bin/python3
"""Exercises the reference generator itself: make a tiny reference from timm now (a config unlike
the committed fixtures: 16x16 images, patch 4, D=24, 3 heads, MLP ratio 2, 5 classes, AdamW) and
check `instbench verify` passes on it.  usage: verify_regen.py INSTBENCH PRECISION

DNNL_MAX_CPU_ISA, where set, caps instbench's oneDNN only: PyTorch's own oneDNN would take it too
while PyTorch still picks its bf16 kernels from the CPU's real features, and fails ("could not
create a primitive descriptor") under a cap below them; the reference is timm on this CPU as it is."""
import os
import subprocess
import sys
import tempfile

bin_, prec = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.TemporaryDirectory(prefix="verify_regen_")
out = os.path.join(tmp.name, f"tiny_{prec}.safetensors")
torch_env = {k: v for k, v in os.environ.items() if k != "DNNL_MAX_CPU_ISA"}
subprocess.run([sys.executable, os.path.join(here, "..", "..", "scripts", "data", "make_reference.py"), "--img-size", "16",
                "--patch-size", "4", "--embed-dim", "24", "--depth", "2", "--num-heads", "3", "--mlp-ratio", "2",
                "--num-classes", "5", "--batch-size", "3", "--steps", "2", "--seed", "7", "--optimizer", "adamw",
                "--weight-decay", "0.1", "--precision", prec, "--threads", "1", "--output", out],
               check=True, timeout=300, env=torch_env)
p = subprocess.run([bin_, "verify", "--reference", out, "--format", "table"], capture_output=True, text=True, timeout=300)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
if p.returncode != 0 or "PASS" not in p.stdout:
    sys.exit(f"FAIL: verify exit {p.returncode} on a freshly made {prec} reference")
