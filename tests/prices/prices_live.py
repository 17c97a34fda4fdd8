#!/usr/bin/python3
"""`instbench prices` against the local AWS test endpoint (tests/fakes/aws_fake_server.py, which checks
every request's SigV4 signature with botocore).

Expected values are computed here, in Python, from the same data the endpoint serves (the vendored
data/aws-accelerated-prices.csv) and from the endpoint's documented serving rules (on-demand rounded to
4 decimals and printed with 10, spot printed with 6 decimals, the latest Linux/UNIX entry per AZ,
placement score 1 + sha256("types|region[|az]") mod 10), and interruption buckets straight from the
Spot Advisor JSON.  Nothing is compared against instbench's own earlier output.

usage: prices_live.py INSTBENCH PRICE_DATA_DIR CASE   (PRICE_DATA_DIR: the repository's data/)
"""
import csv
import hashlib
import json
import math
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
import testlib  # noqa: E402
from testlib import FakeAws, fail, require as check

INSTBENCH, DATA, CASE = [os.path.abspath(a) for a in sys.argv[1:3]] + [sys.argv[3]]
testlib.label = CASE
CSV = os.path.join(DATA, "aws-accelerated-prices.csv")
ADVISOR = os.path.join(DATA, "spot-advisor-data.json")
AK = "AKIDEXAMPLE"
SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEXAMPLETOKEN0123456789SESSIONtoken/+=="
SECRETS = [SK, TOKEN]
TMP = tempfile.mkdtemp(prefix="instbench-prices-")
ALL_OUTPUT = []   # everything instbench printed, checked for secrets at the end


# ---- reference data -------------------------------------------------------------------------

def load_csv():
    recs = {}
    with open(CSV, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["instance_type"], row["region"])
            r = recs.setdefault(key, {"od": None, "spot": {}})
            if row["on_demand_usd_per_hour"]:
                r["od"] = float(row["on_demand_usd_per_hour"])
            if row["spot_usd_per_hour"]:
                r["spot"][row["availability_zone"]] = float(row["spot_usd_per_hour"])
    return recs


CSV_RECS = load_csv()
with open(ADVISOR) as f:
    ADV = json.load(f)["spot_advisor"]


def served_on_demand(t, r):
    """What the endpoint serves: round(usd, 4) printed as %.10f."""
    return float("%.10f" % round(CSV_RECS[(t, r)]["od"], 4))


def served_spot(t, r):
    return {az: float("%.6f" % p) for az, p in CSV_RECS[(t, r)]["spot"].items()}


def score(types, region, az=None):
    key = ",".join(sorted(types)) + "|" + region + ("|" + az if az else "")
    return 1 + int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10


def pick(n_types, regions):
    """n_types instance types that have an on-demand price and spot zones in every region."""
    types = sorted({t for (t, r) in CSV_RECS})
    ok = [t for t in types if all((t, r) in CSV_RECS and CSV_RECS[(t, r)]["od"] and CSV_RECS[(t, r)]["spot"]
                                  for r in regions)]
    check(len(ok) >= n_types, "the CSV has only %d types priced in %s" % (len(ok), regions))
    return ok[:n_types]


# ---- the endpoint and the CLI ----------------------------------------------------------------

def Endpoint(*args, prices=CSV):
    """The fake AWS serving the vendored price data (or PRICES)."""
    try:
        return FakeAws("--prices", prices, "--timeout", "240", *args)
    except RuntimeError as e:
        fail(str(e))


def base_env(endpoint=None, creds=True, token=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=os.path.join(TMP, "home"), XDG_CACHE_HOME=os.path.join(TMP, "cache"),
               AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.path.join(TMP, "no-config"),
               AWS_SHARED_CREDENTIALS_FILE=os.path.join(TMP, "no-credentials"),
               INSTBENCH_AWS_BACKOFF_BASE="0.05", NO_COLOR="1")
    if creds:
        env.update(AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
        if token:
            env["AWS_SESSION_TOKEN"] = token
    if endpoint:
        env["AWS_ENDPOINT_URL"] = endpoint.url
    return env


def endpoint_env(url, creds=False):
    """The environment of a run pointed at URL (AWS_ENDPOINT_URL) even after that endpoint is gone:
    its cache is the one such a run reads (the cache is keyed by endpoint)."""
    return dict(base_env(None, creds=creds), AWS_ENDPOINT_URL=url)


def endpoint_cache_dir(url=None):
    """The cache dir of runs pointed at URL, from docs/usage.md's rule: AWS's own endpoints use
    prices/, a custom one prices/endpoint-<first 16 hex of sha256("PRICING=URL\nEC2=URL\n")>."""
    root = os.path.join(TMP, "cache", "instbench", "prices")
    if not url:
        return root
    key = hashlib.sha256(("PRICING=%s\nEC2=%s\n" % (url, url)).encode()).hexdigest()[:16]
    return os.path.join(root, "endpoint-" + key)


def instbench(command, args, env, expect_rc=0, cwd=None):
    """Runs `instbench COMMAND ARGS`, keeps its output for the secrets checks, and fails on a
    sanitizer report or an exit status other than EXPECT_RC (None: any)."""
    p = subprocess.run([INSTBENCH] + command + args, env=env, capture_output=True, text=True, timeout=120,
                       cwd=cwd or TMP)
    ALL_OUTPUT.append(p.stdout + p.stderr)
    what = " ".join(command[-1:] + args)
    # under the ASan/UBSan build a report can hide behind an expected exit 1
    if "Sanitizer" in p.stderr or "runtime error:" in p.stderr:
        fail("sanitizer report for %s:\n%s" % (what, p.stderr[-4000:]))
    if expect_rc is not None and p.returncode != expect_rc:
        fail("exit %d (wanted %d) for %s\nstdout:\n%s\nstderr:\n%s" % (p.returncode, expect_rc, what,
                                                                       p.stdout[-3000:], p.stderr[-3000:]))
    return p


def prices(args, env, expect_rc=0, cwd=None):
    return instbench(["-v", "prices"], args, env, expect_rc, cwd)


def as_json(p):
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        fail("stdout is not JSON (%s): %s" % (e, p.stdout[:500]))
    check(doc.get("schema") == "instbench.prices/v1", "schema is %r" % doc.get("schema"))
    return {(r["instance_type"], r["region"]): r for r in doc["prices"]}, doc


def close(a, b, what):
    check(a is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), "%s: got %r, want %r" % (what, a, b))


def check_live(recs, types, regions, scores=True):
    for t in types:
        for r in regions:
            rec = recs.get((t, r))
            check(rec is not None, "no record for %s %s" % (t, r))
            od = rec["on_demand"]
            check(od and od["source"] == "live", "%s %s on-demand: %r" % (t, r, od))
            close(od["usd_per_hour"], served_on_demand(t, r), "%s %s on-demand" % (t, r))
            sp = rec["spot"]
            check(sp and sp["source"] == "live", "%s %s spot: %r" % (t, r, sp))
            got = {z["availability_zone"]: z["usd_per_hour"] for z in sp["zones"]}
            want = served_spot(t, r)
            check(set(got) == set(want), "%s %s spot zones %s, want %s" % (t, r, sorted(got), sorted(want)))
            for az in want:
                close(got[az], want[az], "%s %s spot in %s" % (t, r, az))
            adv = ADV.get(r, {}).get("Linux", {}).get(t)
            if adv:
                check(rec["interruption"] and rec["interruption"]["bucket"] == adv["r"]
                      and rec["interruption"]["savings_pct"] == adv["s"],
                      "%s %s interruption %r, advisor says %r" % (t, r, rec["interruption"], adv))
            if scores:
                check(rec["placement_score"] == score([t], r), "%s %s placement %r, want %d"
                      % (t, r, rec["placement_score"], score([t], r)))
                for z in sp["zones"]:
                    want_z = score([t], r, z["availability_zone"])
                    check(z.get("placement_score") == want_z, "%s %s %s AZ score %r, want %d"
                          % (t, r, z["availability_zone"], z.get("placement_score"), want_z))


# ---- cases ------------------------------------------------------------------------------------

def case_many_types():
    """12 types x 3 regions in one run: every value as served; spot for all types of a region in
    one DescribeSpotPriceHistory request; every request's signature accepted."""
    regions = ["us-east-1", "us-west-2", "eu-west-1"]
    types = pick(12, regions)
    ep = Endpoint()
    try:
        p = prices(["--instance-types", ",".join(types), "--region", ",".join(regions), "--format", "json"],
                   base_env(ep))
        recs, doc = as_json(p)
        check(len(recs) == len(types) * len(regions), "%d records" % len(recs))
        check_live(recs, types, regions)
        st = ep.stats()
        check(st["signature_failures"] == 0 and st["auth_failures"] == 0, "signature failures: %r" % st)
        ops = st["by_operation"]
        check(ops.get("GetProducts") == len(types) * len(regions), "GetProducts calls: %r" % ops)
        check(ops.get("DescribeSpotPriceHistory") == len(regions), "spot calls (want one per region): %r" % ops)
        check("no AWS credentials" not in p.stderr, "credentials were found")
    finally:
        ep.stop()


def case_pagination():
    """Spot history served 5 entries per page (the endpoint also serves distractor entries and
    older prices): the values still equal the latest Linux/UNIX price per AZ."""
    regions = ["us-east-1", "us-west-2"]
    types = pick(4, regions)
    ep = Endpoint("--ec2-page-size", "5", "--page-size", "1")
    try:
        p = prices(["--instance-types", ",".join(types), "--region", ",".join(regions), "--format", "json",
                    "--page-size", "5"], base_env(ep))
        recs, _ = as_json(p)
        check_live(recs, types, regions)
        ops = ep.stats()["by_operation"]
        check(ops.get("DescribeSpotPriceHistory", 0) > 2 * len(regions),
              "spot history was not paginated: %r" % ops)
    finally:
        ep.stop()


def case_concurrency():
    """40 pairs with 300 ms added latency per request: the requests go out together (the fake counts
    how many it held in flight at once), not one after another."""
    regions = ["us-east-1", "us-west-2"]
    types = pick(20, regions)
    ep = Endpoint("--latency-ms", "300")
    try:
        t0 = time.monotonic()
        p = prices(["--instance-types", ",".join(types), "--region", ",".join(regions), "--format", "json"],
                   base_env(ep))
        wall = time.monotonic() - t0
        recs, _ = as_json(p)
        check_live(recs, types, regions)
        st = ep.stats()
        # counted by the fake, not timed: a loaded machine may take longer, never fewer in flight
        check(st["max_in_flight"] >= 8, "at most %d requests in flight" % st["max_in_flight"])
        print("concurrency: %d requests, %d in flight at most, %.2f s" % (st["requests"], st["max_in_flight"], wall))
    finally:
        ep.stop()


def case_cache():
    """A live run writes the cache; with the endpoint gone, --source cache and auto reuse it
    (source "cache"); a stale cache (older than --cache-ttl) is not used."""
    regions = ["us-east-1"]
    types = pick(3, regions)
    ep = Endpoint()
    args = ["--instance-types", ",".join(types), "--region", "us-east-1", "--format", "json"]
    try:
        prices(args, base_env(ep))
    finally:
        ep.stop()
    files = [os.path.join(endpoint_cache_dir(ep.url), "us-east-1", t + ".json") for t in types]
    for f in files:
        check(os.path.exists(f), "cache file %s missing" % f)
        check(json.load(open(f))["schema"] == "instbench.prices/v1", "cache file %s schema" % f)
    check(not [n for n in os.listdir(os.path.dirname(files[0])) if ".tmp" in n], "temp files left in the cache")
    # endpoint gone: the cache answers runs pointed at it
    p = prices(args + ["--source", "cache"], endpoint_env(ep.url))
    recs, _ = as_json(p)
    for t in types:
        r = recs[(t, "us-east-1")]
        check(r["on_demand"]["source"] == "cache" and r["spot"]["source"] == "cache", "sources %r" % r)
        close(r["on_demand"]["usd_per_hour"], served_on_demand(t, "us-east-1"), t + " cached on-demand")
        got = {z["availability_zone"]: z["usd_per_hour"] for z in r["spot"]["zones"]}
        check(got == served_spot(t, "us-east-1"), "%s cached spot %r" % (t, got))
    # auto with a dead endpoint: a warning naming the failure, then the cache
    dead = endpoint_env(ep.url, creds=True)   # stopped: nothing listens there now
    dead["AWS_MAX_ATTEMPTS"] = "1"
    p = prices(args, dead)
    recs, _ = as_json(p)
    check(all(recs[(t, "us-east-1")]["on_demand"]["source"] == "cache" for t in types), "auto did not use the cache")
    check("warning" in p.stderr and "pricing" in p.stderr.lower(), "no warning naming the service:\n" + p.stderr)
    # stale: age the first file by two days; --source cache then has nothing for it
    doc = json.load(open(files[0]))
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2 * 86400))
    doc["prices"][0]["on_demand"]["as_of"] = old
    doc["prices"][0]["spot"]["as_of"] = old
    json.dump(doc, open(files[0], "w"))
    p = prices(args + ["--source", "cache"], endpoint_env(ep.url))
    recs, _ = as_json(p)
    check(recs[(types[0], "us-east-1")]["on_demand"]["usd_per_hour"] is None,
          "a 2-day-old cache entry was used with a 24 h TTL")
    check(recs[(types[1], "us-east-1")]["on_demand"]["source"] == "cache", "fresh entry not used")
    p = prices(args + ["--source", "cache", "--cache-ttl", "72"], endpoint_env(ep.url))
    recs, _ = as_json(p)
    check(recs[(types[0], "us-east-1")]["on_demand"]["source"] == "cache", "--cache-ttl 72 ignored")


def case_corrupt_cache():
    """A corrupt cache file: a warning, never fatal; the snapshot answers; a live run rewrites it."""
    t = "g5.xlarge"
    ep = Endpoint()
    path = os.path.join(endpoint_cache_dir(ep.url), "us-east-1", t + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    for junk in ['{"schema": "instbench.prices/v1", "generated_at": "2026-11-22T00:00:00Z", "prices": [{"inst',
                 "\x00\xff garbage", '{"schema": "instbench.prices/v1", "generated_at": "2026-11-22T00:00:00Z", '
                 '"prices": [{"instance_type": "g5.xlarge", "region": "us-east-1", "on_demand": '
                 '{"usd_per_hour": -3, "source": "live", "as_of": "2026-11-22T00:00:00Z"}, "spot": null}]}']:
        with open(path, "w", errors="surrogateescape") as f:
            f.write(junk)
        p = prices(["--instance-types", t, "--region", "us-east-1", "--format", "json"], endpoint_env(ep.url))
        check("corrupt price cache" in p.stderr, "no warning about the corrupt cache:\n" + p.stderr)
        recs, _ = as_json(p)
        r = recs[(t, "us-east-1")]
        check(r["on_demand"]["source"] == "snapshot", "not the snapshot: %r" % r["on_demand"])
        close(r["on_demand"]["usd_per_hour"], CSV_RECS[(t, "us-east-1")]["od"], "snapshot on-demand")
    try:
        prices(["--instance-types", t, "--region", "us-east-1", "--format", "json"], base_env(ep))
    finally:
        ep.stop()
    check(json.load(open(path))["prices"][0]["on_demand"]["source"] == "live", "live run did not rewrite the cache")


CONTROL = "".join(map(chr, list(range(0, 10)) + list(range(11, 32)) + [127]))


def no_control(text, what):
    bad = sorted({c for c in text if c in CONTROL})
    check(not bad, "%s: raw control characters %r reach the terminal:\n%s" % (what, bad, text[-1500:]))


def cache_path(t="g5.xlarge", region="us-east-1", url=None):
    return os.path.join(endpoint_cache_dir(url), region, t + ".json")


def write_cache(record, t="g5.xlarge", region="us-east-1", url=None):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    path = cache_path(t, region, url)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "w") as f:
        json.dump({"schema": "instbench.prices/v1", "generated_at": now, "snapshot": None, "prices": [record]}, f)
    os.chmod(path, 0o644)
    return path


def cached_record(od=7.77, zones=None, t="g5.xlarge", region="us-east-1"):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    zones = zones if zones is not None else {"us-east-1a": 3.33}
    return {"instance_type": t, "region": region,
            "on_demand": {"usd_per_hour": od, "source": "live", "as_of": now},
            "spot": {"source": "live", "as_of": now,
                     "zones": [{"availability_zone": az, "usd_per_hour": p, "timestamp": now} for az, p in zones.items()]},
            "interruption": None, "placement_score": None}


def case_hostile_cache():
    """Cache files are validated like a prices file: a zone, type or region that is not a name (a
    clipboard-writing escape, a spreadsheet formula), a price that is not finite and positive, a
    key given twice: the file is ignored with a warning naming the field, shown escaped, and the
    snapshot answers; nothing of it reaches the table or stderr raw."""
    t, region = "g5.xlarge", "us-east-1"
    osc52 = "\x1b]52;c;aGVsbG8=\x07"
    for what, rec, word in (
            ("OSC 52 zone", cached_record(zones={osc52: 0.41}), "availability_zone"),
            ("clear-screen zone", cached_record(zones={"us-east-1a\x1b[2J": 0.41}), "availability_zone"),
            ("formula zone", cached_record(zones={"=cmd|' /C calc'!A0": 0.41}), "availability_zone"),
            ("odd type", dict(cached_record(), instance_type="g5.xlarge\x1b[2J"), "instance_type"),
            ("odd region", dict(cached_record(), region="us-east-1\x07"), "region"),
            ("negative price", cached_record(od=-1.0), "usd_per_hour"),
            ("zero spot price", cached_record(zones={"us-east-1a": 0}), "usd_per_hour")):
        write_cache(rec, t, region)
        for fmt in ("table", "json"):
            # the file ignored, nothing is cached: exit 1, nothing on stdout
            p = prices(["--instance-types", t, "--region", region, "--source", "cache", "--format", fmt],
                       base_env(None, creds=False), expect_rc=1)
            check("ignoring corrupt price cache" in p.stderr and word in p.stderr,
                  "%s: no warning naming %s:\n%s" % (what, word, p.stderr))
            no_control(p.stderr, what + " stderr")
            check(p.stdout == "", "%s: the cache was used:\n%s" % (what, p.stdout[:500]))
    # A key given twice: which price counts depends on the reader, so the file is refused.
    path = write_cache(cached_record())
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace('"usd_per_hour": 7.77', '"usd_per_hour": 7.77, "usd_per_hour": 0.01', 1))
    p = prices(["--instance-types", t, "--region", region, "--source", "cache", "--format", "json"],
               base_env(None, creds=False), expect_rc=1)
    check("on_demand.usd_per_hour: this key is given twice" in p.stderr, "duplicate key not refused:\n" + p.stderr)
    check(p.stdout == "", "a cache file with a duplicate key was used")
    # A valid file is still used.
    write_cache(cached_record())
    recs, _ = as_json(prices(["--instance-types", t, "--region", region, "--source", "cache", "--format", "json"],
                             base_env(None, creds=False)))
    check(recs[(t, region)]["on_demand"]["usd_per_hour"] == 7.77, "a valid cache file was not used")


def case_cache_trust():
    """The cache is trusted as ssh trusts its files: owned by this user (or root) and writable by no
    one else, its directories likewise, and not a symbolic link; otherwise ignored with a warning.
    A live run replaces an untrusted file and leaves the cache private again."""
    t, region = "g5.xlarge", "us-east-1"
    args = ["--instance-types", t, "--region", region, "--source", "cache", "--format", "json"]
    ep = Endpoint()   # the cache of runs pointed at it: one directory deeper than AWS's

    def used():
        # an ignored file leaves nothing cached: exit 1 and nothing on stdout
        p = prices(args, endpoint_env(ep.url), expect_rc=None)
        if p.returncode == 1 and not p.stdout:
            return False, p.stderr
        check(p.returncode == 0, "cache_trust: exit %d:\n%s" % (p.returncode, p.stderr))
        r = as_json(p)[0][(t, region)]
        return (r["on_demand"] or {}).get("usd_per_hour") == 7.77, p.stderr

    path = write_cache(cached_record(), url=ep.url)
    region_dir = os.path.dirname(path)
    ok, err = used()
    check(ok, "a private cache file was not used:\n" + err)
    if os.geteuid() == 0:   # only root can give a file away; as root the test still checks the owner
        os.chown(path, 12345, 12345)
        ok, err = used()
        check(not ok and "owned by uid 12345" in err, "a file owned by another user was trusted:\n" + err)
        os.chown(path, 0, 0)
    else:
        print("note [cache_trust]: not root, so the other-owner case is not run")
    for mode, word in ((0o664, "writable by its group"), (0o646, "writable by everyone")):
        os.chmod(path, mode)
        ok, err = used()
        check(not ok and word in err, "a file with mode %o was trusted:\n%s" % (mode, err))
    os.chmod(path, 0o644)
    os.chmod(region_dir, 0o777)
    ok, err = used()
    check(not ok and "its directory is writable by everyone" in err, "a world-writable directory was trusted:\n" + err)
    os.chmod(region_dir, 0o755)
    endpoint_dir = os.path.dirname(region_dir)
    os.chmod(endpoint_dir, 0o770)
    ok, err = used()
    check(not ok and "its directory is writable by its group" in err and endpoint_dir in err,
          "a group-writable endpoint directory was trusted:\n" + err)
    os.chmod(endpoint_dir, 0o755)
    elsewhere = os.path.join(TMP, "elsewhere.json")
    os.rename(path, elsewhere)
    os.symlink(elsewhere, path)
    ok, err = used()
    check(not ok and "symbolic link" in err, "a symbolic link in the cache was followed:\n" + err)
    # A live run replaces the link with a file of its own, private whatever the umask.
    os.chmod(region_dir, 0o775)
    os.chmod(endpoint_dir, 0o775)
    try:
        old = os.umask(0o002)
        try:
            prices(["--instance-types", t, "--region", region, "--format", "json"], base_env(ep))
        finally:
            os.umask(old)
    finally:
        ep.stop()
    st = os.lstat(path)
    check(stat.S_ISREG(st.st_mode) and not st.st_mode & 0o022, "the live run left mode %o" % st.st_mode)
    check(not os.stat(region_dir).st_mode & 0o022, "the live run left the directory writable by others")
    check(not os.stat(endpoint_dir).st_mode & 0o022, "the live run left the endpoint's directory writable by others")
    p = prices(args, endpoint_env(ep.url))
    r = as_json(p)[0][(t, region)]
    check(r["on_demand"] is not None and r["on_demand"]["source"] == "cache", "the rewritten cache is not used: %r" % r)


def case_snapshot_no_credentials():
    """No credentials anywhere: auto says so once on stderr and serves the snapshot, whose values
    equal the CSV rows; the output names the snapshot's date.  Works from any cwd."""
    types = ["g5.xlarge", "p4d.24xlarge", "g6e.12xlarge", "trn1.32xlarge"]
    regions = ["us-east-1", "us-west-2"]
    p = prices(["--instance-types", ",".join(types), "--region", ",".join(regions), "--format", "json"],
               base_env(None, creds=False), cwd="/")
    notes = [ln for ln in p.stderr.splitlines() if ln.startswith("no AWS credentials:")]
    check(len(notes) == 1, "credential notice count with -v %d:\n%s" % (len(notes), p.stderr))
    # with -v (prices() gives it) one line, and where instbench looked
    check("AWS_ACCESS_KEY_ID" in p.stderr and "profile" in p.stderr, "-v does not say where it looked:\n" + p.stderr)
    # without -v nothing: the usual case off AWS is not news on every call (the sources line says it)
    quiet = instbench(["prices"], ["--instance-types", types[0], "--region", regions[0], "--format", "json"],
                      base_env(None, creds=False), cwd="/")
    check(quiet.returncode == 0 and "credentials" not in quiet.stderr, "credential notice without -v: %r" % quiet.stderr)
    recs, doc = as_json(p)
    # the snapshot is dated by its newest input (the 2026 families, read 2026-11-28); older rows keep theirs
    check(doc["snapshot"] and doc["snapshot"]["date"] == "2026-11-28", "snapshot date %r" % doc["snapshot"])
    for t in types:
        for r in regions:
            if (t, r) not in CSV_RECS:
                continue
            rec, ref = recs[(t, r)], CSV_RECS[(t, r)]
            if ref["od"] is None:
                check(rec["on_demand"]["usd_per_hour"] is None, "%s %s: on-demand %r, CSV has none"
                      % (t, r, rec["on_demand"]))
            else:
                check(rec["on_demand"]["source"] == "snapshot", "%s %s source" % (t, r))
                close(rec["on_demand"]["usd_per_hour"], ref["od"], "%s %s snapshot on-demand" % (t, r))
            got = {z["availability_zone"]: z["usd_per_hour"] for z in rec["spot"]["zones"]}
            check(got == ref["spot"], "%s %s snapshot spot %r != CSV %r" % (t, r, got, ref["spot"]))
    # the table says where the numbers come from and when
    p = prices(["--instance-types", "g5.xlarge", "--region", "us-east-1", "--format", "table"],
               base_env(None, creds=False))
    check("2026-11-21" in p.stdout and "snapshot" in p.stdout, "table does not date the snapshot:\n" + p.stdout)
    od = CSV_RECS[("g5.xlarge", "us-east-1")]["od"]
    check(testlib.usd(od) in p.stdout, "table lacks the CSV's %r as %s:\n%s" % (od, testlib.usd(od), p.stdout))
    # --source live without credentials: a clear failure, exit 1
    p = prices(["--instance-types", "g5.xlarge", "--region", "us-east-1", "--source", "live"],
               base_env(None, creds=False), expect_rc=1)
    check("credential" in p.stderr.lower(), "no clear message:\n" + p.stderr)
    # CSV: header row, plain numbers
    p = prices(["--instance-types", "g5.xlarge", "--region", "us-east-1", "--format", "csv", "--source", "snapshot"],
               base_env(None, creds=False))
    rows = list(csv.DictReader(p.stdout.splitlines()))
    check(len(rows) == 1 and float(rows[0]["on_demand_usd_per_hour"]) == 1.006, "csv: %r" % rows)
    check(float(rows[0]["spot_min_usd_per_hour"]) ==
          min(testlib.regular_zones(CSV_RECS[("g5.xlarge", "us-east-1")]["spot"]).values()),
          "csv spot min: %r" % rows[0])


def case_faults():
    """Retryable faults are retried to success; broken answers fall back with a warning naming the
    service; --source live turns them into a clear exit 1; never a crash."""
    t, r = "g5.xlarge", "us-east-1"
    args = ["--instance-types", t, "--region", r, "--format", "json", "--no-placement-scores"]
    ep = Endpoint("--stall-seconds", "60")
    try:
        env = base_env(ep)
        for kind in ("throttle", "500", "503", "cut"):
            ep.call("/__control", {"clear_faults": True, "faults": [{"kind": kind, "count": 2}]})
            p = prices(args, env)
            recs, _ = as_json(p)
            check(recs[(t, r)]["on_demand"]["source"] == "live", "%s: not live after retries: %r"
                  % (kind, recs[(t, r)]["on_demand"]))
            close(recs[(t, r)]["on_demand"]["usd_per_hour"], served_on_demand(t, r), kind)
        # a stall the fake would hold 60 s, cut by the 1.5 s timeout (the fake counts the hang-up), then success
        ep.call("/__control", {"clear_faults": True, "faults": [{"kind": "stall", "count": 1, "service": "pricing"}]})
        p = prices(args + ["--timeout", "1.5"], env)
        recs, _ = as_json(p)
        check(recs[(t, r)]["on_demand"]["source"] == "live", "stall: %r" % recs[(t, r)]["on_demand"])
        check(ep.stats()["stalls_cut_by_client"] == 1 and "has not answered in" in p.stderr,
              "stall: the timeout did not cut the attempt short (the client hung up first): %s" % p.stderr[-600:])
        # not retryable: fall back to the snapshot, with a warning naming service and reason
        for kind, service, words in (("truncate", "pricing", ["Pricing GetProducts"]),
                                     ("malformed", "pricing", ["Pricing GetProducts"]),
                                     ("truncate", "ec2", ["DescribeSpotPriceHistory"]),
                                     ("malformed", "ec2", ["DescribeSpotPriceHistory"]),
                                     ("expired", "pricing", ["expired"]),
                                     ("denied", "pricing", ["AccessDenied"])):
            shutil.rmtree(os.path.join(TMP, "cache"), ignore_errors=True)
            ep.call("/__control", {"clear_faults": True, "faults": [{"kind": kind, "count": 3, "service": service}]})
            p = prices(args, env)
            recs, _ = as_json(p)
            key = "on_demand" if service == "pricing" else "spot"
            check(recs[(t, r)][key]["source"] == "snapshot", "%s/%s: %r" % (kind, service, recs[(t, r)][key]))
            for w in words:
                check(w in p.stderr and "warning" in p.stderr, "%s/%s: warning lacks %r:\n%s" % (kind, service, w, p.stderr))
            ep.call("/__control", {"clear_faults": True, "faults": [{"kind": kind, "count": 3, "service": service}]})
            p = prices(args + ["--source", "live"], env, expect_rc=1)
            check(words[0] in p.stderr, "--source live %s/%s: %s" % (kind, service, p.stderr))
        ep.call("/__control", {"clear_faults": True})
    finally:
        ep.stop()
    # placement scores without the permission: absent, with a note; prices unaffected
    ep = Endpoint("--placement-unauthorized")
    try:
        p = prices(["--instance-types", t, "--region", r, "--format", "json"], base_env(ep))
        recs, doc = as_json(p)
        check(recs[(t, r)]["placement_score"] is None, "score despite UnauthorizedOperation")
        check("placement" in doc.get("placement_note", "") and "UnauthorizedOperation" in doc["placement_note"],
              "no placement note: %r" % doc.get("placement_note"))
        check_live(recs, [t], [r], scores=False)
    finally:
        ep.stop()


def case_session_token_no_secrets():
    """Session-token credentials sign correctly; -v output and every file written hold neither the
    secret key nor the token."""
    t, r = "g5.xlarge", "us-west-2"
    ep = Endpoint("--credentials", "%s:%s:%s" % (AK, SK, TOKEN))
    try:
        out = os.path.join(TMP, "out.json")
        prices(["--instance-types", t, "--region", r, "-o", out], base_env(ep, token=TOKEN))
        doc = json.load(open(out))
        check(doc["prices"][0]["on_demand"]["source"] == "live", "token run not live")
        check(ep.stats()["signature_failures"] == 0, "signature failures with a session token")
        written = [open(out).read()]
        for root, _, names in os.walk(os.path.join(TMP, "cache")):
            written += [open(os.path.join(root, n), errors="replace").read() for n in names]
        for text in written:
            for s in SECRETS:
                check(s not in text, "a secret reached a file")
    finally:
        ep.stop()


def case_sagemaker():
    """ml.* types: the SageMaker training price (component Training, not the Hosting product the
    endpoint serves beside it at another price), no spot market; EC2 types in the same run."""
    data = os.path.join(TMP, "sm.json")
    with open(data, "w") as f:
        json.dump([{"instance_type": "ml.g5.xlarge", "region": "us-east-1", "on_demand": 1.41},
                   {"instance_type": "ml.p4d.24xlarge", "region": "us-east-1", "on_demand": 37.688},
                   {"instance_type": "g5.xlarge", "region": "us-east-1", "on_demand": 1.006,
                    "spot": {"us-east-1a": 0.41, "us-east-1c": 0.3921}}], f)
    ep = Endpoint(prices=data)
    try:
        p = prices(["--instance-types", "ml.g5.xlarge,ml.p4d.24xlarge,g5.xlarge", "--region", "us-east-1",
                    "--format", "json"], base_env(ep))
        recs, _ = as_json(p)
        for t, usd in (("ml.g5.xlarge", 1.41), ("ml.p4d.24xlarge", 37.688)):
            r = recs[(t, "us-east-1")]
            check(r["on_demand"] and r["on_demand"]["source"] == "live", "%s: %r" % (t, r["on_demand"]))
            close(r["on_demand"]["usd_per_hour"], usd, t + " training price")
            check(r["spot"]["source"] is None and r["spot"]["zones"] == [], "%s has a spot record: %r" % (t, r["spot"]))
        g = recs[("g5.xlarge", "us-east-1")]
        close(g["on_demand"]["usd_per_hour"], 1.006, "g5.xlarge")
        check({z["availability_zone"]: z["usd_per_hour"] for z in g["spot"]["zones"]} ==
              {"us-east-1a": 0.41, "us-east-1c": 0.3921}, "g5.xlarge spot %r" % g["spot"])
        ops = ep.stats()["by_operation"]
        check(ops.get("GetProducts") == 3 and ops.get("DescribeSpotPriceHistory") == 1, "calls %r" % ops)
        # the table: ml.* rows are their own rows at the training price; their managed spot has
        # no published hourly price, said in the cell and under the table (rank's --price prices it)
        p = prices(["--instance-types", "ml.g5.xlarge,g5.xlarge", "--region", "us-east-1", "--format", "table",
                    "--columns", "instance_type,on_demand_usd_per_hour,spot_min_usd_per_hour"], base_env(ep))
        rows = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln.startswith(("ml.", "g5."))}
        check("$1.41" in rows.get("ml.g5.xlarge", "") and "not published" in rows.get("ml.g5.xlarge", ""),
              "ml.g5.xlarge table row %r" % rows.get("ml.g5.xlarge"))
        check("not published" not in rows.get("g5.xlarge", "x") and "$0.39" in rows.get("g5.xlarge", ""),
              "g5.xlarge table row %r" % rows.get("g5.xlarge"))
        legend = " ".join(p.stdout.split())
        check("managed spot has no published hourly price" in legend and "--price TYPE:spot=USD" in legend,
              "no SageMaker spot note under the table: %s" % p.stdout[-600:])
    finally:
        ep.stop()


def case_usage():
    """Bad flags and values: a message and exit 2, never a crash."""
    env = base_env(None, creds=False)
    for args, words in ((["--market", "cheap"], "--market"), (["--source", "web"], "--source"),
                        (["--format", "xml"], "--format"), (["--cache-ttl", "-1"], "--cache-ttl"),
                        (["--cache-ttl", "nan"], "--cache-ttl"), (["--page-size", "0"], "--page-size"),
                        (["--instance-types", "../../etc"], "instance type"), (["--region", "mars"], "region"),
                        (["--instance-types", ""], "--instance-types"), (["--region"], "--region"),
                        (["--bogus"], "unknown option"), (["extra"], "unexpected"),
                        (["--instance-types", "g5.xlarge,g5.xlarge"], "twice"), (["--timeout", "0"], "--timeout")):
        p = prices(args, env, expect_rc=2)
        check(words in p.stderr, "%s: message lacks %r: %s" % (args, words, p.stderr))
    p = prices(["--help"], env)
    check("--instance-types" in p.stdout and "--source" in p.stdout, "help")


def case_exit_codes():
    """Nothing found is exit 1 with one line saying why (an empty cache, a product that exists
    nowhere, live or in the snapshot); a region nobody knows is exit 2; nothing on stdout."""
    def last_line(p):
        lines = [l for l in p.stderr.splitlines() if l.startswith("instbench prices:")]
        check(len(lines) == 1, "want one 'instbench prices:' line, got %r" % lines)
        check(p.stdout == "", "printed %r" % p.stdout[:200])
        return lines[0] if lines else ""
    env = base_env(None, creds=False)
    p = prices(["--source", "cache", "--instance-types", "g5.xlarge", "--region", "us-east-1"], env, expect_rc=1)
    line = last_line(p)
    check("cache" in line and "--source live" in line, "empty cache: %r" % line)
    check("warning" not in p.stderr, "empty cache: more than one line: %r" % p.stderr)
    p = prices(["--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-9"], env, expect_rc=2)
    check("us-east-9" in last_line(p) and "region" in p.stderr, "unknown region: %r" % p.stderr)
    p = prices(["--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1,us-east-9"], env,
               expect_rc=2)
    check("us-east-9" in last_line(p), "unknown region among known ones: %r" % p.stderr)
    # a type the snapshot does not know, asked of the snapshot alone: a usage error since issue 13
    # (it was exit 1, "nothing found"): no source asked could ever price it
    p = prices(["--source", "snapshot", "--instance-types", "zz9.large", "--region", "us-east-1"], env, expect_rc=2)
    check("zz9.large" in last_line(p) and "not in the price snapshot" in p.stderr,
          "no product in the snapshot: %r" % p.stderr)
    out = os.path.join(TMP, "none.json")
    p = prices(["--source", "snapshot", "--instance-types", "zz9.large", "--region", "us-east-1", "-o", out], env,
               expect_rc=2)
    check(not os.path.exists(out), "an empty price file was written")
    # a snapshot type in a region the snapshot has no row for: known names, nothing found, exit 1
    p = prices(["--source", "snapshot", "--instance-types", "p5en.48xlarge", "--region", "af-south-1"], env,
               expect_rc=1)
    check("p5en.48xlarge" in last_line(p), "known names, no price: %r" % p.stderr)
    # live: AWS answers, but has no such product (and neither has the snapshot): unknown, exit 2,
    # but only once AWS was asked (a type newer than the snapshot must get its live lookup)
    ep = Endpoint()
    try:
        for source in ("live", "auto"):
            p = prices(["--source", source, "--instance-types", "zz9.large", "--region", "us-east-1",
                        "--no-placement-scores"], base_env(ep), expect_rc=2)
            check("zz9.large" in last_line(p), "--source %s, no product: %r" % (source, p.stderr))
        st = ep.stats()
        check(st["by_operation"].get("GetProducts", 0) >= 2, "AWS was not asked: %r" % st)
    finally:
        ep.stop()
    # auto without credentials: live AWS was never asked, so nothing may claim it has "no such
    # product"; ml.* prices are live AWS's alone, so the line says so and names the fix
    noaws = dict(env, XDG_CACHE_HOME=os.path.join(TMP, "cache-never-filled"))
    for types, ml in (("ml.g5.xlarge", True), ("zz9.large", False)):
        p = prices(["--instance-types", types, "--region", "us-east-1"], noaws, expect_rc=1)
        line = last_line(p)
        want = ("instbench prices: no price for %s in us-east-1 in the cache or the snapshot, and live AWS was not "
                "asked (no AWS credentials)%s; give instbench AWS credentials" %
                (types, ": SageMaker ml.* prices come from live AWS only" if ml else ""))
        check(line.startswith(want) and "no such product" not in p.stderr, "%s, no credentials: %r" % (types, p.stderr))
    p = prices(["--instance-types", "g5.xlarge,ml.g5.xlarge", "--region", "us-east-1", "--format", "json"], noaws)
    check("warning: no on-demand price from the cache or the snapshot for 1 of 2 (type, region) pairs (e.g. "
          "ml.g5.xlarge in us-east-1); live AWS was not asked (no AWS credentials)" in p.stderr,
          "ml.* beside a snapshot type, no credentials: %r" % p.stderr)
    # something found is still exit 0
    prices(["--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1"], env)


def account_zone_names(region):
    """{zone ID: zone name} of the fake's account for REGION, by the rule its docstring states (the
    plain IDs sorted, letters handed out from index sum(region bytes) mod count; a local zone's ID
    use1-atl2-az1 named us-east-1-atl-2a), recomputed here from the CSV's zone IDs."""
    ids = sorted({az for (t, r), rec in CSV_RECS.items() if r == region for az in rec["spot"]})
    plain = [z for z in ids if z.count("-") == 1]
    start = sum(region.encode()) % len(plain)
    names = {z: region + chr(ord("a") + k) for k, z in enumerate(plain[start:] + plain[:start])}
    for z in ids:
        if z.count("-") > 1:
            mid = z.split("-")[1]
            digits = len(mid) - len(mid.rstrip("0123456789"))
            names[z] = "%s-%s-%sa" % (region, mid[:len(mid) - digits], mid[len(mid) - digits:])
    return names


def rank(args, env, expect_rc=0):
    return instbench(["rank"], args, env, expect_rc)


def write_result(name, t, region, az=None, az_id=None):
    inst = {"type": t, "region": region}
    if az:
        inst.update(availability_zone=az, availability_zone_id=az_id)
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        json.dump({"schema": "instbench.result/v1", "instance": inst, "workload": {"fingerprint": "abcdef"},
                   "topology": {"nodes": 1}, "measurement": {"samples_per_second": 100}}, f)
    return path


def case_zones():
    """Zone names and IDs.  With --zone-names the fake answers spot prices by this account's zone
    names, as AWS does, and placement scores by zone ID: the per-AZ scores reach the right zones
    only through DescribeAvailabilityZones.  rank --az takes a name or an ID: live prices map one to
    the other through the account; snapshot prices (IDs only) map a name only through a result
    that recorded its ID, else exit 2 with one line saying how to fix it."""
    t, regions = "g5.xlarge", ["us-east-1", "us-west-2"]
    ep = Endpoint("--zone-names")
    try:
        env = base_env(ep)
        p = prices(["--instance-types", t, "--region", ",".join(regions), "--format", "json", "--source", "live"],
                   env)
        recs, _ = as_json(p)
        for r in regions:
            names = account_zone_names(r)
            want = {names[z]: float("%.6f" % usd) for z, usd in CSV_RECS[(t, r)]["spot"].items()}
            zones = recs[(t, r)]["spot"]["zones"]
            got = {z["availability_zone"]: z["usd_per_hour"] for z in zones}
            check(got.keys() == want.keys(), "%s: live zones %s, want the account's names %s"
                  % (r, sorted(got), sorted(want)))
            for name, usd in want.items():
                close(got.get(name), usd, "%s %s" % (r, name))
            ids = {v: k for k, v in names.items()}
            for z in zones:   # each name's score is the one the fake computed for its ID
                want_s = score([t], r, ids[z["availability_zone"]])
                check(z.get("placement_score") == want_s, "%s %s score %r, want %d (by its ID %s)"
                      % (r, z["availability_zone"], z.get("placement_score"), want_s, ids[z["availability_zone"]]))
        ops = ep.stats()["by_operation"]
        check(ops.get("DescribeAvailabilityZones") == len(regions), "DescribeAvailabilityZones calls: %r" % ops)
        check(ep.stats()["signature_failures"] == 0, "signature failures: %r" % ep.stats())

        # rank --az: a name, or its ID, prices the same zone from live AWS
        res = write_result("r-g5.json", t, "us-east-1")
        names = account_zone_names("us-east-1")
        zid = sorted(CSV_RECS[(t, "us-east-1")]["spot"])[2]
        name, usd = names[zid], CSV_RECS[(t, "us-east-1")]["spot"][zid]
        for given in (name, zid):
            p = rank([res, "--source", "live", "--market", "spot", "--az", given, "--format", "json"], env)
            rows = [r for r in json.loads(p.stdout)["rows"] if r["rank"] is not None]   # the ranked ones
            check(len(rows) == 1 and rows[0]["spot_az"] == name, "--az %s: rows %r" % (given, rows))
            if rows:
                close(rows[0]["usd_per_hour"], float("%.6f" % usd), "--az %s live price" % given)
        before = ep.stats()["by_operation"].get("DescribeAvailabilityZones", 0)
        p = rank([res, "--source", "live", "--market", "spot", "--az", "us-east-1q"], env, expect_rc=2)
        check("us-east-1q" in p.stderr and "not a zone of us-east-1" in p.stderr, "--az us-east-1q: %s" % p.stderr)
        check(ep.stats()["by_operation"].get("DescribeAvailabilityZones", 0) > before,
              "an unknown zone name was refused without asking the account")
    finally:
        ep.stop()

    # snapshot prices name zones by ID: an ID prices directly, a name only through a result's pair
    snap_env = base_env(None, creds=False)
    res = write_result("r-g5.json", t, "us-east-1")
    zid = sorted(CSV_RECS[(t, "us-east-1")]["spot"])[0]
    usd = CSV_RECS[(t, "us-east-1")]["spot"][zid]
    p = rank([res, "--source", "snapshot", "--market", "spot", "--az", zid, "--format", "json"], snap_env)
    rows = [r for r in json.loads(p.stdout)["rows"] if r["rank"] is not None]   # the ranked ones
    check(len(rows) == 1 and rows[0]["spot_az"] == zid, "snapshot --az %s: %r" % (zid, rows))
    if rows:
        close(rows[0]["usd_per_hour"], usd, "snapshot --az %s" % zid)
    p = rank([res, "--source", "snapshot", "--market", "spot", "--az", "us-east-1a"], snap_env, expect_rc=2)
    lines = [l for l in p.stderr.splitlines() if l.startswith("instbench rank:")]
    check(len(lines) == 1 and "cannot be mapped offline" in lines[0] and "--source live" in lines[0]
          and zid in lines[0], "snapshot --az us-east-1a: %r" % p.stderr)
    paired = write_result("r-paired.json", t, "us-east-1", "us-east-1a", zid)
    p = rank([paired, "--source", "snapshot", "--market", "spot", "--az", "us-east-1a", "--format", "json"], snap_env)
    rows = [r for r in json.loads(p.stdout)["rows"] if r["rank"] is not None]   # the ranked ones
    check(len(rows) == 1 and rows[0]["spot_az"] == zid, "a result's own pair was not used: %r" % rows)
    if rows:
        close(rows[0]["usd_per_hour"], usd, "snapshot --az us-east-1a through the result's pair")
    p = rank([res, "--source", "snapshot", "--market", "spot", "--az", "use1-az9"], snap_env, expect_rc=2)
    check("use1-az9" in p.stderr and "did you mean use1-az" in p.stderr, "unknown zone ID: %s" % p.stderr)
    # --source live with no credentials: the message names the flag as given, and no old spelling
    p = rank([res, "--source", "live"], snap_env, expect_rc=1)
    last = p.stderr.strip().splitlines()[-1]
    check(last.startswith("instbench rank: --source live:") and "--prices" not in p.stderr, "rank --source live: %r"
          % p.stderr)

    # without ec2:DescribeAvailabilityZones, names and IDs stay apart: per-AZ scores absent, with a note
    ep = Endpoint("--zone-names", "--zones-unauthorized")
    try:
        p = prices(["--instance-types", t, "--region", "us-east-1", "--format", "json"], base_env(ep))
        recs, doc = as_json(p)
        check(all(z["placement_score"] is None for z in recs[(t, "us-east-1")]["spot"]["zones"]),
              "per-AZ scores without the zone map: %r" % recs[(t, "us-east-1")]["spot"])
        check("UnauthorizedOperation" in doc.get("placement_note", ""), "no note: %r" % doc.get("placement_note"))
    finally:
        ep.stop()


def case_names():
    """Live names: a type the snapshot lacks is looked up at AWS before it is called unknown
    (then exit 2 with the nearest snapshot type); one AWS prices is fine though the snapshot lacks
    it; a misspelt size is refused before any request."""
    data = os.path.join(TMP, "new.json")
    with open(data, "w") as f:
        json.dump([{"instance_type": "g7x.2xlarge", "region": "us-east-1", "on_demand": 2.5,
                    "spot": {"use1-az1": 0.9}},
                   {"instance_type": "g5.xlarge", "region": "us-east-1", "on_demand": 1.006}], f)
    ep = Endpoint(prices=data)
    try:
        env = base_env(ep)
        p = prices(["--source", "live", "--instance-types", "g7x.2xlarge", "--region", "us-east-1", "--format",
                    "json", "--no-placement-scores"], env)
        recs, _ = as_json(p)
        close(recs[("g7x.2xlarge", "us-east-1")]["on_demand"]["usd_per_hour"], 2.5, "a live-only type")
        before = ep.stats()["by_operation"].get("GetProducts", 0)
        p = prices(["--source", "live", "--instance-types", "g55.xlarge", "--region", "us-east-1",
                    "--no-placement-scores"], env, expect_rc=2)
        check(ep.stats()["by_operation"].get("GetProducts", 0) > before, "refused before AWS was asked")
        check("did you mean g5.xlarge?" in p.stderr and p.stdout == "", "g55.xlarge: %s" % p.stderr)
        before = ep.stats()["requests"]
        p = prices(["--source", "live", "--instance-types", "g5.xlarg", "--region", "us-east-1"], env, expect_rc=2)
        check(ep.stats()["requests"] == before, "a malformed size reached AWS")
        check("did you mean g5.xlarge?" in p.stderr, "g5.xlarg: %s" % p.stderr)
    finally:
        ep.stop()


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}

if __name__ == "__main__":
    try:
        if CASE not in CASES:
            fail("unknown case; known: " + ", ".join(sorted(CASES)))
        CASES[CASE]()
        for text in ALL_OUTPUT:
            for s in SECRETS:
                check(s not in text, "a secret appeared in instbench's output")
        print("ok [%s]: %d instbench runs" % (CASE, len(ALL_OUTPUT)))
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
