#!/usr/bin/python3
"""`instbench prices --market spot` for every EC2 type of two regions (configs/prices-snapshot.json)
against an endpoint of the test's own (tests/prices/hostile_ec2.py) whose DescribeSpotPriceHistory
answer is a history, not one price per zone: each (type, zone) priced one to three times at
different times, the items shuffled, paged at --page-size 100, with items of a type not asked and of
a zone of another region among them.  Each record's zones and lowest price are recomputed here as
docs/usage.md and docs/formats.md define them: the latest price per (type, zone), zones of the
record's region only, `spot.min_usd_per_hour` the lowest of them with its zone; a type with no item
has no zones.  Each region's answer is read by type (fill_spot), so this holds the reading of many
types from one answer, out of order, to that definition.

usage: prices_spot_many_types.py INSTBENCH SOURCE_DIR
"""
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_ec2 as H  # noqa: E402  (puts tests/lib and tests/fakes on the path)
from hostile_ec2 import testlib  # noqa: E402

INSTBENCH, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = testlib.scratch_dir("instbench-spot-many-types-")
REGIONS = ("us-east-1", "us-east-2")
PAGE = 100
RNG = random.Random(20261129)
STATE = {"requests": 0}


def history(types):
    """Per region: the items of its answer, shuffled, and what they say: {(type, zone): [(time, price)]}."""
    out = {}
    cents = iter(RNG.sample(range(1000, 999999), 20000))   # distinct prices: the lowest has one zone
    for region in REGIONS:
        items, said = [], {}
        for t in types:
            if RNG.random() < 0.15:
                continue   # no spot price of this type here
            for z in RNG.sample("abcdef", RNG.randint(1, 6)):
                for hour in RNG.sample(range(24), RNG.randint(1, 3)):
                    said.setdefault((t, region + z), []).append(("2026-11-21T%02d:15:00.000Z" % hour,
                                                                 "0.%06d" % next(cents)))
        for (t, zone), prices in said.items():
            items += [{"instanceType": t, "availabilityZone": zone, "timestamp": ts, "spotPrice": p}
                      for ts, p in prices]
        items += [{"instanceType": "x9z.unasked", "availabilityZone": region + "a", "timestamp":
                   "2026-11-21T23:15:00.000Z", "spotPrice": "0.000100"},
                  {"instanceType": types[0], "availabilityZone": "eu-west-1a", "timestamp":
                   "2026-11-21T23:15:00.000Z", "spotPrice": "0.000200"}]
        RNG.shuffle(items)
        out[region] = (items, said)
    return out


class Handler(testlib.ScriptedHandler):
    def do_POST(self):
        f, _ = H.form(self)
        region = re.search(r"Credential=[^/]+/\d{8}/([^/]+)/ec2/", self.headers.get("Authorization", ""))
        if f.get("Action") != "DescribeSpotPriceHistory" or not region or region.group(1) not in ANSWERS:
            return self.answer(400, "<Response><Errors><Error><Code>InvalidAction</Code></Error></Errors></Response>")
        STATE["requests"] += 1
        asked = {f[k] for k in f if k.startswith("InstanceType.")}
        testlib.check(asked == set(TYPES), "asked for %d types, not the %d given" % (len(asked), len(TYPES)))
        self.answer(200, H.spot_page(ANSWERS[region.group(1)][0], f.get("NextToken"), size=int(f["MaxResults"])))


def expected(said, region):
    """{type: ({zone: price}, lowest price, its zone)} as the docs define them."""
    want = {}
    for t in TYPES:
        zones = {z: float(max(h)[1]) for (tt, z), h in said.items() if tt == t and z.startswith(region)}
        low = min(zones, key=zones.get) if zones else None
        want[t] = (zones, zones[low] if low else None, low)
    return want


with open(os.path.join(SRC, "configs", "prices-snapshot.json")) as fh:
    by_region = {}
    for rec in json.load(fh)["prices"]:
        by_region.setdefault(rec["region"], set()).add(rec["instance_type"])
TYPES = sorted(t for t in by_region["us-east-1"] & by_region["us-east-2"] if not t.startswith("ml."))
testlib.check(len(TYPES) >= 100, "the snapshot has %d EC2 types in both regions, wanted 100 or more" % len(TYPES))
ANSWERS = history(TYPES)
srv, url = testlib.scripted_server(Handler)
try:
    shuffled = RNG.sample(TYPES, len(TYPES))
    p = subprocess.run([INSTBENCH, "prices", "--instance-types", ",".join(shuffled), "--region", ",".join(REGIONS),
                        "--market", "spot", "--source", "live", "--no-placement-scores", "--page-size", str(PAGE),
                        "--format", "json"], env=H.prices_env(url, os.path.join(TMP, "home")),
                       capture_output=True, text=True, timeout=600)
    testlib.check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr, "sanitizer: %s" % p.stderr[-3000:])
    testlib.check(p.returncode == 0, "rc %d: %s" % (p.returncode, p.stderr[-2000:]))
    try:
        records = {(r["instance_type"], r["region"]): r["spot"] for r in json.loads(p.stdout)["prices"]}
    except (ValueError, KeyError, TypeError):
        records = {}
    pages = sum(-(-len(ANSWERS[r][0]) // PAGE) for r in REGIONS)
    testlib.check(STATE["requests"] == pages, "%d requests, wanted %d pages" % (STATE["requests"], pages))
    for region in REGIONS:
        want = expected(ANSWERS[region][1], region)
        bad = []
        for t in TYPES:
            spot = records.get((t, region))
            got = None if spot is None else ({z["availability_zone"]: z["usd_per_hour"] for z in spot["zones"]},
                                             spot["min_usd_per_hour"], spot["min_availability_zone"])
            if got != want[t] or (spot and len(spot["zones"]) != len(want[t][0])):
                bad.append("%s: got %r, want %r" % (t, got, want[t]))
        testlib.check(not bad, "%s: %d of %d types differ, first: %s" % (region, len(bad), len(TYPES), bad[:2]))
        testlib.check(sum(1 for t in TYPES if want[t][0]) > len(TYPES) // 2 and
                      any(not want[t][0] for t in TYPES), "%s: the answer should price most types, not all" % region)
finally:
    srv.shutdown()
if testlib.failures:
    sys.exit(1)
print("ok")
