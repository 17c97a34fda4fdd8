#!/usr/bin/env python3
"""The all-reduce bandwidth measure records for a run of several ranks (communication.allreduce),
the figures recomputed here from the recorded bytes and times with nccl-tests' definitions (its
PERFORMANCE.md: algbw = bytes / time; allreduce busbw = algbw x 2(n-1)/n, GB/s as 1e9 bytes/s):

- --ranks 2 on the CPU backend (the in-process comm) and, given the simulated CUDA module, two
  processes over the NCCL stand-in (each process one rank, PyTorchJob-style variables): the sizes
  ascend, the last is the whole fp32 gradient (4 x workload.params bytes), none is above it, the
  others are the documented sweep (256 KiB, 1, 4, 16 MiB, DDP's 25 MiB) below it; every time is
  positive; algbw and busbw equal the recomputation for the run's world size; communication.timing
  says nccl-tests' method (20 back-to-back operations, averaged over the ranks); schema-valid;
- one rank: no communication figure at all (nothing was communicated).
Usage: measure_allreduce.py INSTBENCH SCHEMA [SIM_MODULE]"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures, on_free_port, wait_job  # noqa: E402

BIN, SCHEMA = (os.path.abspath(a) for a in sys.argv[1:3])
MODULE = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
SCHEMA_DOC = json.load(open(SCHEMA))
SWEEP = [256 << 10, 1 << 20, 4 << 20, 16 << 20, 25 << 20]
LAUNCH = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
ENV = {k: v for k, v in os.environ.items()
       if k not in LAUNCH and not k.startswith(("SLURM_", "PET_", "TORCHELASTIC_"))}
ENV.update(AWS_EC2_METADATA_DISABLED="true", NO_COLOR="1", INSTBENCH_CPU_PEAK_SECONDS="0.05")
CPU = ["--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "32",
       "--patch-size", "8", "--embed-dim", "64", "--heads", "2", "--classes", "10", "--batch-size", "4",
       "--steps", "3", "--warmup", "1", "--checkpoint", "off"]
SIM = ["--backend", "cuda", "--model", "vit_tiny_patch16_224", "--image-size", "32", "--patch-size", "16",
       "--embed-dim", "32", "--depth", "1", "--heads", "2", "--classes", "10", "--batch-size", "8",
       "--data", "device", "--steps", "2", "--warmup", "1", "--checkpoint", "off", "--ranks", "1"]


def check_sweep(name, doc):
    try:
        jsonschema.validate(doc, SCHEMA_DOC)
    except jsonschema.ValidationError as e:
        check(False, "%s: not schema-valid: %s" % (name, e.message))
    ar = doc.get("communication", {}).get("allreduce")
    if not check(ar, "%s: no communication.allreduce: %s" % (name, doc.get("communication"))):
        return
    # the method as nccl-tests' BenchTime (NVIDIA/nccl-tests a0b82b22, src/common.cu): its default
    # iters = 20 operations per timing, deltaSec averaged over the ranks
    check(doc["communication"].get("timing") == {"method": "nccl-tests", "warmup": 2, "operations": 20,
                                                 "average": "ranks"},
          "%s: communication.timing %r" % (name, doc["communication"].get("timing")))
    n = doc["topology"]["world_size"]
    grad = 4 * doc["workload"]["params"]
    sizes = [e["bytes"] for e in ar]
    check(sizes == [s for s in SWEEP if s < grad] + [grad], "%s: sizes %s, gradient %d bytes" % (name, sizes, grad))
    for e in ar:
        t = e["time_s"]
        if not check(t > 0, "%s: time %r for %d bytes" % (name, t, e["bytes"])):
            continue
        algbw = e["bytes"] / t / 1e9
        busbw = algbw * 2 * (n - 1) / n
        check(abs(e["algbw_gbps"] - algbw) <= 1e-9 * algbw, "%s: algbw %r, recomputed %r" % (name, e["algbw_gbps"], algbw))
        check(abs(e["busbw_gbps"] - busbw) <= 1e-9 * busbw, "%s: busbw %r, recomputed %r (n=%d)"
              % (name, e["busbw_gbps"], busbw, n))


with tempfile.TemporaryDirectory() as tmp:
    # ---- in-process ranks (cpu) ----
    out = os.path.join(tmp, "cpu2.json")
    p = subprocess.run([BIN, "measure", *CPU, "--ranks", "2", "--output", out], env=ENV, capture_output=True,
                       text=True, timeout=300)
    if check(p.returncode == 0, "cpu --ranks 2: exit %d: %s" % (p.returncode, p.stderr[-500:])):
        check_sweep("cpu --ranks 2", json.load(open(out)))
    out = os.path.join(tmp, "cpu1.json")
    p = subprocess.run([BIN, "measure", *CPU, "--ranks", "1", "--output", out], env=ENV, capture_output=True,
                       text=True, timeout=300)
    if check(p.returncode == 0, "cpu --ranks 1: exit %d: %s" % (p.returncode, p.stderr[-500:])):
        check("communication" not in json.load(open(out)), "one rank: a communication figure")

    # ---- two processes over the NCCL stand-in ----
    def two_processes(port):
        out = os.path.join(tmp, "sim.json")
        jobs = []
        for r in range(2):
            env = dict(ENV, INSTBENCH_CUDA_MODULE=MODULE, CUDASIM_SEED=str(r + 1), WORLD_SIZE="2", RANK=str(r),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
            err = os.path.join(tmp, "sim%d.err" % r)
            jobs.append((subprocess.Popen([BIN, "measure", *SIM, "--output", out], env=env, stdout=subprocess.DEVNULL,
                                          stderr=open(err, "w")), err))
        rcs = wait_job(jobs, 600)
        said = [open(err).read() for _, err in jobs]
        if check(rcs == [0, 0], "2 processes: exits %s: %s" % (rcs, " | ".join(t[-400:] for t in said))):
            check_sweep("2 processes (NCCL stand-in)", json.load(open(out)))
        return said

    if MODULE:
        on_free_port(two_processes)

print("measure_allreduce: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
