#!/usr/bin/env python3
"""The flag vocabulary (issue 41): one name for one idea in every command.

Reads every command's flags from `instbench help --markdown` (the same tables --help prints) and
checks them against the vocabulary table the same output carries, and against this test's own
list of the spellings that used to split one idea (prices --regions vs rank --region, prices
--source vs rank --prices, prices --duration (a block's days) beside measure --duration
(seconds)):
  - every flag that two commands take has a row in the vocabulary table (sweep plan and sweep run
    share one table by design and count as one command), and every row names a flag that two
    commands take;
  - no command lists a retired spelling as a flag of its own;
  - each retired spelling still works where it used to, with one note naming the new one, and
    gives the same output as the new spelling;
  - a flag given to a command that lacks it, but another command has, says which command has it;
  - --help fits 80 columns when piped and the terminal's width on a terminal.
"""
import collections
import os
import pty
import re
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import absent_path, check, failures  # noqa: E402

BIN = sys.argv[1]
NO_RESULT = absent_path("result.json")


def run(args, env=None):
    e = dict(os.environ, **(env or {}))
    e.pop("AWS_ACCESS_KEY_ID", None)
    e.pop("AWS_SECRET_ACCESS_KEY", None)
    e["AWS_EC2_METADATA_DISABLED"] = "true"
    return subprocess.run([BIN] + args, capture_output=True, text=True, env=e, timeout=120)


# The spellings retired by the vocabulary: (command, old, new).  Written here from the issue, not
# read from the program, so that a table that forgot one fails.
RETIRED = [("prices", "--regions", "--region"), ("prices", "--duration", "--block-duration"),
           ("rank", "--prices", "--source"), ("sweep plan", "--prices", "--source"),
           ("sweep run", "--prices", "--source")]

md = run(["help", "--markdown"])
check(md.returncode == 0, "help --markdown exits 0")
flags = collections.defaultdict(set)      # flag -> commands
cmd = None
vocab = {}
in_vocab = False
for line in md.stdout.splitlines():
    m = re.match(r"^## (instbench (.+)|Flag vocabulary)$", line)
    if m:
        in_vocab = m.group(1) == "Flag vocabulary"
        cmd = None if in_vocab else m.group(2).strip()
        continue
    m = re.match(r"^\| `(?:-\w, )?(--[a-z0-9-]+)", line)
    if not m:
        continue
    if in_vocab:
        vocab[m.group(1)] = line
    elif cmd:
        flags[m.group(1)].add("sweep" if cmd in ("sweep plan", "sweep run") else cmd)

check(len(vocab) >= 10, "the vocabulary table has its rows (%d)" % len(vocab))
shared = {f for f, c in flags.items() if len(c) > 1}
for f in sorted(shared - set(vocab)):
    check(False, "%s is taken by %s but has no row in the flag vocabulary" % (f, sorted(flags[f])))
for f in sorted(set(vocab) - shared):
    check(False, "vocabulary row %s names a flag fewer than two commands take (%s)" % (f, sorted(flags.get(f, ()))))

olds = {(c, o) for c, o, _ in RETIRED}
for c, o, n in RETIRED:
    family = "sweep" if c.startswith("sweep") else c
    check(family not in flags.get(o, set()), "%s lists the retired %s as its own flag" % (c, o))
    check(family in flags.get(n, set()), "%s takes %s" % (c, n))
    check(re.search(r"`%s` \(%s\)" % (re.escape(o), re.escape(c)), vocab.get(n, "")) is not None,
          "the vocabulary row of %s names %s (%s) as its old spelling" % (n, o, c))

# The old spellings still work, with one note, and mean the same.
snap = ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge,g5.12xlarge", "--format", "csv"]
new = run(snap + ["--region", "us-east-1,us-west-2"])
old = run(snap + ["--regions", "us-east-1,us-west-2"])
check(new.returncode == 0 and old.returncode == 0, "prices --region / --regions exit 0: %r %r" % (new.stderr, old.stderr))
check(new.stdout == old.stdout and new.stdout.count("\n") == 5, "prices --regions gives what --region gives")
notes = [l for l in old.stderr.splitlines() if "--regions" in l]
check(len(notes) == 1 and "--region " in notes[0] and "0." in notes[0], "one note names the new spelling: %r" % notes)
check("--regions" not in new.stderr, "no note for the new spelling")
q = run(snap + ["-q", "--regions", "us-east-1"])
check(q.returncode == 0 and "--regions" not in q.stderr, "-q silences the note")

res = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
for c, o, n in RETIRED:
    if c != "rank":
        continue
    a = run(["rank", "--samples", "1e9", "--format", "json", n, "snapshot", "--region", "us-east-1",
             NO_RESULT])
    b = run(["rank", "--samples", "1e9", "--format", "json", o, "snapshot", "--region", "us-east-1",
             NO_RESULT])
    check(a.returncode == b.returncode and a.stdout == b.stdout, "rank %s behaves as %s" % (o, n))
    check(o in b.stderr and n in b.stderr.split(o, 1)[1][:40], "rank %s notes %s: %r" % (o, n, b.stderr[:200]))

# A flag of another command: say which command has it, not a far-fetched nearest name.
r = run(["rank", "--accelerator", "A10G"])
check(r.returncode == 2 and "instbench prices" in r.stderr, "rank --accelerator names prices: %r" % r.stderr)
r = run(["measure", "--max-cost", "3"])
check(r.returncode == 2 and "instbench sweep" in r.stderr, "measure --max-cost names sweep: %r" % r.stderr)
r = run(["rank", "--sourse", "snapshot"])
check(r.returncode == 2 and "did you mean --source" in r.stderr, "a typo still gets the nearest: %r" % r.stderr)

# Help fits: 80 columns on a pipe, the terminal's width on a terminal.
commands = ["", "measure", "prices", "rank", "verify", "models", "presign", "sweep", "sweep plan",
            "sweep run", "sweep status", "sweep cleanup"]
for c in commands:
    h = run((c.split() if c else []) + ["--help"])
    check(h.returncode == 0, "%s --help exits 0" % c)
    wide = [l for l in h.stdout.splitlines() if len(l) > 80 and " " in l.strip()]
    check(not wide, "instbench %s --help fits 80 columns piped: %r" % (c, wide[:2]))


def on_tty(args, cols):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["COLUMNS"] = str(cols)
        os.execv(BIN, [BIN] + args)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode().replace("\r\n", "\n")


for cols in (60, 120):
    text = on_tty(["rank", "--help"], cols)
    lines = text.splitlines()
    check(len(lines) > 20, "rank --help on a tty of %d" % cols)
    over = [l for l in lines if len(l) > cols and " " in l.strip()]
    check(not over, "rank --help fits a %d-column terminal: %r" % (cols, over[:2]))
    if cols == 120:
        check(max(len(l) for l in lines) > 90, "a wide terminal gets wide help (it is not cut to 80)")

print("%d passed, %d failed" % (1 if not failures else 0, len(failures)))
sys.exit(1 if failures else 0)
