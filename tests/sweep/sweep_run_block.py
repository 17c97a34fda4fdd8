#!/usr/bin/python3
"""`instbench sweep run` with a candidate in a Capacity Block the account already bought, against the
fault-injecting fake EC2 (tests/sweep/fake_ec2.py; DescribeCapacityReservations from the fake AWS's
--capacity-reservations file).  Read from the fake's own record and the state file: the block's
candidate launches once, in the block's zone only (another zone's capacity error does not move it),
with InstanceMarketOptions.MarketType=capacity-block and the reservation as its target, the other
candidate as ever; both results are ranked, everything is terminated; the report counts the block
as committed, apart from the sweep's cost.  Usage: sweep_run_block.py INSTBENCH"""
import datetime
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep_run_faults as srf  # noqa: E402
from testlib import check, failures  # noqa: E402

CR = "cr-0a1b2c3d4e5f60718"
srf.ACCEL["p4d.24xlarge"] = (8, "NVIDIA A100")


def main():
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    home = tempfile.mkdtemp(prefix="sweep-block-")
    path = os.path.join(home, "reservations.json")
    with open(path, "w") as f:
        json.dump([{"id": CR, "region": srf.REGION, "instance_type": "p4d.24xlarge", "availability_zone": "us-east-1c",
                    "total": 2, "available": 2, "state": "active", "reservation_type": "capacity-block",
                    "start": (now - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "end": (now + datetime.timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M:%SZ")}], f)
    fake = srf.FakeEc2("--s3-bucket", "%s:%s" % (srf.BUCKET, srf.REGION), "--prices", srf.PRICES,
                       "--capacity-reservations", path)
    try:
        specs = ["2xp4d.24xlarge:capacity-block", "g5.xlarge:on-demand"]
        # zone a has no p4d capacity and b has: a block candidate tries neither (its block is in c)
        fake.sweep(capacity={"p4d.24xlarge@us-east-1a": "InsufficientInstanceCapacity"})
        rc, out, err, sid, rec = srf.sweep(fake, home, specs, "--capacity-reservation", CR, "--format", "json",
                                           deliver={specs[0]: ("result", 4000.0), specs[1]: ("result", 300.0)})
        if not check(rc == 0 and sid, "exit 0: rc %d\n%s" % (rc, err[-3000:])):
            return
        block = [l for l in rec["launches"] if l["InstanceType"] == "p4d.24xlarge"]
        # p4d has EFA: the subnet is each interface's (NetworkInterface.N.SubnetId), none at the top
        check(len(block) == 1 and block[0].get("NetworkInterface.1.SubnetId") == "subnet-us-east-1c" and
              "SubnetId" not in block[0] and block[0].get("NetworkInterface.5.InterfaceType") == "efa-only" and
              block[0].get("InstanceMarketOptions.MarketType") == "capacity-block" and
              block[0].get("CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId") == CR and
              block[0]["MinCount"] == "2" and not any(k.startswith("InstanceMarketOptions.SpotOptions") for k in block[0]),
              "the block's launch: %r" % block)
        other = [l for l in rec["launches"] if l["InstanceType"] == "g5.xlarge"]
        check(len(other) == 1 and not any(k.startswith(("InstanceMarketOptions", "CapacityReservation")) for k in other[0]),
              "the other candidate's launch: %r" % other)
        check(not srf.alive(rec) and len(rec["instances"]) == 3, "everything terminated: %r" % srf.alive(rec))
        check(not rec["addresses"] and not rec["security_groups"], "the Elastic IPs released and the EFA group deleted: "
              "%r %r" % (rec["addresses"], rec["security_groups"]))
        st = srf.state_file(home, sid)
        c = next(c for c in st["candidates"] if c["spec"] == specs[0])
        check(c["market"] == "capacity-block" and c["capacity_reservation"] == CR and
              c["capacity_reservation_az"] == "us-east-1c" and c["outcome"] == "result" and
              not c["placement_group"], "state (no placement group of ours in a block): %r" % c)
        check(not rec["placement_groups"] and "Placement.GroupName" not in block[0], "placement groups: %r" %
              rec["placement_groups"])
        check("committed: %s ran in Capacity Block %s" % (specs[0], CR) in err, "report: %s" % err[-2000:])
        ranked = json.loads(out) if out.strip().startswith("{") else {}
        check(len([r for r in ranked.get("rows", []) if r.get("rank")]) >= 2, "both results ranked: %s" % out[:500])
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


main()
if not failures:
    print("ok: sweep run into a Capacity Block")
sys.exit(1 if failures else 0)
