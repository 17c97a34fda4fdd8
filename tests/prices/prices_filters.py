#!/usr/bin/python3
"""`instbench prices` as a shopping list (issue 13): --accelerator NAME[:N], --min-vcpus,
--min-memory, --min-accelerator-memory, --max-price, --max-spot-price and --sort, checked against
expectations computed here from the vendored data (data/*.csv, read the
way scripts/data/make_price_snapshot.py documents: one record per (type, region), the lowest spot price
of a record is the cheapest of its zones, savings % = 1 - lowest spot / on-demand), never from instbench:

- each filter alone, combinations, every sort order (missing figures last, ties in the natural
  type order, then the regions as listed), in CSV, JSON and table output;
- --max-price looks at the markets shown (on-demand or lowest spot, either with --market both);
- usage errors are exit 2 with one line (unknown accelerator: the nearest name; a malformed
  NAME:N; negative or non-numbers; a sort or spot filter the market shown cannot answer);
- filters that leave nothing are exit 1 with one line naming the filter, nothing on stdout;
- a type the catalogue has no hardware for (priced from the cache or live AWS) is left out by the
  hardware filters with a warning naming it, and kept by the price filters.

usage: prices_filters.py INSTBENCH PRICE_DATA_DIR
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import FakeAws, absent_path, check, failures, natural_key, parse_table, regular_zones, usd

ABSENT = absent_path()
INSTBENCH, DATA = [os.path.abspath(a) for a in sys.argv[1:3]]
TMP = tempfile.mkdtemp(prefix="instbench-filters-")
ROWS = [row for name in ("aws-accelerated-prices.csv", "aws-cpu-prices.csv", "aws-accelerated-prices-2026.csv")
        for row in csv.DictReader(open(os.path.join(DATA, name), newline=""))]
ENV = dict(os.environ, AWS_EC2_METADATA_DISABLED="true", HOME=ABSENT, XDG_CACHE_HOME=ABSENT,
           AWS_ACCESS_KEY_ID="", AWS_SECRET_ACCESS_KEY="", AWS_PROFILE="", AWS_CONFIG_FILE=ABSENT,
           AWS_SHARED_CREDENTIALS_FILE=ABSENT, COLUMNS="400", NO_COLOR="1")


# ---- the reference: records and hardware from the CSVs ---------------------------------------------

HW = {}      # type -> (vcpus, memory_gib, accelerator or "", count, total accelerator MiB or None)
RECS = {}    # (type, region) -> {"od": float|None, "spot": {az: usd}}
for r in ROWS:
    HW[r["instance_type"]] = (int(float(r["vcpus"])), float(r["memory_gib"]), r["accelerator"],
                              int(float(r["accelerator_count"])) if r["accelerator"] else 0,
                              float(r["gpu_memory_mib_total"]) if r["gpu_memory_mib_total"] else None)
    rec = RECS.setdefault((r["instance_type"], r["region"]), {"od": None, "spot": {}})
    if r["on_demand_usd_per_hour"]:
        rec["od"] = float(r["on_demand_usd_per_hour"])
    if r["spot_usd_per_hour"]:
        rec["spot"][r["availability_zone"]] = float(r["spot_usd_per_hour"])
TYPES = sorted(HW)
REGIONS = sorted({r["region"] for r in ROWS})
ACCELERATORS = sorted({h[2] for h in HW.values() if h[2]})

NATURAL = sorted(TYPES, key=natural_key)


def od(t, r):
    rec = RECS.get((t, r))
    return rec["od"] if rec else None


def spot(t, r):
    """The lowest spot price over the record's Availability Zones (Local Zones need --include-local-zones)."""
    rec = RECS.get((t, r))
    zones = regular_zones(rec["spot"]) if rec else {}
    return min(zones.values()) if zones else None


def savings(t, r):
    """The row's own spot savings %, 1 - lowest spot / on-demand (the SAVINGS % column)."""
    o, s = od(t, r), spot(t, r)
    return 100 * (1 - s / o) if o and s is not None else None


def per_accelerator_gib(t):
    vcpus, mem, acc, count, mib = HW[t]
    return mib / 1024 / count if acc and count and mib is not None else None


def expect(types=None, regions=("us-east-1",), acc=None, min_vcpus=None, min_memory=None, min_acc_memory=None,
           max_price=None, max_spot=None, market="both", sort="type"):
    """The (type, region) rows instbench should list, in order.  acc: [(name, count or None)]."""
    types = types or NATURAL
    rows = [(t, r) for t in types for r in regions]   # type-major, regions as asked
    show_od, show_spot = market != "spot", market != "on-demand"

    def keep(t, r):
        vcpus, mem, a, count, mib = HW[t]
        if acc and not any(a.lower() == n.lower() and (c is None or c == count) for n, c in acc):
            return False
        if min_vcpus is not None and vcpus < min_vcpus:
            return False
        if min_memory is not None and mem < min_memory:
            return False
        if min_acc_memory is not None and (per_accelerator_gib(t) is None or per_accelerator_gib(t) < min_acc_memory):
            return False
        if max_price is not None:
            o, s = od(t, r), spot(t, r)
            if not ((show_od and o is not None and o <= max_price) or (show_spot and s is not None and s <= max_price)):
                return False
        if max_spot is not None and (spot(t, r) is None or spot(t, r) > max_spot):
            return False
        return True

    rows = [x for x in rows if keep(*x)]
    key = {"price": lambda x: od(*x), "spot": lambda x: spot(*x),
           "savings": lambda x: None if savings(*x) is None else -savings(*x)}.get(sort)
    if key:   # sorted() is stable: ties keep the natural order
        rows = sorted(rows, key=lambda x: (key(x) is None, key(x) if key(x) is not None else 0))
    return rows


# ---- running instbench ---------------------------------------------------------------------------

def run(*args, env=ENV):
    p = subprocess.run([INSTBENCH, "prices", *args], capture_output=True, text=True, env=env, timeout=120,
                       stdin=subprocess.DEVNULL)
    if "Sanitizer" in p.stderr or "runtime error:" in p.stderr:
        check(False, "sanitizer report for %s:\n%s" % (args, p.stderr[-3000:]))
    return p


def snap(*args):
    return run("--source", "snapshot", *args)


def region_args(regions):
    return ["--region", ",".join(regions)]


def listed(p, fmt, what):
    """The (type, region) rows of an output, in order."""
    if not check(p.returncode == 0, "%s: exit %d: %s" % (what, p.returncode, p.stderr[-500:])):
        return None
    if fmt == "csv":
        return [(r["instance_type"], r["region"]) for r in csv.DictReader(p.stdout.splitlines())]
    if fmt == "json":
        return [(r["instance_type"], r["region"]) for r in json.loads(p.stdout)["prices"]]
    # the table: one region for every row is said on a line above it instead of in a REGION column
    headers, rows = parse_table(p.stdout)
    above = re.match(r"region: (\S+)\n", p.stdout)
    return [(r["INSTANCE TYPE"], r["REGION"] if "REGION" in headers else above and above.group(1)) for r in rows]


def same(args, want, what, fmt="csv"):
    got = listed(snap(*args, "--format", fmt), fmt, what)
    if got is not None:
        check(got == want, "%s (%s): listed\n  %s\nwant\n  %s" % (what, fmt, got, want))
    return got


def acc_args(acc):
    return ["--accelerator", ",".join(n if c is None else "%s:%d" % (n, c) for n, c in acc)]


# ---- each filter alone, in every format --------------------------------------------------------
TWO = ("us-west-2", "us-east-1")   # not in name order: ties keep the order asked
cases = [
    ("A10G", dict(acc=[("A10G", None)])),
    ("a10g:4 (any case, a count)", dict(acc=[("a10g", 4)])),
    ("H100:8,L4", dict(acc=[("H100", 8), ("L4", None)])),
    ("A100 is not A100-80GB", dict(acc=[("A100", None)])),
    ("Trainium:16", dict(acc=[("Trainium", 16)])),
    ("min-vcpus 96", dict(min_vcpus=96)),
    ("min-memory 1000", dict(min_memory=1000)),
    ("min-memory 0.5", dict(min_memory=0.5)),
    ("min-accelerator-memory 24", dict(min_acc_memory=24)),
    ("min-accelerator-memory 22.35 (A10G's 22.35 GiB each)", dict(min_acc_memory=22.35)),
    ("min-accelerator-memory 80 (H100's exactly)", dict(min_acc_memory=80)),
    ("max-price 1", dict(max_price=1)),
    ("max-spot-price 0.5", dict(max_spot=0.5)),
]


def cli(kw):
    a = []
    if kw.get("acc"):
        a += acc_args(kw["acc"])
    for k, flag in (("min_vcpus", "--min-vcpus"), ("min_memory", "--min-memory"),
                    ("min_acc_memory", "--min-accelerator-memory"), ("max_price", "--max-price"),
                    ("max_spot", "--max-spot-price")):
        if kw.get(k) is not None:
            a += [flag, str(kw[k])]
    if kw.get("market", "both") != "both":
        a += ["--market", kw["market"]]
    if kw.get("sort", "type") != "type":
        a += ["--sort", kw["sort"]]
    return a


for what, kw in cases:
    for regions in (("us-east-1",), TWO):
        want = expect(regions=regions, **kw)
        check(want, "%s: the test's own expectation is empty" % what)
        same(cli(kw) + region_args(regions), want, "%s in %s" % (what, regions))
    same(cli(kw) + region_args(("us-east-1",)), expect(**kw), what, fmt="json")
    same(cli(kw) + region_args(("us-east-1",)), expect(**kw), what, fmt="table")
# the A10G:4 rows are exactly the 4-GPU sizes
check({t for t, _ in expect(acc=[("A10G", 4)])} == {"g5.12xlarge", "g5.24xlarge"}, "the test's A10G:4")
# a repeated --accelerator adds up like the comma list
same(["--accelerator", "T4", "--accelerator", "V100:8", "--region", "us-east-1"],
     expect(acc=[("T4", None), ("V100", 8)]), "repeated --accelerator")

# ---- --max-price and the markets shown ---------------------------------------------------------
for market in ("on-demand", "spot", "both"):
    for price in (0.5, 2.0):
        kw = dict(max_price=price, market=market)
        same(cli(kw) + region_args(TWO), expect(regions=TWO, **kw), "--max-price %g --market %s" % (price, market))
# --market both: a row with only a cheap spot price qualifies, as one with only a cheap on-demand one
both = set(expect(max_price=2.0))
check(set(expect(max_price=2.0, market="spot")) | set(expect(max_price=2.0, market="on-demand")) == both,
      "the test's own --max-price union")
check(set(expect(max_price=2.0, market="spot")) - set(expect(max_price=2.0, market="on-demand")),
      "the test data has no row cheap on spot only (the market rule goes untested)")

# ---- sort orders (every type, several regions; missing figures last) ---------------------------
for order in ("type", "price", "spot", "savings"):
    kw = dict(sort=order)
    for regions in (("us-east-1",), TWO):
        same(cli(kw) + region_args(regions), expect(regions=regions, **kw), "--sort %s in %s" % (order, regions))
    same(cli(kw) + region_args(TWO), expect(regions=TWO, **kw), "--sort %s" % order, fmt="json")
    same(cli(kw) + region_args(TWO), expect(regions=TWO, **kw), "--sort %s" % order, fmt="table")
# the figures themselves come out ordered in the CSV
p = snap("--sort", "spot", "--region", ",".join(TWO), "--format", "csv")
vals = [r["spot_min_usd_per_hour"] for r in csv.DictReader(p.stdout.splitlines())]
known = [float(v) for v in vals if v]
check(known == sorted(known) and all(not v for v in vals[len(known):]), "--sort spot: CSV spot_min not ascending, "
      "or an empty one before a price")
p = snap("--sort", "savings", "--region", "all", "--format", "csv")
vals = [r["spot_min_savings_pct"] for r in csv.DictReader(p.stdout.splitlines())]
known = [float(v) for v in vals if v]
check(known == sorted(known, reverse=True) and all(not v for v in vals[len(known):]),
      "--sort savings over all regions: CSV spot_min_savings_pct not descending, or an empty one before a figure")
same(["--sort", "savings", "--region", "all"], expect(regions=REGIONS, sort="savings"), "--sort savings, all regions")
same(["--market", "spot", "--sort", "spot", "--region", "us-east-1"], expect(market="spot", sort="spot"),
     "--market spot --sort spot")

# ---- combinations --------------------------------------------------------------------------------
combos = [
    dict(acc=[("A10G", None), ("L4", None)], min_vcpus=16, max_price=3, sort="spot"),
    dict(acc=[("L40S", None)], min_memory=256, sort="price"),
    dict(min_acc_memory=40, max_spot=10, sort="savings"),
    dict(min_vcpus=8, min_memory=64, max_price=0.5, market="spot", sort="spot"),
    dict(acc=[("H100", None), ("H200", None), ("A100-80GB", None)], min_acc_memory=80, sort="price"),
]
for kw in combos:
    want = expect(regions=TWO, **kw)
    check(want, "combination %s: the test's own expectation is empty" % kw)
    same(cli(kw) + region_args(TWO), want, "combination %s" % kw)
    same(cli(kw) + region_args(TWO), want, "combination %s" % kw, fmt="json")
# filters after patterns: --instance-types narrows first
same(["--instance-types", "g6*", "--min-vcpus", "48", "--sort", "price", "--region", "us-east-1"],
     expect(types=[t for t in NATURAL if t.startswith("g6")], min_vcpus=48, sort="price"), "g6* --min-vcpus 48")
# the trn1 rows (accelerator memory unknown in the source) are left out, and a warning names them
p = snap("--min-accelerator-memory", "1", "--region", "us-east-1", "--format", "csv")
check(not [r for r in listed(p, "csv", "trn1") or [] if r[0].startswith("trn1")], "trn1 passed --min-accelerator-memory")
check("trn1.2xlarge" in p.stderr and "no accelerator memory" in p.stderr, "no warning naming trn1: %s" % p.stderr)


# ---- usage errors: exit 2, one line, nothing on stdout ---------------------------------------------

def one_line(p, code, what):
    lines = [l for l in p.stderr.splitlines() if l.startswith("instbench prices:")]
    check(p.returncode == code, "%s: exit %d, want %d: %s" % (what, p.returncode, code, p.stderr[-400:]))
    check(len(lines) == 1 and p.stdout == "", "%s: want one 'instbench prices:' line and no stdout:\n%s%s"
          % (what, p.stdout[-200:], p.stderr[-400:]))
    return lines[0] if lines else ""


def suggestion(line):
    m = re.search(r"did you mean '?([^'?]+)'?\?", line)
    return m.group(1) if m else None


for typo, near in (("A1OG", "A10G"), ("H10O", "H100"), ("L40X:4", "L40S:4"), ("Trainum", "Trainium"),
                   ("V100-32G", "V100-32GB")):
    line = one_line(snap("--accelerator", typo, "--region", "us-east-1"), 2, typo)
    check(suggestion(line) == near and "--accelerator" in line, "%s: want 'did you mean %s?': %r" % (typo, near, line))
    check(all(a in line for a in ACCELERATORS), "%s: the line does not list the catalogue's accelerators: %r"
          % (typo, line))
# an accelerator no AWS type carries (B200 was the example until the snapshot gained p6-b200)
line = one_line(snap("--accelerator", "MI300X", "--region", "us-east-1"), 2, "MI300X")
check("MI300X" in line, "MI300X: %r" % line)
# a model AWS names in words (g7e's "RTX PRO Server 6000", DescribeInstanceTypes' name) filters like A10G
want = sorted({r["instance_type"] for r in ROWS if r["accelerator"] == "RTX PRO Server 6000" and r["region"] == "us-east-1"
               and int(float(r["accelerator_count"])) == 1})
p = snap("--accelerator", "RTX PRO Server 6000:1", "--region", "us-east-1", "--format", "json")
got = sorted(x["instance_type"] for x in json.loads(p.stdout or "{}").get("prices", [])) if p.returncode == 0 else None
check(want and got == want, "RTX PRO Server 6000:1: exit %d, %s, want %s: %s" % (p.returncode, got, want, p.stderr[-300:]))
for bad in ("A10G:", "A10G:0", "A10G:-1", "A10G:x", "A10G:4:2", ":4", "A10G:1.5", "A 10G", "A10G:257"):
    line = one_line(snap("--accelerator", bad, "--region", "us-east-1"), 2, bad)
    check("--accelerator" in line and bad in line, "%s: the line does not name it: %r" % (bad, line))
for flag, bad in (("--min-vcpus", "-1"), ("--min-vcpus", "0"), ("--min-vcpus", "4.5"), ("--min-vcpus", "x"),
                  ("--min-memory", "-1"), ("--min-memory", "nan"), ("--min-accelerator-memory", "-2"),
                  ("--min-accelerator-memory", "inf"), ("--max-price", "-0.5"), ("--max-price", "0"),
                  ("--max-price", "one"), ("--max-spot-price", "-1"), ("--sort", "cheapest")):
    line = one_line(snap(flag, bad, "--region", "us-east-1"), 2, "%s %s" % (flag, bad))
    check(flag in line, "%s %s: the line does not name the flag: %r" % (flag, bad, line))
line = one_line(snap("--sort", "prise"), 2, "--sort prise")
check(suggestion(line) == "price", "--sort prise: %r" % line)
for args in (("--market", "on-demand", "--sort", "spot"), ("--market", "on-demand", "--sort", "savings"),
             ("--market", "on-demand", "--max-spot-price", "1"), ("--market", "spot", "--sort", "price")):
    line = one_line(snap(*args, "--region", "us-east-1"), 2, " ".join(args))
    check(args[2] in line and "--market" in line, "%s: %r" % (args, line))

# ---- filters that leave nothing: exit 1, one line naming the filter, nothing written ----------------
out = os.path.join(TMP, "out.json")
p = snap("--min-vcpus", "500", "--region", "us-east-1", "-o", out)
line = one_line(p, 1, "--min-vcpus 500")
most = max(HW[t][0] for t in NATURAL)
check("--min-vcpus 500" in line and "leaves no row" in line and " %d " % most in line,
      "--min-vcpus 500: want the flag and the most vCPUs (%d): %r" % (most, line))
check(not os.path.exists(out), "-o FILE written though the filters left nothing")
line = one_line(snap("--min-memory", "100000", "--region", "us-east-1"), 1, "--min-memory 100000")
check("--min-memory" in line and "%g GiB" % max(HW[t][1] for t in NATURAL) in line, "--min-memory: %r" % line)
line = one_line(snap("--min-accelerator-memory", "500", "--region", "us-east-1"), 1, "--min-accelerator-memory")
best = max(per_accelerator_gib(t) for t in NATURAL if per_accelerator_gib(t) is not None)
check("--min-accelerator-memory 500" in line and "%.2f GiB" % best in line, "--min-accelerator-memory: %r" % line)
cheapest = min(min(v for v in (od(t, "us-east-1"), spot(t, "us-east-1")) if v is not None)
               for t in NATURAL if od(t, "us-east-1") is not None or spot(t, "us-east-1") is not None)
# the cheapest as tables write money ($0.0105/h), and the value that lets it through, exactly (repr:
# the shortest text reading back to the CSV's price)
line = one_line(snap("--max-price", "0.001", "--region", "us-east-1"), 1, "--max-price 0.001")
check("--max-price 0.001" in line and "at %s/h" % usd(cheapest) in line and "USD" not in line and
      line.endswith("raise --max-price to at least %r" % cheapest), "--max-price: want the cheapest %s: %r"
      % (usd(cheapest), line))
cheapest_spot = min(spot(t, "us-east-1") for t in NATURAL if spot(t, "us-east-1") is not None)
line = one_line(snap("--max-spot-price", "0.001", "--region", "us-east-1", "--format", "json"), 1, "--max-spot-price")
check("--max-spot-price" in line and "at %s/h spot" % usd(cheapest_spot) in line and
      line.endswith("raise --max-spot-price to at least %r" % cheapest_spot), "--max-spot-price: %r" % line)
# a price of four figures above $0.10: the money rounded to cents, the value to give all four
g5 = spot("g5.xlarge", "us-east-1")
line = one_line(snap("--instance-types", "g5.xlarge", "--max-price", "0.01", "--region", "us-east-1"), 1, "g5.xlarge")
check(round(g5, 2) != g5 and "g5.xlarge in us-east-1 at %s/h spot" % usd(g5) in line and
      line.endswith("raise --max-price to at least %r" % g5), "g5.xlarge --max-price 0.01: %r" % line)
# an accelerator the catalogue has, in a count it does not come in: the counts it does
line = one_line(snap("--accelerator", "A10G:2", "--region", "us-east-1", "--format", "csv"), 1, "A10G:2")
counts = sorted({HW[t][3] for t in TYPES if HW[t][2] == "A10G"})
check("A10G:2" in line and all("%d x A10G" % c in line for c in counts), "A10G:2: want the counts %s: %r"
      % (counts, line))
# the types asked have no such accelerator: the line says what they have
line = one_line(snap("--instance-types", "g5.*", "--accelerator", "H100", "--region", "us-east-1"), 1, "g5 H100")
check("--accelerator H100" in line and "A10G" in line, "g5.* --accelerator H100: %r" % line)
# the first filter that empties the list is the one named, in the order they apply
line = one_line(snap("--accelerator", "T4", "--min-vcpus", "100", "--max-price", "0.001", "--region", "us-east-1"),
                1, "T4 + 100 vCPUs")
check("--min-vcpus 100" in line and "--max-price" not in line, "two filters: %r" % line)


# ---- types with no hardware in the catalogue: the cache and live AWS ---------------------------------

def cache_env(root):
    return dict(ENV, HOME=root, XDG_CACHE_HOME=os.path.join(root, "cache"))


def write_cache(root, t, region, od_usd, zones):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    path = os.path.join(root, "cache", "instbench", "prices", region, t + ".json")
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    rec = {"instance_type": t, "region": region, "on_demand": {"usd_per_hour": od_usd, "source": "live", "as_of": now},
           "spot": {"source": "live", "as_of": now, "zones": [
               {"availability_zone": az, "usd_per_hour": p, "timestamp": now} for az, p in zones.items()]},
           "interruption": None, "placement_score": None}
    with open(path, "w") as f:
        json.dump({"schema": "instbench.prices/v1", "generated_at": now, "snapshot": None, "prices": [rec]}, f)
    os.chmod(path, 0o644)


root = os.path.join(TMP, "c")
check("c7g.large" not in HW, "the test's unknown type is in the CSV")
write_cache(root, "c7g.large", "us-east-1", 0.0725, {"us-east-1a": 0.031})
write_cache(root, "g5.xlarge", "us-east-1", 1.006, {"us-east-1b": 0.45})
write_cache(root, "g5.12xlarge", "us-east-1", 5.672, {"us-east-1c": 2.1})
cenv = cache_env(root)
args = ["--source", "cache", "--instance-types", "c7g.large,g5.xlarge,g5.12xlarge", "--region", "us-east-1",
        "--format", "csv"]
p = run(*args, "--min-vcpus", "2", env=cenv)
check(listed(p, "csv", "cache --min-vcpus") == [("g5.xlarge", "us-east-1"), ("g5.12xlarge", "us-east-1")],
      "cache --min-vcpus 2: %s" % p.stdout)
check("c7g.large" in p.stderr and "--min-vcpus" in p.stderr and "no hardware" in p.stderr,
      "no warning naming the type of unknown hardware: %s" % p.stderr)
p = run(*args, "--accelerator", "A10G", "--min-memory", "1", env=cenv)
check(listed(p, "csv", "cache --accelerator") == [("g5.xlarge", "us-east-1"), ("g5.12xlarge", "us-east-1")],
      "cache --accelerator: %s" % p.stdout)
check("c7g.large" in p.stderr and "--accelerator" in p.stderr, "the warning names the first hardware filter: %s"
      % p.stderr)
# price filters judge it like any other row; no warning then
p = run(*args, "--max-price", "0.1", "--sort", "spot", env=cenv)
check(listed(p, "csv", "cache --max-price") == [("c7g.large", "us-east-1")], "cache --max-price: %s" % p.stdout)
check("no hardware" not in p.stderr, "a hardware warning without a hardware filter: %s" % p.stderr)
p = run(*args, "--sort", "price", env=cenv)
check(listed(p, "csv", "cache --sort price") == [("c7g.large", "us-east-1"), ("g5.xlarge", "us-east-1"),
                                                 ("g5.12xlarge", "us-east-1")], "cache --sort price: %s" % p.stdout)
# only types of unknown hardware: the line says the catalogue cannot judge them
line = one_line(run("--source", "cache", "--instance-types", "c7g.large", "--region", "us-east-1",
                    "--min-vcpus", "1", env=cenv), 1, "only unknown hardware")
check("--min-vcpus" in line and "c7g.large" in line and "no hardware" in line, "only unknown hardware: %r" % line)

# live AWS (the fake endpoint): the same rules on live prices
data = os.path.join(TMP, "live.json")
with open(data, "w") as f:
    json.dump([{"instance_type": "g7x.2xlarge", "region": "us-east-1", "on_demand": 2.5, "spot": {"use1-az1": 0.9}},
               {"instance_type": "g5.xlarge", "region": "us-east-1", "on_demand": 1.006, "spot": {"use1-az2": 0.42}},
               {"instance_type": "g5.12xlarge", "region": "us-east-1", "on_demand": 5.672,
                "spot": {"use1-az1": 2.2, "use1-az4": 2.05}},
               {"instance_type": "p5.48xlarge", "region": "us-east-1", "on_demand": 55.04, "spot": {}}], f)
try:
    ep = FakeAws("--prices", data, "--timeout", "120")
except RuntimeError as e:
    check(False, str(e))
    ep = None
if ep:
    try:
        lenv = dict(ENV, HOME=os.path.join(TMP, "l"), XDG_CACHE_HOME=os.path.join(TMP, "l", "cache"),
                    AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                    AWS_ENDPOINT_URL=ep.url, INSTBENCH_AWS_BACKOFF_BASE="0.05")
        live = ["--source", "live", "--no-placement-scores", "--instance-types",
                "g7x.2xlarge,g5.xlarge,g5.12xlarge,p5.48xlarge", "--region", "us-east-1"]
        p = run(*live, "--min-accelerator-memory", "20", "--sort", "spot", "--format", "json", env=lenv)
        check(listed(p, "json", "live") == [("g5.xlarge", "us-east-1"), ("g5.12xlarge", "us-east-1"),
                                            ("p5.48xlarge", "us-east-1")], "live --sort spot: %s" % p.stdout[:600])
        check("g7x.2xlarge" in p.stderr and "no hardware" in p.stderr, "live: no warning: %s" % p.stderr)
        p = run(*live, "--max-price", "1.5", "--market", "on-demand", "--format", "csv", env=lenv)
        check(listed(p, "csv", "live --max-price") == [("g5.xlarge", "us-east-1")], "live --max-price: %s" % p.stdout)
        p = run(*live, "--max-spot-price", "1", "--sort", "price", "--format", "csv", env=lenv)
        check(listed(p, "csv", "live --max-spot-price") == [("g5.xlarge", "us-east-1"), ("g7x.2xlarge", "us-east-1")],
              "live --max-spot-price: %s" % p.stdout)
    finally:
        ep.stop()

# ---- warnings about missing prices speak of the rows shown, never of rows a filter left out ----
for r in ("us-east-1", "us-west-2"):
    unpriced = [t for t in NATURAL if od(t, r) is None]
    if not unpriced:
        continue
    p = snap("--region", r, "--format", "csv")
    check(("no on-demand price from the snapshot" in p.stderr) == bool(unpriced),
          "%s unfiltered: %s lack an on-demand price, stderr: %r" % (r, unpriced, p.stderr[-400:]))
    priced_acc = sorted({HW[t][2] for t in NATURAL if HW[t][2] and od(t, r) is not None and
                         all(od(u, r) is not None for u in NATURAL if HW[u][2] == HW[t][2])})
    if priced_acc:   # an accelerator every type of which is priced: no warning about the others
        p = snap("--region", r, "--accelerator", priced_acc[0], "--format", "csv")
        check(p.returncode == 0 and "no on-demand price" not in p.stderr,
              "%s --accelerator %s: warned about rows it left out: %r" % (r, priced_acc[0], p.stderr[-400:]))
    break

shutil.rmtree(TMP, ignore_errors=True)
print("prices_filters: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
