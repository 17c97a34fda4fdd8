#!/usr/bin/env python3
"""The command word itself (src/main.c, issue 21): a misspelt command exits 2 naming the nearest
one, as misspelt flags do, and -h/--help before the command prints that command's help, as
docs/cli.md promises ("before or after the command name").  The expected suggestions are the
command names this test lists by hand (and their edit distance computed here), not instbench's.
Usage: cli_commands.py INSTBENCH"""
import os
import subprocess
import sys

BIN = sys.argv[1]
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures  # noqa: E402

COMMANDS = ["measure", "prices", "rank", "verify", "models", "help"]


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def distance(a, b):
    """Optimal string alignment distance (a swap of neighbours costs 1), any case."""
    a, b = a.lower(), b.lower()
    d = [[i + j if not i * j else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


# A typo of each command (dropped, swapped, doubled, wrong letter; case) names it; the same goes
# through `instbench help TYPO`.  The distance is checked here so a typo list that drifts fails.
TYPOS = {"mesure": "measure", "meassure": "measure", "prcies": "prices", "price": "prices", "rnak": "rank",
         "ranks": "rank", "verfy": "verify", "modles": "models", "Models": "models", "hlep": "help"}
for typo, want in TYPOS.items():
    check(min(COMMANDS, key=lambda c: distance(typo, c)) == want and distance(typo, want) <= 2,
          f"test list: {typo} is not nearest to {want}")
    for args in ([typo], [typo, "--format", "json"], ["-v", typo], ["help", typo]):
        p = run(*args)
        err = p.stderr.strip()
        check(p.returncode == 2 and p.stdout == "" and err.count("\n") == 0 and
              err == f"instbench: unknown command '{typo}'; did you mean {want}? (try: instbench --help)",
              f"instbench {' '.join(args)}: exit {p.returncode}, stderr {err[-200:]!r}")
# Nothing near: no suggestion, still one line and exit 2
for word in ("frobnicate", "xyz", "g5.xlarge"):
    p = run(word)
    err = p.stderr.strip()
    check(p.returncode == 2 and err == f"instbench: unknown command '{word}' (try: instbench --help)",
          f"instbench {word}: exit {p.returncode}, {err[-200:]!r}")

# -h/--help on either side of the command, and `help CMD`: the command's own help, exit 0
for cmd in ["measure", "prices", "rank", "verify", "models"]:
    ref = run(cmd, "--help")
    check(ref.returncode == 0 and ref.stdout.startswith(f"usage: instbench {cmd} "), f"{cmd} --help: exit {ref.returncode}")
    for args in (["-h", cmd], ["--help", cmd], ["-v", "-h", cmd], ["-vh", cmd], ["help", cmd], [cmd, "-h"],
                 ["-h", cmd, "--format", "json"]):
        p = run(*args)
        check(p.returncode == 0 and p.stdout == ref.stdout and p.stderr == "",
              f"instbench {' '.join(args)}: exit {p.returncode}, not {cmd}'s help: {p.stdout[:60]!r} {p.stderr[-200:]!r}")
p = run("-h", "help")
check(p.returncode == 0 and p.stdout.startswith("usage: instbench help "), f"-h help: {p.stdout[:60]!r}")
top = run("--help")
check(top.returncode == 0 and top.stdout.startswith("usage: instbench [") and "commands:" in top.stdout,
      f"--help alone: exit {top.returncode}")
check(run("-h").stdout == top.stdout and run("help").stdout == top.stdout, "-h / help alone differ from --help")
# -h before a misspelt command: the usage error of the command word, with the nearest
p = run("-h", "rnak")
check(p.returncode == 2 and p.stdout == "" and "unknown command 'rnak'; did you mean rank?" in p.stderr,
      f"-h rnak: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")
# an unknown global flag still wins over -h (the flags are parsed before anything is printed)
p = run("-h", "--bogus", "rank")
check(p.returncode == 2 and "unknown option '--bogus'" in p.stderr and p.stdout == "",
      f"-h --bogus rank: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")

# Every command's help ends in its exit statuses, said once and in a paragraph of their own: a
# command that spells out its own (presign, the sweep's) does not also print the generic line,
# and its statuses are not run into the environment paragraph above them.
for cmd in (["measure"], ["prices"], ["rank"], ["verify"], ["models"], ["presign"], ["sweep", "plan"],
            ["sweep", "run"], ["sweep", "status"], ["sweep", "cleanup"]):
    p = run(*cmd, "--help")
    lines = p.stdout.split("\n")
    at = [i for i, line in enumerate(lines) if "exit status:" in line]
    check(p.returncode == 0 and len(at) == 1 and at[0] > 0 and lines[at[0] - 1] == "" and
          lines[at[0]].startswith("exit status: 0 "),
          f"{' '.join(cmd)} --help: 'exit status:' on lines {at}, not once at a paragraph's start: "
          f"{[lines[i - 1:i + 1] for i in at]!r}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("cli_commands: ok")
