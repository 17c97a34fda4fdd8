"""Output files go into directories that exist, as with cp and curl -o: `measure -o` / `--append` and
`prices -o` with a missing directory exit 2 before measuring or fetching, name the directory and
--create-dirs, and create nothing; with --create-dirs the directories are made and the file
written.  A path through a regular file is refused the same way.  The default ./instbench-results/
is the tool's own and is made when a result is written into it."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import BIN, TINY, check, env, finish, run, scratch, validate  # noqa: E402

BASE = TINY + ["--steps", "1", "--warmup", "0"]


def tree(d):
    return sorted(os.path.relpath(os.path.join(r, n), d) for r, ds, fs in os.walk(d) for n in ds + fs)


def refused(p, missing, what):
    msg = [ln for ln in p.stderr.splitlines() if ln.startswith("instbench ")]
    check(p.returncode == 2, f"{what}: exit {p.returncode}, want 2: {p.stderr[-300:]}")
    check(len(msg) == 1 and missing in msg[0] and "does not exist" in msg[0] and "--create-dirs" in msg[0],
          f"{what}: message {msg}")


# measure -o and --append into a missing directory: refused before the run, nothing made.
for flag, name in (("--output", "r.json"), ("--append", "r.jsonl")):
    d = scratch()
    missing = os.path.join(d, "no", "such")
    p = run(BASE + [flag, os.path.join(missing, name)], cwd=d)
    refused(p, missing, f"measure {flag}")
    check("measuring" not in p.stderr, f"measure {flag}: measured before refusing")
    check(tree(d) == [], f"measure {flag}: left {tree(d)}")

    # --create-dirs: the directories are made, the file written (and the default result beside it
    # for --append, in ./instbench-results/ of the working directory)
    p = run(BASE + [flag, os.path.join(missing, name), "--create-dirs"], cwd=d)
    if check(p.returncode == 0, f"measure {flag} --create-dirs: exit {p.returncode}: {p.stderr[-300:]}"):
        with open(os.path.join(missing, name)) as f:
            doc = json.loads(f.read())
        validate(doc, f"measure {flag} --create-dirs")

# -o under a regular file: refused (exit 2), with or without --create-dirs.
d = scratch()
open(os.path.join(d, "file"), "w").close()
for extra in ([], ["--create-dirs"]):
    p = run(BASE + ["--output", os.path.join(d, "file", "r.json")] + extra, cwd=d)
    check(p.returncode == 2 and "not a directory" in p.stderr, f"-o file/r.json {extra}: exit {p.returncode}: "
          f"{p.stderr[-300:]}")
check(tree(d) == ["file"], f"-o file/r.json: left {tree(d)}")

# An existing directory needs no flag; the default directory is made by the write.
d = scratch()
os.mkdir(os.path.join(d, "there"))
p = run(BASE + ["--output", os.path.join(d, "there", "r.json")], cwd=d)
check(p.returncode == 0 and os.path.exists(os.path.join(d, "there", "r.json")), f"-o there/r.json: exit {p.returncode}")
p = run(BASE, cwd=d)
check(p.returncode == 0 and len(os.listdir(os.path.join(d, "instbench-results"))) == 1
      if os.path.isdir(os.path.join(d, "instbench-results")) else False, f"default output: exit {p.returncode}, "
      f"{tree(d)}")


# prices -o the same way (the snapshot: no network).
def prices(args, cwd):
    return subprocess.run([BIN, "prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region",
                           "us-east-1", "--format", "json"] + args, capture_output=True, text=True, cwd=cwd,
                          timeout=60, env=env())


d = scratch()
missing = os.path.join(d, "no", "such")
p = prices(["-o", os.path.join(missing, "p.json")], d)
refused(p, missing, "prices -o")
check(tree(d) == [], f"prices -o: left {tree(d)}")
p = prices(["-o", os.path.join(missing, "p.json"), "--create-dirs"], d)
if check(p.returncode == 0, f"prices -o --create-dirs: exit {p.returncode}: {p.stderr[-300:]}"):
    with open(os.path.join(missing, "p.json")) as f:
        check(json.load(f).get("schema") == "instbench.prices/v1", "prices -o --create-dirs: not a prices document")
finish("measure_cli_dirs")
