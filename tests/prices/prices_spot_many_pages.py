#!/usr/bin/python3
"""`instbench prices --market spot --page-size 5` for many instance types in one region, against an
endpoint of the test's own (tests/prices/hostile_ec2.py) that pages DescribeSpotPriceHistory as AWS
does: MaxResults prices a page, a nextToken while more follow.
- 80 types (from configs/prices-snapshot.json) in 30 zones each, 2,400 prices in 480 pages: far
  more pages than a fixed bound of 200 allows, yet an honest answer the question bounds; every
  price is read, each (type, zone) at the price the endpoint served, one request a page;
- the same question answered by an endpoint whose nextToken never ends (the same prices again,
  page after page): refused, exit 1, in one line saying after how many pages, as many as it was
  sent, and nothing cached.

usage: prices_spot_many_pages.py INSTBENCH SOURCE_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_ec2 as H  # noqa: E402  (puts tests/lib and tests/fakes on the path)
from hostile_ec2 import testlib  # noqa: E402

INSTBENCH, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = testlib.scratch_dir("instbench-spot-many-pages-")
N_TYPES, N_ZONES, PAGE = 80, 30, 5
STATE = {"endless": False, "requests": 0, "sizes": set()}


def zone(z):
    return "us-east-1-z%02d" % z


def price(t, z):
    return "0.%06d" % (100000 + 37 * t + z)


class Handler(testlib.ScriptedHandler):
    def do_POST(self):
        f, _ = H.form(self)
        if f.get("Action") != "DescribeSpotPriceHistory":
            return self.answer(400, "<Response><Errors><Error><Code>InvalidAction</Code></Error></Errors></Response>")
        STATE["requests"] += 1
        size = int(f.get("MaxResults", "1000"))
        STATE["sizes"].add(size)
        asked = [f[k] for k in sorted((k for k in f if k.startswith("InstanceType.")), key=lambda k: int(k[13:]))]
        items = [{"instanceType": name, "spotPrice": price(TYPES.index(name), z), "timestamp":
                  "2026-11-21T23:00:00.000Z", "availabilityZone": zone(z)} for name in asked for z in range(N_ZONES)]
        token = f.get("NextToken")
        if STATE["endless"]:   # the first page again, and another page said to follow, forever
            return self.answer(200, H.spot_page(items[:size], token, total=int(token or 0) + 2 * size, size=size))
        self.answer(200, H.spot_page(items, token, size=size))


def run(url, home, endless):
    STATE.update(endless=endless, requests=0, sizes=set())
    p = subprocess.run([INSTBENCH, "prices", "--instance-types", ",".join(TYPES), "--region", "us-east-1",
                        "--market", "spot", "--source", "live", "--no-placement-scores", "--page-size", str(PAGE),
                        "--format", "json"], env=H.prices_env(url, os.path.join(TMP, home)),
                       capture_output=True, text=True, timeout=600)
    testlib.check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr, "sanitizer: %s" % p.stderr[-3000:])
    return p


def cached(home):
    return [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(TMP, home, "cache")) for f in fs]


with open(os.path.join(SRC, "configs", "prices-snapshot.json")) as f:
    TYPES = sorted({r["instance_type"] for r in json.load(f)["prices"]
                    if r["region"] == "us-east-1" and not r["instance_type"].startswith("ml.")})[:N_TYPES]
testlib.check(len(TYPES) == N_TYPES, "the snapshot has %d EC2 types in us-east-1, wanted %d" % (len(TYPES), N_TYPES))

srv, url = testlib.scripted_server(Handler)
try:
    # an honest answer of many pages: every price read
    p = run(url, "honest", False)
    pages = -(-N_TYPES * N_ZONES // PAGE)
    try:
        got = {(r["instance_type"], z["availability_zone"]): z["usd_per_hour"]
               for r in json.loads(p.stdout)["prices"] for z in r["spot"]["zones"]}
    except (ValueError, KeyError, TypeError):
        got = {}
    want = {(name, zone(z)): float(price(t, z)) for t, name in enumerate(TYPES) for z in range(N_ZONES)}
    testlib.check(p.returncode == 0 and got == want,
                  "%d prices in %d pages: rc %d, %d of %d read as served: %s" %
                  (N_TYPES * N_ZONES, pages, p.returncode, sum(got.get(k) == v for k, v in want.items()), len(want),
                   p.stderr[-2000:]))
    testlib.check(STATE["requests"] == pages and STATE["sizes"] == {PAGE},
                  "%d requests of MaxResults %r, wanted %d of %d" % (STATE["requests"], STATE["sizes"], pages, PAGE))
    # a nextToken that never ends: still refused, saying after how many pages
    p = run(url, "endless", True)
    said = "EC2 DescribeSpotPriceHistory: pagination did not end after %d pages" % STATE["requests"]
    testlib.check(p.returncode == 1 and said in p.stderr and len(p.stderr.splitlines()) == 1 and
                  STATE["requests"] > pages, "endless pages: %d requests, rc %d: %s" %
                  (STATE["requests"], p.returncode, p.stderr[-2000:]))
    testlib.check(not cached("endless"), "endless pages: cached %r" % cached("endless"))
finally:
    srv.shutdown()
if testlib.failures:
    sys.exit(1)
print("ok")
