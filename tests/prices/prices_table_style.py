"""`instbench prices` as a table reads as docs/usage.md says ("Tables"): money with $ and two
decimals (three significant digits below $0.10), upper-case headers, SAVINGS % computed from the
row's own on-demand and lowest spot price, the Spot Instance Advisor's own figure labelled
ADVISOR SAVINGS %, a sources line under the table, and the snapshot's note (stderr and footer)
only when a price shown comes from the snapshot.  Every expected string is computed here from
data/ (the price CSVs and the advisor feed) or from the cache file this test writes.
Usage: prices_table_style.py INSTBENCH DATA_DIR"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures, parse_table, regular_zones, usd

BIN, DATA = sys.argv[1], sys.argv[2]
REGION = "us-east-1"
SNAPSHOT_NOTE = "'snapshot' prices are from the snapshot of"   # the footer
STDERR_NOTE = "prices marked 'snapshot'"


def load_prices():
    """{(type, region): {"od": float | None, "spot": {az: float}}} from both shipped CSVs."""
    recs = {}
    for name in ("aws-accelerated-prices.csv", "aws-cpu-prices.csv", "aws-accelerated-prices-2026.csv"):
        with open(os.path.join(DATA, name), newline="") as f:
            for row in csv.DictReader(f):
                r = recs.setdefault((row["instance_type"], row["region"]), {"od": None, "spot": {}})
                if row["on_demand_usd_per_hour"]:
                    r["od"] = float(row["on_demand_usd_per_hour"])
                if row["spot_usd_per_hour"]:
                    r["spot"][row["availability_zone"]] = float(row["spot_usd_per_hour"])
    return recs


PRICES = load_prices()
with open(os.path.join(DATA, "spot-advisor-data.json")) as f:
    ADVISOR = json.load(f)["spot_advisor"]


def pct(od, spot):
    """Whole percent saved by spot against on-demand; "-" when either is missing."""
    if od is None or spot is None:
        return "-"
    s = f"{100 * (1 - spot / od):.0f}"
    return "0" if s == "-0" else s


def run(args, env):
    p = subprocess.run([BIN, "prices", "--format", "table", "--region", REGION, *args], capture_output=True,
                       text=True, env=env, timeout=120)
    check(p.returncode == 0, f"prices {' '.join(args)}: exit {p.returncode}: {p.stderr[-400:]}")
    return p


def check_headers(headers, what):
    # units and AWS's own plurals keep their case ($/h, GiB, vCPUs, AZs); every other word is upper case
    words = [w for h in headers for w in h.split() if w not in ("$/h", "GiB", "vCPUs", "AZs")]
    check(headers and all(w == w.upper() for w in words), f"{what}: headers not upper case: {headers}")


def check_row(row, t, od, spot_zones, what):
    spot_zones = regular_zones(spot_zones)   # the lowest leaves Local Zones out by default
    spot = min(spot_zones.values()) if spot_zones else None
    want = {"ON-DEMAND $/h": usd(od) if od is not None else "-",
            "SPOT $/h (LOWEST)": usd(spot) if spot is not None else "-",
            "IN AZ": min(spot_zones, key=spot_zones.get) if spot_zones else "-",
            "SAVINGS %": pct(od, spot)}
    adv = ADVISOR.get(REGION, {}).get("Linux", {}).get(t)
    want["ADVISOR SAVINGS %"] = str(adv["s"]) if adv else "-"
    for col, v in want.items():
        check(row.get(col) == v, f"{what}: {t} {col} is {row.get(col)!r}, want {v!r} (row {row})")


with tempfile.TemporaryDirectory() as tmp:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=tmp, XDG_CACHE_HOME=os.path.join(tmp, "cache"), AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=os.path.join(tmp, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(tmp, "none"),
               NO_COLOR="1")
    env.pop("COLUMNS", None)

    # 1. The snapshot: a GPU type, a big one and a CPU type whose prices are below $0.10.
    types = ["g5.xlarge", "g5.12xlarge", "c7i.large"]
    p = run(["--source", "snapshot", "--instance-types", ",".join(types)], env)
    headers, rows = parse_table(p.stdout)
    check_headers(headers, "snapshot")
    check(len(rows) == len(types), f"snapshot: {len(rows)} rows: {p.stdout}")
    for row in rows:
        t = row.get("INSTANCE TYPE")
        ref = PRICES.get((t, REGION))
        if check(ref is not None, f"snapshot: unexpected row {row}"):
            check_row(row, t, ref["od"], ref["spot"], "snapshot")
    check(any(r.get("ON-DEMAND $/h", "").startswith("$0.0") for r in rows), "no price below $0.10 was exercised")
    # one region for every row is said once above the table, not in a column repeating it (as rank
    # does); two regions keep the column; --columns and the CSV keep it whatever the rows
    check("REGION" not in headers and p.stdout.splitlines()[:1] == [f"region: {REGION}"],
          f"snapshot, one region: a REGION column or no line naming it above the table:\n{p.stdout[:400]}")
    two = subprocess.run([BIN, "prices", "--format", "table", "--source", "snapshot", "--instance-types", "g5.xlarge",
                          "--region", f"{REGION},us-west-2"], capture_output=True, text=True, env=env, timeout=120)
    h2, r2 = parse_table(two.stdout)
    check(two.returncode == 0 and "REGION" in h2 and sorted(r["REGION"] for r in r2) == [REGION, "us-west-2"] and
          "region:" not in two.stdout, f"two regions: no REGION column: exit {two.returncode}\n{two.stdout[:400]}")
    picked = run(["--source", "snapshot", "--instance-types", "g5.xlarge", "--columns", "instance_type,region"], env)
    check(parse_table(picked.stdout) == (["INSTANCE TYPE", "REGION"], [{"INSTANCE TYPE": "g5.xlarge", "REGION": REGION}])
          and "region:" not in picked.stdout, f"--columns instance_type,region:\n{picked.stdout[:300]}")
    sheet = subprocess.run([BIN, "prices", "--format", "csv", "--source", "snapshot", "--instance-types", "g5.xlarge",
                            "--region", REGION], capture_output=True, text=True, env=env, timeout=120)
    got = list(csv.DictReader(sheet.stdout.splitlines()))
    check(sheet.returncode == 0 and [r.get("region") for r in got] == [REGION],
          f"csv: the region column: {sheet.stdout[:300]}")
    check(SNAPSHOT_NOTE in p.stdout and STDERR_NOTE in p.stderr, f"snapshot prices without the snapshot's note:\n"
                                                                 f"{p.stdout[-600:]}\n{p.stderr}")
    check("sources:" in p.stdout and "Spot Instance Advisor" in p.stdout and "SAVINGS %: 1 - spot / on-demand" in
          p.stdout, f"snapshot: no sources line naming the advisor and the savings rule:\n{p.stdout[-800:]}")

    # 1b. The sources line speaks only of the columns shown: picked, a price and savings but no
    # advisor column and no SOURCE column (so it says how to add it: --columns' keys, as --wide adds
    # nothing to picked columns); every column: all of them.
    p = run(["--source", "snapshot", "--instance-types", "g5.xlarge", "--columns",
             "instance_type,on_demand_usd_per_hour,spot_min_usd_per_hour,spot_min_savings_pct"], env)
    legend = next((ln for ln in p.stdout.splitlines() if ln.startswith("sources:")), "")
    check("SAVINGS %: 1 - spot" in legend and "--columns ...,on_demand_source,spot_source shows it" in legend and
          "--wide" not in legend and "Advisor" not in legend and
          "PLACEMENT" not in legend and "hardware" not in legend,
          f"--columns with a price and savings: the sources line names what is not shown: {legend!r}")
    p = run(["--source", "snapshot", "--instance-types", "g5.xlarge", "--wide"], env)
    legend = next((ln for ln in p.stdout.splitlines() if ln.startswith("sources:")), "")
    check(all(w in legend for w in ("hardware", "its SOURCE column;", "INTERRUPTION and ADVISOR SAVINGS %")),
          f"--wide: the sources line misses a column shown: {legend!r}")
    # placement scores are live AWS's alone: from the snapshot no row has one, so no column that
    # reads "-" on every row, and no word of it under the table
    check("PLACEMENT" not in p.stdout, f"--wide from the snapshot: an empty PLACEMENT column:\n{p.stdout}")

    # 1c. Each column alone (--columns KEY, every key of the CSV's header), with --nodes and
    # without: no column header the sources line names is missing from the table (it explained
    # P(24 h UNINTERRUPTED) under JOB INTERRUPTIONS alone, and NODES and SPOT AZ under PLACEMENT).
    runs = []
    for nodes in ([], ["--nodes", "2"]):
        for key in next(csv.reader(sheet.stdout.splitlines())):
            p = run(["--source", "snapshot", "--instance-types", "g5.xlarge", "--columns", key, *nodes], env)
            legend = next((ln for ln in p.stdout.splitlines() if ln.startswith("sources:")), "")
            runs.append((f"--columns {key} {' '.join(nodes)}", parse_table(p.stdout)[0], legend))
            # the snapshot's origin only under a column made of its prices (it stood under a table of
            # vCPUs alone)
            priced = key.startswith(("on_demand_", "spot_"))
            check(("'snapshot' prices are from" in p.stdout) == priced,
                  f"--columns {key}: the snapshot's origin {'missing' if priced else 'under no price'}:\n{p.stdout}")
            # and so does the note on stderr, in the table and the CSV alike
            for fmt in ("table", "csv"):
                q = p if fmt == "table" else run(["--source", "snapshot", "--instance-types", "g5.xlarge", "--columns",
                                                  key, "--format", "csv", *nodes], env)
                check((STDERR_NOTE in q.stderr) == priced,
                      f"--columns {key} ({fmt}): the stderr note {'missing' if priced else 'with no price'}: {q.stderr}")
    every = {h for _, shown, _ in runs for h in shown}   # the headers, each from its own column's table
    check(len(every) == len(runs) // 2, f"--columns KEY: not one header per key: {sorted(every)}")
    for what, shown, legend in runs:
        named, rest = set(), legend
        for h in sorted(every, key=len, reverse=True):   # the longest first: SAVINGS % in ADVISOR SAVINGS %
            at = re.compile(r"(?<![\w-])" + re.escape(h) + r"(?!\w)")
            if at.search(rest):
                named.add(h)
                rest = at.sub("_", rest)
        check(named <= set(shown), f"{what}: the sources line names {sorted(named - set(shown))}, which the "
                                   f"table {shown} does not show: {legend!r}")
        for h in ("JOB INTERRUPTIONS", "P(24 h UNINTERRUPTED)"):   # each still explained on its own
            check(h not in shown or f"{h}: " in legend, f"{what}: {h} shown but not explained: {legend!r}")
        # the Advisor's columns each say where they come from, shown alone or together (INTERRUPTION
        # BUCKET alone had no word under it)
        for h in ("INTERRUPTION", "INTERRUPTION BUCKET", "ADVISOR SAVINGS %"):
            check(h not in shown or (re.search(r"(^|[ ,;])" + re.escape(h) + r"( and |, |: region-wide)", legend)
                                     and "Spot Instance Advisor" in legend),
                  f"{what}: {h} shown but its source not said: {legend!r}")

    # 2. A cache file only: no price shown is the snapshot's, so neither note appears; its savings
    #    are its own (the advisor's figure for the type says something else).
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    od, zones = 7.77, {"us-east-1a": 3.33, "us-east-1b": 3.5}
    rec = {"instance_type": "g5.xlarge", "region": REGION,
           "on_demand": {"usd_per_hour": od, "source": "live", "as_of": now},
           "spot": {"source": "live", "as_of": now, "zones": [{"availability_zone": az, "usd_per_hour": v,
                                                               "timestamp": now} for az, v in zones.items()]},
           "interruption": None, "placement_score": None}
    path = os.path.join(tmp, "cache", "instbench", "prices", REGION, "g5.xlarge.json")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        json.dump({"schema": "instbench.prices/v1", "generated_at": now, "snapshot": None, "prices": [rec]}, f)
    os.chmod(path, 0o644)
    d = os.path.dirname(path)
    while d != tmp:   # trusted only when no one else can write it (docs/usage.md, the cache)
        os.chmod(d, 0o755)
        d = os.path.dirname(d)
    for market in ([], ["--market", "on-demand"], ["--market", "spot"]):
        p = run(["--source", "cache", "--instance-types", "g5.xlarge", *market], env)
        what = "cache " + " ".join(market)
        check(SNAPSHOT_NOTE not in p.stdout and "snapshot of" not in p.stdout and STDERR_NOTE not in p.stderr,
              f"{what}: no price is the snapshot's, yet a snapshot note:\n{p.stdout[-600:]}\n{p.stderr}")
        headers, rows = parse_table(p.stdout)
        check_headers(headers, what)
        if check(len(rows) == 1, f"{what}: {len(rows)} rows: {p.stdout}"):
            row = rows[0]
            if market != ["--market", "spot"]:
                check(row.get("ON-DEMAND $/h") == usd(od), f"{what}: on-demand {row}")
                check(row.get("ON-DEMAND SOURCE", "").startswith("cache, "), f"{what}: on-demand source {row}")
            if market != ["--market", "on-demand"]:
                check(row.get("SPOT $/h (LOWEST)") == usd(3.33) and row.get("IN AZ") == "us-east-1a", f"{what}: {row}")
                want = pct(od if not market else None, 3.33)
                check(row.get("SAVINGS %") == want, f"{what}: SAVINGS % {row.get('SAVINGS %')!r}, want {want!r}")
    p = subprocess.run([BIN, "prices", "--source", "cache", "--instance-types", "g5.xlarge", "--region", REGION,
                        "--format", "json"], capture_output=True, text=True, env=env)
    check(p.returncode == 0 and STDERR_NOTE not in p.stderr, f"cache json: snapshot note on stderr: {p.stderr}")

    # 3. The cache for one type, the snapshot for another (auto, no credentials): the notes return.
    p = run(["--instance-types", "g5.xlarge,g5.12xlarge"], env)
    check(SNAPSHOT_NOTE in p.stdout and STDERR_NOTE in p.stderr, f"a snapshot price shown without its note:\n"
                                                                 f"{p.stdout[-600:]}\n{p.stderr}")
    _, rows = parse_table(p.stdout)
    by_type = {r.get("INSTANCE TYPE"): r for r in rows}
    check(by_type.get("g5.xlarge", {}).get("ON-DEMAND $/h") == usd(od), f"auto: the cache's price: {rows}")
    ref = PRICES[("g5.12xlarge", REGION)]
    if check("g5.12xlarge" in by_type, f"auto: no g5.12xlarge row: {rows}"):
        check_row(by_type["g5.12xlarge"], "g5.12xlarge", ref["od"], ref["spot"], "auto")

print("prices_table_style: " + ("all checks passed" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
