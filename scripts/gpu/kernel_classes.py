#!/usr/bin/env python3
"""Where a training step's GPU time goes, per kernel class, instbench beside PyTorch.

Reads two traces in the same TSV form (kind, start ns, end ns, name; '#' lines are comments):
  --instbench  scripts/gpu/kernel_trace (CUPTI, CUDA_INJECTION64_PATH) over an `instbench measure` run;
               the steps are cut at each optimizer (Adam) kernel, and the last --steps are kept
  --torch      scripts/bench/bench_torch_gpu_step.py --profile (torch.profiler over --profile-steps steps)
and each side's wall time per step (the untraced runs' median, seconds).  Prints one table, ms per
step per class (attention, GEMM, LayerNorm, elementwise, optimizer, copies, other, launch gaps =
wall - time with a kernel running) and the ratio, then each side's heaviest kernels; --json writes
the same numbers.  Classes are decided by name alone (CLASSES below), the same rules for both."""
import argparse
import json
import re
import sys

# first match wins: attention before GEMM (cuDNN's and flash attention's kernels contain "sm90"
# and "gemm"-like words), LayerNorm before elementwise
CLASSES = [
    # cuDNN's SDPA backward also runs cudnn::fusion::matmul_dq (dQ from its fp32 accumulator)
    ("attention", r"sdpa|fmha|flash|attn|attention|softmax_(forward|backward)_kernel|qkv_(split|merge)|heads_permute"
                  r"|matmul_dq"),
    # PyTorch's LayerNorm backward: layer_norm_grad_input_kernel and GammaBetaBackward (dw, db)
    ("layernorm", r"layer_?norm|GammaBeta|ln_(forward|backward)|chunk_sum_kernel"),
    ("optimizer", r"adam|multi_tensor_apply|foreach"),
    ("gemm", r"gemm|cutlass|xmma|nvjet|cublas|wgmma|implicit_convolve|conv2d|convolve|sm\d\d_|ampere_|hopper_"),
    ("elementwise", r"."),
]
ORDER = ["attention", "gemm", "layernorm", "elementwise", "optimizer", "copies", "other", "launch_gaps"]


def classify(kind, name):
    if kind in ("memcpy", "memset"):
        return "copies"
    for cls, pat in CLASSES:
        if re.search(pat, name, re.I):
            return cls
    return "other"


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            kind, t0, t1, name = line.rstrip("\n").split("\t", 3)
            if kind in ("kernel", "memcpy", "memset"):   # not an annotation spanning them
                rows.append((kind, int(t0), int(t1), name))
    rows.sort(key=lambda r: r[1])
    return rows


def busy_ns(rows):
    """time with at least one activity running (the union of the intervals)"""
    total, end = 0, None
    for _, t0, t1, _ in rows:
        if end is None or t0 > end:
            total += t1 - t0
            end = t1
        elif t1 > end:
            total += t1 - end
            end = t1
    return total


def last_steps(rows, steps):
    """the activities of the last STEPS steps, a step ending with its last optimizer kernel"""
    ends = [i for i, r in enumerate(rows) if r[0] == "kernel" and classify("kernel", r[3]) == "optimizer"]
    if len(ends) < steps + 1:
        sys.exit("kernel_classes.py: the instbench trace has %d optimizer kernels; %d steps need %d"
                 % (len(ends), steps, steps + 1))
    return rows[ends[-steps - 1] + 1:ends[-1] + 1]


def summarise(rows, steps, wall_s):
    per = {c: 0.0 for c in ORDER}
    kernels = {}
    for kind, t0, t1, name in rows:
        c = classify(kind, name)
        per[c] += (t1 - t0) / 1e6 / steps
        k = kernels.setdefault(name, [0, 0.0, c])
        k[0] += 1
        k[1] += (t1 - t0) / 1e6 / steps
    busy = busy_ns(rows) / 1e6 / steps
    per["launch_gaps"] = max(0.0, wall_s * 1e3 - busy) if wall_s else None
    top = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:15]
    return {"ms_per_step": per, "busy_ms_per_step": busy, "wall_ms_per_step": wall_s * 1e3 if wall_s else None,
            "top_kernels": [{"name": n, "launches_per_step": c / steps, "ms_per_step": ms, "class": cl}
                            for n, (c, ms, cl) in top]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instbench", required=True)
    ap.add_argument("--instbench-wall", type=float, required=True, help="seconds per step, untraced")
    ap.add_argument("--steps", type=int, default=5, help="instbench steps to keep (the last ones)")
    ap.add_argument("--torch", required=True)
    ap.add_argument("--torch-wall", type=float, required=True, help="seconds per step, untraced")
    ap.add_argument("--torch-steps", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args()
    ib = summarise(last_steps(read(a.instbench), a.steps), a.steps, a.instbench_wall)
    pt = summarise(read(a.torch), a.torch_steps, a.torch_wall)
    print(f"{'CLASS':<12} {'INSTBENCH ms':>13} {'PYTORCH ms':>11} {'RATIO':>7}")
    for c in ORDER:
        x, y = ib["ms_per_step"][c], pt["ms_per_step"][c]
        if x is None or y is None:
            continue
        print(f"{c:<12} {x:13.2f} {y:11.2f} {(x / y if y > 0 else float('inf')) if x > 0 else 0:6.2f}x")
    print(f"{'step (wall)':<12} {ib['wall_ms_per_step']:13.2f} {pt['wall_ms_per_step']:11.2f} "
          f"{ib['wall_ms_per_step'] / pt['wall_ms_per_step']:6.2f}x")
    for side, s in (("instbench", ib), ("pytorch", pt)):
        print(f"--- {side}: heaviest kernels (ms/step)")
        for k in s["top_kernels"][:10]:
            print(f"  {k['ms_per_step']:8.3f}  {k['launches_per_step']:5.1f}x  {k['class']:<11} {k['name'][:110]}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"instbench": ib, "pytorch": pt, "classes": ORDER}, f, indent=2)


if __name__ == "__main__":
    main()
