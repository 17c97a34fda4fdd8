"""Ctrl-C / SIGTERM in the middle of a run: exit 130 / 143, no result file, no temp file, no
--append line, and no directory made for them (--create-dirs' nor the default
./instbench-results/); the same in the warm-up phase.  A second Ctrl-C inside a long step ends
the process at once, by the signal itself, leaving nothing.  Each timed case runs twice: a
signal that lands inside a oneDNN kernel once corrupted the heap in about one run in 30."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import BIN, TINY, check, env, finish, scratch  # noqa: E402

TIMED = "instbench: timed window start"


def start(args, d, marker, **envs):
    """`instbench -v measure ARGS` in D, read until a stderr line starts with MARKER: (the process,
    whether the marker came)."""
    p = subprocess.Popen([BIN, "-v", "measure"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env(**envs), cwd=d)
    for line in p.stderr:
        if line.startswith(marker):
            return p, True
    return p, False


def interrupt(sig, when, want, default_output=False):
    d = scratch()
    # a directory to create (--create-dirs makes it only when the result is written), or the default one
    where = [] if default_output else ["--output", os.path.join(d, "sub", "r.json"), "--create-dirs"]
    jsonl = os.path.join(d, "r.jsonl")
    warm = ["--warmup", "100000"] if when == "warm-up" else ["--warmup", "1"]
    # Wait for the phase to begin: the timed-window marker, or the "measuring" line before warm-up.
    marker = TIMED if when == "timed" else "measuring "
    p, seen = start(TINY + warm + ["--steps", "10000000", "--append", jsonl] + where, d, marker)
    time.sleep(0.3)
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        rest_err = p.stderr.read()
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, f"{sig.name} in {when}: did not stop within 30 s")
        return
    took = time.monotonic() - t0
    stdout = p.stdout.read()
    what = f"{sig.name} during {when}{' (default output)' if default_output else ''}"
    check(seen, f"{what}: never saw '{marker}'")
    check(p.returncode == want, f"{what}: exit {p.returncode}, want {want}")
    check(took < 10, f"{what}: took {took:.1f} s to stop")
    left = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs]
    check(left == [], f"{what}: files left behind: {left}")
    check(os.listdir(d) == [], f"{what}: left {os.listdir(d)} in the working directory")
    check(stdout == "", f"{what}: printed a result: {stdout[:200]!r}")
    check("interrupted" in rest_err, f"{what}: no 'interrupted' message on stderr")
    said = f"instbench measure: {'SIGTERM' if sig == signal.SIGTERM else 'Ctrl-C'}: stopping at the next step boundary"
    check(said in rest_err, f"{what}: the signal was not acknowledged at once ({said!r}): {rest_err[-300:]!r}")


def insist():
    """A second Ctrl-C as soon as the first is acknowledged, early in a timed step of 0.45 s on a
    2-core EPYC with AVX512-BF16 (batch 8192, 1.2 GiB): it ends the process by SIGINT itself (the
    first alone ends it with exit 130 at the step's end).  Sent on the acknowledgement, not after a
    sleep, so a faster machine's shorter step still has the second signal land inside it."""
    d = scratch()
    args = TINY[:-1] + ["8192", "--warmup", "1", "--steps", "1000", "--append", os.path.join(d, "r.jsonl"),
                        "--output", os.path.join(d, "sub", "r.json"), "--create-dirs"]
    p, seen = start(args, d, TIMED, INSTBENCH_CPU_PEAK_SECONDS="off")
    p.send_signal(signal.SIGINT)
    for line in p.stderr:
        if "stopping at the next step boundary" in line:
            break
    p.send_signal(signal.SIGINT)
    try:
        p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    check(seen, "second Ctrl-C: never saw the timed window start")
    check(p.returncode == -signal.SIGINT, f"second Ctrl-C: exit {p.returncode}, want death by SIGINT")
    check(os.listdir(d) == [], f"second Ctrl-C: left {os.listdir(d)} in the working directory")


for _ in range(2):
    interrupt(signal.SIGINT, "timed", 130)
    interrupt(signal.SIGTERM, "timed", 143)
interrupt(signal.SIGINT, "warm-up", 130)
interrupt(signal.SIGINT, "timed", 130, default_output=True)
insist()
finish("measure_cli_signal")
