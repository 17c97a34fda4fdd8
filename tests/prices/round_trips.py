#!/usr/bin/python3
"""One command's requests in flight together, on reused connections (issue 22), counted by the fake
AWS (tests/fakes/aws_fake_server.py): the connections it accepted, the requests it answered and
"sequential_rounds", the longest chain of requests each sent after the previous one's answer, i.e.
the round trips instbench made one after another.  Those counts do not depend on the machine's
load, so they are the checks; the wall time is printed, never bounded (machines differ).

`prices` for 10 types x 2 regions asks 20 GetProducts (type x region), 2 DescribeSpotPriceHistory
(one per region, all types), 20 GetSpotPlacementScores (per type, by region and by AZ) and 2
DescribeAvailabilityZones: none depends on another, so the floor is one round trip.  With spot
history forced onto pages of 5 entries (--page-size 5), its NextToken chain is the only dependent chain: the rounds
are its pages, and every page after the first goes out on a connection an earlier request opened.

usage: round_trips.py INSTBENCH PRICE_DATA_DIR
"""
import csv
import json
import os
import subprocess
import sys
import time

sys.path[:0] = [os.path.join(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), d)
                for d in ("lib", "fakes")]
import testlib  # noqa: E402
from testlib import FakeAws, check, fail, scratch_dir  # noqa: E402

INSTBENCH, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
CSV = os.path.join(DATA, "aws-accelerated-prices.csv")
TMP = scratch_dir("instbench-round-trips-")
REGIONS = ["us-east-1", "us-west-2"]


def types_priced_everywhere(n):
    """N instance types the CSV prices (on-demand and spot) in every region of REGIONS."""
    seen = {}
    with open(CSV, newline="") as f:
        for row in csv.DictReader(f):
            if row["on_demand_usd_per_hour"] and row["spot_usd_per_hour"]:
                seen.setdefault(row["instance_type"], set()).add(row["region"])
    types = sorted(t for t, rs in seen.items() if set(REGIONS) <= rs)
    if len(types) < n:
        fail("the CSV prices only %d types in %s" % (len(types), REGIONS))
    return types[:n]


TYPES = types_priced_everywhere(10)


def run(ep, regions, *extra):
    """prices --source live against EP; (wall seconds, the server's counts for this run alone)."""
    ep.control(reset_stats=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=TMP, XDG_CACHE_HOME=os.path.join(TMP, "cache"), AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=os.path.join(TMP, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(TMP, "none"),
               AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
               AWS_ENDPOINT_URL=ep.url, NO_COLOR="1")
    t0 = time.monotonic()
    p = subprocess.run([INSTBENCH, "prices", "--instance-types", ",".join(TYPES), "--region", ",".join(regions),
                        "--source", "live", "--format", "json", *extra], env=env, capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        fail("prices exited %d:\n%s" % (p.returncode, p.stderr[-2000:]))
    rows = json.loads(p.stdout)["prices"]
    check(len(rows) == len(TYPES) * len(regions) and
          all(r["on_demand"]["source"] == "live" and r["spot"]["source"] == "live" for r in rows),
          "not every row priced live: %r" % [(r["instance_type"], r["region"]) for r in rows])
    st = ep.stats()
    st["connections"] -= 1   # the /__stats request's own connection
    return wall, st


def case_one_round():
    """10 types x 2 regions, nothing paginated: 44 independent requests, one round trip."""
    latency = 0.5   # long enough that a loaded machine's slow accepts still overlap
    ep = FakeAws("--prices", CSV, "--latency-ms", str(int(latency * 1000)), "--timeout", "120")
    try:
        wall, st = run(ep, REGIONS)
    finally:
        ep.stop()
    ops = st["by_operation"]
    want = {"GetProducts": 20, "DescribeSpotPriceHistory": 2, "GetSpotPlacementScores": 20,
            "DescribeAvailabilityZones": 2}
    check(ops == want, "requests per operation %r, want %r" % (ops, want))
    check(st["sequential_rounds"] == 1, "%d round trips one after another for %d independent requests "
          "(max %d in flight): want 1" % (st["sequential_rounds"], st["requests"], st["max_in_flight"]))
    print("one round: %d requests, %d connections, %d sequential round trips, %.3f s at %.0f ms"
          % (st["requests"], st["connections"], st["sequential_rounds"], wall, latency * 1000))


def case_pages_reuse_connections():
    """Spot history on pages of 5 entries: its NextToken chain is the only sequence of dependent
    calls, so the rounds are its pages, and the later pages reuse connections (connections stay at
    the first round's requests, below the request count)."""
    ep = FakeAws("--prices", CSV, "--latency-ms", "300", "--timeout", "120")
    try:
        _, st = run(ep, REGIONS[:1], "--page-size", "5")   # MaxResults 5: DescribeSpotPriceHistory's least
    finally:
        ep.stop()
    ops = st["by_operation"]
    pages = ops.get("DescribeSpotPriceHistory", 0)
    first_round = 10 + 1 + 20 + 1   # GetProducts, spot history page 1, scores, zones
    check(pages >= 3, "spot history took %d pages: the test wants a chain of several" % pages)
    check(st["requests"] == first_round + pages - 1, "requests %r" % ops)
    check(st["sequential_rounds"] == pages, "%d sequential round trips, want %d (the spot history pages)"
          % (st["sequential_rounds"], pages))
    check(st["connections"] < st["requests"], "%d connections for %d requests: none reused"
          % (st["connections"], st["requests"]))
    check(st["connections"] <= first_round, "%d connections: more than the %d requests of the first round"
          % (st["connections"], first_round))
    print("pages: %d requests, %d connections, %d sequential round trips (%d spot history pages)"
          % (st["requests"], st["connections"], st["sequential_rounds"], pages))


for name, case in (("one_round", case_one_round), ("pages_reuse_connections", case_pages_reuse_connections)):
    testlib.label = name
    case()
sys.exit(1 if testlib.failures else 0)
