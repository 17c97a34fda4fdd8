#!/usr/bin/env python3
"""scripts/gpu/gpu_check.sh, the script the first GPU machine runs, run here on the CUDA module
simulated on the CPU (libinstbench-cuda-sim.so, tests/fakes/cudasim) with a tiny model, so a mistake in
the script itself cannot cost that machine's time: every step it can take here passes, the steps
this machine cannot take (no compute-sanitizer, one GPU, no torchrun) are SKIP and not FAIL, and
summary.json lists every step with the samples/s of the measure steps.  (The real-shape
references and the PyTorch benchmark are skipped by flag: hours on the simulator.)  The torch
step's models (--torch-models) are checked apart, against a bench_gpu_vs_torch.sh that records
what it is asked.
Usage: gpu_check_sim.py INSTBENCH SIM_MODULE REPO_ROOT"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testlib import check, failures  # noqa: E402

BIN, MODULE, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
STEPS = ["build", "ctest", "verify", "realistic", "sanitize", "sanitize12", "measure", "host_data", "auto_batch", "ranks",
         "dp_equal", "torchrun", "torch"]
MEASURED = ["measure", "host_data", "auto_batch"]
with tempfile.TemporaryDirectory() as out:
    # a small device, so --batch-size auto has something to find: 74 MiB held a batch above 8 with
    # unfused attention; 100 holds one above 8 with cuDNN's too (the module loads the stand-in,
    # whose workspace the plan holds as its graphs report it)
    env = dict(os.environ, INSTBENCH_CUDA_MODULE=MODULE, CUDASIM_FREE_MIB="100", AWS_EC2_METADATA_DISABLED="true",
               PATH="/usr/bin:/bin")   # no nvidia-smi, compute-sanitizer or torchrun: those steps SKIP
    p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "gpu", "gpu_check.sh"), "--bin", BIN, "--out", out,
                        "--model", "vit_tiny_patch16_224", "--model-args",
                        "--image-size 32 --patch-size 16 --embed-dim 32 --depth 1 --heads 2 --classes 10",
                        "--steps", "5", "--batch-size", "8",
                        # real-shape references and the PyTorch benchmark take hours on the simulator
                        "--skip", "realistic,torch"], capture_output=True, text=True, env=env, timeout=1200)
    check(p.returncode == 0, "gpu_check.sh exit %d:\n%s\n%s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    try:
        doc = json.load(open(os.path.join(out, "summary.json")))
    except (OSError, ValueError) as e:
        doc = {"steps": []}
        check(False, "no summary.json: %s" % e)
    got = {s["step"]: s for s in doc["steps"]}
    check(list(got) == STEPS, "steps %s, want %s" % (list(got), STEPS))
    for name in ["verify"] + MEASURED:
        check(got.get(name, {}).get("result") == "PASS", "%s: %s" % (name, got.get(name)))
    for name in MEASURED:
        check(got.get(name, {}).get("samples_per_second", 0) > 0, "%s: no samples/s in the summary" % name)
        gemm = got.get(name, {}).get("gemm") or {}
        check(gemm.get("shapes", 0) > 0 and gemm.get("cublas_fallback") == 0,
              "%s: the GEMM roads in the summary: %r" % (name, gemm))
    check(got.get("auto_batch", {}).get("batch_size_per_device", 0) > 8,
          "auto_batch picked %s" % got.get("auto_batch", {}).get("batch_size_per_device"))
    for name in ["build", "ctest", "realistic", "sanitize", "sanitize12", "ranks", "dp_equal", "torchrun", "torch"]:
        check(got.get(name, {}).get("result") == "SKIP", "%s should be SKIP here: %s" % (name, got.get(name)))
    check(doc.get("passed") is True, "summary.json passed: %s" % doc.get("passed"))

# --torch-models: the torch step runs the models named, in that order, ViT-B/16 into bench/ with the
# kernel trace where the bundle has one (a file beside the binary), the others into bench-<model>/.
# The script is copied beside a bench_gpu_vs_torch.sh that logs its arguments, every other step is
# skipped, and PYTHON answers the step's "import torch, timm" probe itself.
with tempfile.TemporaryDirectory() as tree:
    for d in ("scripts/gpu", "scripts/bench", "bin", "out"):
        os.makedirs(os.path.join(tree, d))
    shutil.copy(os.path.join(ROOT, "scripts", "gpu", "gpu_check.sh"), os.path.join(tree, "scripts", "gpu"))
    log = os.path.join(tree, "bench.log")
    fake = os.path.join(tree, "scripts", "bench", "bench_gpu_vs_torch.sh")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\necho "$*" >> "%s"\n' % log)
    py = os.path.join(tree, "python")
    with open(py, "w") as f:
        f.write('#!/bin/sh\n[ "$1 $2" = "-c import torch, timm" ] && exit 0\nexec %s "$@"\n' % sys.executable)
    os.chmod(fake, 0o755), os.chmod(py, 0o755)
    os.symlink(BIN, os.path.join(tree, "bin", "instbench"))
    open(os.path.join(tree, "bin", "libkernel_trace.so"), "w").close()
    bin_, out = os.path.join(tree, "bin", "instbench"), os.path.join(tree, "out")
    others = ",".join(s for s in STEPS if s != "torch")
    env = dict(os.environ, PYTHON=py, PATH="/usr/bin:/bin")
    run = ["sh", os.path.join(tree, "scripts", "gpu", "gpu_check.sh"), "--bin", bin_, "--out", out, "--skip", others]
    p = subprocess.run(run + ["--torch-models", "vit_large_patch16_224,vit_base_patch16_224"], capture_output=True,
                       text=True, env=env, timeout=120)
    check(p.returncode == 0, "torch step alone: exit %d:\n%s\n%s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    calls = open(log).read().splitlines() if os.path.exists(log) else []
    want = ["--bin %s --model vit_large_patch16_224 --out %s/bench-vit_large_patch16_224" % (bin_, out),
            "--bin %s --out %s/bench --profile %s/libkernel_trace.so" % (bin_, out, os.path.dirname(bin_))]
    check(calls == want, "--torch-models: bench_gpu_vs_torch.sh called %s, want %s" % (calls, want))
    # the default: all three, ViT-B first (a call cut short keeps the figure that decides)
    os.remove(log)
    p = subprocess.run(run, capture_output=True, text=True, env=env, timeout=120)
    calls = open(log).read().splitlines() if os.path.exists(log) else []
    models = [c.split("--model ")[1].split()[0] if "--model " in c else "vit_base_patch16_224" for c in calls]
    check(p.returncode == 0 and models == ["vit_base_patch16_224", "vit_small_patch16_224", "vit_large_patch16_224"],
          "default torch models: exit %d, %s" % (p.returncode, models))
    for bad in ("vit_base_patch16_224,,x", "a;b", ""):
        p = subprocess.run(run + ["--torch-models", bad], capture_output=True, text=True, env=env, timeout=60)
        check(p.returncode == 2 and "--torch-models" in p.stderr, "--torch-models %r: exit %d, %s" % (
            bad, p.returncode, p.stderr.strip()))
    # --only: the same run named by the one step it keeps; a misspelt step is an error, not a step run
    base = run[:-2]
    os.remove(log)
    p = subprocess.run(base + ["--only", "torch", "--torch-models", "vit_base_patch16_224"], capture_output=True,
                       text=True, env=env, timeout=120)
    calls = open(log).read().splitlines() if os.path.exists(log) else []
    ran = {l.split()[1] for l in p.stdout.splitlines() if l.startswith(("PASS", "FAIL"))}
    check(p.returncode == 0 and ran == {"torch"} and calls == want[1:],
          "--only torch: exit %d, steps run %s, bench calls %s" % (p.returncode, ran, calls))
    for args, msg in ((["--skip", "torch,sanitise"], "no step 'sanitise'"), (["--only", "verfy"], "no step 'verfy'"),
                      (["--skip", "verify", "--only", "torch"], "--skip and --only")):
        p = subprocess.run(base + args, capture_output=True, text=True, env=env, timeout=60)
        check(p.returncode == 2 and msg in p.stderr,
              "%s: exit %d, %s" % (" ".join(args), p.returncode, p.stderr.strip()))

# scripts/gpu/gpu_session.sh, what a lent GPU runs in one call: gpu_check's steps in phases under a
# deadline, packed as a device call returns files (8 at most, 16 MiB each, names of letters,
# digits, '.', '_' and '-').  On the simulator with the tiny model: the phases that can run pass;
# a failing first phase stops the session; a phase past the deadline is killed with what it ran.
SESSION = os.path.join(ROOT, "scripts", "gpu", "gpu_session.sh")
TINY = ["--", "--model", "vit_tiny_patch16_224", "--model-args",
        "--image-size 32 --patch-size 16 --embed-dim 32 --depth 1 --heads 2 --classes 10", "--steps", "5",
        "--batch-size", "8"]
SIM_ENV = dict(os.environ, INSTBENCH_CUDA_MODULE=MODULE, CUDASIM_FREE_MIB="100", AWS_EC2_METADATA_DISABLED="true",
               PATH="/usr/bin:/bin")


def session(out, *args, env=SIM_ENV, timeout=600):
    p = subprocess.run(["bash", SESSION, "--out", out] + list(args), capture_output=True, text=True, env=env,
                       timeout=timeout)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    console = open(os.path.join(out, "console.txt")).read() if "console.txt" in files else ""
    return p, files, console


def returnable(out, files, what):
    check(0 < len(files) <= 8, "%s: %d files in the output folder: %s" % (what, len(files), files))
    for f in files:
        path = os.path.join(out, f)
        check(os.path.isfile(path) and os.path.getsize(path) <= 16 << 20 and
              all(c.isalnum() or c in "._-" for c in f), "%s: %s cannot come back from a device call" % (what, f))


with tempfile.TemporaryDirectory() as out:
    p, files, console = session(out, "--bin", BIN, "--leave-out", "realistic,torch", *TINY)
    check(p.returncode == 0, "session: exit %d:\n%s" % (p.returncode, (p.stdout + p.stderr)[-2000:]))
    check(files == ["console.txt", "logs.tgz", "summary_p1.json", "summary_p3.json"], "session: files %s" % files)
    returnable(out, files, "session")
    check(p.stdout == console, "session: console.txt is not what was printed")
    for ph, want in (("p1", {"verify", "measure"}), ("p3", {"host_data", "auto_batch"})):
        try:
            steps = json.load(open(os.path.join(out, "summary_%s.json" % ph)))["steps"]
        except (OSError, ValueError, KeyError) as e:
            steps = []
            check(False, "session: summary_%s.json: %s" % (ph, e))
        passed = {s["step"] for s in steps if s["result"] == "PASS"}
        check(passed == want, "session: %s passed %s, want %s" % (ph, sorted(passed), sorted(want)))
    if "logs.tgz" in files:
        import tarfile
        names = tarfile.open(os.path.join(out, "logs.tgz")).getnames()
        check("p1/measure.json" in names and "p3/auto_batch.log" in names, "session: logs.tgz holds %s" % names)
    check("== p2: every step left out" in console and "== p4: every step left out" in console,
          "session: phases left out not said:\n%s" % console[-1500:])

# the first phase fails (no CUDA module): the session stops there, with its logs in the console
with tempfile.TemporaryDirectory() as out:
    env = dict(SIM_ENV, INSTBENCH_CUDA_MODULE=os.path.join(out, "no-such-module.so"))
    p, files, console = session(out, "--bin", BIN, *TINY, env=env)
    check(p.returncode == 1 and "p1 failed: the session stops here" in console and "== p2" not in console and
          "== p3" not in console and files == ["console.txt", "logs.tgz", "summary_p1.json"],
          "session, failing p1: exit %d, files %s:\n%s" % (p.returncode, files, console[-1500:]))
    returnable(out, files, "session, failing p1")

# a phase still running at the deadline is killed with every process it started, and later phases
# are not run for want of time: an instbench that hangs (and says where it is) stands in
with tempfile.TemporaryDirectory() as out:
    pids = os.path.join(out, "pids")
    hang = os.path.join(out, "hang")
    with open(hang, "w") as f:
        # it ignores SIGTERM (as a step hung on the GPU would not stop): the kill 10 s later ends it
        f.write('#!/bin/sh\n[ "$1" = --version ] && { echo hang; exit 0; }\necho $$ >> %s\ntrap "" TERM\n'
                'exec sleep 300\n' % pids)
    os.chmod(hang, 0o755)
    res = os.path.join(out, "res")
    p, files, console = session(res, "--bin", hang, "--deadline", "22", *TINY, timeout=120)
    check(p.returncode == 1 and "== p1: cut at --deadline 22" in console and "== p2" not in console,
          "session past its deadline: exit %d:\n%s" % (p.returncode, console[-1500:]))
    returnable(res, files, "session past its deadline")
    def running(pid):   # a zombie (killed, its new parent not yet reaping it) runs no more
        try:
            return open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False
    left = [pid for pid in (open(pids).read().split() if os.path.exists(pids) else []) if running(pid)]
    check(os.path.exists(pids) and not left, "session past its deadline: instbench processes left running: %s" % left)
    # no time for any phase: nothing runs, and the session says so and fails
    p, files, console = session(res, "--bin", hang, "--deadline", "5", *TINY, timeout=60)
    check(p.returncode == 1 and "== p1 (verify,measure): not run, 5 s left of --deadline 5" in console and
          files == ["console.txt"], "session without time: exit %d, files %s:\n%s" % (p.returncode, files, console))

# a bundle with a baseline (gpu_bundle.sh --baseline REV): the A/B runs the baseline's binary and
# this one in turns, on the simulated module and the tiny model here; every other step left out
with tempfile.TemporaryDirectory() as out:
    bindir = os.path.join(out, "bin")
    os.makedirs(os.path.join(bindir, "baseline"))
    os.symlink(BIN, os.path.join(bindir, "instbench"))
    os.symlink(BIN, os.path.join(bindir, "baseline", "instbench"))
    open(os.path.join(bindir, "baseline", "REVISION"), "w").write("0123456789abcdef0123 Sat Nov 28 a change\n")
    res = os.path.join(out, "res")
    gpu_steps = "verify,realistic,sanitize,measure,host_data,auto_batch,torch"
    # (--phases ab: the other phases are not asked for, p3's steps not left out, and not run)
    p, files, console = session(res, "--bin", os.path.join(bindir, "instbench"), "--phases", "ab",
                                "--leave-out", gpu_steps.replace(",host_data,auto_batch", ""),
                                "--ab-flags", "--model vit_tiny_patch16_224 --image-size 32 --patch-size 16 "
                                "--embed-dim 32 --depth 1 --heads 2 --classes 10 --batch-size 8 --steps 3 --warmup 1")
    check(p.returncode == 0 and "== ab: baseline 0123456789ab against this build" in console and
          "B against A: " in console and "== ab: exit 0" in console and
          all("== %s: not asked for (--phases ab)" % ph in console for ph in ("p1", "p2", "p3", "p4")) and
          "== p3 (" not in console,
          "session A/B: exit %d:\n%s" % (p.returncode, console[-2000:]))
    returnable(res, files, "session A/B")
    if "logs.tgz" in files:
        import tarfile
        names = tarfile.open(os.path.join(res, "logs.tgz")).getnames()
        check({"ab/a1.json", "ab/b1.json", "ab/a2.json", "ab/b2.json"} <= set(names), "session A/B: logs.tgz %s" % names)
    # --leave-out ab, or no baseline: no A/B, and no failure for it
    p, files, console = session(res, "--bin", os.path.join(bindir, "instbench"), "--leave-out", gpu_steps + ",ab")
    check(p.returncode == 0 and "== ab: left out" in console, "session, ab left out: exit %d:\n%s" % (
        p.returncode, console[-800:]))
    p, files, console = session(res, "--bin", BIN, "--leave-out", gpu_steps)
    check(p.returncode == 0 and "== ab: no baseline beside" in console, "session without a baseline: exit %d:\n%s" % (
        p.returncode, console[-800:]))

# arguments a session refuses before it spends anything
with tempfile.TemporaryDirectory() as out:
    for args, msg in ((["--deadline", "9m"], "--deadline takes whole seconds"),
                      (["--leave-out", "verfy"], "no step 'verfy'"), (["--frob"], "unknown argument '--frob'"),
                      (["--phases", "p1,p5"], "no phase 'p5'"), (["--phases", ""], "--phases takes a list"),
                      (["--bin", os.path.join(out, "none")], "no instbench at")):
        p = subprocess.run(["bash", SESSION, "--out", out, "--bin", BIN] + args, capture_output=True, text=True,
                           env=SIM_ENV, timeout=60)
        check(p.returncode == 2 and msg in p.stderr, "session %s: exit %d, %s" % (args, p.returncode, p.stderr.strip()))
print("gpu_check_sim: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
