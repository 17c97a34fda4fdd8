"""An instance type given by flag that contradicts the machine is refused before measuring (exit 2,
one message naming each difference), unless --identity-mismatch ok, which records it
(instance.identity_mismatch, instance.identity_differences).  The type's hardware expected here is
read from the price data in data/ (what the embedded snapshot is generated from), this machine's
vCPUs from os.cpu_count() (the online CPUs, sysconf(_SC_NPROCESSORS_ONLN)); never from instbench's
output.  A type the data does not list is recorded unchecked (null); an identity from instance
metadata (the IMDS stand-in) is the machine itself and never refused."""
import csv
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from imds_standin import Imds, start  # noqa: E402
from measure_common import BIN, SCHEMA_PATH, TINY, check, env, finish, run, scratch, validate  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(SCHEMA_PATH))), "data")
HERE_VCPUS = os.cpu_count()
BASE = TINY + ["--steps", "1", "--warmup", "0"]
IDENT = ["--region", "us-east-1", "--market", "on-demand"]   # all three flags: no instance metadata asked

# instance type -> (vcpus, accelerator name or "", accelerator count), from data/aws-*-prices.csv
HW = {}
for path in glob.glob(os.path.join(DATA, "aws-*-prices.csv")):
    with open(path) as f:
        for row in csv.DictReader(f):
            hw = (int(float(row["vcpus"])), row["accelerator"], int(float(row["accelerator_count"] or 0)))
            check(HW.setdefault(row["instance_type"], hw) == hw, f"{row['instance_type']}: two hardware rows")
check("g5.12xlarge" in HW, "data/ lacks g5.12xlarge")


def expected_differences(typ):
    """What a CPU run here contradicts in TYP, worded as docs/formats.md says."""
    vcpus, acc, n = HW[typ]
    out = []
    if n:
        out.append(f"accelerators: {typ} has {n} x {acc}, this run has none (cpu backend)")
    if vcpus != HERE_VCPUS:
        out.append(f"vcpus: {typ} has {vcpus}, this machine has {HERE_VCPUS}")
    return out


def measure(typ, extra=(), cwd=None, **envs):
    d = cwd or scratch()
    out = os.path.join(d, "r.json")
    p = run(BASE + ["--instance-type", typ] + IDENT + list(extra) + ["--output", out], cwd=d, **envs)
    doc = json.load(open(out)) if p.returncode == 0 and os.path.exists(out) else None
    if doc:
        validate(doc, f"{typ} {extra}")
    return p, doc, d


# 1. A CPU run under g5.12xlarge: refused before measuring, naming each difference with the
#    type's value and this run's; nothing written, not even the default results directory.
want = expected_differences("g5.12xlarge")
check(len(want) >= 1, "g5.12xlarge has no accelerators in data/?")
for extra in ([], ["--dry-run"]):
    d = scratch()
    p = run(BASE + ["--instance-type", "g5.12xlarge"] + IDENT + extra, cwd=d)
    check(p.returncode == 2, f"g5.12xlarge {extra}: exit {p.returncode}, want 2: {p.stderr[-400:]}")
    msg = [ln for ln in p.stderr.splitlines() if ln.startswith("instbench measure:")]
    check(len(msg) == 1, f"g5.12xlarge {extra}: want one message, got {msg}")
    for w in want:
        check(msg and w in msg[0], f"g5.12xlarge {extra}: message lacks {w!r}: {msg}")
    check(msg and "--identity-mismatch ok" in msg[0], f"g5.12xlarge {extra}: message does not name the override")
    check("measuring" not in p.stderr, f"g5.12xlarge {extra}: measured before refusing")
    check(os.listdir(d) == [], f"g5.12xlarge {extra}: left {os.listdir(d)}")

# 2. With --identity-mismatch ok: measured and recorded as a mismatch, with every difference.
p, doc, _ = measure("g5.12xlarge", ["--identity-mismatch", "ok"])
check(p.returncode == 0, f"--identity-mismatch ok: exit {p.returncode}: {p.stderr[-400:]}")
if doc:
    inst = doc["instance"]
    check(inst["type"] == "g5.12xlarge" and inst["source"] == "flag", f"identity: {inst}")
    check(inst.get("identity_mismatch") is True, f"identity_mismatch {inst.get('identity_mismatch')!r}, want true")
    check(inst.get("identity_differences") == want, f"differences {inst.get('identity_differences')} != {want}")

# 3. Only ok is a value of --identity-mismatch.
for bad in ["yes", "OK ", "true", ""]:
    p = run(BASE + ["--identity-mismatch", bad, "--dry-run"])
    check(p.returncode == 2 and "--identity-mismatch" in p.stderr, f"--identity-mismatch {bad!r}: exit {p.returncode}")

# 4. A CPU type whose vCPUs are this machine's: it agrees (false, no differences).  Another CPU type
#    differs in its vCPUs alone; a GPU type with this machine's vCPUs in its accelerators alone.
cpu_types = sorted(t for t, (v, a, n) in HW.items() if n == 0)
same = [t for t in cpu_types if HW[t][0] == HERE_VCPUS]
other = [t for t in cpu_types if HW[t][0] != HERE_VCPUS]
if same:
    p, doc, _ = measure(same[0])
    check(p.returncode == 0, f"{same[0]} ({HW[same[0]][0]} vCPUs, as here): exit {p.returncode}: {p.stderr[-400:]}")
    if doc:
        check(doc["instance"].get("identity_mismatch") is False and doc["instance"].get("identity_differences") == [],
              f"{same[0]}: {doc['instance']}")
else:
    print(f"note: no CPU type in data/ has this machine's {HERE_VCPUS} vCPUs; the agreeing case is not run here")
if other:
    t = other[0]
    p = run(BASE + ["--instance-type", t] + IDENT + ["--dry-run"])
    check(p.returncode == 2 and f"vcpus: {t} has {HW[t][0]}, this machine has {HERE_VCPUS}" in p.stderr
          and "accelerators:" not in p.stderr, f"{t}: exit {p.returncode}: {p.stderr[-400:]}")
# (NVIDIA types only: a Trainium or Inferentia identity is refused before any comparison, case 8)
gpu_same = sorted(t for t, (v, a, n) in HW.items() if n and v == HERE_VCPUS and not a.startswith(("Trainium", "Inferentia")))
if gpu_same:
    t = gpu_same[0]
    p = run(BASE + ["--instance-type", t] + IDENT + ["--dry-run"])
    check(p.returncode == 2 and expected_differences(t)[0] in p.stderr and "vcpus:" not in p.stderr,
          f"{t}: exit {p.returncode}: {p.stderr[-400:]}")

# 5. A type the price data does not list (a family outside the snapshot): recorded as given, unchecked.
unknown = "c5.large"
check(unknown not in HW, f"{unknown} is in data/ now: pick another type")
p, doc, _ = measure(unknown)
check(p.returncode == 0, f"{unknown}: exit {p.returncode}: {p.stderr[-400:]}")
if doc:
    check(doc["instance"].get("identity_mismatch", "absent") is None and doc["instance"].get("identity_differences") == [],
          f"{unknown}: {doc['instance']}")

# 6. No identity at all: nothing to check (null).
d = scratch()
p = run(BASE + ["--output", os.path.join(d, "r.json")])
if check(p.returncode == 0, f"no identity: exit {p.returncode}: {p.stderr[-300:]}"):
    inst = json.load(open(os.path.join(d, "r.json")))["instance"]
    check(inst.get("identity_mismatch", "absent") is None, f"no identity: {inst}")

# 7. Instance metadata saying g5.12xlarge while the CPU backend runs: the machine's own identity,
#    never refused, recorded as no mismatch.
srv, endpoint = start()
Imds.meta = {"instance-type": "g5.12xlarge", "placement/availability-zone": "us-east-1a",
             "placement/availability-zone-id": "use1-az1", "placement/region": "us-east-1",
             "instance-id": "i-0123456789abcdef0", "instance-life-cycle": "on-demand"}
d = scratch()
out = os.path.join(d, "r.json")
p = subprocess.run([BIN, "measure"] + BASE + ["--output", out], capture_output=True, text=True, timeout=120,
                   env=env(AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=endpoint))
if check(p.returncode == 0, f"IMDS g5.12xlarge: exit {p.returncode}: {p.stderr[-400:]}"):
    doc = json.load(open(out))
    validate(doc, "imds")
    inst = doc["instance"]
    check(inst["type"] == "g5.12xlarge" and inst["source"] == "imds" and inst.get("identity_mismatch") is False
          and inst.get("identity_differences") == [], f"IMDS identity: {inst}")
srv.shutdown()

# 8. A type whose accelerators are AWS Trainium (data/: trn1.32xlarge carries "Trainium") is priced
#    but not measured: exit 2 before any work, naming the type and why (AWS Neuron, not CUDA).
check(HW.get("trn1.32xlarge", (0, ""))[1] == "Trainium", "data/ lacks trn1.32xlarge's Trainium row")
d = scratch()
p = run(BASE + ["--instance-type", "trn1.32xlarge"] + IDENT + ["--output", os.path.join(d, "r.json")])
check(p.returncode == 2 and "trn1.32xlarge" in p.stderr and "Trainium" in p.stderr and "Neuron" in p.stderr
      and not os.path.exists(os.path.join(d, "r.json")), f"trn1.32xlarge: exit {p.returncode}: {p.stderr[-400:]}")
finish("measure_cli_identity")
