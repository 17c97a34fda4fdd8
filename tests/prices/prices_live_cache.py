#!/usr/bin/python3
"""`instbench prices` and its price cache, against the local AWS test endpoint
(tests/fakes/aws_fake_server.py): a live run writes the cache and later runs reuse it, a corrupt or
hostile cache file is refused, the cache is trusted only as far as it should be, and the snapshot
answers without credentials.  What the tests share, and where the expected values come from, is in
prices_live_lib.py.

usage: prices_live_cache.py INSTBENCH PRICE_DATA_DIR CASE   (PRICE_DATA_DIR: the repository's data/)
"""
import csv
import json
import os
import stat
import time

from prices_live_lib import (CSV_RECS, TMP, Endpoint, as_json, base_env, check, close, endpoint_cache_dir,
                             endpoint_env, instbench, pick, prices, run, served_on_demand, served_spot,
                             testlib)  # testlib: tests/lib's, on the path prices_live_lib sets


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


if __name__ == "__main__":
    run({k[5:]: v for k, v in globals().items() if k.startswith("case_")})
