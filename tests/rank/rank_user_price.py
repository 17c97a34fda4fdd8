"""User prices in `instbench rank`: --price NAME[:MARKET]=USD and the price a result recorded with
`measure --hourly-cost`, for machines AWS cannot price (named by hostname) and as overrides of AWS
prices.  Every figure is checked against a Python model written from the documented rules (not
from instbench's output):

  price per node-hour of (configuration, market) =
      the --price flag for its name and market, else the newest recorded price for that market,
      else the AWS price (a prices file here); the name is the instance type, else the hostname.
  A machine without an instance type has only the markets the user priced.
  usd_per_hour = nodes x price; samples/$ = samples/s x 3600 / usd_per_hour; time and cost to a
  target likewise.  User-priced rows say source "user" in JSON, CSV and the table.

Also: flag validation (exit 2 with a message), results with a bad recorded price skipped with a
reason, conflicting recorded prices warned about, unknown --price names warned about, no AWS
lookup when every row is user-priced, and the JSON valid against schemas/rank-v2.json.
Usage: rank_user_price.py INSTBENCH RANK_SCHEMA RESULT_SCHEMA"""
import csv
import io
import json
import os
import re
import statistics
import sys
import tempfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN, RANK_SCHEMA, RESULT_SCHEMA = sys.argv[1:4]
rank_schema = json.load(open(RANK_SCHEMA))
result_schema = json.load(open(RESULT_SCHEMA))
from testlib import check, failures, usd


# ---- fixtures: AWS types and machines AWS cannot price ---------------------------------------
R = fx.result
RESULTS = [
    # AWS types, priced from the prices file unless the user says otherwise.
    R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 310.0),
    R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 290.0),
    R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 1150.0, count=4),
    R("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 1180.0, hourly_cost=(2.1, "spot"),
      timestamp="2026-11-20T08:00:00Z"),
    # An AWS type with a negotiated on-demand rate recorded at measure time.
    R("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 240.0, hourly_cost=(0.52, "on-demand")),
    # A workstation: no instance type, its own hourly cost recorded.
    R(None, None, 1, 1, "NVIDIA GeForce RTX 4090", 520.0, host="workstation", hourly_cost=(0.35, "on-demand")),
    # Two runs of one lab machine that recorded different costs: the newest counts.
    R(None, None, 1, 2, "NVIDIA RTX A6000", 700.0, host="lab-box", hourly_cost=(1.4, "on-demand"),
      timestamp="2026-11-19T10:00:00Z"),
    R(None, None, 1, 2, "NVIDIA RTX A6000", 720.0, host="lab-box", hourly_cost=(1.1, "on-demand"),
      timestamp="2026-11-21T10:00:00Z"),
    # Another cloud, two nodes, no recorded price: priced only by --price.
    R(None, None, 2, 8, "NVIDIA H100 80GB HBM3", 9000.0, host="othercloud-h100"),
    # A CPU box with the same hardware as nothing else, priced nowhere: stays unpriced.
    R(None, None, 1, 0, None, 12.0, host="ghost", backend="cpu"),
]
PRICES = fx.prices_doc([
    fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45, "us-east-1b": 0.41}, bucket=1, placement=7),
    fx.price_record("g5.12xlarge", "us-east-1", 5.672, {"us-east-1c": 2.3}),
    fx.price_record("g6.xlarge", "us-east-1", 0.8048, {"us-east-1a": 0.33}),
])


def ts(r):
    return r["timestamp"]


def expected(results, prices, flags=(), markets=("on-demand", "spot"), target=None):
    """(priced rows, unpriced rows) from the rules in the docstring."""
    flag = {}
    for spec in flags:
        name, usd = spec.rsplit("=", 1)
        name, _, market = name.partition(":")
        flag[(name.lower(), market or "on-demand")] = float(usd)
    configs = {}
    for r in results:
        t, host = r["instance"]["type"], r["instance"]["hostname"]
        nodes = max(r["topology"]["nodes"], r["instance"]["count"])
        key = (t, nodes, r["instance"]["region"]) if t else (None, nodes, host)
        configs.setdefault(key, []).append(r)
    table = {(p["instance_type"], p["region"]): p for p in prices["prices"]}
    priced, unpriced = [], []
    for key, runs in configs.items():
        t, nodes = key[0], key[1]
        region = runs[0]["instance"]["region"]
        name = t or runs[0]["instance"]["hostname"]
        # measure --count N on fewer nodes: throughput scaled linearly to the N nodes priced
        sps = statistics.median(r["measurement"]["samples_per_second"] * nodes / r["topology"]["nodes"] for r in runs)

        def user_price(market):
            if (name.lower(), market) in flag:
                return flag[(name.lower(), market)]
            rec = [r for r in runs if "price" in r and r["price"]["market"] == market]
            return max(rec, key=ts)["price"]["usd_per_hour"] if rec else None

        for market in markets:
            row = {"label": f"{nodes} x {name} {market}", "instance_type": t, "host": None if t else name,
                   "nodes": nodes, "market": market, "samples_per_second": sps}
            price, source = user_price(market), "user"
            if price is None and t is None:
                # Off EC2 a market the user did not price is no row of its own when the other
                # market is ranked too and priced; unpriced, the machine is listed once, on-demand.
                other = "spot" if market == "on-demand" else "on-demand"
                if other in markets and (user_price(other) is not None or market == "spot"):
                    continue
                unpriced.append(row)
                continue
            if price is None:
                rec = table.get((t, region))
                source = "snapshot"
                if rec and market == "on-demand" and rec["on_demand"]:
                    price = rec["on_demand"]["usd_per_hour"]
                elif rec and market == "spot" and rec["spot"]:
                    price = min(z["usd_per_hour"] for z in rec["spot"]["zones"])
            if price is None:
                unpriced.append(row)
                continue
            row.update(source=source, per_node=price, usd_per_hour=nodes * price,
                       samples_per_dollar=sps * 3600.0 / (nodes * price))
            if target:
                row["hours"] = target / sps / 3600.0
                row["cost"] = row["hours"] * row["usd_per_hour"]
            priced.append(row)
    priced.sort(key=lambda r: -r["samples_per_dollar"])
    return priced, unpriced


def compare(case, d, flags=(), markets=("on-demand", "spot"), target=None, results=RESULTS):
    args = [os.path.join(d, "res"), "--source", os.path.join(d, "p.json")]
    for f in flags:
        args += ["--price", f]
    if len(markets) == 1:
        args += ["--market", markets[0]]
    if target:
        args += ["--samples", str(target)]
    priced, unpriced = expected(results, PRICES, flags, markets, target)

    rc, out, err = fx.run(BIN, args + ["--format", "json"])
    if not check(rc == 0, f"{case}: exit {rc}: {err}"):
        return
    doc = json.loads(out)
    try:
        jsonschema.validate(doc, rank_schema)
    except jsonschema.ValidationError as e:
        check(False, f"{case}: JSON does not match rank-v2 at {list(e.absolute_path)}: {e.message}")
    got = fx.ranked(doc)
    check([g["configuration"] for g in got] == [e["label"] for e in priced],
          f"{case}: rows {[g['configuration'] for g in got]} != {[e['label'] for e in priced]}")
    by_label = {g["configuration"]: g for g in got}
    for e in priced:
        where = f"{case} {e['label']}"
        g = by_label.get(e["label"])
        if g is None:
            continue   # reported above
        check(g["price_source"] == e["source"], f"{where}: source {g['price_source']} != {e['source']}")
        check(g["instance_type"] == e["instance_type"] and g["host"] == e["host"],
              f"{where}: instance_type/host {g['instance_type']}/{g['host']}")
        for k, ek in (("usd_per_hour_per_node", "per_node"), ("usd_per_hour", "usd_per_hour"),
                      ("samples_per_second", "samples_per_second"), ("samples_per_dollar", "samples_per_dollar")):
            check(fx.close(g[k], e[ek]), f"{where}: {k} {g[k]} != {e[ek]}")
        if target:
            check(fx.close(g["hours_to_target"], e["hours"]) and fx.close(g["cost_to_target_usd"], e["cost"]),
                  f"{where}: time/cost {g['hours_to_target']} {g['cost_to_target_usd']}")
        if e["source"] == "user" and e["market"] == "spot":
            check(g["market"] == "spot" and g["spot_az"] is None, f"{where}: a user's spot price names an AZ: "
                                                                      f"{g['spot_az']}")
    got_un = sorted(u["configuration"] for u in fx.unpriced(doc))
    check(got_un == sorted(u["label"] for u in unpriced), f"{case}: unpriced {got_un}")
    for u in fx.unpriced(doc):
        if u["host"]:
            how = [f"--price {u['host']}:{u['market']}="] + ([f"--price {u['host']}="] if u["market"] == "on-demand" else [])
            check(any(h in u["unpriced_reason"] for h in how), f"{case}: reason for {u['configuration']} does not say how "
                                                      f"to price it ({how[-1]}USD): {u['unpriced_reason']!r}")

    rc, out, err = fx.run(BIN, args + ["--format", "csv"])
    rows = [r for r in csv.DictReader(io.StringIO(out, newline="")) if r["rank"]] if rc == 0 else []
    check(len(rows) == len(priced), f"{case} csv: {len(rows)} rows, want {len(priced)}")
    check([g["configuration"] for g in rows] == [e["label"] for e in priced], f"{case} csv: order")
    by_label = {g["configuration"]: g for g in rows}
    for e in priced:
        where = f"{case} csv {e['label']}"
        g = by_label.get(e["label"])
        if g is None:
            continue
        check(g["price_source"] == e["source"], f"{where}: price_source {g['price_source']!r}")
        check(g["host"] == (e["host"] or "") and g["instance_type"] == (e["instance_type"] or ""),
              f"{where}: host/type {g['host']!r}/{g['instance_type']!r}")
        for k, ek in (("usd_per_hour", "usd_per_hour"), ("usd_per_hour_per_node", "per_node"),
                      ("samples_per_dollar", "samples_per_dollar")):
            check(fx.close(float(g[k]), e[ek]), f"{where}: {k} {g[k]} != {e[ek]}")
    for u in unpriced:
        check(f"not ranked: {u['label']}" in err, f"{case} csv: {u['label']} not reported on stderr")

    rc, out, err = fx.run(BIN, args + ["--format", "table"])
    lines = out.splitlines()
    for e in priced:
        # a ranked row ("  1*  LABEL ..."), not the break-even sentence under the table that names it
        line = [ln for ln in lines if f" {e['label']} " in ln and re.match(r"\s*\d+\*?  ", ln)]
        if check(len(line) == 1, f"{case} table: {len(line)} lines for {e['label']}"):
            cells = line[0].split()
            check(usd(e["usd_per_hour"]) in cells, f"{case} table {e['label']}: $/h {usd(e['usd_per_hour'])} "
                                                   f"not in {line[0]!r}")
            check((e["source"] == "user") == ("user" in cells), f"{case} table {e['label']}: source in {line[0]!r}")
    if any(e["source"] == "user" for e in priced):
        check(any(ln.startswith("prices: ") and "user" in ln for ln in lines), f"{case} table: prices line")


with tempfile.TemporaryDirectory() as d:
    for i, r in enumerate(RESULTS):
        fx.write_json(os.path.join(d, "res", f"r{i:02d}.json"), r)
        try:
            jsonschema.validate(r, result_schema)
        except jsonschema.ValidationError as e:
            check(False, f"fixture {i} does not match result-v1: {e.message}")
    fx.write_json(os.path.join(d, "p.json"), PRICES)

    # Recorded prices alone: the workstation, the newest lab-box cost, g6.xlarge's negotiated
    # on-demand rate and g5.12xlarge's recorded spot price; the other cloud and ghost unpriced.
    compare("recorded", d)
    compare("recorded, target", d, target=1281167 * 90)
    # Flags beat recorded prices, which beat AWS's; plain NAME=USD is on-demand; hostnames match
    # whatever their case.
    over = ["g6.xlarge=0.4", "g5.xlarge:spot=0.2", "LAB-BOX=0.9", "othercloud-h100:on-demand=6.5",
            "othercloud-h100:spot=3.1", "ghost:spot=0.05", "g5.12xlarge:on-demand=4.0"]
    compare("flags", d, over)
    compare("flags, on-demand only", d, over, markets=("on-demand",))
    compare("flags, spot only", d, over, markets=("spot",))
    compare("flags, target", d, over, target=10 ** 7)
    compare("no flags, spot only", d, markets=("spot",))

    # Precedence, spelled out on g6.xlarge on-demand: flag 0.4 > recorded 0.52 > file 0.8048.
    base = [os.path.join(d, "res"), "--source", os.path.join(d, "p.json"), "--market", "on-demand",
            "--format", "json"]
    for extra, results, want, src in [(["--price", "g6.xlarge=0.4"], RESULTS, 0.4, "user"),
                                      ([], RESULTS, 0.52, "user"),
                                      ([], None, 0.8048, "snapshot")]:
        if results is None:   # the same run without its recorded price
            dd = os.path.join(d, "noprice")
            plain = {k: v for k, v in RESULTS[4].items() if k != "price"}
            fx.write_json(os.path.join(dd, "g6.json"), plain)
            args = [dd] + base[1:]
        else:
            args = base
        rc, out, err = fx.run(BIN, args + extra)
        row = [g for g in fx.ranked(json.loads(out)) if g["instance_type"] == "g6.xlarge"] if rc == 0 else []
        check(len(row) == 1 and row[0]["usd_per_hour_per_node"] == want and row[0]["price_source"] == src,
              f"precedence {extra or 'none'}{'' if results else ' (no recorded price)'}: {row}")

    # Conflicting recorded prices are named; an unknown --price name is warned about, not an error.
    rc, out, err = fx.run(BIN, base + ["--price", "nosuchhost=1"])
    check(rc == 0 and "lab-box" in err and "different hourly costs" in err, f"no conflict warning: {err}")
    check("--price nosuchhost" in err and "workstation" in err, f"no warning for an unknown --price name: {err}")

    # Nothing left for AWS to price: no price lookup at all, so even --source live works offline.
    only = os.path.join(d, "hosts")
    for i in (5, 6, 7):
        fx.write_json(os.path.join(only, f"h{i}.json"), RESULTS[i])
    env_backup = dict(os.environ)
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        os.environ.pop(k, None)
    os.environ.update(AWS_EC2_METADATA_DISABLED="true", AWS_SHARED_CREDENTIALS_FILE=os.path.join(d, "none"),
                      AWS_CONFIG_FILE=os.path.join(d, "none"), XDG_CACHE_HOME=os.path.join(d, "cache"))
    rc, out, err = fx.run(BIN, [only, "--source", "live", "--format", "json"])
    check(rc == 0 and [g["price_source"] for g in fx.ranked(json.loads(out))] == ["user", "user"],
          f"user-priced machines need AWS: exit {rc}: {err[-300:]}")
    os.environ.clear()
    os.environ.update(env_backup)

    # A recorded price rank cannot use rejects its file, with a reason naming the field.
    bad = os.path.join(d, "bad")
    for i, price in enumerate([{"usd_per_hour": -1, "market": "on-demand", "source": "user"},
                               {"usd_per_hour": "0.3", "market": "on-demand", "source": "user"},
                               {"usd_per_hour": 1e9, "market": "on-demand", "source": "user"},
                               {"usd_per_hour": 0.3, "market": "reserved", "source": "user"},
                               "0.3"]):
        fx.write_json(os.path.join(bad, f"b{i}.json"), dict(RESULTS[5], price=price))
    fx.write_json(os.path.join(bad, "good.json"), RESULTS[5])
    rc, out, err = fx.run(BIN, [bad, "--source", os.path.join(d, "p.json"), "--format", "json"])
    skipped = [ln for ln in err.splitlines() if "skipped" in ln and "/b" in ln]
    check(rc == 0 and len(skipped) == 5 and all("price" in ln for ln in skipped), f"bad recorded prices: {err}")
    check(rc == 0 and json.loads(out)["inputs"]["skipped"] == 5, "bad recorded prices not counted as skipped")

    # Flag validation: exit 2, a message naming --price, nothing on stdout.
    r0 = os.path.join(d, "res", "r00.json")
    for spec, word in [("g5.xlarge=abc", "not a price"), ("=3", "names no machine"), ("x=-1", "not a price"),
                       ("x=nan", "not a price"), ("x=inf", "not a price"), ("x=0", "not a price"),
                       ("x=1e9", "not a price"), ("x=", "not a price"), ("g5.xlarge", "NAME=USD"),
                       ("g5.xlarge:cheap=1", "on-demand or spot"), ("g5.xlarge:=1", "on-demand or spot"),
                       ("my host=1", "not an instance type or hostname"), (":spot=1", "names no machine")]:
        rc, out, err = fx.run(BIN, [r0, "--source", os.path.join(d, "p.json"), "--price", spec])
        check(rc == 2 and "--price" in err and word in err and out == "",
              f"--price {spec!r}: exit {rc}, stderr {err.strip()[-200:]!r} (want 2 and {word!r})")
    rc, out, err = fx.run(BIN, [r0, "--price", "x=1", "--price", "X=2"])
    check(rc == 2 and "twice" in err, f"--price given twice for one machine: exit {rc}: {err[-200:]}")
    rc, out, err = fx.run(BIN, [r0, "--price", "x=1", "--price", "x:spot=2", "--source", os.path.join(d, "p.json"),
                                "--format", "json"])
    check(rc == 0, f"--price for both markets of one machine refused: {err[-200:]}")
    rc, out, err = fx.run(BIN, [r0, "--price"])
    check(rc == 2 and "needs a value" in err, f"--price without a value: exit {rc}")
    rc, out, err = fx.run(BIN, [r0, "--hourly-cost", "nan"])
    check(rc == 2 and "unknown option" in err, f"rank --hourly-cost (a measure flag): exit {rc}")

    # SageMaker managed spot: no hourly price is published, so a spot row of an ml.* type is ranked
    # only at the user's --price TYPE:spot=USD (samples/$ = samples/s x 3600 / nodes x USD);
    # without one, asked for spot, it is listed unpriced with the flag that prices it.
    sm = os.path.join(d, "sm")
    fx.write_json(os.path.join(sm, "ml.json"), fx.result("ml.g5.xlarge", "us-east-1", 2, 1, "NVIDIA A10G", 300.0,
                                                         host="algo-1"))
    rc, out, err = fx.run(BIN, [sm, "--price", "ml.g5.xlarge=1.41", "--price", "ml.g5.xlarge:spot=0.55",
                                "--format", "json"])
    check(rc == 0, f"sagemaker spot priced: exit {rc}: {err[-300:]}")
    if rc == 0:
        rows = {r["market"]: r for r in json.loads(out)["rows"]}
        sp = rows.get("spot")
        check(sp is not None and sp["rank"] is not None and fx.close(sp["usd_per_hour"], 2 * 0.55)
              and fx.close(sp["samples_per_dollar"], 300.0 * 3600 / (2 * 0.55)) and sp["price_source"] == "user",
              f"sagemaker spot row: {sp}")
    rc, out, err = fx.run(BIN, [sm, "--price", "ml.g5.xlarge=1.41", "--market", "spot", "--format", "json"])
    check(rc in (0, 1), f"sagemaker spot unpriced: exit {rc}: {err[-300:]}")
    rows = json.loads(out)["rows"] if out.strip() else []
    reasons = [r["unpriced_reason"] or "" for r in rows if r["market"] == "spot"]
    check(any("not published per hour" in x and "--price ml.g5.xlarge:spot=USD" in x for x in reasons),
          f"sagemaker spot without a price: reasons {reasons} / {err[-300:]}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank user prices: all checks passed")
