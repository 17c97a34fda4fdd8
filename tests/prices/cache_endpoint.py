#!/usr/bin/python3
"""The price cache is keyed by endpoint (issue 22): what a custom endpoint (AWS_ENDPOINT_URL*, here
the fake AWS of tests/fakes/aws_fake_server.py standing in for moto) answered is never served to a query
for AWS's own endpoints, nor the reverse, nor to another custom endpoint.

The fake serves prices unlike the snapshot's (g5.2xlarge in us-west-2: on-demand 9.99 and no spot
zones at all, as moto answers); the expectations for runs that must not see them come from the
shipped snapshot, configs/prices-snapshot.json, read here.  The cache layout checked is the one
docs/usage.md gives: AWS's answers under prices/, an endpoint's under
prices/endpoint-<first 16 hex of sha256("PRICING=<url>\\nEC2=<url>\\n")>.

usage: cache_endpoint.py INSTBENCH REPO_ROOT
"""
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path[:0] = [os.path.join(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), d)
                for d in ("lib", "fakes")]
import testlib  # noqa: E402
from testlib import FakeAws, check, fail, refused_url, scratch_dir  # noqa: E402

INSTBENCH, ROOT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = scratch_dir("instbench-cache-endpoint-")
AK, SK = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
T, R = "g5.2xlarge", "us-west-2"
FAKE_OD = 9.99
CACHE = os.path.join(TMP, "cache", "instbench", "prices")

with open(os.path.join(ROOT, "configs", "prices-snapshot.json")) as f:
    SNAP = {(r["instance_type"], r["region"]): r for r in json.load(f)["prices"]}
SNAP_OD = SNAP[(T, R)]["on_demand"]["usd_per_hour"]
SNAP_SPOT = {z["availability_zone"]: z["usd_per_hour"] for z in SNAP[(T, R)]["spot"]["zones"]}
if not SNAP_SPOT or SNAP_OD == FAKE_OD:
    fail("the snapshot no longer prices %s in %s apart from the fake: pick another pair" % (T, R))


def env(endpoint=None, creds=False, **extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(HOME=os.path.join(TMP, "home"), XDG_CACHE_HOME=os.path.join(TMP, "cache"),
             AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.path.join(TMP, "none"),
             AWS_SHARED_CREDENTIALS_FILE=os.path.join(TMP, "none"), AWS_MAX_ATTEMPTS="1", NO_COLOR="1")
    if creds:
        e.update(AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
    if endpoint:
        e["AWS_ENDPOINT_URL"] = endpoint
    e.update(extra)
    return e


def prices(e, *args, rc=0):
    p = subprocess.run([INSTBENCH, "prices", "--instance-types", T, "--region", R, "--format", "json", *args],
                       env=e, capture_output=True, text=True, timeout=120)
    if p.returncode != rc:
        fail("exit %d (wanted %d) for prices %s\n%s" % (p.returncode, rc, " ".join(args), p.stderr[-2000:]))
    if rc:
        return None, p.stderr
    return next(r for r in json.loads(p.stdout)["prices"] if (r["instance_type"], r["region"]) == (T, R)), p.stderr


def zones(rec):
    return {z["availability_zone"]: z["usd_per_hour"] for z in (rec["spot"] or {}).get("zones", [])}


def is_snapshot(rec, what):
    check(rec["on_demand"]["source"] == "snapshot" and rec["on_demand"]["usd_per_hour"] == SNAP_OD,
          "%s: on-demand %r, wanted the snapshot's %r" % (what, rec["on_demand"], SNAP_OD))
    check(rec["spot"]["source"] == "snapshot" and zones(rec) == SNAP_SPOT,
          "%s: spot %r, wanted the snapshot's %r" % (what, rec["spot"], SNAP_SPOT))


def endpoint_dir(url):
    key = hashlib.sha256(("PRICING=%s\nEC2=%s\n" % (url, url)).encode()).hexdigest()[:16]
    return os.path.join(CACHE, "endpoint-" + key)


def fake():
    data = os.path.join(TMP, "fake-prices.json")
    with open(data, "w") as f:
        json.dump([{"instance_type": T, "region": R, "on_demand": FAKE_OD, "spot": {}}], f)
    try:
        return FakeAws("--prices", data, "--timeout", "120")
    except RuntimeError as e:
        fail(str(e))


def case_endpoint_not_aws():
    """The issue's example: the endpoint's answer (its own price, spot zones []) is cached apart;
    a later run for AWS's endpoints, offline, shows the snapshot's prices, not the cache's."""
    ep = fake()
    try:
        rec, _ = prices(env(ep.url, creds=True), "--source", "live")
    finally:
        ep.stop()
    check(rec["on_demand"]["usd_per_hour"] == FAKE_OD and rec["spot"]["source"] == "live" and zones(rec) == {},
          "the fake's live answer was not what it serves: %r" % rec)
    check(os.path.isfile(os.path.join(endpoint_dir(ep.url), R, T + ".json")), "the endpoint's answer is not in its cache "
          "dir: %r" % [os.path.join(d, n) for d, _, ns in os.walk(CACHE) for n in ns])
    check(not os.path.exists(os.path.join(CACHE, R)), "the endpoint's answer went into AWS's cache dir")
    # AWS's endpoints, no credentials: the snapshot, not the endpoint's cached answer
    rec, _ = prices(env())
    is_snapshot(rec, "auto without the endpoint")
    _, err = prices(env(), "--source", "cache", rc=1)
    # AWS_IGNORE_CONFIGURED_ENDPOINT_URLS makes the SDKs talk to AWS: AWS's cache then, too
    rec, _ = prices(env(ep.url, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS="true"))
    is_snapshot(rec, "auto with the endpoint ignored")
    # the same endpoint (gone now) still finds its own answer
    rec, _ = prices(env(ep.url), "--source", "cache")
    check(rec["on_demand"]["source"] == "cache" and rec["on_demand"]["usd_per_hour"] == FAKE_OD and
          rec["spot"]["source"] == "cache" and zones(rec) == {}, "the endpoint's own cache was not used: %r" % rec)
    # another endpoint, or the same one for EC2 only: not its answer
    prices(env(refused_url()), "--source", "cache", rc=1)
    rec, _ = prices(env(None, AWS_ENDPOINT_URL_EC2=ep.url))
    is_snapshot(rec, "the endpoint for EC2 only")


def case_aws_not_endpoint():
    """The reverse: an answer cached for AWS's endpoints (the file a live AWS run writes, in the
    layout every cache before the endpoint key had) is not served to a run pointed elsewhere."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    rec = {"instance_type": T, "region": R, "on_demand": {"usd_per_hour": 5.55, "source": "live", "as_of": now},
           "spot": {"source": "live", "as_of": now,
                    "zones": [{"availability_zone": "usw2-az1", "usd_per_hour": 0.77, "timestamp": now}]},
           "interruption": None, "placement_score": None}
    path = os.path.join(CACHE, R, T + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"schema": "instbench.prices/v1", "generated_at": now, "snapshot": None, "prices": [rec]}, f)
    for d in (os.path.dirname(path), CACHE, os.path.dirname(CACHE)):
        os.chmod(d, 0o755)
    got, _ = prices(env(), "--source", "cache")
    check(got["on_demand"]["usd_per_hour"] == 5.55 and zones(got) == {"usw2-az1": 0.77},
          "AWS's cache file (the control) was not used for AWS's endpoints: %r" % got)
    ep = fake()
    try:
        prices(env(ep.url), "--source", "cache", rc=1)
        got, _ = prices(env(ep.url))   # no credentials: cache, then snapshot
        is_snapshot(got, "an endpoint run without credentials")
        got, _ = prices(env(ep.url, creds=True))
        check(got["on_demand"] == dict(got["on_demand"], source="live", usd_per_hour=FAKE_OD) and zones(got) == {},
              "an endpoint run with credentials: %r" % got)
    finally:
        ep.stop()
    with open(path) as f:
        kept = json.load(f)["prices"][0]
    check(kept["on_demand"]["usd_per_hour"] == 5.55, "the endpoint's answer overwrote AWS's cache file: %r" % kept)


for name, case in (("endpoint_not_aws", case_endpoint_not_aws), ("aws_not_endpoint", case_aws_not_endpoint)):
    testlib.label = name
    case()
    print("ok %s" % name if not testlib.failures else "after %s: %d failures" % (name, len(testlib.failures)))
sys.exit(1 if testlib.failures else 0)
