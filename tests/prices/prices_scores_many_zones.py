#!/usr/bin/python3
"""`instbench prices --market spot --source live` against an endpoint (tests/prices/hostile_ec2.py)
whose spot history names Z zones of g5.xlarge in us-east-1 by zone ID and whose placement scores
name each of them, in the reverse order: every zone gets the score the endpoint gave it, the row
the region's score, and matching scores to zones is not scores x zones.  That is judged against the
run itself, not a clock: the CPU time of instbench at Z = 32,000 may be at most 12 times that at
Z = 4,000 (8 times the answer; a scan of the zones per score made it over 20 times).
Expected scores are the ones the endpoint was told to serve.

usage: prices_scores_many_zones.py INSTBENCH
"""
import json
import os
import resource
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_ec2 as H  # noqa: E402  (puts tests/lib and tests/fakes on the path)
from hostile_ec2 import testlib  # noqa: E402

INSTBENCH = os.path.abspath(sys.argv[1])
TMP = testlib.scratch_dir("instbench-scores-many-zones-")
STATE = {"zones": 0}
REGION_SCORE = 7


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


def run(srv_url, n):
    """instbench at N zones: its JSON and its CPU seconds (user + system)."""
    STATE["zones"] = n
    home = os.path.join(TMP, "z%d" % n)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([INSTBENCH, "prices", "--instance-types", "g5.xlarge", "--region", "us-east-1", "--market",
                        "spot", "--source", "live", "--format", "json"], env=H.prices_env(srv_url, home),
                       capture_output=True, text=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    testlib.check(p.returncode == 0, "%d zones: rc %d: %s" % (n, p.returncode, p.stderr[-2000:]))
    try:
        return json.loads(p.stdout)["prices"][0], cpu
    except (ValueError, KeyError, IndexError):
        testlib.check(False, "%d zones: no JSON record: %r" % (n, p.stdout[:300]))
        return None, cpu


srv, url = testlib.scripted_server(Handler)
try:
    cpu = {}
    for n in (4000, 32000):
        rec, cpu[n] = run(url, n)
        if not rec:
            continue
        zones = rec["spot"]["zones"]
        got = {z["availability_zone"]: z.get("placement_score") for z in zones}
        want = {zone(i): score(i) for i in range(n)}
        wrong = [z for z in want if got.get(z) != want[z]]
        testlib.check(len(zones) == n and not wrong, "%d zones: %d listed, %d without the score served (e.g. %r)" %
              (n, len(zones), len(wrong), wrong[:3]))
        testlib.check(rec.get("placement_score") == REGION_SCORE, "%d zones: the row's score %r, served %d" %
              (n, rec.get("placement_score"), REGION_SCORE))
    if len(cpu) == 2:
        testlib.check(cpu[32000] <= 12 * cpu[4000], "32,000 zones took %.2f s of CPU, 4,000 %.2f s: matching scores to "
              "zones grows faster than the answer" % (cpu[32000], cpu[4000]))
        print("cpu: 4,000 zones %.3f s, 32,000 zones %.3f s" % (cpu[4000], cpu[32000]))
finally:
    srv.shutdown()
if testlib.failures:
    sys.exit(1)
print("ok")
