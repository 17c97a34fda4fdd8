#!/usr/bin/python3
"""The revision is the build's, not the configure step's: a copy of the sources is made a git
repository here (its path and the build folder's with spaces) and configured once (CPU-only, no
tests), then
- `cmake --build --target instbench_revision` writes git's HEAD (`git rev-parse HEAD`, run here)
  into the generated header, and again after a commit made since configuring, without a new
  configure; an unchanged revision leaves the header's mtime as it was (nothing rebuilds);
- the source archive (target instbench_source_archive) holds REVISION with the packing build's
  revision, HEAD's and then HEAD's with -dirty after a tracked file is edited (its edited bytes
  packed), repacked when only the revision changed (a commit of an edit the archive already held);
  everything else in it is the tree's files.
Usage: revision_build.py CMAKE SOURCE_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tarfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib: testlib
from testlib import check, failures, require, scratch_dir  # noqa: E402

CMAKE, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
GIT = shutil.which("git")
require(GIT, "git is needed to make the test's repository")
TMP = scratch_dir("revision-build-")
# spaces in both: every path CMake hands the scripts must survive them (VERBATIM, quoting)
TREE, BUILD = os.path.join(TMP, "src tree"), os.path.join(TMP, "build dir")
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=TMP, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
HEADER = os.path.join(BUILD, "generated", "revision", "instbench_revision.h")
ARCHIVE = os.path.join(BUILD, "instbench-src.tar.gz")


def git(*args):
    p = subprocess.run([GIT, "-C", TREE, *args], capture_output=True, text=True, env=GIT_ENV, timeout=120)
    require(p.returncode == 0, f"git {' '.join(args)}: {p.stderr}")
    return p.stdout.strip()


def build(target):
    p = subprocess.run([CMAKE, "--build", BUILD, "--target", target], capture_output=True, text=True, env=GIT_ENV,
                       timeout=600)
    require(p.returncode == 0, f"cmake --build --target {target}: {p.stdout[-1500:]}{p.stderr[-1500:]}")
    return p.stdout


def header_value():
    m = re.search(r'^#define INSTBENCH_REVISION "([^"\n]*)"$', open(HEADER).read(), re.M)
    return m.group(1) if m else None


def archive():
    """REVISION's line and {name: bytes} of the other members."""
    with tarfile.open(ARCHIVE) as t:
        files = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
    rev = files.pop("REVISION", b"(none)").decode()
    return rev, files


# the sources a build reads (cmake/source_archive_files.cmake's folders), committed in a repository
for d in ("src", "include", "kernels", "cmake", "configs"):
    shutil.copytree(os.path.join(SRC, d), os.path.join(TREE, d),
                    ignore=shutil.ignore_patterns("*~", "*.orig", "*.rej", "*.swp", "*.pyc", "__pycache__", ".#*"))
for f in ("CMakeLists.txt", "LICENSE"):
    shutil.copy(os.path.join(SRC, f), TREE)
git("init", "-q")
git("add", "-A")
git("commit", "-q", "-m", "one")
first = git("rev-parse", "HEAD")
p = subprocess.run([CMAKE, "-S", TREE, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release", "-DINSTBENCH_TESTS=OFF",
                    "-DINSTBENCH_CUDA=OFF", "-DINSTBENCH_ONEDNN=OFF"], capture_output=True, text=True, env=GIT_ENV,
                   timeout=600)
require(p.returncode == 0, f"configure: {p.stderr[-1500:]}")
cache = os.stat(os.path.join(BUILD, "CMakeCache.txt")).st_mtime_ns

build("instbench_revision")
check(header_value() == first, f"after configure: {header_value()!r}, git says {first}")
build("instbench_source_archive")
rev, files = archive()
check(rev == first + "\n", f"archive REVISION {rev!r}, want {first}")
check(files.get("src/main.c") == open(os.path.join(TREE, "src", "main.c"), "rb").read(), "archive: src/main.c")

# a commit after configuring: seen at the next build, with no new configure
with open(os.path.join(TREE, "src", "main.c"), "a") as f:
    f.write("/* an edit */\n")
build("instbench_source_archive")
rev, files = archive()
check(rev == first + "-dirty\n", f"after an edit, archive REVISION {rev!r}, want {first}-dirty")
check(files.get("src/main.c", b"").endswith(b"/* an edit */\n"), "the archive does not hold the edit")
git("commit", "-q", "-am", "two")
second = git("rev-parse", "HEAD")
build("instbench_revision")
check(header_value() == second, f"after a commit: {header_value()!r}, git says {second}")
build("instbench_source_archive")
rev, _ = archive()
check(rev == second + "\n", f"after a commit of what it held, archive REVISION {rev!r}, want {second}")

# unchanged: the header keeps its mtime, so nothing that includes it rebuilds
os.utime(HEADER, ns=(10 ** 18, 10 ** 18))
build("instbench_revision")
check(os.stat(HEADER).st_mtime_ns == 10 ** 18, "an unchanged revision rewrote the header")
check(os.stat(os.path.join(BUILD, "CMakeCache.txt")).st_mtime_ns == cache, "the build configured again")

print("revision_build: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
