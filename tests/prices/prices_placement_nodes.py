#!/usr/bin/env python3
"""`prices --market spot --nodes N` asks the placement question N nodes are (issue 38), against the
fake AWS (tests/fakes/aws_fake_server.py: moto has no GetSpotPlacementScores), which refuses any
parameter EC2 does not take and records every request it accepted:

- a type priced for 4 nodes asks TargetCapacity=4, TargetCapacityUnitType=units,
  SingleAvailabilityZone=true for its region, once, and the request equals, field by field, what
  botocore's EC2 serializer writes for those parameters (the question rank asks of a 4-node row);
- its zones' scores and its PLACEMENT (the score of its cheapest zone, IN AZ) are the fake's
  scores for 4 instances in that zone, recomputed here from the fake's published rule with the
  zone's ID read through botocore; a type priced for 1 node keeps the region's 1-instance score;
- without live AWS (--source snapshot) a 4-node row has no score rather than a 1-instance one, and
  nothing is asked;
- the table says what PLACEMENT of a NODES > 1 row is.
Usage: prices_placement_nodes.py INSTBENCH DATA_DIR"""
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import botocore.session
from botocore import serialize

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import FakeAws, availability_zone, check, failures, require  # noqa: E402

BIN, DATA = (os.path.abspath(a) for a in sys.argv[1:3])
CSV = os.path.join(DATA, "aws-accelerated-prices.csv")
AK, SK = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
REGION, FOUR, ONE = "us-east-1", "g5.xlarge", "g5.12xlarge"


def fake_score(types, region, az_id, capacity):
    """The fake's published rule (its module docstring): 1 + sha256(sorted types|region[|az][|cap=N]) mod 10."""
    key = ",".join(sorted(types)) + "|" + region + ("|" + az_id if az_id else "") + (
        "|cap=%d" % capacity if capacity != 1 else "")
    return 1 + int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10


def botocore_body(params):
    model = botocore.session.get_session().get_service_model("ec2")
    req = serialize.create_serializer("ec2").serialize_to_request(params, model.operation_model("GetSpotPlacementScores"))
    return {k: str(v) for k, v in req["body"].items()}


zones = {}
with open(CSV, newline="") as f:
    for row in csv.DictReader(f):
        if row["instance_type"] == FOUR and row["region"] == REGION and row["spot_usd_per_hour"]:
            zones[row["availability_zone"]] = float(row["spot_usd_per_hour"])
require(len([z for z in zones if availability_zone(z)]) >= 2, "the CSV has no spot zones for %s in %s" % (FOUR, REGION))

tmp = tempfile.mkdtemp(prefix="instbench-prices-placement-")
ep = FakeAws("--prices", CSV)
try:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=os.path.join(tmp, "home"), XDG_CACHE_HOME=os.path.join(tmp, "cache"),
               AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.path.join(tmp, "none"),
               AWS_SHARED_CREDENTIALS_FILE=os.path.join(tmp, "none"), AWS_ACCESS_KEY_ID=AK,
               AWS_SECRET_ACCESS_KEY=SK, AWS_ENDPOINT_URL=ep.url, NO_COLOR="1", INSTBENCH_AWS_BACKOFF_BASE="0.05")
    ec2 = botocore.session.get_session().create_client("ec2", region_name=REGION, endpoint_url=ep.url,
                                                       aws_access_key_id=AK, aws_secret_access_key=SK)
    zone_id = {z["ZoneName"]: z["ZoneId"] for z in ec2.describe_availability_zones()["AvailabilityZones"]}

    def prices(*extra):
        args = [BIN, "prices", "--instance-types", "%s,%s" % (FOUR, ONE), "--nodes", "4,1", "--market", "spot",
                "--region", REGION] + list(extra)
        r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        return r.returncode, r.stdout, r.stderr

    def requests():
        return ep.call("/__placement")["requests"]

    rc, out, err = prices("--source", "live", "--format", "json")
    require(rc == 0, "prices --source live: exit %d: %s" % (rc, err[-800:]))
    recs = {r["instance_type"]: r for r in json.loads(out)["prices"]}
    reqs = [r for r in requests() if r.get("TargetCapacity") == "4"]
    want = botocore_body({"InstanceTypes": [FOUR], "TargetCapacity": 4, "TargetCapacityUnitType": "units",
                          "SingleAvailabilityZone": True, "RegionNames": [REGION], "MaxResults": 1000})
    if check(len(reqs) == 1, "4 nodes: %d requests with TargetCapacity=4: %s" % (len(reqs), requests())):
        got = {k: v for k, v in reqs[0].items() if k != "NextToken"}
        check(got == want, "4 nodes: request %s, botocore writes %s" % (got, want))
    check(not [r for r in requests() if r.get("InstanceType.1") == ONE and r.get("TargetCapacity") not in (None, "1")],
          "1 node: asked for more than one instance: %s" % requests())

    four = recs.get(FOUR, {})
    spot = four.get("spot", {})
    for z in spot.get("zones", []):
        zid = zone_id.get(z["availability_zone"], z["availability_zone"])
        check(z.get("placement_score") == fake_score([FOUR], REGION, zid, 4),
              "4 nodes: zone %s scored %s, want %d" % (z["availability_zone"], z.get("placement_score"),
                                                       fake_score([FOUR], REGION, zid, 4)))
    counted = [z for z in spot.get("zones", []) if availability_zone(z["availability_zone"])]
    cheapest = min(counted, key=lambda z: z["usd_per_hour"]) if counted else None
    if check(cheapest and cheapest["availability_zone"] == spot.get("min_availability_zone"),
             "4 nodes: cheapest zone %s, the row's %s" % (cheapest, spot.get("min_availability_zone"))):
        zid = zone_id.get(cheapest["availability_zone"], cheapest["availability_zone"])
        check(four.get("placement_score") == fake_score([FOUR], REGION, zid, 4),
              "4 nodes: PLACEMENT %s, want %d (4 instances in %s)" % (four.get("placement_score"),
                                                                       fake_score([FOUR], REGION, zid, 4), zid))
    check(recs.get(ONE, {}).get("placement_score") == fake_score([ONE], REGION, None, 1),
          "1 node: the region's 1-instance score: %s, want %d" % (recs.get(ONE, {}).get("placement_score"),
                                                                   fake_score([ONE], REGION, None, 1)))

    rc, table, err = prices("--source", "live", "--format", "table")
    check(rc == 0 and "NODES instances in one zone" in table, "table: PLACEMENT of NODES > 1 unexplained: %s" % table[-900:])

    n_before = len(requests())
    rc, out, err = prices("--source", "snapshot", "--format", "json")
    if check(rc == 0, "snapshot: exit %d: %s" % (rc, err[-400:])):
        recs = {r["instance_type"]: r for r in json.loads(out)["prices"]}
        f = recs.get(FOUR, {})
        check(f.get("placement_score") is None and all(z.get("placement_score") is None
                                                      for z in f.get("spot", {}).get("zones", [])),
              "snapshot: 4-node row scored: %s" % f)
    check(len(requests()) == n_before, "snapshot: placement asked: %s" % requests()[n_before:])
finally:
    ep.stop()
    shutil.rmtree(tmp, ignore_errors=True)

print("prices_placement_nodes: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
