#!/usr/bin/env python3
"""rank's PLACEMENT asks AWS the question each row is (issue 31), against the fake AWS
(tests/fakes/aws_fake_server.py: moto has no GetSpotPlacementScores), which refuses any parameter
EC2 does not take and records every request it accepted:

- a 4-node spot row asks TargetCapacity=4, TargetCapacityUnitType=units, SingleAvailabilityZone=
  true, RegionName.1 = its region, and its score is the fake's score for that question in the zone
  the row is priced in (recomputed here from the fake's published rule, the zone's ID read from
  DescribeAvailabilityZones through botocore), with placement_target_capacity 4 and
  placement_zone that zone; every request equals, field by field, what botocore's EC2 serializer
  writes for the same parameters;
- a 1-node row keeps the prices' score (TargetCapacity 1), and the table states AWS's caveat on a
  single type;
- --placement-pool adds the accepted types to every spot row's question (sent once each, the
  row's own type not twice), and the scores follow;
- without live AWS (--source snapshot) a multi-node row has no score rather than a 1-instance one,
  and the table leaves out the PLACEMENT column no row fills;
- with EC2 refusing, why there are no scores is said once;
- a malformed pool type is a usage error.
Usage: rank_placement.py INSTBENCH DATA_DIR"""
import csv
import hashlib
import json
import os
import shutil
import sys
import tempfile

import botocore.session
from botocore import serialize

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import FakeAws, check, failures, require  # noqa: E402

BIN, DATA = (os.path.abspath(a) for a in sys.argv[1:3])
CSV = os.path.join(DATA, "aws-accelerated-prices.csv")
AK, SK = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
REGION, TYPE, POOL = "us-east-1", "g5.xlarge", ["g5.2xlarge", "g4dn.xlarge"]


def fake_score(types, region, az_id, capacity):
    """The fake's published rule (its module docstring): 1 + sha256(sorted types|region|az[|cap=N]) mod 10."""
    key = ",".join(sorted(types)) + "|" + region + "|" + az_id + ("|cap=%d" % capacity if capacity != 1 else "")
    return 1 + int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10


def botocore_body(params):
    model = botocore.session.get_session().get_service_model("ec2")
    req = serialize.create_serializer("ec2").serialize_to_request(params, model.operation_model("GetSpotPlacementScores"))
    return {k: str(v) for k, v in req["body"].items()}


spot = {}
with open(CSV, newline="") as f:
    for row in csv.DictReader(f):
        if row["instance_type"] == TYPE and row["region"] == REGION and row["spot_usd_per_hour"]:
            spot[row["availability_zone"]] = float(row["spot_usd_per_hour"])
require(len(spot) >= 2, "the CSV has no spot zones for %s in %s" % (TYPE, REGION))

tmp = tempfile.mkdtemp(prefix="instbench-placement-")
res = os.path.join(tmp, "results")
fx.write_json(os.path.join(res, "one.json"), fx.result(TYPE, REGION, 1, 1, "NVIDIA A10G", 200.0))
fx.write_json(os.path.join(res, "four.json"), fx.result(TYPE, REGION, 4, 1, "NVIDIA A10G", 760.0, host="node1"))

ep = FakeAws("--prices", CSV)
try:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=os.path.join(tmp, "home"), XDG_CACHE_HOME=os.path.join(tmp, "cache"),
               AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.path.join(tmp, "none"),
               AWS_SHARED_CREDENTIALS_FILE=os.path.join(tmp, "none"), AWS_ACCESS_KEY_ID=AK,
               AWS_SECRET_ACCESS_KEY=SK, AWS_ENDPOINT_URL=ep.url, NO_COLOR="1", INSTBENCH_AWS_BACKOFF_BASE="0.05")

    # this account's zone names, as AWS (the fake) tells them to anyone: name -> ID
    ec2 = botocore.session.get_session().create_client("ec2", region_name=REGION, endpoint_url=ep.url,
                                                       aws_access_key_id=AK, aws_secret_access_key=SK)
    zone_id = {z["ZoneName"]: z["ZoneId"] for z in ec2.describe_availability_zones()["AvailabilityZones"]}

    def rank(*extra):
        rc, out, err = fx.run(BIN, [res, "--market", "spot", "--source", "live", "--format", "json", *extra], env=env)
        require(rc == 0, "rank %s: exit %d: %s" % (extra, rc, err[-600:]))
        rows = {r["nodes"]: r for r in json.loads(out)["rows"] if r.get("rank")}
        return rows, err

    def requests():
        return ep.call("/__placement")["requests"]

    def check_request(req, types, capacity, where):
        want = botocore_body({"InstanceTypes": types, "TargetCapacity": capacity, "TargetCapacityUnitType": "units",
                              "SingleAvailabilityZone": True, "RegionNames": [REGION], "MaxResults": 1000})
        got = {k: v for k, v in req.items() if k != "NextToken"}
        check(got == want, "%s: request %s, botocore writes %s" % (where, got, want))

    def check_row(row, types, capacity, where):
        az = row.get("spot_az")
        check(row.get("placement_zone") == az, "%s: placement_zone %s, priced in %s" % (where, row.get("placement_zone"), az))
        check(row.get("placement_target_capacity") == capacity and row.get("placement_instance_types") == len(types),
              "%s: capacity %s types %s" % (where, row.get("placement_target_capacity"),
                                             row.get("placement_instance_types")))
        az_id = zone_id.get(az, az if az in zone_id.values() else None)   # prices may name zones by ID
        if check(az_id, "%s: priced zone %s is none of %s" % (where, az, zone_id)):
            want = fake_score(types, REGION, az_id, capacity)
            check(row.get("placement_score") == want, "%s: score %s, want %d" % (where, row.get("placement_score"), want))

    # ---- no pool: the 4-node row asks for 4 instances in one zone; the 1-node row keeps the prices' ----
    rows, _ = rank()
    reqs = [r for r in requests() if r.get("TargetCapacity") == "4"]
    if check(len(reqs) == 1, "4-node row: %d requests with TargetCapacity=4: %s" % (len(reqs), requests())):
        check_request(reqs[0], [TYPE], 4, "4 nodes")
    if check(4 in rows and 1 in rows, "rows: %s" % sorted(rows)):
        check_row(rows[4], [TYPE], 4, "4 nodes")
        check(rows[1].get("placement_target_capacity") in (1, None) and rows[1].get("placement_instance_types") in (1, None),
              "1 node: %s" % rows[1])
    rc, table, err = fx.run(BIN, [res, "--market", "spot", "--source", "live", "--format", "table", "--wide", "--explain"],
                            env=env)
    check(rc == 0 and "always low" in table and "--placement-pool" in table and "one zone" in table,
          "table: the placement caveats missing: %s" % table[-1200:])

    # ---- a pool: every spot row asks with the accepted types, its own not twice ----
    n_before = len(requests())
    rows, _ = rank("--placement-pool", ",".join(POOL + [TYPE]))
    new = requests()[n_before:]
    types = [TYPE] + POOL
    for cap in (1, 4):
        # (the prices' own per-type questions, InstanceType.1 alone, go out too)
        mine = [r for r in new if r.get("TargetCapacity") == str(cap) and "InstanceType.2" in r]
        if check(len(mine) == 1, "pool, %d node(s): %d requests: %s" % (cap, len(mine), new)):
            check_request(mine[0], types, cap, "pool, %d node(s)" % cap)
        if cap in rows:
            check_row(rows[cap], types, cap, "pool, %d node(s)" % cap)
    rc, table, err = fx.run(BIN, [res, "--market", "spot", "--source", "live", "--format", "table", "--wide",
                                  "--placement-pool", ",".join(POOL)], env=env)
    check(rc == 0 and "always low" not in table, "table with a pool of 3: still the single-type caveat: %s"
          % table[-800:])

    # ---- no live AWS: a multi-node row has no score rather than a 1-instance one ----
    rc, out, err = fx.run(BIN, [res, "--market", "spot", "--source", "snapshot", "--format", "json", "-v"], env=env)
    if check(rc == 0, "snapshot: exit %d: %s" % (rc, err[-400:])):
        four = [r for r in json.loads(out)["rows"] if r.get("nodes") == 4 and r.get("rank")]
        check(four and four[0]["placement_score"] is None and four[0]["placement_target_capacity"] is None,
              "snapshot: 4-node row %s" % (four[0] if four else None))
        check("asked live only" in err, "snapshot: -v does not say why: %s" % err[-400:])

    # ---- the table has PLACEMENT only when a row has a score: from the snapshot (no scores, as the
    # JSON above says) it read "?" on every spot row and "-" on the others; live it is there ----
    def header(table):
        lines = table.splitlines()
        return next((lines[i] for i in range(len(lines) - 1) if lines[i + 1].startswith("----")), "")
    rc, table, err = fx.run(BIN, [res, "--source", "snapshot", "--format", "table", "--explain"], env=env)
    check(rc == 0 and "SPOT AZ" in header(table) and "PLACEMENT" not in header(table) and
          "no spot row has one" in table, "snapshot table: an empty PLACEMENT column, or no word why: %s" % table)
    rc, table, err = fx.run(BIN, [res, "--market", "spot", "--source", "live", "--format", "table"], env=env)
    check(rc == 0 and "PLACEMENT" in header(table), "live table: no PLACEMENT column: %s" % table[:600])

    # ---- EC2 refusing: the scores' note is said once, not by the fetch and again by rank ----
    ep.control(clear_faults=True, faults=[{"kind": "denied", "count": 1000, "service": "ec2"}])
    rc, out, err = fx.run(BIN, [res, "--market", "spot", "--format", "json"], env=env)
    said = [l for l in err.splitlines() if "placement scores unavailable" in l]
    check(rc == 0 and len(said) == 1, "EC2 denied: exit %d, the scores' note %d times (want once):\n%s" %
          (rc, len(said), err[-1200:]))
    ep.control(clear_faults=True)

    # ---- a malformed pool type ----
    rc, out, err = fx.run(BIN, [res, "--placement-pool", "g5.xlarg"], env=env)
    check(rc == 2 and "--placement-pool" in err, "--placement-pool g5.xlarg: exit %d: %s" % (rc, err[-300:]))
finally:
    ep.stop()
    shutil.rmtree(tmp, ignore_errors=True)

print("rank_placement: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
