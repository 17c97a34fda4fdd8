"""On a terminal: a progress line on stderr (phase, step, samples/s, time left) and a human summary
on stdout, bold only without NO_COLOR; through pipes: no progress line at all, JSON on stdout;
--quiet: nothing on stderr.

Nothing here may depend on the machine being idle.  On a loaded machine the CPU backend's step is
not a few milliseconds: its OpenMP team (one thread per vCPU) meets at hundreds of barriers a step,
and each waits for a thread the scheduler has put off, so with six busy processes on two vCPUs a
step of this tiny model took 1-2 s; a fixed 40-step window then outlasted the 60 s the pty run was
given and was killed (exit -9).  So every window here is a few steps or about a second, and the
time limit only catches a hang."""
import re
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import BIN, TINY, check, env, finish, run, scratch  # noqa: E402
from testlib import on_pty  # noqa: E402

ARGS = TINY + ["--duration", "1.2", "--warmup", "2"]
HANG_S = 600   # a bound on a hung run, not on a slow one


def tty_run(no_color):
    d = scratch()
    e = env(NO_COLOR="1" if no_color else None, TERM="xterm")
    rc, out = on_pty([BIN, "measure"] + ARGS + ["--output", os.path.join(d, "r.json")], e, stderr="pty", timeout=HANG_S)
    return rc, out.decode(errors="replace")


for no_color in (True, False):
    what = "NO_COLOR" if no_color else "colour"
    rc, text = tty_run(no_color)
    check(rc == 0, f"{what}: exit {rc}: {text[-300:]}")
    check("\rtimed" in text or "timed\x1b[0m" in text, f"{what}: no timed-phase progress line")
    check("samples/s" in text and " left" in text, f"{what}: progress lacks samples/s or time left")
    # a rate is shown only once a step has been timed: never a "0.0 samples/s" that reads as measured
    rates = [float(x) for x in re.findall(r"([0-9.]+) samples/s", text)]
    check(rates and all(r > 0 for r in rates), f"{what}: a progress rate of zero: {rates}")
    check("throughput" in text and not text.lstrip().startswith("{"), f"{what}: no human summary on the terminal")
    has_bold = "\x1b[1m" in text
    check(has_bold != no_color, f"{what}: bold escape present={has_bold}")

# The progress line makes sense from its first moment.  With one warm-up step the first line is
# printed as the warm-up ends and the window has not started: it says the window's length, never
# "timed step 0 ... 0 s left"; every timed step shown is one that was timed.
for window, said in ((["--duration", "1.2"], "window starting: 1.2 s"), (["--steps", "3"], "window starting: 3 steps")):
    e = env(NO_COLOR="1", TERM="xterm")
    rc, out = on_pty([BIN, "measure"] + TINY + window + ["--warmup", "1", "--output", os.path.join(scratch(), "r.json")],
                     e, stderr="pty", timeout=HANG_S)
    text = out.decode(errors="replace")
    lines = [ln.strip() for ln in re.split(r"[\r\n]", text) if ln.strip().startswith("timed")]
    check(rc == 0 and lines, f"{window}: exit {rc}, timed lines {lines}: {text[-300:]}")
    check(lines and said in lines[0], f"{window}: first timed line {lines[:1]}, want {said!r}")
    check(not any(re.match(r"timed step 0\b", ln) for ln in lines), f"{window}: a 'timed step 0' line: {lines}")

p = run(ARGS + ["--output", os.path.join(scratch(), "r.json")], timeout=HANG_S)
check(p.returncode == 0 and "\r" not in p.stderr and "\x1b" not in p.stderr, "pipes: progress or escapes on stderr")
check(p.returncode == 0 and isinstance(json.loads(p.stdout), dict), "pipes: stdout is not the JSON")
p = run(ARGS + ["--quiet", "--output", os.path.join(scratch(), "r.json")], timeout=HANG_S)
check(p.returncode == 0 and p.stderr == "", f"--quiet: stderr not empty: {p.stderr[:200]!r}")
finish("measure_cli_tty")
