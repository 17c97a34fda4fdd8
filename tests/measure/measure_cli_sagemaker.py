"""measure inside a SageMaker training job: with no instance metadata, the identity comes from the
job's resource config (src/bench/sagemaker.c; INSTBENCH_SAGEMAKER_RESOURCE_CONFIG points at a file
written here in the documented shape: current_host, current_instance_type, hosts).  Expectations
are the file's own contents: the type, the hosts' count, the node's place among the sorted hosts.
Hostile versions (too big, not JSON, wrong types, a type not ml.*, current_host not among hosts,
duplicate or malformed hosts) are refused with exit 1 and one line naming the file, and nothing
is written."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]
from measure_common import BIN, TINY, VALIDATOR, check, env, finish, scratch  # noqa: E402

GOOD = {"current_host": "algo-2", "current_instance_type": "ml.g5.xlarge", "hosts": ["algo-3", "algo-1", "algo-2"],
        "current_group_name": "homogeneousCluster", "network_interface_name": "eth0"}


def run(d, config, extra, region="us-east-1", raw=None):
    path = os.path.join(d, "resourceconfig.json")
    with open(path, "w") as f:
        f.write(raw if raw is not None else json.dumps(config))
    out = os.path.join(d, "r.json")
    p = subprocess.run([BIN, "measure"] + TINY + ["--warmup", "1", "--steps", "2", "--checkpoint", "off", "-o", out]
                       + extra, capture_output=True, text=True, timeout=180, cwd=d,
                       env=env(INSTBENCH_SAGEMAKER_RESOURCE_CONFIG=path, AWS_REGION=region))
    return p, out, path


# ---- a real run on node algo-2 of three: ml.g5.xlarge, count 3, told how to run all three ----
d = scratch()
p, out, _ = run(d, GOOD, [])
check(p.returncode == 0, f"good config: exit {p.returncode}: {p.stderr[-400:]}")
if p.returncode == 0:
    doc = json.load(open(out))
    errs = list(VALIDATOR.iter_errors(doc))
    check(not errs, f"schema: {[e.message for e in errs[:3]]}")
    inst = doc["instance"]
    want_rank = sorted(GOOD["hosts"]).index(GOOD["current_host"])
    check(inst["type"] == GOOD["current_instance_type"] and inst["source"] == "sagemaker", f"instance {inst}")
    check(inst["region"] == "us-east-1" and inst["market"] is None, f"region/market {inst}")
    check(inst["count"] == len(GOOD["hosts"]), f"count {inst['count']}, hosts {len(GOOD['hosts'])}")
    check(inst["identity_mismatch"] is False, f"identity_mismatch {inst.get('identity_mismatch')!r}")
    hint = f"--nnodes {len(GOOD['hosts'])} --node-rank {want_rank} --master-addr {sorted(GOOD['hosts'])[0]}"
    check(hint in " ".join(p.stderr.split()), f"no '{hint}' on stderr: {p.stderr[-400:]}")

# ---- flags still win: --count, --instance-type, --region; an unknown AWS_REGION is not recorded ----
for extra, key, want in ((["--count", "1"], "count", 1), (["--instance-type", "g5.xlarge", "--identity-mismatch", "ok"],
                                                          "type", "g5.xlarge"),
                         (["--region", "eu-west-1"], "region", "eu-west-1")):
    d = scratch()
    p, out, _ = run(d, GOOD, extra)
    got = json.load(open(out))["instance"][key] if p.returncode == 0 else None
    check(got == want, f"{extra}: instance.{key} {got!r}, want {want!r} ({p.stderr[-300:]})")
d = scratch()
p, out, _ = run(d, GOOD, [], region="moon-1")
check(p.returncode == 0 and json.load(open(out))["instance"]["region"] is None, f"AWS_REGION moon-1: {p.stderr[-300:]}")

# ---- one host: node 0 of 1, no advice ----
d = scratch()
p, out, _ = run(d, dict(GOOD, hosts=["algo-2"]), [])
check(p.returncode == 0 and json.load(open(out))["instance"]["count"] == 1 and "--node-rank" not in p.stderr,
      f"one host: {p.returncode} {p.stderr[-300:]}")

# ---- hostile files: exit 1, one line naming the file and what is wrong, no result ----
HOSTILE = [
    ("too big", None, '{"hosts": [' + ", ".join(['"algo-1"'] * 200000) + "]}", "larger than"),
    ("not JSON", None, "{current_host: algo-1", "not valid JSON"),
    ("an array", [GOOD], None, "not a JSON object"),
    ("type not ml.*", dict(GOOD, current_instance_type="p4d.24xlarge"), None, "current_instance_type"),
    ("type a number", dict(GOOD, current_instance_type=5), None, "current_instance_type"),
    ("type with a path", dict(GOOD, current_instance_type="ml.g5.x/../../etc"), None, "current_instance_type"),
    ("type missing", {k: v for k, v in GOOD.items() if k != "current_instance_type"}, None, "current_instance_type"),
    ("current_host elsewhere", dict(GOOD, current_host="algo-9"), None, "not one of hosts"),
    ("current_host a list", dict(GOOD, current_host=["algo-2"]), None, "current_host"),
    ("hosts a string", dict(GOOD, hosts="algo-1,algo-2"), None, "hosts"),
    ("hosts empty", dict(GOOD, hosts=[]), None, "hosts has 0"),
    ("a host a number", dict(GOOD, hosts=["algo-2", 7]), None, "hosts[1]"),
    ("a host with spaces", dict(GOOD, hosts=["algo-2", "algo 1; rm -rf /"]), None, "hosts[1]"),
    ("a host twice", dict(GOOD, hosts=["algo-2", "algo-1", "algo-2"]), None, "twice"),
]
for what, config, raw, needle in HOSTILE:
    d = scratch()
    p, out, path = run(d, config, [], raw=raw)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1, f"{what}: exit {p.returncode}, want 1: {p.stderr[-300:]}")
    check(len(lines) == 1 and path in lines[0] and needle in lines[0], f"{what}: stderr {p.stderr[-300:]!r}")
    check(not os.path.exists(out), f"{what}: a result was written")

# ---- no resource config: identity unknown, as off AWS ----
d = scratch()
out = os.path.join(d, "r.json")
p = subprocess.run([BIN, "measure"] + TINY + ["--warmup", "1", "--steps", "2", "--checkpoint", "off", "-o", out],
                   capture_output=True, text=True, timeout=180, cwd=d,
                   env=env(INSTBENCH_SAGEMAKER_RESOURCE_CONFIG=os.path.join(d, "absent.json")))
check(p.returncode == 0 and json.load(open(out))["instance"]["source"] == "unknown", f"absent: {p.stderr[-300:]}")
finish("measure_cli_sagemaker")
