"""What the `instbench prices` tests against the local AWS test endpoint share (prices_live.py,
prices_live_cache.py): the fake AWS (tests/fakes/aws_fake_server.py, which checks every request's
SigV4 signature with botocore), the reference data, running instbench, and checking its records.

Expected values are computed here, in Python, from the same data the endpoint serves (the vendored
data/aws-accelerated-prices.csv) and from the endpoint's documented serving rules (on-demand rounded to
4 decimals and printed with 10, spot printed with 6 decimals, the latest Linux/UNIX entry per AZ,
placement score 1 + sha256("types|region[|az]") mod 10), and interruption buckets straight from the
Spot Advisor JSON.  Nothing is compared against instbench's own earlier output.

A test file imports this as its own command line: INSTBENCH PRICE_DATA_DIR CASE (PRICE_DATA_DIR: the
repository's data/), then hands its cases to run().
"""
import csv
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

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


def run(cases):
    """Runs the case CASE of CASES ({name: function}), then checks that no secret appeared in anything
    instbench printed."""
    try:
        if CASE not in cases:
            fail("unknown case; known: " + ", ".join(sorted(cases)))
        cases[CASE]()
        for text in ALL_OUTPUT:
            for s in SECRETS:
                check(s not in text, "a secret appeared in instbench's output")
        print("ok [%s]: %d instbench runs" % (CASE, len(ALL_OUTPUT)))
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
