#!/usr/bin/python3
"""EFA in `instbench sweep run` against moto's server (EC2 and IAM, every signature checked; the
placement-group calls moto lacks served by the fake AWS behind tests/sweep/moto_sweep.py's router).
The independent side: botocore's own EC2 query serializer (moto's venv), boto3 reading back what
the sweep created and left, and the interface layout AWS documents, recomputed here from
DescribeInstanceTypes as moto answers it (its data is AWS's):
  card 0 device 0 "interface" (the ENA primary), card 0 device 1 "efa-only", then device 0
  "efa-only" on each further card up to min(MaximumEfaInterfaces, MaximumNetworkCards);
  a type with one EFA interface: one "efa" interface with AssociatePublicIpAddress
  (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html).
  A  2 x p4d.24xlarge, 2 x p5.48xlarge, 2 x g5.12xlarge, 2 x g5.xlarge to their --max-minutes:
     each RunInstances form equals botocore's serialization of the same parameters (interfaces in
     the subnet with the sweep's security group, DeleteOnTermination, tags on instances, volumes
     and interfaces, no top-level SubnetId/SecurityGroupId); g5.xlarge (no EFA) launches as before;
     the default group lacks the egress-to-itself rule, so a tagged group is created with all
     traffic from and to itself; every p4d/p5 node's primary interface got an Elastic IP; at the
     end nothing is left: instances, Elastic IPs, the security group, placement groups; the
     default group untouched;
  B  SIGKILL mid-sweep with the state file deleted: `sweep cleanup ID` (by tag alone) leaves no
     instance, Elastic IP, security group or placement group.
  C  --efa off: one plain interface, no Elastic IP, no security group created.
Usage: sweep_run_efa_moto.py INSTBENCH"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from moto_sweep import MotoSweep, sweep_ids   # noqa: E402
from moto_sweep import start_sweep as start   # noqa: E402
from testlib import check, failures   # noqa: E402
from state_schema import load_state   # noqa: E402

BIN = os.path.abspath(sys.argv[1])
BUCKET, REGION = "sweep-efa", "us-east-1"
TAG = "instbench:sweep"

STATE = """
out = {
  'instances': [{'id': i['InstanceId'], 'state': i['State']['Name'], 'type': i['InstanceType'],
                 'tags': {t['Key']: t['Value'] for t in i.get('Tags', [])}}
                for r in client.describe_instances()['Reservations'] for i in r['Instances']],
  'addresses': client.describe_addresses()['Addresses'],
  'groups': [{'id': g['GroupId'], 'name': g['GroupName'], 'tags': {t['Key']: t['Value'] for t in g.get('Tags', [])},
              'in': g['IpPermissions'], 'out': g['IpPermissionsEgress']}
             for g in client.describe_security_groups()['SecurityGroups']],
}
"""


def layout(info):
    """AWS's layout for a type, from its DescribeInstanceTypes NetworkInfo (independent of instbench)."""
    net = info["NetworkInfo"]
    if not net.get("EfaSupported"):
        return None
    n = min(net["EfaInfo"]["MaximumEfaInterfaces"], net.get("MaximumNetworkCards", 1))
    if n == 1:
        return [{"NetworkCardIndex": 0, "DeviceIndex": 0, "InterfaceType": "efa", "AssociatePublicIpAddress": True}]
    card0 = {c["NetworkCardIndex"]: c["MaximumNetworkInterfaces"] for c in net.get("NetworkCards", [])}.get(0, 2)
    nics = ([{"NetworkCardIndex": 0, "DeviceIndex": 0, "InterfaceType": "interface"},
             {"NetworkCardIndex": 0, "DeviceIndex": 1, "InterfaceType": "efa-only"}] if card0 >= 2 else
            [{"NetworkCardIndex": 0, "DeviceIndex": 0, "InterfaceType": "efa"}])
    nics += [{"NetworkCardIndex": c, "DeviceIndex": 0, "InterfaceType": "efa-only"} for c in range(1, n)]
    return nics


def serialized(m, params):
    """botocore's own query serialization of RunInstances PARAMS (moto's venv)."""
    code = ("op = client.meta.service_model.operation_model('RunInstances')\n"
            "out = client._serializer.serialize_to_request(json.loads(%r), op)['body']" % json.dumps(params))
    # the body before URL encoding: integers are still ints there (booleans already "true")
    return {k: v if isinstance(v, str) else str(v) for k, v in m.ec2(code).items()}


def sweep_args(ami, specs, *extra):
    return [BIN, "sweep", "run", "--region", REGION, "--s3", "s3://%s/p/" % BUCKET, "--ami", ami,
            "--candidates", ",".join(specs), "--yes", "--max-cost", "10000", "--source", "snapshot"] + list(extra)


def left(m, sid):
    """What of sweep SID is still there: live instances, addresses, tagged groups, placement groups."""
    s = m.ec2(STATE)
    return {"instances": [i["id"] for i in s["instances"] if i["tags"].get(TAG) == sid and
                          i["state"] not in ("terminated", "shutting-down")],
            "addresses": [a["AllocationId"] for a in s["addresses"]],
            "groups": [g["id"] for g in s["groups"] if TAG in g["tags"]],
            "placement_groups": list(m.groups())}


NOTHING = {"instances": [], "addresses": [], "groups": [], "placement_groups": []}

with MotoSweep() as m:
    m.moto.create_bucket(BUCKET)
    ami = m.ec2("out = [i['ImageId'] for i in client.describe_images(Owners=['amazon'])['Images']"
                " if i.get('Architecture') == 'x86_64'][:1]")[0]
    types = m.ec2("out = {t['InstanceType']: t for t in client.describe_instance_types(InstanceTypes="
                  "['p4d.24xlarge', 'p5.48xlarge', 'g5.12xlarge', 'g5.xlarge'])['InstanceTypes']}")
    before = m.ec2(STATE)["groups"]
    default = [g for g in before if g["name"] == "default"]

    # A ------------------------------------------------------------------------------------------
    home = tempfile.mkdtemp(prefix="sweep-efa-")
    specs = ["2xp4d.24xlarge:on-demand", "2xp5.48xlarge:on-demand", "2xg5.12xlarge:on-demand", "2xg5.xlarge:on-demand"]
    del m.calls[:]
    env, p = start(m, home, sweep_args(ami, specs, "--max-minutes", "0.25"))
    out, err = p.communicate(timeout=400)
    sid = (sweep_ids(home) or [None])[0]
    check(p.returncode == 1 and err.count("timed out") >= 4, "A: every candidate timed out: %d %s" % (
        p.returncode, err[-3000:]))
    st = load_state(home, sid) if sid else {}
    creates = [c for c in m.calls if c["Action"] == "CreateSecurityGroup"]
    sg = st.get("security_group") or {}
    check(len(creates) == 1 and sg.get("id") and sg.get("deleted") is True and
          creates[0].get("VpcId") and creates[0].get("TagSpecification.1.ResourceType") == "security-group" and
          creates[0].get("TagSpecification.1.Tag.1.Value") == sid,
          "A: one tagged security group created (the default one lacks the rule to itself): %r %r" % (creates, sg))
    for act in ("AuthorizeSecurityGroupIngress", "AuthorizeSecurityGroupEgress"):
        rules = [c for c in m.calls if c["Action"] == act]
        check(len(rules) == 1 and rules[0].get("GroupId") == sg.get("id") and rules[0].get("IpPermissions.1.IpProtocol") == "-1"
              and rules[0].get("IpPermissions.1.Groups.1.GroupId") == sg.get("id"),
              "A: %s: all protocols from/to the group itself: %r" % (act, rules))
    pgs = {c["spec"]: c["placement_group"] for c in st.get("candidates", [])}
    for spec in specs:
        typ = spec.split("x", 1)[1].split(":")[0]
        sent = [l for l in m.launches if l.get("InstanceType") == typ]
        if not check(len(sent) == 1, "A: %s: one RunInstances: %d" % (spec, len(sent))):
            continue
        sent = sent[0]
        tags = [{"Key": TAG, "Value": sid}, {"Key": "instbench:candidate", "Value": spec}]
        want = {"ImageId": ami, "InstanceType": typ, "MinCount": 2, "MaxCount": 2,
                "InstanceInitiatedShutdownBehavior": "terminate", "ClientToken": sent.get("ClientToken", ""),
                "Placement": {"GroupName": pgs.get(spec, "")}, "UserData": sent.get("UserData", "")}
        nics = layout(types[typ])
        if nics:
            subnet = sent.get("NetworkInterface.1.SubnetId", "")
            want["NetworkInterfaces"] = [dict(n, SubnetId=subnet, Groups=[sg.get("id")], DeleteOnTermination=True)
                                         for n in nics]
            want["TagSpecifications"] = [{"ResourceType": r, "Tags": tags} for r in ("instance", "volume", "network-interface")]
            check(subnet.startswith("subnet-"), "A: %s: the interfaces name the subnet: %r" % (spec, subnet))
        else:
            want["SubnetId"] = sent.get("SubnetId", "")
            want["SecurityGroupIds"] = [default[0]["id"]] if default else []
            want["TagSpecifications"] = [{"ResourceType": r, "Tags": tags} for r in ("instance", "volume")]
        ref = serialized(m, want)
        check(ref == sent, "A: %s: RunInstances differs from botocore's serialization:\n  only ours: %r\n  only "
              "botocore's: %r" % (spec, sorted(set(sent.items()) - set(ref.items())),
                                  sorted(set(ref.items()) - set(sent.items()))))
    check(len([l for l in m.launches if l.get("InstanceType") == "p5.48xlarge" and "NetworkInterface.33.InterfaceType" in l])
          == 1, "A: p5.48xlarge: 33 interfaces (32 EFA)")
    eips = [(i["candidate"], i.get("elastic_ip")) for i in st.get("instances", [])]
    by_type = {}
    for cand, e in eips:
        by_type.setdefault(st["candidates"][cand]["instance_type"], []).append(e)
    for typ in ("p4d.24xlarge", "p5.48xlarge"):
        es = by_type.get(typ, [])
        check(len(es) == 2 and all(e and e["associated"] and e["released"] for e in es),
              "A: %s: each node's Elastic IP associated, then released: %r" % (typ, es))
    for typ in ("g5.12xlarge", "g5.xlarge"):
        check(all(e is None for e in by_type.get(typ, [None])), "A: %s: no Elastic IP (one interface)" % typ)
    assoc = [c for c in m.calls if c["Action"] == "AssociateAddress"]
    check(len(assoc) == 4 and all(c.get("NetworkInterfaceId", "").startswith("eni-") and "InstanceId" not in c
                                  for c in assoc), "A: four associations, each to an interface: %r" % assoc)
    allocs = [c for c in m.calls if c["Action"] == "AllocateAddress"]
    check(len(allocs) == 4 and all(c.get("Domain") == "vpc" and c.get("TagSpecification.1.ResourceType") == "elastic-ip"
                                   and c.get("TagSpecification.1.Tag.1.Value") == sid for c in allocs),
          "A: four tagged allocations: %r" % allocs)
    check(left(m, sid) == NOTHING, "A: nothing left: %r" % left(m, sid))
    after = [g for g in m.ec2(STATE)["groups"] if g["name"] == "default"]
    check(after == default, "A: the default group untouched: %r -> %r" % (default, after))
    check(st.get("phase") == "done", "A: state done: %r" % st.get("phase"))
    shutil.rmtree(home, ignore_errors=True)

    # B ------------------------------------------------------------------------------------------
    home = tempfile.mkdtemp(prefix="sweep-efa-")
    env, p = start(m, home, sweep_args(ami, ["2xp4d.24xlarge:on-demand"]))
    deadline = time.time() + 120
    while time.time() < deadline:
        now = left(m, (sweep_ids(home) or [None])[0])
        if len(now["addresses"]) == 2 and len(now["instances"]) == 2 and now["groups"]:
            break
        time.sleep(0.3)
    p.kill()
    p.communicate()
    sid = (sweep_ids(home) or [None])[0]
    now = left(m, sid)
    check(len(now["instances"]) == 2 and len(now["addresses"]) == 2 and len(now["groups"]) == 1 and
          len(now["placement_groups"]) == 1, "B: left behind by SIGKILL: %r" % now)
    for f in glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json")):
        os.remove(f)
    r = subprocess.run([BIN, "sweep", "cleanup", sid], env=env, capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "B: cleanup: %d %s" % (r.returncode, r.stderr[-2000:]))
    check(left(m, sid) == NOTHING, "B: nothing left after cleanup by tag: %r" % left(m, sid))
    shutil.rmtree(home, ignore_errors=True)

    # C ------------------------------------------------------------------------------------------
    home = tempfile.mkdtemp(prefix="sweep-efa-")
    del m.calls[:]
    n_launches = len(m.launches)
    env, p = start(m, home, sweep_args(ami, ["2xp4d.24xlarge:on-demand"], "--max-minutes", "0.1", "--efa", "off"))
    out, err = p.communicate(timeout=300)
    sent = m.launches[n_launches:]
    check(len(sent) == 1 and not any(k.startswith("NetworkInterface.") for k in sent[0]) and sent[0].get("SubnetId"),
          "C: --efa off: one plain interface: %r" % sent)
    acts = {c["Action"] for c in m.calls}
    check(not acts & {"CreateSecurityGroup", "AllocateAddress", "DescribeInstanceTypes"},
          "C: --efa off asks nothing of EFA: %r" % sorted(acts))
    check(left(m, (sweep_ids(home) or [None])[0]) == NOTHING, "C: nothing left")
    shutil.rmtree(home, ignore_errors=True)

sys.exit(1 if failures else 0)
