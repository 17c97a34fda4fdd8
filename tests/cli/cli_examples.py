#!/usr/bin/env python3
"""Every --help has an examples section (issue 21, as gh and kubectl have), two or more real
command lines generated from the arg tables (so docs/cli.md carries them too), and each runs as
written, so an example cannot rot when a flag changes.  They run offline in a scratch directory:
no AWS credentials, IMDS off and an empty cache (so prices come from the shipped snapshot),
./instbench-results/ holding result files made by tests/rank/rank_fixtures.py (not by instbench),
tests/ the repository's (as in a fresh clone: the verify examples name tests/data references);
`measure` runs with --dry-run (every check, no benchmark).  An example that needs a GPU (or more
memory than here) must fail only for that reason: exit 2 and the message naming it.  Examples that
need AWS are listed as such: `presign` signs locally, so it runs with example credentials and a
region (what an AWS user's environment holds) and must print a URL; `sweep` talks to EC2: it runs with
a region but no credentials and may fail only for want of them (exit 1), after its flags were
accepted (tests/sweep/ plays it against the fake AWS); `sweep status` runs (no sweep here).  Usage: cli_examples.py INSTBENCH TESTS_DATA"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BIN, DATA = os.path.abspath(sys.argv[1]), sys.argv[2]
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TESTS, d) for d in ("lib", "fakes", "rank")]  # testlib, rank_fixtures
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures, offline_env, probe_once  # noqa: E402

COMMANDS = ["measure", "prices", "rank", "verify", "models", "presign", "sweep", "sweep plan", "sweep run",
            "sweep status", "sweep cleanup"]
# What a presign example runs with: example credentials (AWS's documented example key) and a region.
AWS_USER = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "AWS_REGION": "us-east-1"}
NEEDS_GPU = re.compile(r"backend 'cuda' is not available|needs about [0-9.]+ GiB but [0-9.]+ GiB is available")
HAVE_GPU = shutil.which("nvidia-smi") is not None


def examples(help_text):
    """[(what, line)] of the examples section: '  # what' then '  $ line'."""
    m = re.search(r"\nexamples:\n((?:  .*\n)+)", help_text)
    raw = m.group(1).splitlines() if m else []
    # help wraps to 80 columns (the terminal's width on a terminal): a description goes on in
    # another '  # ' line, a command line after ' \\' as the shell reads it.
    lines = []
    for ln in raw:
        if lines and lines[-1].startswith("  $ ") and lines[-1].endswith(" \\"):
            lines[-1] = lines[-1][:-2] + " " + ln.strip()
        elif lines and ln.startswith("  # ") and lines[-1].startswith("  # "):
            lines[-1] += " " + ln[4:].strip()
        else:
            lines.append(ln)
    pairs = list(zip(lines[0::2], lines[1::2]))
    check(len(lines) % 2 == 0 and all(w.startswith("  # ") and c.startswith("  $ ") for w, c in pairs),
          f"examples not in '# what' / '$ line' pairs: {lines}")
    return [(w[4:], c[4:]) for w, c in pairs]


def scratch():
    d = tempfile.mkdtemp(prefix="cli-examples-")
    res = os.path.join(d, "instbench-results")
    fx.write_seed_results(res)
    fx.write_json(os.path.join(res, "workstation.json"),   # own hardware: no instance type, priced by --price
                  fx.result(None, None, 1, 1, "NVIDIA GeForce RTX 4090", 300.0, host="workstation"))
    os.symlink(TESTS, os.path.join(d, "tests"))
    return d


def run_example(cmd, line, d):
    words = shlex.split(line)
    check(words[:1] == ["instbench"] and (cmd is None or cmd.split() == words[1:1 + len(cmd.split())]
                                          or cmd in words[1:3]),
          f"`{line}`: not an instbench {cmd or ''} command line")
    argv = [BIN] + words[1:]
    if "measure" in words[1:2]:
        argv.append("--dry-run")
    # an AWS user's environment: presign with credentials and a region; sweep with the region alone
    env = offline_env(d, AWS_USER if words[1:2] == ["presign"] else
                      {"AWS_REGION": AWS_USER["AWS_REGION"]} if words[1:2] == ["sweep"] else
                      probe_once(argv, probed) if words[1:2] == ["measure"] else None)
    p = subprocess.run(argv, cwd=d, env=env, capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    if p.returncode == 2 and NEEDS_GPU.search(p.stderr) and not HAVE_GPU:
        return "needs a GPU"
    if words[1:2] == ["sweep"] and p.returncode == 1 and "no AWS credentials found" in p.stderr:
        return "needs AWS"
    if words[1:2] == ["presign"]:
        check(p.returncode == 0 and p.stdout.startswith("https://"), f"`{line}`: exit {p.returncode}, no URL: {p.stderr}")
        return "needs AWS (example credentials)"
    check(p.returncode == 0, f"`{line}`: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    out = [words[k + 1] for k, w in enumerate(words[:-1]) if w in ("-o", "--output", "--plot")]
    if p.returncode == 0 and "measure" not in words[1:2]:
        check(p.stdout or out or (words[1:2] == ["sweep"] and p.stderr), f"`{line}`: printed nothing")
        for path in out:
            full = os.path.join(d, path)
            check(os.path.getsize(full) > 0 if os.path.exists(full) else False, f"`{line}`: wrote no {path}")
            if path.endswith(".svg") and os.path.exists(full):
                check(ET.parse(full).getroot().tag.endswith("svg"), f"`{line}`: {path} is not SVG")
    return "ran"


d = scratch()
probed = set()   # the step configurations whose dry-run probe has run (testlib.probe_once)
helps = {None: subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout,
         "help": subprocess.run([BIN, "help", "--help"], capture_output=True, text=True).stdout}
for cmd in COMMANDS:
    helps[cmd] = subprocess.run([BIN, *cmd.split(), "--help"], capture_output=True, text=True).stdout
markdown = subprocess.run([BIN, "help", "--markdown"], capture_output=True, text=True).stdout
counts = {}
for cmd, text in helps.items():
    ex = examples(text)
    # issue 21's commands: two examples or more, each short enough for a terminal; the AWS ones
    # (presign, sweep) at least one, run here as well
    aws = cmd is not None and cmd.split()[0] in ("presign", "sweep")
    check(len(ex) >= (1 if aws else 2), f"instbench {cmd or ''} --help has {len(ex)} example(s), want {1 if aws else 2} or more")
    for what, line in ex:
        check(what and (aws or len(f"  $ {line}") <= 110), f"`{line}`: no description, or too long for a terminal")
        if cmd != "help":   # docs/cli.md (help --markdown) carries the examples of instbench and each command
            check(f"# {what}\n{line}\n" in markdown, f"`{line}` is not in `instbench help --markdown`")
        how = run_example(cmd if cmd != "help" else "help", line, d)
        counts[how] = counts.get(how, 0) + 1
        print(f"{how:12} {line}")
shutil.rmtree(d, ignore_errors=True)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"cli_examples: ok ({counts})")
