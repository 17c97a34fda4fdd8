"""Every invalid flag or value: exit 2, a message on stderr naming the problem, nothing on stdout,
no file.  Launcher environments are parsed and recorded (or refused when they need a
cross-process comm this build lacks).  --help exits 0."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import TINY, check, finish, run, scratch, validate  # noqa: E402

BAD = [
    (["--bogus"], "--bogus"),
    (["--steps"], "needs a value"),
    (["--backend", "tpu"], "--backend"),
    (["--batch-size", "0"], "--batch-size"),
    (["--batch-size", "-3"], "--batch-size"),
    (["--batch-size", "lots"], "--batch-size"),
    (["--batch-size", "100000000"], "--batch-size"),
    (["--image-size", "224", "--patch-size", "16", "--batch-size", "1000000"], "largest batch that fits"),
    (["--precision", "fp16"], "--precision"),
    (["--optimizer", "sgd"], "--optimizer"),
    (["--lr", "0"], "--lr"),
    (["--lr", "fast"], "--lr"),
    (["--steps", "0"], "--steps"),
    (["--steps", "2", "--duration", "3"], "exclude"),
    (["--duration", "-1"], "--duration"),
    (["--duration", "nan"], "--duration"),
    (["--warmup", "-1"], "--warmup"),
    (["--data", "gpu"], "--data"),
    (["--workers", "0"], "--workers"),
    (["--ranks", "0"], "--ranks"),
    (["--ranks", "256"], "--ranks"),
    (["--nnodes", "0"], "--nnodes"),
    (["--nnodes", "2", "--node-rank", "2"], "node rank"),
    (["--master-port", "70000"], "--master-port"),
    (["--instance-type", "big box"], "--instance-type"),
    (["--instance-type", "g5"], "--instance-type"),
    (["--region", "US EAST"], "--region"),
    # names a catalogue can check offline (issue 13): a size AWS does not use, a size the snapshot
    # lacks in a family it covers, a region nobody has; each names the nearest real one
    (["--instance-type", "g5.xlarg"], "did you mean g5.xlarge?"),
    (["--instance-type", "p4d.12xlarge"], "did you mean p4d.24xlarge?"),
    (["--region", "us-esat-1"], "did you mean us-east-1?"),
    (["--region", "eu-west-9"], "not an AWS region"),
    (["--market", "reserved"], "--market"),
    (["--count", "0"], "--count"),
    (["--hourly-cost", "nan"], "--hourly-cost"),
    (["--hourly-cost", "-1"], "--hourly-cost"),
    (["--format", "xml"], "--format"),
    (["--seed", "-1"], "--seed"),
    (["--output", ""], "--output"),
    (["--model", "vit_huge_patch14_224"], "--model: unknown model 'vit_huge_patch14_224'"),
    (["--depth", "0"], "--depth"),
    (["--heads", "5"], "head"),
    (["--mlp-ratio", "x"], "--mlp-ratio"),
    # precise messages: whitespace is not a number; a fraction is not a whole number; a patch so
    # small that not even batch 1 fits says so in terms of the flags, not "the largest batch is 0"
    (["--batch-size", " 4"], "whitespace"),
    (["--batch-size", "4 "], "whitespace"),
    (["--batch-size", "4.5"], "not a whole number"),
    (["--steps", "1e3"], "not a whole number"),
    (["--lr", "1e999"], "above the maximum"),
    (["--image-size", "224", "--patch-size", "1", "--batch-size", "2"], "--patch-size 1 makes"),
    (["--image-size", "224", "--patch-size", "1", "--batch-size", "auto"], "--patch-size 1 makes"),
]

d = scratch()
for args, needle in BAD:
    p = run(TINY + ["--steps", "1", "--output", os.path.join(d, "r.json")] + args, cwd=d)
    what = " ".join(args)
    check(p.returncode == 2, f"'{what}': exit {p.returncode}, want 2 (stderr: {p.stderr.strip()[-200:]})")
    check(needle.lower() in p.stderr.lower(), f"'{what}': message does not mention '{needle}': {p.stderr.strip()[-200:]}")
    check(p.stdout == "", f"'{what}': printed on stdout")
    check(os.listdir(d) == [], f"'{what}': left files {os.listdir(d)}")

# The largest batch named agrees with the memory figures in the same message: a batch of 10^6
# needs X GiB, so per sample ~X/10^6 (the fixed part, weights, is negligible at that size), and
# Y GiB available holds about Y/(X/10^6) samples.  (A second run cannot check the boundary: the
# available memory moves with whatever else runs on the machine.)
import re  # noqa: E402
p = run(TINY + ["--steps", "1", "--image-size", "224", "--patch-size", "16", "--batch-size", "1000000"])
m = re.search(r"needs about ([0-9.]+) GiB but ([0-9.]+) GiB is available; the largest batch that fits is (\d+)",
              p.stderr)
if check(m is not None, f"no memory figures in: {p.stderr[-300:]}"):
    need, avail, n = float(m.group(1)), float(m.group(2)), int(m.group(3))
    expect = avail / (need / 1e6)
    check(n >= 1 and abs(n - expect) <= 0.05 * expect + 1, f"largest batch {n} vs {expect:.0f} from the message")

p = run(["--help"])
check(p.returncode == 0 and "--batch-size" in p.stdout and "--append" in p.stdout, "--help")

# torchrun / a PyTorchJob or Volcano pod (the same variables, no torchrun) / Kubeflow Trainer v2 /
# Slurm with one process: recorded, with the port the NCCL id would use (the next one only where
# torchrun's agent store holds MASTER_PORT).
for envs, kind, want_addr, id_port in [
        ({"WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "0", "MASTER_ADDR": "10.1.2.3", "MASTER_PORT": "29555",
          "TORCHELASTIC_RUN_ID": "r1", "TORCHELASTIC_USE_AGENT_STORE": "True"}, "torchrun", "10.1.2.3", 29556),
        ({"WORLD_SIZE": "1", "RANK": "0", "MASTER_ADDR": "10.1.2.3", "MASTER_PORT": "23456"}, "env", "10.1.2.3",
         23456),
        ({"PET_NNODES": "1", "PET_NODE_RANK": "0", "PET_NPROC_PER_NODE": "1", "PET_MASTER_ADDR": "tj-node-0-0",
          "PET_MASTER_PORT": "29400"}, "kubeflow-trainer", "tj-node-0-0", 29400),
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_NNODES": "1", "SLURM_NODEID": "0",
          "SLURM_LOCALID": "0", "SLURM_JOB_NODELIST": "node17"}, "slurm", "node17", 29500)]:
    out = os.path.join(scratch(), "r.json")
    p = run(TINY + ["--steps", "1", "--warmup", "0", "--output", out], **envs)
    if check(p.returncode == 0, f"{kind} env: exit {p.returncode}: {p.stderr[-300:]}"):
        doc = json.load(open(out))
        validate(doc, kind)
        t = doc["topology"]
        check(t["rendezvous"] == kind and t["world_size"] == 1 and t["nodes"] == 1, f"{kind}: {t}")
        check(t.get("master_addr") == want_addr, f"{kind}: master_addr {t.get('master_addr')}")
        check(t.get("nccl_id_port") == id_port, f"{kind}: nccl_id_port {t.get('nccl_id_port')}, want {id_port}")

# Rendezvous flags on one node: recorded; on two nodes: refused like torchrun below.
out = os.path.join(scratch(), "r.json")
p = run(TINY + ["--steps", "1", "--warmup", "0", "--output", out, "--nnodes", "1", "--master-addr", "head0",
                "--master-port", "29501"])
if check(p.returncode == 0, f"--nnodes 1: exit {p.returncode}: {p.stderr[-300:]}"):
    t = json.load(open(out))["topology"]
    check(t["rendezvous"] == "flags" and t["master_addr"] == "head0" and t["master_port"] == 29501, f"flags: {t}")
p = run(TINY + ["--steps", "1", "--nnodes", "2", "--node-rank", "1"])
check(p.returncode == 2 and "cross-process" in p.stderr and "asks for 2 ranks over 2 nodes," in p.stderr,
      f"--nnodes 2: exit {p.returncode}: {p.stderr[-300:]}")

# Two processes over torchrun with the CPU backend: refused clearly (no cross-process comm yet);
# the nodes counted in words, one node singular
p = run(TINY + ["--steps", "1"], WORLD_SIZE="2", RANK="0", LOCAL_RANK="0")
check(p.returncode == 2 and "cross-process" in p.stderr, f"WORLD_SIZE=2: exit {p.returncode}: {p.stderr[-300:]}")
p = run(TINY + ["--steps", "1"], WORLD_SIZE="2", LOCAL_WORLD_SIZE="2", RANK="0", LOCAL_RANK="0")
check(p.returncode == 2 and "asks for 2 ranks over 1 node," in p.stderr and "(s)" not in p.stderr,
      f"two processes on one node: exit {p.returncode}: {p.stderr[-300:]}")
p = run(TINY + ["--steps", "1"], WORLD_SIZE="2", RANK="7")
check(p.returncode == 2 and "rank" in p.stderr, f"RANK=7 of 2: exit {p.returncode}: {p.stderr[-300:]}")

# --dry-run checks what a run would check and measures nothing: exit 0, a plan on stdout naming
# the model, batch and backend, no result file; what it would refuse it refuses the same way.
d = scratch()
p = run(TINY + ["--batch-size", "3", "--dry-run"], cwd=d)
check(p.returncode == 0, f"--dry-run: exit {p.returncode}: {p.stderr[-300:]}")
check("would measure " in p.stdout and "batch 3 per device" in p.stdout and
      "backend cpu" in p.stdout, f"--dry-run plan: {p.stdout}")
# in words, not "1 rank(s)", "(none rendezvous)" or "(from unknown)" (TINY: one rank, host data)
check("x 1 rank here, 1 in all" in p.stdout and re.search(r"data: host, \d+ worker threads? per rank", p.stdout) and
      "  nodes: 1 (no rendezvous), this is node 0" in p.stdout and
      "count 1 (no instance metadata, no --instance-type)" in p.stdout and "(s)" not in p.stdout,
      f"--dry-run plan's wording: {p.stdout}")
check(not os.path.exists(os.path.join(d, "instbench-results")) or
      os.listdir(os.path.join(d, "instbench-results")) == [], "--dry-run wrote a result")
check("measuring" not in p.stderr, f"--dry-run ran the benchmark: {p.stderr[-300:]}")
p = run(TINY + ["--dry-run", "--output", d], cwd=d)
check(p.returncode == 2 and "is a directory" in p.stderr, f"--dry-run --output DIR: exit {p.returncode}: {p.stderr[-200:]}")
p = run(TINY + ["--dry-run", "--batch-size", "1000000", "--image-size", "224", "--patch-size", "16"], cwd=d)
check(p.returncode == 2 and "largest batch that fits" in p.stderr, f"--dry-run too big: exit {p.returncode}")

# An identity rank cannot price is said before the run (off EC2: no instance metadata), with the
# flag that fixes it; --count above the nodes that run says how rank will price it.
noimds = {"AWS_EC2_METADATA_DISABLED": "true"}
OK = ["--identity-mismatch", "ok"]   # a CPU run under a GPU type, on purpose (measure_cli_identity.py tests the check)
p = run(TINY + ["--dry-run", "--instance-type", "g5.xlarge"] + OK, cwd=d, **noimds)
check(p.returncode == 0 and "without --region" in p.stderr and "--price g5.xlarge=USD" in p.stderr,
      f"--instance-type without --region: {p.stderr[-300:]}")
p = run(TINY + ["--dry-run", "--instance-type", "g5.xlarge", "--region", "us-east-1", "--count", "4"] + OK, cwd=d,
        **noimds)
check(p.returncode == 0 and "--count 4 with 1 node running" in p.stderr and "(throughput x 4)" in p.stderr and
      "marked extrapolated" in p.stderr and "not scaled" not in p.stderr and
      "without --region" not in p.stderr, f"--count 4 on one node: {p.stderr[-300:]}")
p = run(TINY + ["--dry-run", "--instance-type", "g5.xlarge", "--region", "us-east-1"] + OK, cwd=d, **noimds)
check("  identity: g5.xlarge, region us-east-1, market unknown, count 1 (from flag)" in p.stdout,
      f"--dry-run identity from the flags: {p.stdout}")
identity_warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("warning: --") and "is not this machine" not in ln]
check(p.returncode == 0 and not identity_warnings and "names no instance type" not in p.stderr,
      f"a complete identity warned: {p.stderr[-300:]}")
finish("measure_cli_flags")
