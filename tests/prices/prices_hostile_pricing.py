#!/usr/bin/python3
"""`instbench prices` against Pricing answers the fake AWS does not give (tests/prices/
hostile_pricing.py): two products that pass every filter at different prices are ambiguous (no
price taken from AWS, both SKUs and prices named, nothing cached, the same whatever their order;
equal prices are no ambiguity); a NextToken that never ends stops after as many pages as were
asked for, and says that number, at --page-size 1 well before 200 (the bound follows the few
products a query has: the code before read 200 pages), while an honest answer of three products
at one a page is read; with --source auto, AWS's "no such product" and a product listed
only at $0/h are said as such, overriding the cache's and the snapshot's price.  Expected prices are
the ones the server was told to serve and the snapshot's, read from configs/prices-snapshot.json.

usage: prices_hostile_pricing.py INSTBENCH SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import testlib  # noqa: E402
from testlib import check  # noqa: E402

INSTBENCH, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = testlib.scratch_dir("instbench-hostile-pricing-")


def snapshot_price(t, r):
    with open(os.path.join(SRC, "configs", "prices-snapshot.json")) as f:
        for rec in json.load(f)["prices"]:
            if rec["instance_type"] == t and rec["region"] == r:
                return rec["on_demand"]["usd_per_hour"]


class Server:
    def __init__(self, mode):
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "hostile_pricing.py"), mode],
                                  stdout=subprocess.PIPE, text=True)
        self.url = "http://127.0.0.1:%s" % self.p.stdout.readline().strip()

    def post(self, path):
        urllib.request.urlopen(urllib.request.Request(self.url + path, data=b"{}", method="POST"), timeout=10).read()

    def mode(self, m):
        self.post("/__mode/" + m)

    def count(self):
        return json.loads(urllib.request.urlopen(self.url + "/__count", timeout=10).read())["GetProducts"]

    def stop(self):
        try:
            self.post("/__shutdown")
        except OSError:
            pass
        self.p.wait(timeout=10)


def run(srv, args, cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=TMP, XDG_CACHE_HOME=os.path.join(TMP, cache), AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=os.path.join(TMP, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(TMP, "none"),
               AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
               AWS_ENDPOINT_URL=srv.url, INSTBENCH_AWS_BACKOFF_BASE="0.05", NO_COLOR="1")
    return subprocess.run([INSTBENCH, "prices", "--instance-types", "g5.xlarge", "--region", "us-east-1",
                           "--market", "on-demand", "--no-placement-scores", "--format", "json"] + args,
                          env=env, capture_output=True, text=True, timeout=120)


def od(p):
    try:
        rec = json.loads(p.stdout)["prices"][0]["on_demand"]
        return rec["usd_per_hour"], rec["source"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None, None


def cached(cache):
    root = os.path.join(TMP, cache)
    return [os.path.join(d, n) for d, _, fs in os.walk(root) for n in fs if n.endswith(".json")]


SNAP = snapshot_price("g5.xlarge", "us-east-1")
srv = Server("ok")
try:
    # two products pass every filter at different prices: ambiguous, whatever the server's order
    for mode in ("dup", "duprev"):
        srv.mode(mode)
        p = run(srv, ["--source", "live"], "c-%s" % mode)
        check(p.returncode == 1 and p.stdout == "", "%s, live: rc %d, stdout %r" % (mode, p.returncode, p.stdout[:200]))
        for s in ("SKU A at $1.006/h", "SKU B at $9.5/h", "ambiguous"):
            check(s in p.stderr, "%s, live: %r not said: %r" % (mode, s, p.stderr))
        check(not cached("c-%s" % mode), "%s: an ambiguous price was cached: %r" % (mode, cached("c-%s" % mode)))
        p = run(srv, ["--source", "auto"], "c-%s" % mode)
        check(p.returncode == 0 and od(p) == (SNAP, "snapshot"),
              "%s, auto: rc %d, want the snapshot's %r: %r %s" % (mode, p.returncode, SNAP, od(p), p.stderr))
        check("SKU A" in p.stderr and "SKU B" in p.stderr and "warning" in p.stderr,
              "%s, auto: no warning naming both SKUs: %r" % (mode, p.stderr))
        check(not cached("c-%s" % mode), "%s, auto: an ambiguous price was cached" % mode)
    # two SKUs at one price: no ambiguity
    srv.mode("dupsame")
    p = run(srv, ["--source", "live"], "c-same")
    check(p.returncode == 0 and od(p) == (1.006, "live") and "ambiguous" not in p.stderr,
          "equal prices: rc %d %r %s" % (p.returncode, od(p), p.stderr))
    # a NextToken that never ends: stopped after as many pages as were asked for
    srv.mode("fresh")
    p = run(srv, ["--source", "live"], "c-fresh")
    n = srv.count()
    check(p.returncode == 1 and ("did not end after %d pages" % n) in p.stderr,
          "endless pages: %d requests, rc %d: %s" % (n, p.returncode, p.stderr))
    # ... and at --page-size 1 the bound follows the question (a few products a type and region),
    # not a flat 200 pages: refused well before, while an honest answer of one product a page is read
    srv.mode("fresh")
    p = run(srv, ["--source", "live", "--page-size", "1"], "c-fresh1")
    n = srv.count()
    check(p.returncode == 1 and ("did not end after %d pages" % n) in p.stderr and 3 < n <= 50,
          "endless pages at --page-size 1: %d requests, rc %d: %s" % (n, p.returncode, p.stderr))
    srv.mode("paged")
    p = run(srv, ["--source", "live", "--page-size", "1"], "c-paged")
    check(p.returncode == 0 and od(p) == (1.006, "live") and srv.count() == 3,
          "honest pages at --page-size 1: %d requests, rc %d %r: %s" % (srv.count(), p.returncode, od(p), p.stderr))
    # auto, a fresh cache and the snapshot holding g5.xlarge at $1.006/h, AWS answering "no
    # product" or only $0/h: AWS's answer is final, and the line says which answer it was
    for mode, said in (("none", "AWS answered that it has no such product there"),
                       ("zero", "AWS lists that product there only at $0/h, which is no price")):
        cache = "c-" + mode
        srv.mode("ok")
        p = run(srv, ["--source", "live"], cache)
        check(p.returncode == 0 and od(p) == (1.006, "live") and cached(cache), "filling the cache: %s" % p.stderr)
        srv.mode(mode)
        p = run(srv, ["--source", "auto"], cache)
        line = [ln for ln in p.stderr.splitlines() if ln.startswith("instbench prices:")]
        check(p.returncode == 1 and len(line) == 1 and said in line[0] and "overrides" in line[0]
              and "cache or the snapshot" in line[0], "auto, AWS %s: rc %d: %s" % (mode, p.returncode, p.stderr))
        check(mode != "zero" or "no such product" not in p.stderr, "a $0 product said as no product: %s" % p.stderr)
finally:
    srv.stop()
if testlib.failures:
    sys.exit(1)
print("ok")
