#!/usr/bin/python3
"""The source archive (CMake target instbench_source_archive, cmake/source_archive.cmake) and the
instance building from it end to end:
- contents: exactly the tracked files the build needs (git ls-files of src/ include/ kernels/ cmake/
  configs/ CMakeLists.txt LICENSE is the reference), each with its working-tree bytes, and REVISION,
  the packing build's revision (the one it recorded and compiled, naming a commit git has:
  testlib.build_revision); no tests/, data/, docs/, build trees; names
  sorted, owner 0/0, one fixed mtime; gzip header without name or time;
- reproducible: the same sources and revision copied elsewhere with other mtimes and another umask
  pack to the same bytes;
- sweep_source_archive (userdata_probe archive): beside the executable, its path and the SHA-256
  hashlib computes; absent, an error naming the target that builds it (exit 1); `cmake --install`
  puts the archive beside the installed executable;
- end to end: the rendered user data, with no prebuilt binary, downloads the archive from moto
  through its presigned URL, checks it, configures and builds it (where nvcc is here, the CUDA
  module for the one architecture a stand-in nvidia-smi reports, as an instance builds for its GPU;
  ccache through CMAKE_C_COMPILER_LAUNCHER in the environment, as CMake reads it), measures, and
  delivers a result that `instbench rank` ranks, whose tool.revision is the archive's REVISION.
Usage: sweep_userdata_archive.py INSTBENCH USERDATA_PROBE SOURCE_DIR REVISION_TEXT"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")] + [HERE]
from testlib import build_revision, check, failures, require, scratch_dir  # noqa: E402

BIN, PROBE, SRC, REVISION = (os.path.abspath(a) for a in sys.argv[1:5])
ARCHIVE = os.path.join(os.path.dirname(BIN), "instbench-src.tar.gz")
TMP = scratch_dir("ud-archive-")
require(os.path.isfile(ARCHIVE), f"{ARCHIVE} is missing: the default build makes it")
data = open(ARCHIVE, "rb").read()
sha = hashlib.sha256(data).hexdigest()

# -- contents against git's list of tracked files ----------------------------------------------------
g = subprocess.run(["git", "-C", SRC, "ls-files", "-z", "--", "src", "include", "kernels", "cmake", "configs",
                    "CMakeLists.txt", "LICENSE"], capture_output=True, timeout=60)
require(g.returncode == 0, "git ls-files failed: the test compares the archive with the checkout's tracked files")
tracked = sorted(n for n in g.stdout.decode().split("\0") if n and os.path.isfile(os.path.join(SRC, n)))
want_rev, wrong = build_revision(REVISION, SRC)
check(not wrong, wrong)
with tarfile.open(ARCHIVE) as t:
    members = t.getmembers()
    names = [m.name for m in members]
    check(names == sorted(names), "archive entries are not sorted by name")
    check(names == sorted(tracked + ["REVISION"]), "archive != tracked sources and REVISION: extra %s, missing %s" % (
        sorted(set(names) - set(tracked) - {"REVISION"})[:5], sorted(set(tracked + ["REVISION"]) - set(names))[:5]))
    revision = t.extractfile("REVISION").read().decode() if "REVISION" in names else ""
    check(revision == (want_rev or "unknown") + "\n", f"archive REVISION {revision!r}, the build recorded {want_rev}")
    check(all(m.uid == 0 and m.gid == 0 and m.uname in ("", "root") for m in members), "owners not 0/0")
    check(len({m.mtime for m in members}) == 1, "more than one mtime in the archive")
    check(all(m.isfile() for m in members), "non-file entries in the archive")
    differ = [m.name for m in members if m.name in tracked
              and t.extractfile(m).read() != open(os.path.join(SRC, m.name), "rb").read()]
    check(not differ, f"archive bytes differ from the working tree: {differ[:5]}")
check(not any(n.startswith(("tests/", "data/", "docs/", "build", "scripts/")) for n in names), "unneeded trees packed")
# gzip header (RFC 1952): FLG has no FNAME bit, MTIME is zero
check(data[:2] == b"\x1f\x8b" and not (data[3] & 0x08) and data[4:8] == b"\0\0\0\0", "gzip header carries a name or time")

# -- reproducible: a copy with other mtimes and umask packs to the same bytes -------------------------
copy = os.path.join(TMP, "copy")
for n in tracked:
    os.makedirs(os.path.dirname(os.path.join(copy, n)), exist_ok=True)
    shutil.copyfile(os.path.join(SRC, n), os.path.join(copy, n))
    os.chmod(os.path.join(copy, n), os.stat(os.path.join(SRC, n)).st_mode & 0o777 | 0o020)   # group-writable
    os.utime(os.path.join(copy, n), (1.5e9, 1.5e9))
out = os.path.join(TMP, "again.tar.gz")
with open(os.path.join(TMP, "REVISION"), "w") as f:
    f.write(revision)
p = subprocess.run(["cmake", f"-DSRC={copy}", f"-DOUT={out}", f"-DREVISION_FILE={os.path.join(TMP, 'REVISION')}",
                    "-P", os.path.join(SRC, "cmake", "source_archive.cmake")], capture_output=True, text=True,
                   timeout=120)
check(p.returncode == 0 and os.path.isfile(out), f"packing the copy: {p.stderr[-400:]}")
if os.path.isfile(out):
    check(open(out, "rb").read() == data, "the same sources packed to different bytes")

# -- sweep_source_archive ---------------------------------------------------------------------------
# the probe copied into a directory, first alone, then with the archive beside it
lone = os.path.join(TMP, "bin")
os.makedirs(lone)
probe = shutil.copy(PROBE, lone)
p = subprocess.run([probe, "archive"], capture_output=True, text=True, timeout=60)
check(p.returncode == 1 and "instbench_source_archive" in p.stderr and lone in p.stderr, f"no archive: {p.returncode} {p.stderr!r}")
shutil.copy(ARCHIVE, lone)
p = subprocess.run([probe, "archive"], capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and p.stdout.split() == [os.path.join(lone, "instbench-src.tar.gz"), sha],
      f"archive beside the probe: {p.stdout!r} {p.stderr!r}")

# -- cmake --install puts it beside the installed executable -----------------------------------------
prefix = os.path.join(TMP, "prefix")
p = subprocess.run(["cmake", "--install", os.path.dirname(BIN), "--prefix", prefix], capture_output=True, text=True,
                   timeout=120)
installed = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs]
exe = [f for f in installed if os.path.basename(f) == "instbench"]
check(p.returncode == 0 and len(exe) == 1, f"cmake --install: {p.stderr[-300:]} {installed}")
if exe:
    beside = os.path.join(os.path.dirname(exe[0]), "instbench-src.tar.gz")
    check(os.path.isfile(beside) and open(beside, "rb").read() == data, "the archive is not installed beside instbench")

# -- the instance builds from the uploaded archive, end to end ---------------------------------------
from moto_server import MotoServer  # noqa: E402
from instance_sim import Sandbox  # noqa: E402
import userdata_common as run  # noqa: E402

with MotoServer() as m:
    s3 = run.S3(m)
    s3.c.create_bucket(Bucket=run.BUCKET)
    m.set_auth(10 ** 9)   # moto and presigned URLs: see sweep_userdata_run.py
    s3.put(f"p/sources/{sha}.tar.gz", data)
    env = {"INSTBENCH_USERDATA_SKIP_PACKAGES": "1", "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    if shutil.which("ccache"):
        # the sandbox's HOME is its own: the cache is named, so every run shares it.  Paths under
        # the base dir are hashed relative to the build directory, and the node's layout (src/,
        # src/build/) is a checkout's: where scripts/test.sh's release build filled the cache
        # (CCACHE_DIR), its objects are hits here and only what differs compiles.
        cache = subprocess.run(["ccache", "-k", "cache_dir"], capture_output=True, text=True).stdout.strip()
        env.update(CMAKE_C_COMPILER_LAUNCHER="ccache", CMAKE_CXX_COMPILER_LAUNCHER="ccache", CCACHE_BASEDIR=TMP,
                   CCACHE_NOHASHDIR="true", CCACHE_DIR=os.environ.get("CCACHE_DIR") or cache)
    sb = Sandbox(run.render(run.vars_for(s3, "built", f"p/sources/{sha}.tar.gz", sha)), run.meta(),
                 root=os.path.join(TMP, "node"), env=env)
    # The instance's GPU as nvidia-smi reports it (an A10G, g5's): the user data builds the CUDA
    # module for that one architecture, as on an instance, where nvcc is here (without an answer
    # it would build all seven, minutes of nvcc that no instance spends)
    smi = os.path.join(sb.root, "bin", "nvidia-smi")
    with open(smi, "w") as f:
        f.write('#!/bin/sh\ncase "$*" in *compute_cap*) echo 8.6 ;; *) echo "nvidia-smi stand-in: $*" >&2; exit 9 ;; esac\n')
    os.chmod(smi, 0o755)
    rc = sb.run(timeout=1500)
    log = sb.log_text()
    check(rc == 0, f"build from the archive: exit {rc}: {log[-3000:]}")
    if "CUDA " in log and ": code for " in log:   # where nvcc is here: the GPU's one architecture
        check(": code for 86\n" in log, "the CUDA module not built for the instance's GPU (8.6) alone: %s" %
              [ln for ln in log.splitlines() if ": code for " in ln])
    check("-- Build files have been written to" in log,
          "the log shows no configure from the archive")
    work = [d for d in os.listdir(sb.tmp) if d.startswith("instbench-sweep.")]
    check(work and os.access(os.path.join(sb.tmp, work[0], "src", "build", "instbench"), os.X_OK),
          "no instbench built in the instance's work directory")
    got = s3.get(f"p/sweep-{run.SWEEP}/results/built.json")
    if check(got is not None, "the archive-built instbench delivered no result"):
        doc = json.loads(got)
        rows = [r for r in run.ranked(got) if r["market"] == "spot"]
        check(len(rows) == 1 and rows[0]["samples_per_second"] == doc["measurement"]["samples_per_second"],
              f"rank of the archive-built result: {rows}")
        # the instance's build has no .git: it names the code by the archive's REVISION
        want = revision.strip() if revision.strip() != "unknown" else None
        check(doc["tool"].get("revision", "absent") == want,
              f"the archive-built result's tool.revision {doc['tool'].get('revision', 'absent')!r}, REVISION {want!r}")
    sb.close()

sys.exit(1 if failures else 0)
