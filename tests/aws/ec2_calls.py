#!/usr/bin/python3
"""The sweep's EC2 and SSM calls through instbench's client (tests/aws/ec2_probe.c).
  ec2_calls.py moto PROBE   against moto's server, signatures checked; boto3 (moto's venv) reads
                            back what we created: instances and their market, shutdown behaviour,
                            tags on instances AND volumes, user data, subnet and security group; the
                            default VPC; an AMI's architecture; DescribeInstances by id (an unknown
                            id left out) and by tag over several pages; TerminateInstances with an
                            id EC2 does not know; DryRun; SSM GetParameter and ParameterNotFound;
                            DescribeInstanceTypes' networks with each card's interface types.
  ec2_calls.py fake PROBE   against the fake AWS (tests/fakes/aws_fake_server.py) for what moto 5.2.5 does
                            not have: placement groups (moto answers 500), the public AMI
                            parameters, a retried RunInstances keeping its ClientToken, DryRun
                            refused (UnauthorizedOperation).
moto 5.2.5 stores a ClientToken but launches again on a repeated one, so "the same token launches
once" is EC2's promise: what is ours, and checked here, is that every attempt of one launch sends
the same token.
moto recomputes a form body's signature from its parsed fields, re-encoding a space as '+' where
we (and AWS's canonical form) send %20, so no value here holds a space: a moto artifact, not ours.""" 
import base64
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures, FakeAws   # noqa: E402

MODE, PROBE = sys.argv[1], sys.argv[2]
DLAMI = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"


def probe(env, *args):
    r = subprocess.run([PROBE] + list(args), env=env, capture_output=True, timeout=300)
    return r.returncode, r.stdout.decode(), r.stderr.decode("utf-8", "replace")


def moto_tests():
    from moto_server import MotoServer
    with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
        env = m.env()

        def ec2(code, *args):
            return json.loads(m.boto("ec2", code, *args))

        # SSM: a public parameter moto has, and one it has not
        name = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"
        want = m.boto("ssm", "print(client.get_parameter(Name=args[0])['Parameter']['Value'])", name)
        rc, out, err = probe(env, "ssm", name)
        check(rc == 0 and out.strip() == want, "ssm %s: rc %d %r %s" % (name, rc, out, err))
        rc, out, err = probe(env, "ssm", DLAMI)
        check(rc == 4 and DLAMI in err and "does not exist" in err, "ssm missing: rc %d %s" % (rc, err))

        # the default VPC, its default group and default subnets, as boto3 sees them
        want = ec2("""
vpc = client.describe_vpcs(Filters=[{'Name': 'isDefault', 'Values': ['true']}])['Vpcs'][0]['VpcId']
sg = client.describe_security_groups(Filters=[{'Name': 'vpc-id', 'Values': [vpc]},
     {'Name': 'group-name', 'Values': ['default']}])['SecurityGroups'][0]['GroupId']
sn = client.describe_subnets(Filters=[{'Name': 'vpc-id', 'Values': [vpc]}])['Subnets']
print(json.dumps({'vpc': vpc, 'sg': sg, 'subnets': sorted([s['SubnetId'], s['AvailabilityZone']]
      for s in sn if s['DefaultForAz'])}))""")
        rc, out, err = probe(env, "network")
        got = json.loads(out) if rc == 0 else {}
        check(rc == 0 and got.get("vpc") == want["vpc"] and got.get("sg") == want["sg"] and
              sorted([s["id"], s["az"]] for s in got.get("subnets", [])) == want["subnets"] and want["subnets"],
              "network: %s vs %s %s" % (got, want, err))
        subnet, sg = want["subnets"][1][0], want["sg"]

        # DescribeInstanceTypes' networks, each card's interface types included (moto's data is
        # AWS's: P6-B300's card 0 takes ENA only), against boto3's reading of the same answer
        typs = ["p6-b300.48xlarge", "p6-b200.48xlarge", "p5.48xlarge", "g6e.48xlarge", "g6e.12xlarge", "g5.xlarge"]
        want = ec2('''
out = {}
for t in client.describe_instance_types(InstanceTypes=args)['InstanceTypes']:
    n = t['NetworkInfo']
    out[t['InstanceType']] = {'efa': n.get('EfaSupported', False),
        'max_efa': n.get('EfaInfo', {}).get('MaximumEfaInterfaces', 0), 'cards': n.get('MaximumNetworkCards', 1),
        'card': sorted(({'index': c['NetworkCardIndex'], 'max': c['MaximumNetworkInterfaces'],
                         'types': sorted(c.get('InterfaceTypes', []))} for c in n.get('NetworkCards', [])),
                       key=lambda c: c['index'])}
print(json.dumps(out))''', *typs)
        rc, out, err = probe(env, "types", *typs)
        got = json.loads(out) if rc == 0 else {}
        for c in (c for t in got.values() for c in t["card"]):
            c["types"] = sorted(c["types"])
        check(rc == 0 and got == want and set(got) == set(typs), "types: %s\n  vs boto3 %s %s" % (got, want, err))
        b300 = want.get("p6-b300.48xlarge", {}).get("card", [])
        check(b300 and b300[0]["types"] == ["interface"] and all("efa-only" in c["types"] for c in b300[1:]),
              "moto's p6-b300 as AWS states it: card 0 ENA only: %s" % b300[:2])

        # an AMI's architecture (one of each moto has), an unknown AMI
        amis = ec2("""
im = client.describe_images(Owners=['amazon'])['Images']
pick = {}
for i in im: pick.setdefault(i['Architecture'], i['ImageId'])
print(json.dumps(pick))""")
        check({"x86_64", "arm64"} <= set(amis), "moto's images: %s" % amis)
        for arch, ami in amis.items():
            rc, out, err = probe(env, "arch", ami)
            check(rc == 0 and out.strip() == arch, "arch %s: rc %d %r %s" % (ami, rc, out, err))
        rc, out, err = probe(env, "arch", "ami-0000000000deadbee")
        check(rc == 1 and "ami-0000000000deadbee does not exist" in err, "unknown AMI: rc %d %s" % (rc, err))
        ami = amis["x86_64"]

        # DryRun: permitted, nothing launched
        rc, out, err = probe(env, "run", "g5.xlarge", ami, "2", "dry-run", "spot", "tag=instbench:sweep=s0")
        check(rc == 0 and json.loads(out)["code"] == "DryRunOperation" and json.loads(out)["instances"] == [],
              "dry run: rc %d %s %s" % (rc, out, err))
        n = ec2("print(json.dumps(sum(len(r['Instances']) for r in client.describe_instances()['Reservations'])))")
        check(n == 0, "a dry run launched %d instances" % n)

        # a spot launch of 3 with everything the sweep sets
        ud = os.path.join(tmp, "ud.sh")
        script = "#!/bin/sh\necho 'héllo' \"$X\" && shutdown -h +5\n" + "x" * 1000 + "\n"
        open(ud, "w", encoding="utf-8").write(script)
        rc, out, err = probe(env, "run", "g5.xlarge", ami, "3", "spot", "subnet=" + subnet, "sg=" + sg,
                             "token=tok-123", "user-data=" + ud, "volume=40", "tag=instbench:sweep=s1",
                             "tag=instbench:candidate=3xg5.xlarge:spot", "tag=Name=a/b&c=d+e")
        check(rc == 0, "spot launch: rc %d %s" % (rc, err))
        ours = json.loads(out)["instances"] if rc == 0 else []
        check(len(ours) == 3 and sorted(i["index"] for i in ours) == [0, 1, 2] and
              all(i["spot"] and i["sweep"] == "s1" and i["candidate"] == "3xg5.xlarge:spot" and
                  i["type"] == "g5.xlarge" and i["subnet"] == subnet and i["ip"] and i["state"] == "pending"
                  for i in ours), "RunInstances answer: %s" % ours)
        ids = [i["id"] for i in ours]
        seen = ec2("""
out = []
for r in client.describe_instances(InstanceIds=args)['Reservations']:
    for i in r['Instances']:
        iid = i['InstanceId']
        vols = [m['Ebs']['VolumeId'] for m in i.get('BlockDeviceMappings', [])]
        vt = client.describe_volumes(VolumeIds=vols)['Volumes'] if vols else []
        out.append({'id': iid, 'lifecycle': i.get('InstanceLifecycle'), 'subnet': i.get('SubnetId'),
            'sgs': [g['GroupId'] for g in i.get('SecurityGroups', [])],
            'tags': {t['Key']: t['Value'] for t in i.get('Tags', [])},
            'volume_tags': [{t['Key']: t['Value'] for t in v.get('Tags', [])} for v in vt],
            'volume_sizes': [v['Size'] for v in vt],
            'shutdown': client.describe_instance_attribute(InstanceId=iid,
                Attribute='instanceInitiatedShutdownBehavior')['InstanceInitiatedShutdownBehavior']['Value'],
            'user_data': client.describe_instance_attribute(InstanceId=iid, Attribute='userData')['UserData'].get('Value'),
            'token': i.get('ClientToken')})
print(json.dumps(out))""", *ids)
        want_tags = {"instbench:sweep": "s1", "instbench:candidate": "3xg5.xlarge:spot", "Name": "a/b&c=d+e"}
        check(sorted(s["id"] for s in seen) == sorted(ids), "boto3 sees %s" % [s["id"] for s in seen])
        for s in seen:
            check(s["lifecycle"] == "spot", "%s: lifecycle %s" % (s["id"], s["lifecycle"]))
            check(s["shutdown"] == "terminate", "%s: shutdown behaviour %s" % (s["id"], s["shutdown"]))
            check(s["subnet"] == subnet and s["sgs"] == [sg], "%s: subnet %s groups %s" % (s["id"], s["subnet"], s["sgs"]))
            check(s["tags"] == want_tags, "%s: instance tags %s" % (s["id"], s["tags"]))
            check(s["volume_tags"] and all(t == want_tags for t in s["volume_tags"]),
                  "%s: volume tags %s" % (s["id"], s["volume_tags"]))
            check(40 in s["volume_sizes"], "%s: volume sizes %s" % (s["id"], s["volume_sizes"]))
            check(s["user_data"] and base64.b64decode(s["user_data"]).decode() == script,
                  "%s: user data %r" % (s["id"], s["user_data"][:80] if s["user_data"] else None))
            check(s["token"] == "tok-123", "%s: client token %s" % (s["id"], s["token"]))

        # on-demand without the optional parts: no lifecycle, EC2 picks the subnet
        rc, out, err = probe(env, "run", "c5.large", ami, "1", "tag=instbench:sweep=s1",
                             "tag=instbench:candidate=c5.large")
        od = json.loads(out)["instances"] if rc == 0 else []
        check(rc == 0 and len(od) == 1 and not od[0]["spot"], "on-demand launch: %s %s" % (out, err))
        lc = ec2("print(json.dumps(client.describe_instances(InstanceIds=args)['Reservations'][0]['Instances'][0]"
                 ".get('InstanceLifecycle')))", od[0]["id"]) if od else "?"
        check(lc is None, "on-demand instance has lifecycle %s" % lc)

        # more launches of the sweep than a page holds (moto pages by reservation: 10 reservations in
        # pages of 5), and one of another sweep
        more = ec2("""
ids = []
for k in range(8):
    r = client.run_instances(ImageId=args[0], MinCount=1, MaxCount=1, InstanceType='t3.micro',
        TagSpecifications=[{'ResourceType': 'instance', 'Tags': [{'Key': 'instbench:sweep', 'Value': 's1'}]}])
    ids += [i['InstanceId'] for i in r['Instances']]
client.run_instances(ImageId=args[0], MinCount=1, MaxCount=1, InstanceType='t3.micro',
    TagSpecifications=[{'ResourceType': 'instance', 'Tags': [{'Key': 'instbench:sweep', 'Value': 's2'}]}])
print(json.dumps(ids))""", ami)
        all_s1 = sorted(ids + [od[0]["id"] if od else ""] + more)
        r = subprocess.run([PROBE, "-v", "describe-tag", "instbench:sweep", "s1", "5"], env=env, capture_output=True,
                           timeout=300)
        got = json.loads(r.stdout)["instances"] if r.returncode == 0 else []
        pages = r.stderr.decode().count("-> HTTP 200")
        check(r.returncode == 0 and sorted(i["id"] for i in got) == all_s1,
              "by tag: %s vs %s" % (sorted(i["id"] for i in got), all_s1))
        check(pages >= 2, "10 reservations in pages of 5 took %d requests" % pages)
        check(all(i["sweep"] == "s1" for i in got), "by tag: tags %s" % [i["sweep"] for i in got])

        # by id: an id EC2 does not know (yet) is left out, not an error
        rc, out, err = probe(env, "describe", ids[0], "i-0123456789abcdef0", ids[2])
        check(rc == 0 and sorted(i["id"] for i in json.loads(out)["instances"]) == sorted([ids[0], ids[2]]),
              "by id: rc %d %s %s" % (rc, out, err))

        # terminate, with an id EC2 does not know among them: all of ours end
        rc, out, err = probe(env, "terminate", *(ids + ["i-0123456789abcdef0"] + more))
        check(rc == 0, "terminate: rc %d %s" % (rc, err))
        states = ec2("print(json.dumps({i['InstanceId']: i['State']['Name'] for r in "
                     "client.describe_instances(InstanceIds=args)['Reservations'] for i in r['Instances']}))",
                     *(ids + more))
        check(all(v in ("shutting-down", "terminated") for v in states.values()) and len(states) == 11,
              "after terminate: %s" % states)
        rc, out, err = probe(env, "describe", *ids)
        check(rc == 0 and all(i["state"] in ("shutting-down", "terminated") for i in json.loads(out)["instances"]),
              "our describe after terminate: %s %s" % (out, err))

        # a wrong secret key: refused by moto's signature check
        bad = dict(env, AWS_SECRET_ACCESS_KEY=m.secret_key + "x")
        rc, out, err = probe(bad, "run", "g5.xlarge", ami, "1", "dry-run")
        check(rc == 1 and "SignatureDoesNotMatch" in err or "AuthFailure" in err, "wrong key: rc %d %s" % (rc, err))


def fake_tests():
    with tempfile.TemporaryDirectory() as tmp:
        fake = FakeAws("--ssm-parameter", DLAMI + "=ami-0dlami0000000001", "--timeout", "120")
        try:
            env = dict(os.environ)
            for k in [k for k in env if k.startswith("AWS_")]:
                del env[k]
            env.update({"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY":
                        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_REGION": "eu-west-1",
                        "AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_DISABLED": "true",
                        "HOME": tmp, "AWS_MAX_ATTEMPTS": "3"})
            rc, out, err = probe(env, "ssm", DLAMI)
            check(rc == 0 and out.strip() == "ami-0dlami0000000001", "ssm: rc %d %r %s" % (rc, out, err))
            rc, out, err = probe(env, "ssm", DLAMI.replace("22.04", "20.04"))
            check(rc == 4 and "does not exist in eu-west-1" in err, "ssm missing: rc %d %s" % (rc, err))

            # placement groups: created tagged (a retried create is not an error), found by tag, deleted
            check(probe(env, "pg-create", "instbench-s1-1", "instbench:sweep=s1", "instbench:candidate=4xg5.xlarge")[0] == 0,
                  "pg-create")
            check(probe(env, "pg-create", "instbench-s1-2", "instbench:sweep=s1")[0] == 0, "pg-create 2")
            check(probe(env, "pg-create", "other", "instbench:sweep=s2")[0] == 0, "pg-create other")
            rc, out, err = probe(env, "pg-create", "instbench-s1-1", "instbench:sweep=s1")
            check(rc == 0, "a duplicate create: rc %d %s" % (rc, err))
            rc, out, err = probe(env, "pg-tag", "instbench:sweep", "s1")
            check(rc == 0 and sorted(g["name"] for g in json.loads(out)["groups"]) == ["instbench-s1-1", "instbench-s1-2"]
                  and all(g["state"] == "available" for g in json.loads(out)["groups"]), "pg by tag: %s %s" % (out, err))
            check(probe(env, "pg-delete", "instbench-s1-1")[0] == 0, "pg-delete")
            rc, out, err = probe(env, "pg-delete", "instbench-s1-1")
            check(rc == 0, "deleting a deleted group: rc %d %s" % (rc, err))
            rc, out, err = probe(env, "pg-tag", "instbench:sweep", "s1")
            check(rc == 0 and [g["name"] for g in json.loads(out)["groups"]] == ["instbench-s1-2"], "after delete: %s" % out)
            check(fake.stats()["signature_failures"] == 0, "signature failures")

            # a launch whose first answer is lost (500): the retry carries the same ClientToken
            fake.control(faults=[{"kind": "500", "count": 1, "service": "ec2"}], reset_stats=True)
            rc, out, err = probe(env, "run", "g5.xlarge", "ami-1", "2", "token=sweep-s1-c0-try1")
            st = fake.stats()
            check(rc == 0 and len(json.loads(out)["instances"]) == 2, "retried launch: rc %d %s %s" % (rc, out, err))
            check(st["client_tokens"] == ["sweep-s1-c0-try1"] * 2, "tokens sent: %s" % st["client_tokens"])

            # DryRun refused: AWS's code comes back, and the error names the call
            fake.control(faults=[{"kind": "denied", "count": 1, "service": "ec2"}])
            rc, out, err = probe(env, "run", "g5.xlarge", "ami-1", "1", "dry-run")
            check(rc == 1 and "code UnauthorizedOperation" in err and "RunInstances" in err,
                  "refused dry run: rc %d %s" % (rc, err))
        finally:
            fake.stop()


if MODE == "moto":
    moto_tests()
else:
    fake_tests()
sys.exit(1 if failures else 0)
