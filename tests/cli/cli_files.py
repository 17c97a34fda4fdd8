"""Every file a command writes goes through one safe writer (src/util/safewrite.c): `prices -o`
and `rank --plot` write through a device or FIFO (errors reported, nothing replaced), refuse a
directory, replace a regular file atomically with mode 0666 & ~umask and leave no temporaries.
Devices are reached through symbolic links in a scratch directory, never named directly.
usage: cli_files.py INSTBENCH"""
import json
import os
import stat
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: fifo_reader, testlib
from fifo_reader import start_fifo_reader  # noqa: E402



BIN = sys.argv[1]
from testlib import check, failures, scratch_dir
d = scratch_dir("instbench-files-")


result = {"schema": "instbench.result/v1", "instance": {"type": "g5.xlarge", "region": "us-east-1"},
          "workload": {"fingerprint": "abcdef"}, "topology": {"nodes": 1},
          "measurement": {"samples_per_second": 100}}
with open(os.path.join(d, "r.json"), "w") as f:
    json.dump(result, f)
env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
env.update(AWS_EC2_METADATA_DISABLED="true", HOME=d, XDG_CACHE_HOME=os.path.join(d, "cache"), NO_COLOR="1",
           AWS_CONFIG_FILE=os.path.join(d, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(d, "none"))
PRICES = ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1", "--format",
          "json"]


def prices_to(path):
    return subprocess.run([BIN] + PRICES + ["-o", path], capture_output=True, text=True, env=env, cwd=d, timeout=60)


def plot_to(path):
    # the table goes to a pipe; the chart to PATH
    return subprocess.run([BIN, "rank", os.path.join(d, "r.json"), "--source", os.path.join(d, "p.json"),
                           "--format", "table", "--plot", path], capture_output=True, text=True, env=env, cwd=d,
                          timeout=60)


# a prices file for rank, written by prices -o (regular file, new): mode 0666 & ~umask
os.umask(0o027)
p = prices_to(os.path.join(d, "p.json"))
check(p.returncode == 0, f"prices -o p.json: exit {p.returncode}: {p.stderr[-300:]}")
mode = stat.S_IMODE(os.stat(os.path.join(d, "p.json")).st_mode) if os.path.exists(os.path.join(d, "p.json")) else 0
check(mode == 0o640, f"prices -o: mode {mode:o}, want 640 under umask 027")
os.umask(0o022)

for name, write, word in (("prices -o", prices_to, "instbench prices"), ("rank --plot", plot_to, "instbench rank")):
    sub = os.path.join(d, name.split()[0])
    os.mkdir(sub)
    full = os.path.join(sub, "full")
    os.symlink("/dev/full", full)
    p = write(full)
    check(p.returncode == 1, f"{name} /dev/full: exit {p.returncode}, want 1: {p.stderr[-300:]}")
    check("No space left" in p.stderr, f"{name} /dev/full: the write error is not reported: {p.stderr[-300:]}")
    check(os.path.islink(full) and os.readlink(full) == "/dev/full", f"{name}: the link to /dev/full was replaced")
    adir = os.path.join(sub, "adir")
    os.mkdir(adir)
    p = write(adir)
    check(p.returncode != 0 and "directory" in p.stderr, f"{name} DIR: exit {p.returncode}: {p.stderr[-300:]}")
    check(os.listdir(adir) == [], f"{name} DIR: files written into it")
    fifo = os.path.join(sub, "fifo")
    os.mkfifo(fifo)
    got = []
    t = start_fifo_reader(fifo, got, 20)   # the reader has the FIFO open before the command starts
    p = write(fifo)
    t.join(30)
    check(p.returncode == 0, f"{name} FIFO: exit {p.returncode}: {p.stderr[-300:]}")
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), f"{name}: the FIFO was replaced by a regular file")
    check(bool(got and got[0].strip()), f"{name}: the FIFO's reader got nothing")
    # a regular file replaced in place, twice, no temporaries left
    out = os.path.join(sub, "out")
    for _ in range(2):
        p = write(out)
        check(p.returncode == 0, f"{name} FILE: exit {p.returncode}: {p.stderr[-300:]}")
    check(sorted(os.listdir(sub)) == ["adir", "fifo", "full", "out"], f"{name}: stray files {sorted(os.listdir(sub))}")

subprocess.run(["rm", "-rf", d])
print(f"cli_files: {len(failures)} failure(s)" if failures else "cli_files: ok")
sys.exit(1 if failures else 0)
