#!/usr/bin/python3
"""docs/gpu-runs/README.md (issue 40 item 9): one line per GPU run, written by
scripts/gpu/gpu_runs_index.py from the runs' own files.
- the shipped index is current (--check passes on docs/gpu-runs);
- on a copy, each run's line carries the figures of its files, the ratios worked out here from the
  JSON (instbench samples/s over PyTorch's of the same call), and every run folder has one line;
- a run added without rewriting the index makes --check fail, and rewriting makes it pass.
Usage: gpu_runs_index_test.py SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), "lib")]
from testlib import check, failures  # noqa: E402

SRC = os.path.abspath(sys.argv[1])
SCRIPT = os.path.join(SRC, "scripts", "gpu", "gpu_runs_index.py")
RUNS = os.path.join(SRC, "docs", "gpu-runs")


def index(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=60)


p = index("--check", RUNS)
check(p.returncode == 0, "the shipped docs/gpu-runs/README.md is not current: %s" % p.stderr)

with tempfile.TemporaryDirectory() as d:
    copy = os.path.join(d, "gpu-runs")
    shutil.copytree(RUNS, copy)
    runs = sorted(os.path.relpath(dp, copy) for dp, _, fs in os.walk(copy) if "bench_instbench.json" in fs)
    check(len(runs) >= 1, "no run folder found")
    text = open(os.path.join(copy, "README.md")).read()
    for r in runs:
        line = next((ln for ln in text.splitlines() if ln.startswith("| [%s](" % r)), None)
        check(line is not None, "no line for run %s" % r)
        if line is None:
            continue
        ib = json.load(open(os.path.join(copy, r, "bench_instbench.json")))
        mine = ib["measurement"]["samples_per_second"]
        cells = [c.strip() for c in line.strip("|").split("|")]
        check(cells[3] == "%.0f" % mine, "%s: samples/s %s, the file says %.1f" % (r, cells[3], mine))
        eager = os.path.join(copy, r, "bench_torch.json")
        if os.path.exists(eager):
            e = json.load(open(eager))["samples_per_second"]
            check(cells[5] == "%.3fx" % (mine / e), "%s: eager ratio %s, %.1f / %.1f" % (r, cells[5], mine, e))
            check(cells[1] == json.load(open(eager))["device"], "%s: GPU %s" % (r, cells[1]))
    # a new run, the index not rewritten: --check fails; rewritten: passes and lists it
    new = os.path.join(copy, "2099-01-01-test")
    os.makedirs(new)
    shutil.copy(os.path.join(copy, runs[0], "bench_instbench.json"), new)
    check(index("--check", copy).returncode == 1, "--check passes with a run missing from the index")
    check(index(copy).returncode == 0, "rewriting the index failed")
    check(index("--check", copy).returncode == 0, "--check fails right after rewriting")
    check("| [2099-01-01-test](2099-01-01-test/) |" in open(os.path.join(copy, "README.md")).read(),
          "the new run has no line")

print("gpu_runs_index: %s" % ("ok" if not failures else "%d failed" % len(failures)))
sys.exit(1 if failures else 0)
