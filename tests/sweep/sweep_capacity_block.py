#!/usr/bin/python3
"""`instbench sweep plan --capacity-reservation`: a candidate on the capacity-block market launches
into a Capacity Block the account already bought.  Against the fake AWS (tests/fakes/aws_fake_server.py,
signatures checked with botocore; moto has no Capacity Reservations): DescribeCapacityReservations
and the RunInstances DryRun are compared field by field with botocore's serializer for the same
operation and parameters; the plan counts the block as committed (nothing in the worst case) and
the other candidate's worst case is recomputed from configs/prices-snapshot.json; the JSON plan is
validated against schemas/sweep-plan-v1.json.  Refused with exit 2: a reservation that is not a
Capacity Block, one not active yet (with its start), another type, too few free instances,
--max-minutes past the block's end, an unknown or malformed ID, a block candidate without one.
Usage: sweep_capacity_block.py INSTBENCH"""
import datetime
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import FakeAws, availability_zone, fail, require as check, scratch_dir, usd  # noqa: E402
from botocore_ref import botocore_form  # noqa: E402

BIN = sys.argv[1]
AK, SK = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
DLAMI = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
AMI = "ami-0123456789abcdef0"
SNAP = json.load(open(os.path.join(ROOT, "configs", "prices-snapshot.json")))
SCHEMA = json.load(open(os.path.join(ROOT, "schemas", "sweep-plan-v1.json")))
CR = "cr-0a1b2c3d4e5f60718"


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    res = [
        {"id": CR, "region": "us-east-1", "instance_type": "p4d.24xlarge", "availability_zone": "us-east-1b",
         "total": 2, "available": 2, "state": "active", "reservation_type": "capacity-block",
         "start": iso(now - datetime.timedelta(hours=2)), "end": iso(now + datetime.timedelta(hours=5))},
        {"id": "cr-00000000000000001", "region": "us-east-1", "instance_type": "p4d.24xlarge",
         "availability_zone": "us-east-1a", "total": 2, "available": 2, "state": "active", "reservation_type": "default",
         "start": iso(now - datetime.timedelta(hours=2)), "end": iso(now + datetime.timedelta(days=30))},
        {"id": "cr-00000000000000002", "region": "us-east-1", "instance_type": "p4d.24xlarge",
         "availability_zone": "us-east-1a", "total": 2, "available": 2, "state": "scheduled",
         "reservation_type": "capacity-block", "start": iso(now + datetime.timedelta(days=3)),
         "end": iso(now + datetime.timedelta(days=4))},
        {"id": "cr-00000000000000003", "region": "us-east-1", "instance_type": "p4d.24xlarge",
         "availability_zone": "us-east-1a", "total": 2, "available": 1, "state": "active",
         "reservation_type": "capacity-block", "start": iso(now - datetime.timedelta(hours=1)),
         "end": iso(now + datetime.timedelta(days=1))},
    ]
    tmp = scratch_dir("instbench-sweep-cb-")
    path = os.path.join(tmp, "reservations.json")
    with open(path, "w") as f:
        json.dump(res, f)
    fake = FakeAws("--capacity-reservations", path, "--ssm-parameter", DLAMI + "=" + AMI, "--timeout", "120")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"), XDG_CACHE_HOME=os.path.join(tmp, "cache"),
                   AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK, AWS_ENDPOINT_URL=fake.url,
                   AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.path.join(tmp, "none"),
                   AWS_SHARED_CREDENTIALS_FILE=os.path.join(tmp, "none"), NO_COLOR="1")

        def plan(*args):
            p = subprocess.run([BIN, "sweep", "plan", "--region", "us-east-1", "--source", "snapshot"] + list(args),
                               env=env, capture_output=True, text=True, timeout=120)
            if "runtime error:" in p.stderr or "Sanitizer" in p.stderr:
                fail("sanitizer: %s" % p.stderr[-2000:])
            return p.returncode, p.stdout, p.stderr

        cands = "2xp4d.24xlarge:capacity-block,g5.xlarge"
        rc, out, err = plan("--candidates", cands, "--capacity-reservation", CR, "--max-minutes", "60",
                            "--max-cost", "5", "--format", "json")
        check(rc == 0, "plan: rc %d %s %s" % (rc, out, err))
        doc = json.loads(out)
        import jsonschema
        jsonschema.validate(doc, SCHEMA)
        block, other = doc["candidates"]
        check(block["market"] == "capacity-block" and block["capacity_reservation"] == CR and block["committed"] is True
              and block["worst_case_usd"] == 0 and block["usd_per_node_hour"] == 0 and
              block["capacity_reservation_az"] == "us-east-1b", "block line: %s" % block)
        rec = next(r for r in SNAP["prices"] if r["instance_type"] == "g5.xlarge" and r["region"] == "us-east-1")
        worst = rec["on_demand"]["usd_per_hour"] * (60 + 5) / 60.0   # its timer's 60 min + 5 of boot and halt
        check(math.isclose(other["worst_case_usd"], worst, rel_tol=1e-12) and other["committed"] is False and
              math.isclose(doc["total_usd"], worst, rel_tol=1e-12) and doc["verdict"] == "within",
              "the other line and the total: %s %s" % (other, doc["total_usd"]))

        # what was sent, as botocore would send it
        log = fake.stats()["requests_log"]
        described = [r for r in log if r["op"] == "DescribeCapacityReservations"]
        check(len(described) == 1 and described[0]["form"] ==
              botocore_form("DescribeCapacityReservations", {"CapacityReservationIds": [CR]}),
              "DescribeCapacityReservations: %s" % described)
        dry = [r for r in log if r["op"] == "RunInstances" and r["form"].get("InstanceType") == "p4d.24xlarge"]
        # p4d has EFA: the interfaces AWS's guide lays out (an ENA primary, efa-only beside it and on
        # cards 1-3), in the block's zone's default subnet with the default group
        subnet = "subnet-0fa4e%012x" % 2   # the fake's default subnet of us-east-1b
        nics = [{"NetworkCardIndex": c, "DeviceIndex": d, "InterfaceType": t, "SubnetId": subnet,
                 "Groups": ["sg-0fa4e0000000000001"], "DeleteOnTermination": True}
                for c, d, t in ((0, 0, "interface"), (0, 1, "efa-only"), (1, 0, "efa-only"), (2, 0, "efa-only"),
                                (3, 0, "efa-only"))]
        want = botocore_form("RunInstances", {
            "NetworkInterfaces": nics,
            "ImageId": AMI, "InstanceType": "p4d.24xlarge", "MinCount": 2, "MaxCount": 2,
            "InstanceInitiatedShutdownBehavior": "terminate",
            "InstanceMarketOptions": {"MarketType": "capacity-block"},
            "CapacityReservationSpecification": {"CapacityReservationTarget": {"CapacityReservationId": CR}},
            "TagSpecifications": [{"ResourceType": t, "Tags": [{"Key": "instbench:sweep", "Value": "plan"},
                                                               {"Key": "instbench:candidate",
                                                                "Value": "2xp4d.24xlarge:capacity-block"}]}
                                  for t in ("instance", "volume", "network-interface")],
            "DryRun": True})
        want["DryRun"] = want["DryRun"].lower()
        check(len(dry) == 1 and dry[0]["form"] == want, "RunInstances DryRun:\n %s\n botocore:\n %s" %
              (dry and dry[0]["form"], want))
        check(fake.stats()["signature_failures"] == 0, "signature failures")

        # the table: the block's line is committed, the total is the other candidate's
        rc, out, err = plan("--candidates", cands, "--capacity-reservation", CR, "--max-minutes", "60", "--format", "table")
        check(rc == 0 and "committed: 2xp4d.24xlarge:capacity-block runs in Capacity Block %s (us-east-1b" % CR in out
              and any(ln.startswith("TOTAL") and usd(worst) in ln for ln in out.splitlines()), "table:\n%s%s" % (out, err))

        # refused, exit 2, before anything else is asked
        for args, words in (
                (["--capacity-reservation", "cr-00000000000000001"], "is not a Capacity Block"),
                (["--capacity-reservation", "cr-00000000000000002"], "not active yet: it starts at " + res[2]["start"]),
                (["--capacity-reservation", "cr-00000000000000003"], "has 1 of its 2 instances free"),
                (["--capacity-reservation", "cr-0000000000000000f"], "no such reservation"),
                (["--capacity-reservation", "cr-xyz"], "is not a Capacity Reservation ID"),
                (["--capacity-reservation", CR, "--max-minutes", "400"], "runs past the end of Capacity Block")):
            rc, out, err = plan("--candidates", cands, *args)
            check(rc == 2 and words in err and out == "", "%s: rc %d %r" % (args, rc, err))
        rc, out, err = plan("--candidates", "2xg5.12xlarge:capacity-block", "--capacity-reservation", CR)
        check(rc == 2 and "holds p4d.24xlarge, not g5.12xlarge" in err, "another type: rc %d %s" % (rc, err))
        rc, out, err = plan("--candidates", "2xp4d.24xlarge:capacity-block")
        check(rc == 2 and "--capacity-reservation" in err, "no reservation: rc %d %s" % (rc, err))
        rc, out, err = plan("--candidates", "g5.xlarge", "--capacity-reservation", CR)
        check(rc == 2 and "exactly one candidate on the capacity-block market" in err, "no block candidate: %s" % err)
        print("ok: sweep plan --capacity-reservation")
    finally:
        fake.stop()


main()
