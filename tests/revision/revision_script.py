#!/usr/bin/python3
"""cmake/revision.cmake, the source revision a build compiles, run by `cmake -P` on trees made
here, each expectation from git run here (`git rev-parse HEAD`) or from what the test wrote:
- a git checkout: HEAD's 40 hex digits after a clean commit; "-dirty" after a tracked file is
  edited, staged or deleted; clean again with only an untracked file; a new commit is seen; a git
  worktree (.git a file) names its own HEAD; GIT_DIR in the environment (a git hook's) is ignored;
- no .git: a REVISION file's value (a source archive), "-dirty" kept; a REVISION that holds no
  revision, or none at all, is unknown, also inside another repository (the outer HEAD is not
  this tree's);
- unknown, and the script still succeeds, where git is not on PATH, where .git points nowhere,
  in a repository without a commit, and where git never answers (a stand-in that sleeps: given up
  after -DGIT_TIMEOUT seconds, with a warning);
- a hostile REVISION is not read and the script ends: a FIFO no one writes, a link to /dev/zero, a
  folder, a file of 10 MB;
- each file is written only when its content changes (an unchanged revision keeps the mtime).
Unknown is `#define INSTBENCH_REVISION ""` and the text "unknown".
Usage: revision_script.py CMAKE SOURCE_DIR"""
import os
import re
import shutil
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib: testlib
from testlib import check, failures, require, scratch_dir  # noqa: E402

CMAKE, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCRIPT = os.path.join(SRC, "cmake", "revision.cmake")
require(os.path.isfile(SCRIPT), f"{SCRIPT} is missing")
GIT = shutil.which("git")
require(GIT, "git is needed to make the test's repositories")
TMP = scratch_dir("revision-")
OUT = os.path.join(TMP, "out")
HEADER, TEXT = os.path.join(OUT, "revision.h"), os.path.join(OUT, "REVISION")
# a git of its own: no user or system configuration (a template, a hook) reaches the repositories
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=TMP, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")


def git(repo, *args):
    p = subprocess.run([GIT, "-C", repo, *args], capture_output=True, text=True, env=GIT_ENV, timeout=60)
    require(p.returncode == 0, f"git {' '.join(args)} in {repo}: {p.stderr}")
    return p.stdout.strip()


def script(src, env=None, *defs):
    """Runs the script on SRC: (the header's value, the text file's line)."""
    try:
        p = subprocess.run([CMAKE, f"-DSRC={src}", f"-DHEADER={HEADER}", f"-DTEXT={TEXT}", *defs, "-P", SCRIPT],
                           capture_output=True, text=True, env=env or GIT_ENV, timeout=60)
    except subprocess.TimeoutExpired:
        p = subprocess.CompletedProcess([], "timeout", "", "no end within 60 s (a build would hang)")
    script.stderr = p.stderr
    check(p.returncode == 0, f"cmake -P revision.cmake on {src}: exit {p.returncode}: {p.stderr[-400:]}")
    header = open(HEADER).read() if os.path.exists(HEADER) else ""
    m = re.search(r'^#define INSTBENCH_REVISION "([^"\n]*)"$', header, re.M)
    check(m, f"no INSTBENCH_REVISION in the header: {header!r}")
    return (m.group(1) if m else None), (open(TEXT).read() if os.path.exists(TEXT) else None)


def expect(what, src, want, env=None, *defs):
    value, text = script(src, env, *defs)
    check(value == (want or ""), f"{what}: header {value!r}, want {want or ''!r}")
    check(text == (want or "unknown") + "\n", f"{what}: text {text!r}, want {(want or 'unknown')!r}")


def repo(name):
    r = os.path.join(TMP, name)
    os.makedirs(r)
    git(r, "init", "-q")
    with open(os.path.join(r, "a.c"), "w") as f:
        f.write("int a;\n")
    with open(os.path.join(r, "b.txt"), "w") as f:
        f.write("b\n")
    git(r, "add", "a.c", "b.txt")
    git(r, "commit", "-q", "-m", "one")
    return r


r = repo("checkout")
head = git(r, "rev-parse", "HEAD")
expect("clean commit", r, head)
with open(os.path.join(r, "a.c"), "a") as f:
    f.write("int edited;\n")
expect("tracked file edited", r, head + "-dirty")
git(r, "add", "a.c")
expect("edit staged", r, head + "-dirty")
git(r, "reset", "-q", "--hard")
os.remove(os.path.join(r, "b.txt"))
expect("tracked file deleted", r, head + "-dirty")
git(r, "checkout", "-q", "--", "b.txt")
with open(os.path.join(r, "untracked.c"), "w") as f:
    f.write("int u;\n")
expect("untracked file only", r, head)

# written only on a change: an unchanged revision leaves both files as they were
for f in (HEADER, TEXT):
    os.utime(f, (1e9, 1e9))
expect("again, unchanged", r, head)
check(all(os.stat(f).st_mtime == 1e9 for f in (HEADER, TEXT)), "an unchanged revision rewrote its files")
git(r, "add", "untracked.c")
git(r, "commit", "-q", "-m", "two")
second = git(r, "rev-parse", "HEAD")
check(second != head, "the second commit has its own hash")
expect("a new commit", r, second)
check(all(os.stat(f).st_mtime != 1e9 for f in (HEADER, TEXT)), "a new revision did not rewrite the files")

# a build started from a git hook: GIT_DIR names another repository
other = repo("other")
expect("GIT_DIR set to another repository", r, second, env=dict(GIT_ENV, GIT_DIR=os.path.join(other, ".git")))

# a worktree: its .git is a file
wt = os.path.join(TMP, "worktree")
git(r, "worktree", "add", "-q", "--detach", wt, head)
expect("worktree", wt, head)

# no .git: the REVISION file of a source archive, or nothing known
plain = os.path.join(TMP, "archive")
os.makedirs(plain)
expect("no .git, no REVISION", plain, None)
for value, want in ((head, head), (head + "-dirty", head + "-dirty"), ("unknown", None), (head.upper(), None),
                    (head[:39], None), (head + "-clean", None), ("", None)):
    with open(os.path.join(plain, "REVISION"), "w") as f:
        f.write(value + "\n")
    expect(f"no .git, REVISION {value!r}", plain, want)

# a tree without .git inside a checkout (gpu_bundle.sh's baseline tree, in the build folder): its own
# REVISION, never the outer checkout's HEAD
inner = os.path.join(r, "build", "baseline-src")
os.makedirs(inner)
expect("inside a checkout, no REVISION", inner, None)
with open(os.path.join(inner, "REVISION"), "w") as f:
    f.write(head + "\n")
expect("inside a checkout, REVISION", inner, head)

# git cannot answer: unknown, and the script succeeds
empty_path = os.path.join(TMP, "no-git-bin")
os.makedirs(empty_path)
expect("git not on PATH", r, None, env=dict(GIT_ENV, PATH=empty_path))
broken = os.path.join(TMP, "broken")
os.makedirs(broken)
with open(os.path.join(broken, ".git"), "w") as f:
    f.write("gitdir: %s\n" % os.path.join(TMP, "nowhere"))
expect(".git pointing nowhere", broken, None)
fresh = os.path.join(TMP, "fresh")
os.makedirs(fresh)
git(fresh, "init", "-q")
expect("a repository without a commit", fresh, None)
hung_path = os.path.join(TMP, "hung-git-bin")
os.makedirs(hung_path)
with open(os.path.join(hung_path, "git"), "w") as f:
    f.write("#!/bin/sh\nexec sleep 600\n")
os.chmod(os.path.join(hung_path, "git"), 0o755)
expect("git never answering", r, None, dict(GIT_ENV, PATH=hung_path + os.pathsep + os.environ["PATH"]),
       "-DGIT_TIMEOUT=2")
check("did not answer within 2 s" in " ".join(script.stderr.split()),
      f"git never answering: no warning: {script.stderr[-400:]}")

# a REVISION that is no file of a revision: never read whole (a build would hang or fill memory)
for name, what, make in (("fifo", "a FIFO", os.mkfifo), ("zero", "a link to /dev/zero",
                                                        lambda p: os.symlink("/dev/zero", p)),
                         ("folder", "a folder", os.makedirs)):
    hostile = os.path.join(TMP, "hostile-" + name)
    os.makedirs(hostile)
    make(os.path.join(hostile, "REVISION"))
    expect("REVISION " + what, hostile, None)
with open(os.path.join(plain, "REVISION"), "w") as f:
    f.write("0" * 10_000_000)
expect("REVISION of 10 MB", plain, None)

print("revision_script: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
