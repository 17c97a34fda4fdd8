#!/usr/bin/env python3
"""`cmake --install BUILD --prefix DIR` (what `scripts/bootstrap.sh --prefix DIR` runs) puts
DIR/bin/instbench and what it reads at run time beside it (the source archive `sweep run` uploads,
the CUDA module in a CUDA build), nothing outside DIR; the installed binary runs from another
folder with no source tree: its version, and prices from the snapshot embedded in it.
Usage: install_test.py CMAKE BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import check, failures, offline_env  # noqa: E402

CMAKE, BUILD = sys.argv[1], os.path.abspath(sys.argv[2])
d = tempfile.mkdtemp(prefix="install-")
prefix = os.path.join(d, "pre fix")   # a space: the prefix is quoted all the way
p = subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], capture_output=True, text=True, timeout=300)
check(p.returncode == 0, f"cmake --install: exit {p.returncode}: {p.stderr[-600:]}")
installed = sorted(os.path.relpath(os.path.join(r, f), prefix) for r, _, fs in os.walk(prefix) for f in fs)
print("installed:", installed)
exe = os.path.join(prefix, "bin", "instbench")
check(os.access(exe, os.X_OK), f"no executable {exe}: {installed}")
check("bin/instbench-src.tar.gz" in installed, f"no source archive beside the binary: {installed}")
if os.path.exists(os.path.join(BUILD, "libinstbench-cuda.so")):
    check("bin/libinstbench-cuda.so" in installed, f"a CUDA build without its module installed: {installed}")
# every line of the install manifest lies under the prefix
manifest = os.path.join(BUILD, "install_manifest.txt")
if os.path.exists(manifest):
    outside = [ln for ln in open(manifest).read().split("\n") if ln and not ln.startswith(prefix + "/")]
    check(not outside, f"installed outside the prefix: {outside}")
if "bin/instbench-src.tar.gz" in installed:
    with tarfile.open(os.path.join(prefix, "bin", "instbench-src.tar.gz")) as t:
        names = t.getnames()
    check(any(n.endswith("CMakeLists.txt") for n in names), f"the source archive holds no CMakeLists.txt: {names[:5]}")

run_dir = os.path.join(d, "elsewhere")
os.makedirs(run_dir)
if os.access(exe, os.X_OK):
    v = subprocess.run([exe, "--version"], cwd=run_dir, env=offline_env(run_dir), capture_output=True, text=True)
    check(v.returncode == 0 and v.stdout.startswith("instbench"), f"installed --version: {v.returncode} {v.stdout} {v.stderr}")
    q = subprocess.run([exe, "prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--regions", "us-east-1",
                        "--format", "csv"], cwd=run_dir, env=offline_env(run_dir), capture_output=True, text=True)
    check(q.returncode == 0 and "\ng5.xlarge," in q.stdout, f"installed prices: {q.returncode} {q.stdout[:300]} {q.stderr[-300:]}")
shutil.rmtree(d, ignore_errors=True)
print(f"install_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
