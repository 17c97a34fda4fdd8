#!/usr/bin/env python3
"""scripts/gpu/gpu_bundle.sh on this CUDA build, checked as the GPU machine will use it.

The GPU machine has glibc, the driver and CUDA's libraries, and none of the -dev packages'
libraries (oneDNN, cJSON, libcurl and its dependencies, expat, OpenSSL).  No mount namespace here
to hide them, so instead: with only the bundle's lib/ on LD_LIBRARY_PATH, every library that ldd
resolves for the bundled programs, and every object the loader actually initialises in a run
(LD_DEBUG=libs), is inside the bundle, glibc's or CUDA's.  Then the bundled instbench verifies a
fixture on the CPU (against the timm reference in it), prints the snapshot's prices (one checked
against configs/prices-snapshot.json), and --backend cuda fails naming the missing driver; and
gpu_check.sh runs from the bundle (--bin mode) to its summary.
Usage: gpu_bundle_test.py REPO_ROOT CUDA_BUILD_DIR"""
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

sys.path[:0] = [os.path.join(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), d)
                for d in ("lib", "fakes")]
from testlib import check, failures  # noqa: E402

ROOT, BUILD = [os.path.abspath(a) for a in sys.argv[1:3]]
LIMIT = 64 << 20
GLIBC = re.compile(r"^(ld-linux[-\w.]*|lib(c|m|dl|pthread|rt|resolv|util|anl|mvec)\.so\.\d+)$")
CUDA = re.compile(r"^lib(cuda|cudart|cublas|cublasLt|nccl|cupti|nvidia-[\w-]+)\.so")  # cupti: the kernel trace's


def allowed(name, path, bundle):
    """Where a library may come from: the bundle, or glibc's / CUDA's anywhere."""
    base = os.path.basename(name)
    if GLIBC.match(base) or CUDA.match(base):
        return True
    return os.path.realpath(path).startswith(os.path.realpath(bundle) + os.sep)


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "bundle")
    p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu", "gpu_bundle.sh"), "--build-dir", BUILD, "--no-build", out],
                       capture_output=True, text=True, timeout=240)
    check(p.returncode == 0, "gpu_bundle.sh exit %d: %s" % (p.returncode, p.stderr[-2000:]))
    if p.returncode:
        sys.exit(1)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs
               if not os.path.islink(os.path.join(d, f)))
    # what a GPU session carries is the archive plus the repository's tracked files, 64 MiB in all
    # (the folder alone is nearly that): the archive must unpack to the same folder and fit beside them
    archive = os.path.join(tmp, "build-gpu-carry", "bundle.tgz")
    check(os.path.isfile(archive), "gpu_bundle.sh wrote no %s" % archive)
    if os.path.isfile(archive):
        tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, text=True).stdout
        tree = sum(os.path.getsize(os.path.join(ROOT, f)) for f in tracked.split("\0")
                   if f and os.path.isfile(os.path.join(ROOT, f)))
        carried = os.path.getsize(archive) + tree
        check(carried < LIMIT, "archive + tracked files %.1f MiB, over 64 MiB" % (carried / 1048576))
        with tarfile.open(archive) as t:
            packed = {m.name: m.size for m in t.getmembers() if m.isfile()}
        on_disk = {os.path.relpath(os.path.join(d, f), tmp): os.path.getsize(os.path.join(d, f))
                   for d, _, fs in os.walk(out) for f in fs if not os.path.islink(os.path.join(d, f))}
        check(packed == on_disk, "the archive is not the folder: %s" % sorted(set(packed.items()) ^ set(on_disk.items()))[:5])
    check(size < 2 * LIMIT, "the bundle is %.1f MiB" % (size / 1048576))
    for f in ["bin/instbench", "bin/libinstbench-cuda.so", "run", "scripts/gpu/gpu_check.sh", "scripts/gpu/gpu_session.sh",
              "configs/gpu-peak-flops.json",
              "tests/data/ref_a_adam_bf16.safetensors"]:
        check(os.path.isfile(os.path.join(out, f)), "no %s in the bundle" % f)

    # only the bundle on the library path; PATH without a venv; cwd outside the source tree
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": os.path.join(out, "lib"), "HOME": tmp,
           "AWS_EC2_METADATA_DISABLED": "true", "INSTBENCH_GPU_PEAK_FLOPS": os.path.join(out, "configs/gpu-peak-flops.json")}
    bins = [os.path.join(out, "bin", f) for f in sorted(os.listdir(os.path.join(out, "bin")))]
    for b in bins:
        ldd = subprocess.run(["ldd", b], capture_output=True, text=True, env=env).stdout
        libs = re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M)
        check(len(libs) > 3, "ldd %s: %s" % (b, ldd))
        for name, path in libs:
            if path == "not":
                check(CUDA.match(name) is not None, "%s: %s not found in the bundle" % (os.path.basename(b), name))
            else:
                check(allowed(name, path, out), "%s: %s resolves to %s, outside the bundle" % (os.path.basename(b), name, path))

    def run(args, **kw):
        e = dict(env, LD_DEBUG="libs", LD_DEBUG_OUTPUT=os.path.join(tmp, "ld"))
        for f in os.listdir(tmp):
            if f.startswith("ld."):
                os.remove(os.path.join(tmp, f))
        r = subprocess.run([os.path.join(out, "bin", "instbench")] + args, capture_output=True, text=True, env=e,
                           cwd=tmp, timeout=120, **kw)
        loaded = []
        for f in os.listdir(tmp):
            if f.startswith("ld."):
                loaded += re.findall(r"calling init: (\S+)", open(os.path.join(tmp, f)).read())
        check(loaded, "LD_DEBUG saw no library loaded by %s" % args)
        for path in loaded:
            check(allowed(path, path, out), "instbench %s loaded %s, outside the bundle" % (args[0], path))
        return r

    ref = os.path.join(out, "tests/data/ref_a_adam_fp32.safetensors")
    r = run(["verify", "--backend", "cpu", "--reference", ref, "--format", "json"])
    check(r.returncode == 0, "verify --backend cpu exit %d: %s" % (r.returncode, r.stderr[-1500:]))
    try:
        doc = json.loads(r.stdout)
        check(doc.get("pass") is True and doc.get("failed") == 0 and doc.get("backend") == "cpu",
              "verify JSON does not say passed: %s" % r.stdout[:300])
    except ValueError:
        check(False, "verify --format json printed no JSON: %s" % r.stdout[:300])

    r = run(["prices", "--source", "snapshot", "--region", "us-east-1", "--format", "json"])
    check(r.returncode == 0, "prices --source snapshot exit %d: %s" % (r.returncode, r.stderr[-1500:]))
    snap = json.load(open(os.path.join(ROOT, "configs", "prices-snapshot.json")))
    want = {(x["instance_type"], x["region"]): x["on_demand"]["usd_per_hour"] for x in snap["prices"]
            if x.get("on_demand") and x["on_demand"].get("usd_per_hour") is not None}
    try:
        got = json.loads(r.stdout)["prices"]
    except (ValueError, KeyError):
        got = []
    rows = [(x["instance_type"], x["region"], (x.get("on_demand") or {}).get("usd_per_hour")) for x in got]
    check(len(rows) > 10, "prices printed %d rows" % len(rows))
    for it, reg, usd in rows:
        if (it, reg) in want:
            check(abs(usd - want[(it, reg)]) < 1e-9, "%s %s: %s $/h, the snapshot says %s" % (it, reg, usd, want[(it, reg)]))

    r = run(["verify", "--backend", "cuda", "--reference", ref])
    check(r.returncode != 0 and "no NVIDIA driver is installed" in r.stderr,
          "verify --backend cuda without a driver: exit %d, %s" % (r.returncode, r.stderr[-600:]))

    # gpu_check.sh through the runner, --bin mode: no build, the bundle's own layout; every step
    # needing a GPU is skipped by flag here, so the run must reach its summary with nothing FAIL
    chk = os.path.join(tmp, "check")
    gpu_steps = "verify,realistic,sanitize,measure,host_data,auto_batch,ranks,dp_equal,torchrun,torch"
    r = subprocess.run([os.path.join(out, "run"), "check", "--out", chk, "--skip", gpu_steps], capture_output=True,
                       text=True, env=dict(env, LD_LIBRARY_PATH=""), timeout=120)
    check(r.returncode == 0, "run check exit %d: %s %s" % (r.returncode, r.stdout[-800:], r.stderr[-800:]))
    try:
        summ = json.load(open(os.path.join(chk, "summary.json")))
        res = {s["step"]: s["result"] for s in summ["steps"]}
        check(res.get("build") == "SKIP" and res.get("ctest") == "SKIP" and summ["passed"] is True,
              "gpu_check from the bundle: %s" % res)
    except (OSError, ValueError, KeyError) as e:
        check(False, "gpu_check from the bundle wrote no summary.json: %s" % e)
    # gpu_session.sh through the runner (`run session`): the bundle's binary, every phase's steps
    # left out here, and its console in the folder it is given
    ses = os.path.join(tmp, "session")
    r = subprocess.run([os.path.join(out, "run"), "session", "--out", ses, "--leave-out", gpu_steps],
                       capture_output=True, text=True, env=dict(env, LD_LIBRARY_PATH=""), timeout=120)
    console = open(os.path.join(ses, "console.txt")).read() if os.path.exists(os.path.join(ses, "console.txt")) else ""
    check(r.returncode == 0 and "instbench " in console.splitlines()[0] if console else False,
          "run session: exit %d, console %r, %s" % (r.returncode, console[:300], r.stderr[-500:]))
    check(console.count("every step left out") == 4, "run session: %r" % console[-600:])
    r = subprocess.run([os.path.join(out, "run"), "libs"], capture_output=True, text=True, env=env, timeout=60)
    check(os.path.join(out, "lib") in r.stdout.splitlines()[0] if r.stdout else False,
          "run libs: %s" % r.stdout[:300])

# --baseline REV packs another commit's build (here: this build standing in for HEAD's, --no-build)
# into bin/baseline/ with its REVISION; a revision that is no commit, or a build of another (the
# unpacked tree's REVISION names another commit), is refused
with tempfile.TemporaryDirectory() as tmp:
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    build = os.path.join(tmp, "build")
    for d in (build, build + "-baseline", build + "-baseline-src"):
        os.makedirs(d)
    for f in ("instbench", "libinstbench-cuda.so"):
        for d in (build, build + "-baseline"):
            os.symlink(os.path.join(BUILD, f), os.path.join(d, f))
    open(os.path.join(build + "-baseline-src", "REVISION"), "w").write(head + "\n")

    def bundle(*args):
        return subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu", "gpu_bundle.sh"), "--build-dir", build,
                               "--no-build"] + list(args) + [os.path.join(tmp, "out")], capture_output=True, text=True,
                              timeout=240)
    p = bundle("--baseline", "HEAD")
    rev_file = os.path.join(tmp, "out", "bin", "baseline", "REVISION")
    rev = open(rev_file).read() if os.path.exists(rev_file) else ""
    check(p.returncode == 0 and rev.startswith(head + " ") and
          all(os.path.isfile(os.path.join(tmp, "out", "bin", "baseline", f)) for f in ("instbench", "libinstbench-cuda.so")),
          "--baseline HEAD: exit %d, REVISION %r: %s" % (p.returncode, rev, p.stderr[-800:]))
    p = bundle("--baseline", "no-such-revision")
    check(p.returncode == 2 and "is no commit" in p.stderr, "--baseline no-such-revision: exit %d, %s" % (
        p.returncode, p.stderr[-400:]))
    # the baseline build is of another commit (a shallow clone may have no second one to name)
    open(os.path.join(build + "-baseline-src", "REVISION"), "w").write("0" * 40 + "\n")
    p = bundle("--baseline", "HEAD")
    check(p.returncode == 1 and "no baseline build of" in p.stderr, "--baseline HEAD, another built: exit %d, %s" % (
        p.returncode, p.stderr[-400:]))

# Building the baseline unpacks `git archive REV` with REV in its REVISION file, what a build of a
# tree without .git reports (cmake/revision.cmake), and keeps a tree already unpacked for REV.
# cmake and nvcc are stand-ins on PATH: configuring does nothing, a build puts this build's programs
# in its folder (the compile is not what is checked).
with tempfile.TemporaryDirectory() as tmp:
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    stubs = os.path.join(tmp, "stubs")
    os.makedirs(stubs)
    with open(os.path.join(stubs, "cmake"), "w") as f:
        f.write('#!/bin/sh\n[ "$1" = --build ] || exit 0\nmkdir -p "$2" && cp "%s/instbench" "%s/libinstbench-cuda.so" "$2/"\n'
                % (BUILD, BUILD))
    with open(os.path.join(stubs, "nvcc"), "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    for f in ("cmake", "nvcc"):
        os.chmod(os.path.join(stubs, f), 0o755)
    build = os.path.join(tmp, "build")
    env = dict(os.environ, PATH=stubs + os.pathsep + os.environ["PATH"])
    env.pop("CUDA12_HOME", None)

    def bundle(*args):
        return subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu", "gpu_bundle.sh"), "--build-dir", build]
                              + list(args) + [os.path.join(tmp, "out")], capture_output=True, text=True, env=env,
                              timeout=240)
    os.makedirs(build)
    p = bundle("--baseline", "HEAD")
    rev_file = os.path.join(build + "-baseline-src", "REVISION")
    rev = open(rev_file).read() if os.path.exists(rev_file) else ""
    check(p.returncode == 0 and rev == head + "\n", "--baseline HEAD built: exit %d, the tree's REVISION %r, want %s: %s"
          % (p.returncode, rev, head, p.stderr[-800:]))
    committed = subprocess.run(["git", "-C", ROOT, "show", "HEAD:CMakeLists.txt"], capture_output=True).stdout
    unpacked = os.path.join(build + "-baseline-src", "CMakeLists.txt")
    check(os.path.exists(unpacked) and open(unpacked, "rb").read() == committed, "the baseline tree is not HEAD's")
    mark = os.path.join(build + "-baseline-src", "kept")
    open(mark, "w").close()
    p = bundle("--baseline", "HEAD")
    check(p.returncode == 0 and os.path.exists(mark), "--baseline HEAD again: exit %d, tree kept: %s, %s" % (
        p.returncode, os.path.exists(mark), p.stderr[-400:]))

print("gpu_bundle: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
