#!/usr/bin/python3
"""`instbench prices` against the local AWS test endpoint (tests/fakes/aws_fake_server.py, which checks
every request's SigV4 signature with botocore): live answers, pagination, concurrency, faults, secrets,
SageMaker, usage, exit codes, zone names and IDs, live names.  The cache's cases are in
prices_live_cache.py; what both share, and where the expected values come from, in prices_live_lib.py.

usage: prices_live.py INSTBENCH PRICE_DATA_DIR CASE   (PRICE_DATA_DIR: the repository's data/)
"""
import json
import os
import shutil
import time

from prices_live_lib import (AK, CSV_RECS, SECRETS, SK, TMP, TOKEN, Endpoint, as_json, base_env, check, check_live,
                             close, instbench, pick, prices, run, score, served_on_demand)


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
        # every column at once with --nodes: the sources line is at its longest and must still end
        # whole (it was cut short without a word at 1 KB)
        p = prices(["--instance-types", "ml.g5.xlarge,g5.xlarge", "--region", "us-east-1", "--format", "table",
                    "--wide", "--nodes", "2"], base_env(ep))
        flat = " ".join(p.stdout.split())
        src = flat[flat.find("sources: "):]
        src = src[:src.find(". ", 0) + 1] if ". " in src else src
        check(p.returncode == 0 and "ml.* rows" in src and src.rstrip().endswith(".") and "PLACEMENT" in src,
              "sources line cut short or missing clauses (%d chars): %s" % (len(src), src[-300:]))
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


if __name__ == "__main__":
    run({k[5:]: v for k, v in globals().items() if k.startswith("case_")})
