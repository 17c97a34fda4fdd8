"""samples/s agrees with a timing taken outside the tool.  With -v, measure prints
'instbench: timed window start' just before the first timed step and '... end' just after the
last; this test stamps those lines with its own clock as they arrive on the pipe, and computes
steps x global batch / (end - start) itself.  A tool that left part of each step out of its
window (data, optimizer, allreduce), miscounted steps or used the wrong batch would disagree."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import BIN, check, env, finish, scratch, validate  # noqa: E402

CFG = ["--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "64",
       "--patch-size", "8", "--embed-dim", "128", "--heads", "2", "--classes", "10", "--batch-size", "8"]


def timed(extra, steps, what):
    d = scratch()
    out = os.path.join(d, "r.json")
    p = subprocess.Popen([BIN, "-v", "measure"] + CFG + extra + ["--steps", str(steps), "--warmup", "2",
                                                                 "--output", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    t_start = t_end = None
    for line in p.stderr:
        now = time.monotonic()
        if line.startswith("instbench: timed window start"):
            t_start = now
        elif line.startswith("instbench: timed window end"):
            t_end = now
    p.wait(timeout=300)
    p.stdout.close()
    if not check(p.returncode == 0 and t_start and t_end, f"{what}: exit {p.returncode}, markers {t_start} {t_end}"):
        return
    doc = json.load(open(out))
    validate(doc, what)
    m = doc["measurement"]
    gb = doc["workload"]["global_batch_size"]
    external = steps * gb / (t_end - t_start)
    rel = abs(m["samples_per_second"] - external) / external
    print(f"{what}: tool {m['samples_per_second']:.2f} samples/s, external {external:.2f} "
          f"({(t_end - t_start):.3f} s for {steps} steps x {gb}): {100 * rel:.2f}% apart")
    check(m["steps"] == steps, f"{what}: steps {m['steps']} != {steps}")
    check(rel <= 0.05, f"{what}: samples/s {m['samples_per_second']:.3f} vs external {external:.3f} ({100 * rel:.1f}%)")


timed(["--data", "host"], 30, "ranks 1, host data")
timed(["--data", "device", "--ranks", "2"], 30, "ranks 2, device data")
finish("measure_cli_timing")
