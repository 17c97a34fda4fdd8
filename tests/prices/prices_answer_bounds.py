#!/usr/bin/python3
"""What `instbench prices` keeps of an answer is bounded by what it asked, not by the pages an
endpoint sends: an endpoint of the test's own (tests/prices/hostile_ec2.py) answers page after
page of new items, each page within its size limit, with a nextToken that never ends.

- spot history: one type asked, 1,000 new zones of it a page: more than 64 zones (the most a
  region's type has in a prices file, docs/formats.md) fails the region's query on its first page,
  one request, saying so; --source live exits 1;
- placement scores: more than one score per zone (64 at the most) and the region's for each region
  asked fails the query on its first page, one request per query; the prices stand, the scores are
  said missing;
- Capacity Blocks: an offering ID listed twice (AWS's key for one block) fails the query naming it,
  instead of two rows for one block.
The code before kept 200 pages of each (then refused them as a pagination that did not end) and
showed both rows.

usage: prices_answer_bounds.py INSTBENCH
"""
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_ec2 as H  # noqa: E402  (puts tests/lib and tests/fakes on the path)
from hostile_ec2 import testlib  # noqa: E402

INSTBENCH = os.path.abspath(sys.argv[1])
TMP = testlib.scratch_dir("instbench-answer-bounds-")
STATE = {"mode": None, "count": {}}
START = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3)).replace(
    hour=11, minute=30, second=0, microsecond=0)


class Handler(testlib.ScriptedHandler):
    def do_POST(self):
        f, _ = H.form(self)
        action, token, mode = f.get("Action"), f.get("NextToken"), STATE["mode"]
        STATE["count"][action] = STATE["count"].get(action, 0) + 1
        start = int(token or 0)
        if action == "DescribeSpotPriceHistory":
            n = 1000 if mode == "spot" else 1
            items = [{"instanceType": "g5.xlarge", "spotPrice": "0.412300", "timestamp": "2026-11-21T23:00:00.000Z",
                      "availabilityZone": "use1-az%d" % (start + k + 1)} for k in range(n)]
            return self.answer(200, H.spot_page(items, token, total=start + 2000 if mode == "spot" else n))
        if action == "GetSpotPlacementScores":
            n = 1000 if mode == "scores" else 1
            items = [{"region": "us-east-1", "score": 5} for k in range(n)]
            if f.get("SingleAvailabilityZone") == "true":
                for k, it in enumerate(items):
                    it["availabilityZoneId"] = "use1-az%d" % (start + k + 1)
            return self.answer(200, H.scores_page(items, token, total=start + 2000 if mode == "scores" else n))
        if action == "DescribeAvailabilityZones":
            return self.answer(200, H.zones_page([]))
        if action == "DescribeCapacityBlockOfferings":
            end = START + datetime.timedelta(days=3)
            items = [{"capacityBlockOfferingId": "cb-%017x" % k, "instanceType": "p5.48xlarge",
                      "availabilityZone": "us-east-1a", "instanceCount": 2,
                      "startDate": START.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                      "endDate": end.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "capacityBlockDurationHours": 72,
                      "capacityBlockDurationMinutes": 0, "upfrontFee": "21345.12", "currencyCode": "USD",
                      "tenancy": "default"} for k in (1, 2, 1)]
            fields = ("capacityBlockOfferingId", "instanceType", "availabilityZone", "instanceCount", "startDate",
                      "endDate", "capacityBlockDurationHours", "capacityBlockDurationMinutes", "upfrontFee",
                      "currencyCode", "tenancy")
            return self.answer(200, H.paged("DescribeCapacityBlockOfferingsResponse", "capacityBlockOfferingSet",
                                            items, fields, None))
        self.answer(400, "<Response><Errors><Error><Code>InvalidAction</Code></Error></Errors></Response>")


def run(url, mode, args):
    STATE.update(mode=mode, count={})
    p = subprocess.run([INSTBENCH, "prices", "--region", "us-east-1", "--format", "json"] + args,
                       env=H.prices_env(url, os.path.join(TMP, mode)), capture_output=True, text=True, timeout=600)
    testlib.check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr, "sanitizer: %s" % p.stderr[-3000:])
    return p


srv, url = testlib.scripted_server(Handler)
try:
    p = run(url, "spot", ["--instance-types", "g5.xlarge", "--market", "spot", "--source", "live",
                          "--no-placement-scores"])
    n = STATE["count"].get("DescribeSpotPriceHistory")
    testlib.check(p.returncode == 1 and n == 1 and "more than 64 (instance type, zone) prices in us-east-1" in p.stderr
                  and len(p.stderr.splitlines()) == 1,
                  "endless spot zones: rc %d, %r requests (wanted 1): %s" % (p.returncode, n, p.stderr[-1500:]))

    p = run(url, "scores", ["--instance-types", "g5.xlarge", "--market", "spot", "--source", "live"])
    n = STATE["count"].get("GetSpotPlacementScores")
    try:
        rec = json.loads(p.stdout)["prices"][0]
    except (ValueError, KeyError, IndexError):
        rec = {}
    zones = rec.get("spot", {}).get("zones") or [{}]
    testlib.check(p.returncode == 0 and n == 2 and "more than 65 scores for 1 region" in p.stderr and
                  zones[0].get("usd_per_hour") == 0.4123 and zones[0].get("placement_score") is None and
                  rec.get("placement_score") is None,
                  "endless scores: rc %d, %r requests (wanted 2: the region's and per zone), zones %r: %s" %
                  (p.returncode, n, zones, p.stderr[-1500:]))

    p = run(url, "blocks", ["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--nodes", "2",
                            "--block-duration", "3d"])
    testlib.check(p.returncode == 1 and p.stdout == "" and "offering cb-%017x" % 1 in p.stderr and
                  "listed twice" in p.stderr and len(p.stderr.splitlines()) == 1,
                  "an offering listed twice: rc %d, stdout %r: %s" % (p.returncode, p.stdout[:200], p.stderr))
finally:
    srv.shutdown()
if testlib.failures:
    sys.exit(1)
print("ok")
