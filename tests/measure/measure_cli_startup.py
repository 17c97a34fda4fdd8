"""Ctrl-C / SIGTERM during start-up (the CPU peak probe, which INSTBENCH_CPU_PEAK_SECONDS=30 makes
last 30 s; the signal goes once -v says the probe has begun, not after a fixed wait that a slow
start could outlast): exit 130 / 143 at once, not once the probe ends (within 10 s of the signal:
room for a loaded machine, as measure_cli_signal.py gives, and far from the 30 s of the probe), a
message, no result file, nothing on stdout."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import BIN, check, env, finish, scratch  # noqa: E402

SMALL = ["--backend", "cpu", "--precision", "fp32", "--model", "vit_tiny_patch16_224", "--depth", "1",
         "--image-size", "32", "--patch-size", "8", "--embed-dim", "32", "--heads", "2", "--classes", "10",
         "--batch-size", "2", "--steps", "2", "--warmup", "1"]


STOP_S = 10   # it stops in well under a second; 2 s left a loaded machine little room


def interrupt(sig, want, output):
    d = scratch()
    args = SMALL + (["--output", os.path.join(d, "r.json")] if output else []) + ["--append", os.path.join(d, "r.jsonl")]
    p = subprocess.Popen([BIN, "measure", "-v"] + args, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env(INSTBENCH_CPU_PEAK_SECONDS="30"))
    before = ""
    for line in p.stderr:   # up to -v's line at the probe's start (or the end of stderr, should it end)
        before += line
        if line.startswith("cpu peak: timing"):
            break
    what = f"{sig.name} in the CPU peak probe"
    check("cpu peak: timing" in before and p.poll() is None,
          f"{what}: the probe never began, or the run had already ended (exit {p.returncode}): {before[-300:]}")
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, f"{what}: still running {STOP_S} s after the signal")
        return
    took = time.monotonic() - t0
    check(p.returncode == want, f"{what}: exit {p.returncode}, want {want}: {err[-300:]}")
    check(took < STOP_S, f"{what}: took {took:.1f} s to stop")
    check("interrupted" in err, f"{what}: no 'interrupted' message: {err[-300:]}")
    check(out == "", f"{what}: printed {out[:200]!r}")
    left = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs]
    check(left == [], f"{what}: files left: {left}")


interrupt(signal.SIGINT, 130, output=True)
interrupt(signal.SIGTERM, 143, output=False)
finish("measure_cli_startup")
