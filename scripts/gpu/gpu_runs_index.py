#!/usr/bin/env python3
"""Writes docs/gpu-runs/README.md: one line per GPU session run, read from the files the run left
(bench_*.json, written by scripts/bench/bench_gpu_vs_torch.sh and scripts/gpu/gpu_check.sh), so the index
can never say a figure the run's own files do not.

A run is a folder under docs/gpu-runs/ (nested ones too, e.g. .../run2) holding bench_instbench.json.
Columns: the run's date (its folder name), the GPU (PyTorch's device name from the same call), the
model, batch and precision measured, instbench's samples/s, PyTorch eager's and torch.compile's from
the same call and their ratios, the attention path and MFU instbench recorded.

usage: gpu_runs_index.py [--check] [DIR]   (DIR: docs/gpu-runs; --check: exit 1 when README.md
       differs from what this would write, as the test suite runs it)"""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rate(doc):
    if not doc:
        return None
    v = doc.get("samples_per_second")
    if v is None:
        v = (doc.get("measurement") or {}).get("samples_per_second")
    return v if isinstance(v, (int, float)) and v > 0 else None


def cell(v, fmt):
    return fmt % v if v is not None else "-"


def row(root, rel):
    d = os.path.join(root, rel)
    ib = load(os.path.join(d, "bench_instbench.json")) or {}
    eager, comp = load(os.path.join(d, "bench_torch.json")), load(os.path.join(d, "bench_torch_compile.json"))
    w, hw, m = ib.get("workload") or {}, ib.get("hardware") or {}, ib.get("measurement") or {}
    mine = rate(ib)
    r_e, r_c = rate(eager), rate(comp)
    gpu = (eager or comp or {}).get("device") or "?"
    mfu = m.get("mfu")
    return "| [%s](%s/) | %s | %s b%s %s | %s | %s | %s | %s | %s | %s | %s |" % (
        rel, rel, gpu, w.get("model", "?"), w.get("batch_size_per_device", "?"), w.get("precision", "?"),
        cell(mine, "%.0f"), cell(r_e, "%.0f"), cell(mine / r_e if mine and r_e else None, "%.3fx"),
        cell(r_c, "%.0f"), cell(mine / r_c if mine and r_c else None, "%.3fx"), hw.get("attention", "?"),
        cell(mfu * 100 if isinstance(mfu, (int, float)) else None, "%.1f%%"))


def render(root):
    runs = sorted(os.path.relpath(dp, root) for dp, _, files in os.walk(root) if "bench_instbench.json" in files)
    out = ["# GPU session runs", "",
           "Every figure a GPU session measured lives in a folder here, with the PyTorch run from the same call",
           "beside it (docs/benchmarks.md says how they are taken). This index is written by",
           "`scripts/gpu/gpu_runs_index.py` from those files; the test suite checks it is current.", "",
           "| run | GPU | workload | instbench samples/s | PyTorch eager | ratio | torch.compile | ratio "
           "| attention | MFU |",
           "|---|---|---|---:|---:|---:|---:|---:|---|---:|"]
    out += [row(root, r) for r in runs]
    return "\n".join(out) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "gpu-runs")
    text = render(root)
    path = os.path.join(root, "README.md")
    if check:
        try:
            have = open(path).read()
        except OSError:
            have = None
        if have != text:
            sys.stderr.write("gpu_runs_index: %s is not current: run scripts/gpu/gpu_runs_index.py\n" % path)
            return 1
        return 0
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
