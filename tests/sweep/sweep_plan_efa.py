#!/usr/bin/python3
"""`instbench sweep plan`'s EFA interfaces against moto's EC2, whose DescribeInstanceTypes data is
AWS's own (each card's InterfaceTypes included: P6-B300's card 0 takes ENA only), SSM from the
fake AWS.  For 2 x p6-b300.48xlarge, 2 x p6-b200.48xlarge, 2 x p5.48xlarge, 2 x p4d.24xlarge,
2 x g6e.48xlarge and 2 x g6e.12xlarge, the plan's interfaces are recomputed here from boto3's
reading of the same answer by the rules of AWS's EFA guide
(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html):
  card 0 device 0: the ENA primary ("interface"; an efa-only interface cannot be primary);
  if card 0 supports EFA: an efa-only interface on card 0 device 1;
  then device 0 "efa-only" on each next card that supports EFA, up to MaximumEfaInterfaces;
  a type with one EFA interface whose card 0 takes EFA: one "efa" interface with its public IPv4.
and, whatever the rules, no EFA interface sits on a card whose InterfaceTypes lack its type.
A type the price catalogue does not know yet cannot be a candidate: it is named on stderr and
left out (exit 77, skipped, when p6-b300.48xlarge is among them and nothing failed).
Usage: sweep_plan_efa.py INSTBENCH"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures, FakeAws   # noqa: E402
from moto_server import MotoServer                # noqa: E402

BIN = sys.argv[1]
DLAMI = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
UBUNTU = "/aws/service/canonical/ubuntu/server/22.04/stable/current/amd64/hvm/ebs-gp2/ami-id"
TYPES = ["p6-b300.48xlarge", "p6-b200.48xlarge", "p5.48xlarge", "p4d.24xlarge", "g6e.48xlarge", "g6e.12xlarge"]


def aws_layout(net):
    """AWS's layout from a NetworkInfo as boto3 reads it: [(card, device, type, public_ip)]."""
    if not net.get("EfaSupported"):
        return None
    cards = {c["NetworkCardIndex"]: c for c in net.get("NetworkCards", [])}
    takes = {i: set(c.get("InterfaceTypes", ["interface", "efa", "efa-only"])) for i, c in cards.items()}
    want = min(net["EfaInfo"]["MaximumEfaInterfaces"], net.get("MaximumNetworkCards", 1))
    if want == 1 and "efa" in takes.get(0, ()):
        return [(0, 0, "efa", True)]
    out = [(0, 0, "interface", False)]
    if "efa-only" in takes.get(0, ()) and cards[0]["MaximumNetworkInterfaces"] >= 2:
        out.append((0, 1, "efa-only", False))
    for c in sorted(k for k in cards if k > 0):
        if sum(t != "interface" for _, _, t, _ in out) >= want:
            break
        if "efa-only" in takes[c]:
            out.append((c, 0, "efa-only", False))
    return out


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    ami = json.loads(m.boto("ec2", "print(json.dumps([i['ImageId'] for i in client.describe_images(Owners=['amazon'])"
                                   "['Images'] if i.get('Architecture') == 'x86_64'][:1]))"))[0]
    nets = json.loads(m.boto("ec2", "print(json.dumps({t['InstanceType']: t['NetworkInfo'] for t in "
                                    "client.describe_instance_types(InstanceTypes=args)['InstanceTypes']}))", *TYPES))
    fake = FakeAws("--credentials", "%s:%s" % (m.access_key, m.secret_key), "--ssm-parameter", DLAMI + "=" + ami,
                   "--ssm-parameter", UBUNTU + "=" + ami, "--timeout", "600")
    try:
        env = m.env()
        env.update({"AWS_ENDPOINT_URL_SSM": fake.url, "XDG_CACHE_HOME": os.path.join(tmp, "cache"), "HOME": tmp})
        known, missing = [], []
        for t in TYPES:
            r = subprocess.run([BIN, "prices", "--source", "snapshot", "--instance-types", t, "--region", "all",
                                "--format", "json"], env=env, capture_output=True, text=True, timeout=60)
            (known if r.returncode == 0 else missing).append(t)
        if missing:
            sys.stderr.write("not in the price catalogue yet, left out: %s\n" % ", ".join(missing))
        b300 = nets.get("p6-b300.48xlarge", {}).get("NetworkCards", [])
        check(b300 and b300[0].get("InterfaceTypes") == ["interface"],
              "moto's p6-b300.48xlarge is not AWS's (card 0 ENA only): %s" % b300[:1])
        cands = ["2x%s:on-demand" % t for t in known]
        r = subprocess.run([BIN, "sweep", "plan", "--region", "us-east-1", "--candidates", ",".join(cands), "--source",
                            "snapshot", "--max-minutes", "10", "--format", "json"], env=env, capture_output=True,
                           text=True, timeout=300)
        plan = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
        check(r.returncode in (0, 1) and plan, "plan: rc %d %s" % (r.returncode, r.stderr[-1500:]))
        lines = {c["instance_type"]: c for c in plan.get("candidates", [])}
        for t in known:
            line = lines.get(t, {})
            efa = line.get("efa") or {}
            got = [(i["network_card"], i["device_index"], i["interface_type"], i["public_ip"])
                   for i in efa.get("interfaces", [])]
            want = aws_layout(nets[t])
            check(got == (want or []), "%s: interfaces %s\n  AWS's layout %s (%s)" % (t, got, want, line.get("efa_reason")))
            cards = {c["NetworkCardIndex"]: set(c.get("InterfaceTypes", [])) for c in nets[t].get("NetworkCards", [])}
            wrong = [g for g in got if cards.get(g[0]) and g[2] not in cards[g[0]]]
            check(not wrong, "%s: interfaces on cards that do not take them: %s" % (t, wrong))
            check(efa.get("devices") == sum(g[2] != "interface" for g in got) and
                  efa.get("elastic_ip") == (len(got) > 1), "%s: devices/elastic_ip %s" % (t, efa))
    finally:
        fake.stop()

if failures:
    sys.exit(1)
sys.exit(77 if "p6-b300.48xlarge" in missing else 0)
