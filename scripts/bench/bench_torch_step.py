#!/usr/bin/env python3
"""The PyTorch training step on the CPU that instbench measure mirrors, timed: timm's VisionTransformer
(timm.create_model(name)), nn.CrossEntropyLoss, torch.optim.Adam (defaults), bf16 via
torch.autocast('cpu', dtype=torch.bfloat16), torch threads = cores, synthetic data made once.
Prints one JSON line: {"samples_per_second": ..., "step_time_s": [...], ...}.
Used by scripts/bench/bench_cpu_vs_torch.sh."""
import argparse
import json
import os
import sys
import time

import torch

try:
    import timm
except ImportError:
    sys.exit("bench_torch_step.py: timm is not installed "
             "(scripts/bench/bench_cpu_vs_torch.sh --setup makes a venv with torch and timm)")

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--model", default="vit_tiny_patch16_224")
ap.add_argument("--batch-size", type=int, default=32)
ap.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
ap.add_argument("--steps", type=int, default=5)
ap.add_argument("--warmup", type=int, default=2)
ap.add_argument("--threads", type=int, default=os.cpu_count())
ap.add_argument("--max-seconds", type=float, default=0,
                help="stop the timed loop once this much time has passed (at least one step; 0: no limit); "
                     "PyTorch's bf16 on CPUs without bf16 hardware takes minutes per vit_base step")
a = ap.parse_args()

torch.set_num_threads(a.threads)
torch.manual_seed(0)
model = timm.create_model(a.model, pretrained=False)
model.train()
crit = torch.nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters())
images = torch.randn(a.batch_size, 3, 224, 224)
labels = torch.randint(0, model.num_classes, (a.batch_size,))


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
        out = model(images)
        loss = crit(out, labels)
    loss.backward()
    opt.step()
    return loss.item()


t_warm = time.perf_counter()
for _ in range(a.warmup):
    step()
    if a.max_seconds and time.perf_counter() - t_warm >= a.max_seconds / 2:   # slow enough to be warm
        break
times = []
for _ in range(a.steps):
    t0 = time.perf_counter()
    loss = step()
    times.append(time.perf_counter() - t0)
    if a.max_seconds and sum(times) >= a.max_seconds:
        break
times.sort()
median = times[len(times) // 2]
print(json.dumps({"samples_per_second": a.batch_size * len(times) / sum(times),
                  "median_samples_per_second": a.batch_size / median,
                  "step_time_s": times, "last_loss": loss, "torch": torch.__version__,
                  "timm": timm.__version__, "threads": a.threads}))
