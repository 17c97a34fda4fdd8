"""Where `measure` writes its result, and what happens when it cannot:
- six runs started together in one directory leave six default-named files (milliseconds and a
  random part in the name, created without replacing anything), no temporaries;
- --output / --append are checked before the run: a directory, a link for --append, or an
  unwritable path fails within seconds, not after the measurement;
- a device or FIFO named by --output is written through, never replaced by a regular file; a
  write that fails there (/dev/full) saves the result to ./instbench-result-*.json, names it and
  exits 1.
Devices are reached through symbolic links or nodes made in the scratch directory, so even a
broken build can never replace a node under /dev."""
import json
import os
import re
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import BIN, check, env, finish, run, scratch, validate  # noqa: E402
from fifo_reader import start_fifo_reader  # noqa: E402



# The smallest config (one block, 32 px images): each run takes well under a second.
SMALL = ["--backend", "cpu", "--precision", "fp32", "--model", "vit_tiny_patch16_224", "--depth", "1",
         "--image-size", "32", "--patch-size", "8", "--embed-dim", "32", "--heads", "2", "--classes", "10",
         "--batch-size", "2", "--steps", "2", "--warmup", "1"]
NAME = re.compile(re.escape(os.uname().nodename) + r"-[0-9a-f]{6}-\d{8}T\d{6}\.\d{3}Z\.json$")


def files_under(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)


# ---- six runs at once, default names ----
d = scratch()
procs = [subprocess.Popen([BIN, "measure"] + SMALL + ["--format", "json"], cwd=d, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env(INSTBENCH_CPU_PEAK_SECONDS="0.05"))
         for _ in range(6)]
outs = [p.communicate(timeout=300) for p in procs]
for p, (out, err) in zip(procs, outs):
    check(p.returncode == 0, f"concurrent run: exit {p.returncode}: {err[-300:]}")
names = files_under(os.path.join(d, "instbench-results")) if os.path.isdir(os.path.join(d, "instbench-results")) else []
check(len(names) == 6, f"six concurrent runs left {len(names)} result file(s): {names}")
for n in names:
    check(NAME.match(n) is not None, f"default name {n!r} lacks <host>-<random>-<time to the ms>Z.json")
    try:
        validate(json.load(open(os.path.join(d, "instbench-results", n))), n)
    except ValueError as e:
        check(False, f"{n}: not JSON ({e})")
check(files_under(d) == ["instbench-results/" + n for n in names], f"other files left: {files_under(d)}")

# ---- checked before the run: a 20 s peak probe would come first otherwise ----
d = scratch()
with open(os.path.join(d, "file"), "w") as f:
    f.write("x")
os.mkdir(os.path.join(d, "adir"))
os.symlink(os.path.join(d, "file"), os.path.join(d, "link.jsonl"))
for args, want, word in ((["--output", os.path.join(d, "adir")], 2, "directory"),
                         # a directory that is not there is the user's to fix (exit 2), as cp and curl -o say;
                         # one that cannot be made (--create-dirs) is a runtime error
                         (["--output", os.path.join(d, "file", "r.json")], 2, "file is not a directory"),
                         (["--output", os.path.join(d, "file", "r.json"), "--create-dirs"], 2, "file is not a directory"),
                         (["--output", "/proc/instbench-nope/r.json"], 2, "/proc/instbench-nope does not exist"),
                         (["--output", "/proc/instbench-nope/r.json", "--create-dirs"], 1, "/proc/instbench-nope"),
                         (["--append", os.path.join(d, "adir")], 2, "directory"),
                         (["--append", os.path.join(d, "link.jsonl")], 2, "link"),
                         (["-o", os.path.join(d, "adir")], 2, "directory"),
                         # one file as both: a JSON document with a JSON Lines line after it
                         (["-o", os.path.join(d, "same.json"), "--append", os.path.join(d, "same.json")], 2,
                          "name one file"),
                         (["-o", "same.json", "--append", os.path.join(d, "adir", "..", "same.json")], 2,
                          "name one file")):
    what = " ".join(args)
    try:
        p = run(SMALL + args, cwd=d, timeout=15, INSTBENCH_CPU_PEAK_SECONDS="20")
    except subprocess.TimeoutExpired:
        check(False, f"{what}: still running after 15 s: the output was not checked before the run")
        continue
    check(p.returncode == want, f"{what}: exit {p.returncode}, want {want}: {p.stderr.strip()[-300:]}")
    check(word in p.stderr, f"{what}: message lacks {word!r}: {p.stderr.strip()[-300:]}")
    # no clock bound: a run (its 20 s peak probe first) would outlast the 15 s timeout, and says "measuring"
    check("measuring" not in p.stderr, f"{what}: the run started before the output was checked")
check(files_under(d) == ["file", "link.jsonl"], f"the checks left files: {files_under(d)}")
check(os.path.islink(os.path.join(d, "link.jsonl")) and open(os.path.join(d, "file")).read() == "x",
      "the --append link or its file changed")

# ---- --append after a last line without its newline: the new line starts a line of its own ----
d = scratch()
log = os.path.join(d, "runs.jsonl")
with open(log, "w") as f:
    f.write('{"schema": "written by hand"}')
p = run(SMALL + ["--append", log, "--output", os.path.join(d, "r.json")], cwd=d, timeout=120)
lines = open(log).read().split("\n")
check(p.returncode == 0 and len(lines) == 3 and lines[0] == '{"schema": "written by hand"}' and lines[2] == "" and
      json.loads(lines[1]).get("schema") == "instbench.result/v1",
      f"--append after a line without a newline: exit {p.returncode}, lines {[l[:40] for l in lines]}")

# ---- /dev/full through a link: the error is seen, the result saved elsewhere, exit 1 ----
d = scratch()
full = os.path.join(d, "full")
os.symlink("/dev/full", full)
p = run(SMALL + ["--output", full], cwd=d, timeout=120, INSTBENCH_CPU_PEAK_SECONDS="0.05")
check(p.returncode == 1, f"--output /dev/full: exit {p.returncode}, want 1: {p.stderr[-300:]}")
check(os.path.islink(full) and os.readlink(full) == "/dev/full", "the link to /dev/full was replaced")
check(stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full is no longer a device")
m = re.search(r"saved to (\S+) instead", p.stderr)
check(m is not None, f"no fallback path named: {p.stderr[-400:]}")
check("No space left" in p.stderr, f"the write error is not reported: {p.stderr[-400:]}")
if m:
    fb = os.path.join(d, m.group(1))
    check(os.path.dirname(os.path.abspath(fb)) == os.path.realpath(d), f"fallback {fb} is not in the working directory")
    try:
        validate(json.load(open(fb)), "fallback file")
    except (OSError, ValueError) as e:
        check(False, f"fallback file {fb}: {e}")

# ---- a FIFO is written through; a private null device stays a device ----
d = scratch()
fifo = os.path.join(d, "fifo")
os.mkfifo(fifo)
got = []
t = start_fifo_reader(fifo, got, 60)   # the reader has the FIFO open before the command starts
p = run(SMALL + ["--output", fifo], cwd=d, timeout=120, INSTBENCH_CPU_PEAK_SECONDS="0.05")
t.join(70)
check(p.returncode == 0, f"--output FIFO: exit {p.returncode}: {p.stderr[-300:]}")
check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file")
try:
    validate(json.loads(got[0].decode() if got else ""), "through the FIFO")
except ValueError as e:
    check(False, f"the FIFO's reader got no JSON ({e})")
node = os.path.join(d, "null")
try:
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
except OSError as e:
    print(f"note: mknod not permitted ({e}); device nodes checked through links only")
else:
    p = run(SMALL + ["--output", node], cwd=d, timeout=120, INSTBENCH_CPU_PEAK_SECONDS="0.05")
    check(p.returncode == 0, f"--output null device: exit {p.returncode}: {p.stderr[-300:]}")
    check(stat.S_ISCHR(os.lstat(node).st_mode), "the null device node was replaced by a regular file")
check(sorted(os.listdir(d)) == sorted(["fifo"] + (["null"] if os.path.exists(node) else [])),
      f"files left: {os.listdir(d)}")
finish("measure_cli_output")
