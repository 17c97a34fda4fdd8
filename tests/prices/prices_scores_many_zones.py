#!/usr/bin/python3
"""`instbench prices --market spot` for g5.xlarge and g6.xlarge against an endpoint
(tests/prices/hostile_ec2.py) whose spot history names Z zones of g5.xlarge in us-east-1 by zone
ID, none of g6.xlarge, and whose placement scores name each zone, in the reverse order:
- Z = 64, the most a prices file holds (docs/formats.md): every zone gets the score the endpoint
  gave it, the row the region's score, and a run from the cache shows the same zones and scores;
- Z = 65 and 32,000: more zones than a prices file (the cache's too) holds and any region has:
  --source live exits 1 naming the count, the type and the region (65), or that the region's
  answer holds more than 64 zones for each type asked (32,000, said on its first page), and caches
  nothing; --source auto warns so and shows the snapshot's spot price;
- a zone named for another region (eu-west-1a, the cheapest) is no zone of us-east-1's row: left
  out, beside one named for us-east-1 (us-east-1a), which stays.
Expected scores are the ones the endpoint was told to serve; the snapshot's price is read from
configs/prices-snapshot.json.

usage: prices_scores_many_zones.py INSTBENCH SOURCE_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_ec2 as H  # noqa: E402  (puts tests/lib and tests/fakes on the path)
from hostile_ec2 import testlib  # noqa: E402

INSTBENCH, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = testlib.scratch_dir("instbench-scores-many-zones-")
STATE = {"zones": 0}
REGION_SCORE = 7
MOST = 64   # zones of one type in one region a prices file holds (docs/formats.md)


def zone(i):
    return "use1-az%d" % (i + 1)


def score(i):
    return 1 + (i * 7) % 10


class Handler(testlib.ScriptedHandler):
    def do_POST(self):
        f, target = H.form(self)
        n, action = STATE["zones"], f.get("Action")
        if action == "DescribeSpotPriceHistory":
            items = [{"instanceType": "g5.xlarge", "spotPrice": "0.%06d" % (100000 + i % 1000),
                      "timestamp": "2026-11-21T23:00:00.000Z", "availabilityZone": zone(i)} for i in range(n)]
            items += [{"instanceType": "g5.xlarge", "spotPrice": usd, "timestamp": "2026-11-21T23:00:00.000Z",
                       "availabilityZone": z} for z, usd in STATE.get("extra", ())]
            return self.answer(200, H.spot_page(items, f.get("NextToken")))
        if action == "GetSpotPlacementScores":
            if f.get("SingleAvailabilityZone") == "true":
                items = [{"region": "us-east-1", "availabilityZoneId": zone(i), "score": score(i)}
                         for i in reversed(range(n))]
            else:
                items = [{"region": "us-east-1", "score": REGION_SCORE}]
            return self.answer(200, H.scores_page(items, f.get("NextToken")))
        if action == "DescribeAvailabilityZones":
            return self.answer(200, H.zones_page([]))
        self.answer(400, "<Response><Errors><Error><Code>InvalidAction</Code></Error></Errors></Response>")


def run(url, n, source, home):
    """instbench at N zones from SOURCE, its cache in HOME: the process and its JSON record."""
    STATE["zones"] = n
    p = subprocess.run([INSTBENCH, "prices", "--instance-types", "g5.xlarge,g6.xlarge", "--region", "us-east-1",
                        "--market", "spot", "--source", source, "--format", "json"],
                       env=H.prices_env(url, os.path.join(TMP, home)), capture_output=True, text=True, timeout=300)
    testlib.check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr, "sanitizer: %s" % p.stderr[-3000:])
    try:
        return p, [r for r in json.loads(p.stdout)["prices"] if r["instance_type"] == "g5.xlarge"][0]
    except (ValueError, KeyError, IndexError):
        return p, {}


def cached(home):
    return [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(TMP, home, "cache")) for f in fs]


with open(os.path.join(SRC, "configs", "prices-snapshot.json")) as f:
    SNAP = [{z["availability_zone"]: z["usd_per_hour"] for z in r["spot"]["zones"]} for r in json.load(f)["prices"]
            if r["instance_type"] == "g5.xlarge" and r["region"] == "us-east-1"][0]

srv, url = testlib.scripted_server(Handler)
try:
    # as many zones as a prices file holds: each scored, and the cache shows what it was given
    want = {zone(i): score(i) for i in range(MOST)}
    for source in ("live", "cache"):
        p, rec = run(url, MOST, source, "most")
        zones = rec.get("spot", {}).get("zones", [])
        got = {z["availability_zone"]: z.get("placement_score") for z in zones}
        testlib.check(p.returncode == 0 and len(zones) == MOST and got == want,
                      "%d zones from %s: rc %d, %d listed, %d without the score served: %s" %
                      (MOST, source, p.returncode, len(zones), sum(got.get(z) != want[z] for z in want), p.stderr))
        testlib.check(rec.get("placement_score") == REGION_SCORE and rec["spot"].get("source") == source,
                      "%d zones from %s: the row's score %r (served %d), source %r" %
                      (MOST, source, rec.get("placement_score"), REGION_SCORE, rec.get("spot", {}).get("source")))
    # more: refused, named, not cached; auto shows the snapshot's price instead
    for n in (MOST + 1, 32000):
        p, rec = run(url, n, "live", "z%d" % n)
        said = ("%d zones for g5.xlarge in us-east-1, more than the %d" % (n, MOST) if n == MOST + 1 else
                "more than %d (instance type, zone) prices in us-east-1 for 2 instance types" % (2 * MOST))
        testlib.check(p.returncode == 1 and not rec and said in p.stderr and
                      len(p.stderr.splitlines()) == 1, "%d zones, live: rc %d: %s" % (n, p.returncode, p.stderr))
        testlib.check(not cached("z%d" % n), "%d zones: cached %r" % (n, cached("z%d" % n)))
        p, rec = run(url, n, "auto", "z%d" % n)
        spot = rec.get("spot", {})
        got = {z["availability_zone"]: z["usd_per_hour"] for z in spot.get("zones", [])}
        testlib.check(p.returncode == 0 and said in p.stderr and "warning" in p.stderr and
                      spot.get("source") == "snapshot" and got == SNAP,
                      "%d zones, auto: rc %d, spot from %r %r, wanted the snapshot's %r: %s" %
                      (n, p.returncode, spot.get("source"), got, SNAP, p.stderr))
    # a zone of another region prices none of this one
    STATE["extra"] = [("eu-west-1a", "0.000100"), ("us-east-1a", "0.200000")]
    p, rec = run(url, 3, "live", "foreign")
    got = {z["availability_zone"]: z["usd_per_hour"] for z in rec.get("spot", {}).get("zones", [])}
    want = {zone(0): 0.1, zone(1): 0.100001, zone(2): 0.100002, "us-east-1a": 0.2}
    testlib.check(p.returncode == 0 and got == want and rec["spot"].get("min_usd_per_hour") == 0.1,
                  "another region's zone: rc %d, zones %r, wanted %r: %s" % (p.returncode, got, want, p.stderr))
finally:
    srv.shutdown()
if testlib.failures:
    sys.exit(1)
print("ok")
