#!/usr/bin/env python3
"""Every instbench command in README.md's shell blocks runs as written, and where the README shows
a command's output (a `$ ` line followed by what it prints) the output is exactly that.

The commands run in a scratch directory off EC2, without AWS credentials and with an empty cache
(so `auto` prices come from the shipped snapshot, as the README says), where `instbench-results/`
(what the workflow's step 1 writes and step 2 ranks) holds result files of the README's own story (1 x g5.xlarge, a 4-node g5.xlarge run, 1 x g5.12xlarge;
made by tests/rank/rank_fixtures.py, not by instbench) and `tests/` is the repository's.  Launcher
wrappers (torchrun, srun, environment assignments) are peeled off; their placeholders ($i, $HEAD)
become node 0 and 127.0.0.1, and the environment each launcher gives its first process is set
(WORLD_SIZE, RANK, MASTER_ADDR, ... for torchrun; SLURM_* for srun).  `measure` runs with --dry-run: every check a run makes, no
30-second benchmark.  A command that needs a GPU (the CUDA backend, data parallelism across
processes), or more memory than this machine has, must fail only for that reason: exit 2 and the message that
names it; any other usage error (a flag the README gets wrong) fails the test.  `sweep` commands
need AWS: they may only fail for want of credentials (exit 1), after their flags were accepted.
Usage: readme_examples.py INSTBENCH README.md"""
import csv
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("rank", "lib")]
import rank_fixtures as fx  # noqa: E402
from shell_line import NEEDS_GPU, instbench_words  # noqa: E402
from testlib import check, failures, offline_env, probe_once  # noqa: E402

BIN, README = os.path.abspath(sys.argv[1]), sys.argv[2]
REPO = os.path.dirname(os.path.abspath(README))
PLACEHOLDERS = {"$i": "0", "$HEAD": "127.0.0.1"}
HAVE_GPU = shutil.which("nvidia-smi") is not None


def blocks(text):
    """(commands, shown) per ```sh block: commands as (line, expected output or None)."""
    for body in re.findall(r"^```(?:sh|console)\n(.*?)^```", text, re.S | re.M):
        lines, cmds, i = body.splitlines(), [], 0
        while i < len(lines):
            ln = lines[i]
            prompt = ln.startswith("$ ")
            if prompt:
                ln = ln[2:]
            while ln.endswith("\\") and i + 1 < len(lines):
                i += 1
                ln = ln[:-1] + " " + lines[i].strip()
            i += 1
            shown = None
            if prompt:
                out = []
                while i < len(lines) and not lines[i].startswith("$ "):
                    out.append(lines[i])
                    i += 1
                shown = "\n".join(out).rstrip("\n") + "\n"
            cmds.append((ln, shown))
        yield cmds


def instbench_argv(line):
    """The instbench argv in LINE (launchers and env assignments peeled off), the file stdout is
    redirected to, and the environment assignments; None when the line runs no instbench."""
    words = shlex.split(line, comments=True)
    words = [PLACEHOLDERS.get(w, w) for w in words]
    redirect = None
    if ">" in words:
        k = words.index(">")
        redirect, words = words[k + 1], words[:k]
    parsed = instbench_words(words)
    if parsed is None:
        check(not any(w == "instbench" or w.endswith("/instbench") for w in words),
              f"`{line}`: instbench under an unknown launcher")
        return None
    env, args = parsed
    return [BIN] + args, redirect, env


def scratch_dir():
    d = tempfile.mkdtemp(prefix="readme-")
    os.symlink(os.path.join(REPO, "tests"), os.path.join(d, "tests"))
    fx.write_seed_results(os.path.join(d, "instbench-results"))
    return d


def after(argv, redirect, out, d, line):
    """What a command that ran must have produced besides its exit status."""
    if redirect and redirect.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(out)))
        check(len(rows) >= 2 and "samples_per_dollar" in rows[0], f"`{line}`: {redirect} is not a ranked CSV: {out[:200]}")
    if "--plot" in argv:
        path = os.path.join(d, argv[argv.index("--plot") + 1])
        try:
            root = ET.parse(path).getroot()
            check(root.tag.endswith("svg"), f"`{line}`: {path} is not SVG")
        except (OSError, ET.ParseError) as e:
            check(False, f"`{line}`: no readable plot: {e}")


ran = 0
probed = set()   # the step configurations whose dry-run probe has run (testlib.probe_once)
text = open(README, encoding="utf-8").read()
for cmds in blocks(text):
    for line, shown in cmds:
        parsed = instbench_argv(line)
        if parsed is None:
            continue
        argv, redirect, extra = parsed
        if len(argv) > 1 and argv[1] == "measure":
            argv = argv + ["--dry-run"]
            extra = dict(extra or {}, **probe_once(argv, probed))
        d = scratch_dir()
        try:
            p = subprocess.run(argv, cwd=d, env=offline_env(d, extra), capture_output=True, text=True, timeout=300)
            ran += 1
            if p.returncode == 2 and NEEDS_GPU.search(p.stderr) and not HAVE_GPU:
                print(f"needs a GPU: {line}\n    {NEEDS_GPU.search(p.stderr).group(0)}")
                continue   # the one reason it may not run here; the flags before it were accepted
            if argv[1:2] == ["sweep"] and p.returncode == 1 and "no AWS credentials found" in p.stderr:
                # sweep talks to EC2 (tests/sweep/ play it); here its flags were accepted (a usage
                # error exits 2 before credentials are looked for) and only AWS is missing
                print(f"needs AWS: {line}")
                continue
            print(f"ran: {line}")
            if not check(p.returncode == 0, f"`{line}`: exit {p.returncode}: {p.stderr.strip()[-400:]}"):
                continue
            if redirect:
                with open(os.path.join(d, redirect), "w") as f:
                    f.write(p.stdout)
            after(argv, redirect, p.stdout, d, line)
            if shown is not None:
                check(p.stdout == shown, f"`{line}` prints\n{p.stdout}\nbut README.md shows\n{shown}")
        finally:
            shutil.rmtree(d, ignore_errors=True)

check(ran >= 8, f"only {ran} instbench commands found in README.md's shell blocks")
print(f"readme_examples: {ran} commands run, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
