#!/usr/bin/env python3
"""The cuDNN attention path decided once (issue 37), end to end: the real executable with the whole
CUDA module on the CPU (libinstbench-cuda-sim.so, as tests/cuda/cuda_sim_cli.py runs it) and NVIDIA's
cudnn-frontend on the CPU stand-in of libcudnn (tests/fakes/cudnn_standin.c), whose refusals are
asked for with CUDNN_STANDIN_REFUSE.

- a Deep-Learning-AMI-like machine (INSTBENCH_CUDNN_SEARCH_ROOT: cuDNN inside two toolkits'
  /usr/local/cuda-12.x/lib, the older one behind /usr/local/cuda, no Python environment): the
  newest cuDNN is the one loaded, and the result says which (version, file, deterministic); with
  the newer one gone the older one is loaded and the result says why attention runs unfused;
- a cuDNN that refuses attention with --batch-size auto: the batch is the largest the unfused path
  fits (what `measure --dry-run` says that path needs with INSTBENCH_CUDA_ATTENTION=unfused, an
  independent plan), and the run ends unfused, never out of memory;
- a cuDNN without the deterministic backward: cuDNN still runs, with the non-deterministic
  backward, and the result says so (hardware.cudnn.deterministic false; rank marks the row);
- a CUDA runtime below 12.9 runs attention unfused unless cudnn is asked for by name (PyTorch's
  gate, pytorch#171627);
- the memory plan holds the workspace cuDNN's built graphs report, per backward mode (ViT-B/16
  at B=850, where the deterministic dP scratch is twice what the old estimate said).

Usage: cudnn_paths.py INSTBENCH SIM_MODULE STANDIN STANDIN_OLD"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import check, failures, read_result  # noqa: E402

BIN, MODULE, STANDIN, STANDIN_OLD = sys.argv[1:5]
ENV = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CUDA_HOME", "LD_LIBRARY_PATH")}
ENV.update(INSTBENCH_CUDA_MODULE=os.path.abspath(MODULE), AWS_EC2_METADATA_DISABLED="true", NO_COLOR="1",
           CUDASIM_SEED="1", INSTBENCH_CUDNN_LIBRARY=STANDIN)
TINY = ["--model", "vit_tiny_patch16_224", "--image-size", "32", "--patch-size", "16", "--embed-dim", "32",
        "--depth", "1", "--heads", "2", "--classes", "10", "--precision", "bf16", "--ranks", "1"]


def run(args, env):
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=env, timeout=600,
                          stdin=subprocess.DEVNULL)


def measure(what, extra, env):
    """a result of `measure` (None when it failed, which is a failure)"""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        p = run(["measure", "--backend", "cuda", *TINY, "--steps", "2", "--warmup", "1", *extra,
                 "--output", out, "--format", "json"], env)
        check(p.returncode == 0, "%s: measure exit %d: %s" % (what, p.returncode, p.stderr[-800:]))
        if p.returncode:
            return None, p
        return read_result(out, what), p


with tempfile.TemporaryDirectory() as tmp:
    # ---- the Deep Learning AMI's layout: the newest cuDNN wins over the first found ------------------
    root = os.path.join(tmp, "root")
    old_dir = os.path.join(root, "usr", "local", "cuda-12.4", "lib")
    new_dir = os.path.join(root, "usr", "local", "cuda-12.8", "lib")
    # the newer as a toolkit ships it (libcudnn.so.9 -> libcudnn.so.9.19.0: the name says the
    # version), the older a plain file (asked its version)
    os.makedirs(old_dir)
    shutil.copy(STANDIN_OLD, os.path.join(old_dir, "libcudnn.so.9"))
    os.makedirs(new_dir)
    shutil.copy(STANDIN, os.path.join(new_dir, "libcudnn.so.9.19.0"))
    os.symlink("libcudnn.so.9.19.0", os.path.join(new_dir, "libcudnn.so.9"))
    os.symlink("cuda-12.4", os.path.join(root, "usr", "local", "cuda"))   # searched first: the older one
    dlami = dict(ENV, INSTBENCH_CUDNN_LIBRARY="", INSTBENCH_CUDNN_SEARCH_ROOT=root, HOME=tmp)
    doc, _ = measure("DLAMI layout", ["--batch-size", "2"], dlami)
    if doc:
        hw = doc["hardware"]
        cd = hw.get("cudnn") or {}
        check(hw.get("attention") == "cudnn" and cd.get("version") == "9.19.0" and
              cd.get("library") == os.path.join(new_dir, "libcudnn.so.9") and cd.get("fallback") is None and
              cd.get("deterministic") is True,
              "DLAMI layout: attention %r, cudnn %r (want 9.19.0 from %s, deterministic)" % (hw.get("attention"), cd,
                                                                                            new_dir))
    os.remove(os.path.join(new_dir, "libcudnn.so.9"))
    os.remove(os.path.join(new_dir, "libcudnn.so.9.19.0"))
    doc, p = measure("DLAMI layout, old cuDNN only", ["--batch-size", "2"], dlami)
    if doc:
        hw = doc["hardware"]
        cd = hw.get("cudnn") or {}
        check(hw.get("attention") == "unfused" and cd.get("version") == "9.14.0" and
              cd.get("library") in (os.path.join(root, "usr", "local", "cuda", "lib", "libcudnn.so.9"),
                                    os.path.join(old_dir, "libcudnn.so.9")) and
              "9.15.1" in str(cd.get("fallback")) and cd.get("deterministic") is None and "9.15.1" in p.stderr,
              "DLAMI layout, old cuDNN only: attention %r, cudnn %r" % (hw.get("attention"), cd))
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    p = run(["measure", "--backend", "cuda", *TINY, "--batch-size", "2", "--steps", "1", "--output", "-"],
            dict(dlami, INSTBENCH_CUDNN_SEARCH_ROOT=empty, INSTBENCH_CUDA_ATTENTION="cudnn"))
    check(p.returncode != 0 and "no cuDNN 9" in p.stderr and "INSTBENCH_CUDA_ATTENTION=cudnn" in p.stderr,
          "no cuDNN anywhere, cudnn asked for: exit %d: %s" % (p.returncode, p.stderr[-600:]))

# ---- a refusal with --batch-size auto: planned, and run, unfused -----------------------------------------
FREE = 80
refusing = dict(ENV, CUDNN_STANDIN_REFUSE="sdpa", CUDASIM_FREE_MIB=str(FREE))


def dry_batch(env, batch):
    """(exit status, the batch per device a dry run reports, stderr)"""
    p = run(["measure", "--backend", "cuda", *TINY, "--batch-size", str(batch), "--dry-run"], env)
    m = re.search(r"batch (\d+) per device", p.stdout)
    return p.returncode, int(m.group(1)) if m else None, p.stderr


rc, b, err = dry_batch(refusing, "auto")
check(rc == 0 and b and b > 0, "refusal, --batch-size auto --dry-run: exit %d, batch %r: %s" % (rc, b, err[-600:]))
if b:
    # the unfused path's own plan, asked for by name (no cuDNN involved): b fits, b + 1 does not
    unfused = dict(ENV, INSTBENCH_CUDA_ATTENTION="unfused", CUDASIM_FREE_MIB=str(FREE))
    fits = dry_batch(unfused, b)[0] == 0
    rc1, _, err1 = dry_batch(unfused, b + 1)
    check(fits, "refusal: auto picked batch %d, which the unfused path does not fit in %d MiB" % (b, FREE))
    check(rc1 != 0 and re.search(r"needs about [0-9.]+ GiB but", err1),
          "refusal: batch %d (one more than auto's %d) fits the unfused path too: auto did not plan for it" % (b + 1, b))
    doc, p = measure("refusal, --batch-size auto", ["--batch-size", "auto"], refusing)
    if doc:
        cd = doc["hardware"].get("cudnn") or {}
        check(doc["workload"]["batch_size_per_device"] == b and doc["hardware"].get("attention") == "unfused" and
              "CUDNN_STANDIN_REFUSE=sdpa" in str(cd.get("fallback")),
              "refusal, --batch-size auto: batch %r (dry run: %d), attention %r, cudnn %r"
              % (doc["workload"]["batch_size_per_device"], b, doc["hardware"].get("attention"), cd))

# ---- no deterministic backward: cuDNN still, the non-deterministic one, and the result says so ---------------
nondet = dict(ENV, CUDNN_STANDIN_REFUSE="deterministic")
doc, p = measure("no deterministic backward", ["--batch-size", "2"], nondet)
if doc:
    cd = doc["hardware"].get("cudnn") or {}
    check(doc["hardware"].get("attention") == "cudnn" and cd.get("deterministic") is False and
          cd.get("fallback") is None and "non-deterministic" in p.stderr,
          "no deterministic backward: attention %r, cudnn %r, stderr %s" % (doc["hardware"].get("attention"), cd,
                                                                          p.stderr[-400:]))
    # rank keeps it apart from deterministic cuDNN rows and says which it ran
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        json.dump(doc, open(path, "w"))
        q = run(["rank", path, "--columns", "instance_type,attention", "--format", "csv"], ENV)
        check("cudnn-nondet" in q.stdout, "rank of a non-deterministic cuDNN run: exit %d: %s %s"
              % (q.returncode, q.stdout[-400:], q.stderr[-400:]))

# ---- CUDA 12.x (D6): below 12.9 cuDNN attention only when asked for by name, as PyTorch ---------------
for rt, asked, want in (("12080", None, "unfused"), ("12080", "cudnn", "cudnn"), ("12090", None, "cudnn")):
    env = dict(ENV, CUDASIM_RUNTIME_VERSION=rt)
    if asked:
        env["INSTBENCH_CUDA_ATTENTION"] = asked
    doc, p = measure("CUDA runtime %s%s" % (rt, ", cudnn asked" if asked else ""), ["--batch-size", "2"], env)
    if doc:
        cd = doc["hardware"].get("cudnn") or {}
        check(doc["hardware"].get("attention") == want and
              (want == "cudnn" or ("12.9" in str(cd.get("fallback")) and "169849" in str(cd.get("fallback")))),
              "CUDA runtime %s, asked %r: attention %r (want %s), cudnn %r" % (rt, asked, doc["hardware"].get("attention"),
                                                                          want, cd))

# ---- the plan holds the workspace the built graphs report (D5): ViT-B/16 at B=850 -------------------------
# The two backward modes differ only in cuDNN's workspace: the deterministic one's dP scratch
# (B*H*pad64(T)*pad128(T) bf16) against the fp32 dQ accumulator (B*H*T*hd), which the dry runs'
# memory must differ by (an estimate the same for both would not).
VITB = ["--model", "vit_base_patch16_224", "--batch-size", "850", "--precision", "bf16", "--ranks", "1", "--dry-run"]
big = dict(ENV, CUDASIM_FREE_MIB=str(1 << 20), INSTBENCH_PROBE_SECONDS="off")   # a simulated ViT-B step: minutes
gib = {}
for mode, env in (("deterministic", big), ("non-deterministic", dict(big, INSTBENCH_CUDNN_NONDETERMINISTIC="1"))):
    p = run(["measure", "--backend", "cuda", *VITB], env)
    m = re.search(r"memory: about ([0-9.]+) GiB", p.stdout)
    check(p.returncode == 0 and m, "ViT-B B=850 %s dry run: exit %d: %s" % (mode, p.returncode, p.stderr[-400:]))
    gib[mode] = float(m.group(1)) if m else None
if None not in gib.values():
    B, H, T, hd = 850, 12, 197, 64
    want = (B * H * 256 * 256 * 2 - B * H * T * hd * 4) / 2 ** 30
    got = gib["deterministic"] - gib["non-deterministic"]
    check(abs(got - want) <= 0.02, "ViT-B B=850: the deterministic plan is %.2f GiB above the other, %.2f expected "
          "(cuDNN's dP workspace against its dQ accumulator)" % (got, want))

print("cudnn_paths: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
