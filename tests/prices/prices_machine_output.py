#!/usr/bin/env python3
"""`instbench prices` output as tools read it (issue 21), every expectation computed here from the
shipped price data (data/aws-*-prices.csv, what configs/prices-snapshot.json is generated from)
and AWS's documented zone forms (testlib.availability_zone), never from instbench's own output:

  json_tools       jq and pandas.json_normalize walk every record, types without spot data in a
                   region included (objects and arrays, never null in their place); the JSON
                   validates against schemas/prices-v1.json, which refuses the old nulls
  local_zones      the lowest spot price leaves Local and Wavelength Zones out (26 us-east-1 rows
                   took theirs from use1-atl2-az1); --include-local-zones counts them; zones are
                   typed in JSON and CSV and marked in the table
  nodes            --nodes N[,N...] prices N instances of each type (four g5.xlarge against one
                   g5.12xlarge), in CSV, JSON and the table; mismatched counts are exit 2
  per_accelerator  $/accelerator-hour, on-demand and lowest spot, from the catalogue's count
  snapshot_message what --source snapshot really lacks (c7i.large in eu-west-3), and its families
  csv_format       time columns *_utc as YYYY-MM-DD HH:MM:SS; every number the shortest text that
                   reads back (Python's repr); each CSV column is the JSON field of the same name
  rank_local_zones rank's lowest and median spot leave Local Zones out unless --include-local-zones
  columns          --columns names the CSV's header in the table, CSV and JSON rows (price-rows/v1),
                   values against the whole prices/v1 document; old keys with a note; rank refuses rows

Usage: prices_machine_output.py INSTBENCH DATA_DIR REPO CASE"""
import copy
import csv
import io
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TESTS, d) for d in ("lib", "fakes", "rank")]  # testlib, rank_fixtures
import jsonschema  # noqa: E402
import pandas as pd  # noqa: E402

import rank_fixtures as fx  # noqa: E402
from testlib import (absent_path, availability_zone, check, failures, parse_table, probability,  # noqa: E402
                     regular_zones, usd)
ABSENT = absent_path()

BIN, DATA, REPO, CASE = sys.argv[1:5]

# ---- the reference: the price data the snapshot is made from -------------------------------------

RECS = {}   # (type, region) -> {"od": float | None, "spot": {zone: usd}}
HW = {}     # type -> (vcpus, accelerator or "", accelerators per instance)
for name in ("aws-accelerated-prices.csv", "aws-cpu-prices.csv", "aws-accelerated-prices-2026.csv"):
    with open(os.path.join(DATA, name), newline="") as f:
        for row in csv.DictReader(f):
            t = row["instance_type"]
            rec = RECS.setdefault((t, row["region"]), {"od": None, "spot": {}})
            if row["on_demand_usd_per_hour"]:
                rec["od"] = float(row["on_demand_usd_per_hour"])
            if row["spot_usd_per_hour"]:
                rec["spot"][row["availability_zone"]] = float(row["spot_usd_per_hour"])
            HW[t] = (int(float(row["vcpus"])), row["accelerator"],
                     int(float(row["accelerator_count"])) if row["accelerator"] else 0)


def lowest(t, r, with_local=False):
    """(zone, usd) of the cheapest spot zone (Availability Zones only unless WITH_LOCAL), or None."""
    zones = RECS.get((t, r), {"spot": {}})["spot"]
    zones = zones if with_local else regular_zones(zones)
    return min(sorted(zones.items()), key=lambda kv: kv[1]) if zones else None


def per_accelerator(t, v):
    count = HW[t][2]
    return v / count if v is not None and count else None


ENV = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
ENV.update(AWS_EC2_METADATA_DISABLED="true", HOME=ABSENT, XDG_CACHE_HOME=ABSENT,
           AWS_CONFIG_FILE=ABSENT, AWS_SHARED_CREDENTIALS_FILE=ABSENT)


def prices(args, rc=0):
    p = subprocess.run([BIN, "prices", "--source", "snapshot", *args], capture_output=True, text=True, env=ENV,
                       timeout=120)
    check(p.returncode == rc, f"prices {' '.join(args)}: exit {p.returncode}, want {rc}: {p.stderr[-600:]}")
    return p


def as_json(args):
    return json.loads(prices([*args, "--format", "json"]).stdout or "{}")


def as_csv(args):
    return list(csv.DictReader(io.StringIO(prices([*args, "--format", "csv"]).stdout)))


def close(a, b, what):
    ok = (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-12 * max(1, abs(b)))
    check(ok, f"{what}: {a!r}, want {b!r}")


def num(cell):
    return float(cell) if cell != "" else None


# ---- cases ------------------------------------------------------------------------------------------

def case_json_tools():
    types = ["g5.xlarge", "p5.4xlarge", "p5e.48xlarge", "c7i.large"]
    regions = ["us-east-1", "eu-west-3", "us-east-2"]
    args = ["--instance-types", ",".join(types), "--region", ",".join(regions)]
    out = prices([*args, "--format", "json"]).stdout
    doc = json.loads(out)
    pairs = [(t, r) for t in types for r in regions]
    no_spot = [k for k in pairs if not RECS.get(k, {"spot": {}})["spot"]]
    check(("p5.4xlarge", "us-east-1") in no_spot and len(no_spot) > 3, f"the case needs pairs without spot: {no_spot}")
    want_zones = sorted((t, r, z, p) for (t, r) in pairs for z, p in RECS.get((t, r), {"spot": {}})["spot"].items())

    # jq: the query of the issue, over every record (a null would stop it: "Cannot iterate over null")
    jq = subprocess.run(["jq", "-c", ".prices[] | .spot.zones[]"], input=out, capture_output=True, text=True)
    check(jq.returncode == 0, f"jq '.prices[] | .spot.zones[]': {jq.stderr}")
    check(len(jq.stdout.splitlines()) == len(want_zones), f"jq: {len(jq.stdout.splitlines())} zones, want {len(want_zones)}")
    jq = subprocess.run(["jq", "-r", ".prices[] | [.instance_type, .region, (.spot.min_usd_per_hour // \"-\"), "
                         "(.on_demand.usd_per_hour // \"-\"), (.interruption.bucket // \"-\"), "
                         "(.instance.accelerator_count // \"-\")] | @tsv"], input=out, capture_output=True, text=True)
    check(jq.returncode == 0, f"jq over on_demand/interruption/instance: {jq.stderr}")
    got = {tuple(line.split("\t")[:2]): line.split("\t")[2:] for line in jq.stdout.splitlines()}
    for t, r in pairs:
        lo, od = lowest(t, r), RECS.get((t, r), {"od": None})["od"]
        g = got.get((t, r))
        check(g is not None and g[0] == (repr(lo[1]) if lo else "-") and g[1] == (repr(od) if od is not None else "-"),
              f"jq: {t} {r}: {g}, want lowest {lo}, on-demand {od}")

    # pandas: one row per zone of every record; a record without spot data adds none (no TypeError)
    try:
        z = pd.json_normalize(doc["prices"], record_path=["spot", "zones"], meta=["instance_type", "region"])
        have = sorted(zip(z["instance_type"], z["region"], z["availability_zone"], z["usd_per_hour"])) if len(z) else []
        check(have == want_zones, f"json_normalize zones: {have[:4]}... want {want_zones[:4]}...")
        check(set(z["zone_type"]) <= {"availability-zone", "local-zone", "wavelength-zone"}, "zone_type values")
    except (TypeError, KeyError) as e:
        check(False, f"pandas.json_normalize(record_path=['spot', 'zones']) raised {e!r}")
    flat = pd.json_normalize(doc["prices"])
    for col in ("spot.min_usd_per_hour", "spot.min_availability_zone", "on_demand.usd_per_hour", "interruption.bucket",
                "instance.vcpus", "on_demand.usd_per_accelerator_hour", "nodes"):
        check(col in flat.columns, f"json_normalize has no {col} column: {list(flat.columns)}")
    for _, row in flat.iterrows():
        lo = lowest(row["instance_type"], row["region"])
        v = row.get("spot.min_usd_per_hour")
        check((lo is None and pd.isna(v)) or (lo is not None and v == lo[1]), f"json_normalize {row['instance_type']} "
              f"{row['region']}: spot.min_usd_per_hour {v}, want {lo}")

    # the schema: this output, the other shapes of it, and the old nulls refused
    with open(os.path.join(REPO, "schemas", "prices-v1.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    docs = {"plain": doc}
    for what, extra in (("nodes", ["--nodes", "4,1,2,3"]), ("local zones", ["--include-local-zones"]),
                        ("spot", ["--market", "spot"]), ("on-demand", ["--market", "on-demand"])):
        docs[what] = as_json([*args, *extra])
    docs["us-east-1 all"] = as_json(["--region", "us-east-1", "--include-local-zones"])
    for what, d in docs.items():
        try:
            jsonschema.validate(d, schema)
        except jsonschema.ValidationError as e:
            check(False, f"schemas/prices-v1.json refuses the {what} output: {e.message} at {list(e.absolute_path)}")
    for key in ("spot", "on_demand", "interruption", "instance"):
        old = copy.deepcopy(doc)
        old["prices"][0][key] = None
        try:
            jsonschema.validate(old, schema)
            check(False, f"the schema accepts null for {key}")
        except jsonschema.ValidationError:
            pass


def case_local_zones():
    regions = sorted({r for _, r in RECS})
    doc = as_json(["--region", ",".join(regions)])
    rows = {(r["instance_type"], r["region"]): r for r in as_csv(["--region", ",".join(regions)])}
    local_doc = as_json(["--region", ",".join(regions), "--include-local-zones"])
    check(doc.get("include_local_zones") is False and local_doc.get("include_local_zones") is True,
          "the document does not say what spot.min_* range over")
    with_local = {(r["instance_type"], r["region"]): r for r in local_doc["prices"]}
    local_zones = set()
    for rec in doc["prices"]:
        key = (rec["instance_type"], rec["region"])
        if key not in RECS:
            continue
        for z in rec["spot"]["zones"]:
            kind = "availability-zone" if availability_zone(z["availability_zone"]) else "local-zone"
            check(z["zone_type"] == kind, f"{key} {z['availability_zone']}: zone_type {z['zone_type']}, want {kind}")
            if kind != "availability-zone":
                local_zones.add(z["availability_zone"])
        for what, got, lo in (("default", rec["spot"], lowest(*key)),
                              ("--include-local-zones", with_local[key]["spot"], lowest(*key, with_local=True))):
            check(got["min_usd_per_hour"] == (lo[1] if lo else None), f"{what}: {key} lowest {got['min_usd_per_hour']}, want {lo}")
            zones = {z["availability_zone"]: z["usd_per_hour"] for z in got["zones"]}
            check(lo is None or zones.get(got["min_availability_zone"]) == lo[1],
                  f"{what}: {key} lowest zone {got['min_availability_zone']}")
        c = rows[key]
        lo = lowest(*key)
        check(num(c["spot_min_usd_per_hour"]) == (lo[1] if lo else None), f"CSV {key} spot_min {c['spot_min_usd_per_hour']}, want {lo}")
        check(c["spot_min_zone_type"] == ("availability-zone" if lo else ""), f"CSV {key} spot_min_zone_type {c['spot_min_zone_type']}")
    check(local_zones == {"use1-atl2-az1", "usw2-lax1-az1", "usw2-lax1-az2"}, f"Local Zones seen: {local_zones}")

    # the count: us-east-1 rows whose lowest would be Atlanta's Local Zone
    atl = sorted(t for (t, r) in RECS if r == "us-east-1" and lowest(t, r, True) and lowest(t, r, True)[0] == "use1-atl2-az1")
    # (26 in the 2021-2025 data; the 2026 data adds p6-b200.48xlarge, whose Atlanta spot row is lowest)
    check(len(atl) == 27 and "p6-b200.48xlarge" in atl,
          f"the data has {len(atl)} us-east-1 rows with Atlanta lowest, the issue counted 26 before p6-b200's 1")
    got_default = [k[0] for k, r in rows.items() if k[1] == "us-east-1" and r["spot_min_availability_zone"] == "use1-atl2-az1"]
    got_local = sorted(k[0] for k, r in with_local.items() if k[1] == "us-east-1"
                       and r["spot"]["min_availability_zone"] == "use1-atl2-az1")
    check(not got_default, f"Local Zone lowest without --include-local-zones: {got_default}")
    check(got_local == atl, f"--include-local-zones: Atlanta lowest for {got_local}, want {atl}")

    # the table: a marker where a Local Zone is shown, a note where one is left out
    args = ["--region", "us-east-1", "--instance-types", "c7i.xlarge,p5.48xlarge,g5.xlarge", "--format", "table",
            "--columns", "instance_type,spot_min_usd_per_hour,spot_min_availability_zone"]
    p = prices([*args, "--include-local-zones"])
    _, trows = parse_table(p.stdout)
    for row in trows:
        lo = lowest(row["INSTANCE TYPE"], "us-east-1", True)
        mark = "" if availability_zone(lo[0]) else " (LZ)"
        check(row["IN AZ"] == lo[0] + mark and row["SPOT $/h (LOWEST)"] == usd(lo[1]), f"--include-local-zones table: {row}")
    check("(LZ) a Local Zone" in p.stdout, f"no legend for (LZ):\n{p.stdout}")
    p = prices(args)
    _, trows = parse_table(p.stdout)
    for row in trows:
        lo = lowest(row["INSTANCE TYPE"], "us-east-1")
        check(row["IN AZ"] == lo[0] and row["SPOT $/h (LOWEST)"] == usd(lo[1]), f"table: {row}, want {lo}")
    n = sum(1 for t in ("c7i.xlarge", "p5.48xlarge", "g5.xlarge") if len(regular_zones(RECS[(t, "us-east-1")]["spot"]))
            < len(RECS[(t, "us-east-1")]["spot"]))
    check(f"leaves out Local and Wavelength Zones" in p.stdout and f"{n} rows have some" in p.stdout
          and "--include-local-zones" in p.stdout, f"no note on the zones left out ({n} rows):\n{p.stdout}")


def case_nodes():
    # the seed question: four g5.xlarge against one g5.12xlarge, in one table
    args = ["--instance-types", "g5.xlarge,g5.12xlarge", "--nodes", "4,1", "--region", "us-east-1"]
    want = {"g5.xlarge": 4, "g5.12xlarge": 1}

    def expect(t, n):
        od, lo = RECS[(t, "us-east-1")]["od"], lowest(t, "us-east-1")
        return {"nodes": n, "acc": n * HW[t][2], "od": n * od, "spot": n * lo[1]}
    doc = as_json(args)
    check([r["instance_type"] for r in doc["prices"]] == list(want), f"JSON types {[r['instance_type'] for r in doc['prices']]}")
    for r in doc["prices"]:
        e = expect(r["instance_type"], want[r["instance_type"]])
        check(r["nodes"] == e["nodes"] and r["total_accelerators"] == e["acc"], f"JSON {r['instance_type']}: {r['nodes']} nodes, "
              f"{r['total_accelerators']} accelerators; want {e}")
        close(r["on_demand"]["total_usd_per_hour"], e["od"], f"JSON {r['instance_type']} on-demand total")
        close(r["spot"]["min_total_usd_per_hour"], e["spot"], f"JSON {r['instance_type']} spot total")
    for r in as_csv(args):
        e = expect(r["instance_type"], want[r["instance_type"]])
        check(r["nodes"] == str(e["nodes"]) and r["total_accelerators"] == str(e["acc"]), f"CSV {r['instance_type']}: {r}")
        close(num(r["on_demand_total_usd_per_hour"]), e["od"], f"CSV {r['instance_type']} on-demand total")
        close(num(r["spot_min_total_usd_per_hour"]), e["spot"], f"CSV {r['instance_type']} spot total")
    p = prices([*args, "--format", "table"])
    headers, trows = parse_table(p.stdout)
    for h in ("NODES", "TOTAL ACCELERATORS", "ON-DEMAND $/h TOTAL", "SPOT $/h TOTAL"):
        check(h in headers, f"table without {h}: {headers}")
    for row in trows:
        t = row["INSTANCE TYPE"]
        e = expect(t, want[t])
        check(row["NODES"] == str(e["nodes"]) and row["TOTAL ACCELERATORS"] == f"{e['acc']} x A10G" and
              row["ON-DEMAND $/h TOTAL"] == usd(e["od"]) and row["SPOT $/h TOTAL"] == usd(e["spot"]), f"table row {row}, want {e}")
    check("TOTAL: NODES instances together" in p.stdout, "no legend for the totals")

    # one count for every type; a pattern's count for every type it matches
    for r in as_csv(["--instance-types", "g5.xlarge,g6.xlarge,c7i.large", "--nodes", "3", "--region", "us-east-1"]):
        check(r["nodes"] == "3" and r["total_accelerators"] == str(3 * HW[r["instance_type"]][2]), f"--nodes 3: {r}")
    for r in as_csv(["--instance-types", "g5.*,p5.48xlarge", "--nodes", "2,1", "--region", "us-east-1"]):
        n = 1 if r["instance_type"] == "p5.48xlarge" else 2
        check(r["nodes"] == str(n), f"--instance-types 'g5.*',p5.48xlarge --nodes 2,1: {r['instance_type']} {r['nodes']}")
    # without --nodes: one instance, no node columns in the table
    for r in as_csv(["--instance-types", "g5.xlarge", "--region", "us-east-1"]):
        check(r["nodes"] == "1" and num(r["on_demand_total_usd_per_hour"]) == RECS[("g5.xlarge", "us-east-1")]["od"], f"{r}")
    headers, _ = parse_table(prices(["--instance-types", "g5.xlarge", "--region", "us-east-1", "--format", "table"]).stdout)
    check("NODES" not in headers, f"NODES without --nodes: {headers}")

    # counts that do not fit: exit 2, one line, nothing on stdout
    for bad, says in ((["--instance-types", "g5.xlarge,g5.12xlarge", "--nodes", "4,1,2"], "3 counts for 2"),
                      (["--nodes", "4,1"], "no --instance-types"),
                      (["--instance-types", "g5.xlarge", "--nodes", "0"], "below the minimum"),
                      (["--instance-types", "g5.xlarge", "--nodes", "four"], "--nodes"),
                      (["--instance-types", "g5.xlarge", "--nodes", "4,"], "--nodes"),
                      (["--instance-types", "g5.xlarge", "--nodes", "4", "--nodes", "2"], "twice")):
        p = prices([*bad, "--region", "us-east-1", "--format", "csv"], rc=2)
        check(not p.stdout and says in p.stderr and len(p.stderr.strip().splitlines()) == 1, f"{bad}: {p.stderr!r}")


def case_per_accelerator():
    doc = as_json(["--region", "us-east-1"])
    rows = {r["instance_type"]: r for r in as_csv(["--region", "us-east-1"])}
    checked = 0
    for rec in doc["prices"]:
        t = rec["instance_type"]
        if (t, "us-east-1") not in RECS:
            continue
        od, lo = RECS[(t, "us-east-1")]["od"], lowest(t, "us-east-1")
        want_od, want_spot = per_accelerator(t, od), per_accelerator(t, lo[1] if lo else None)
        close(rec["on_demand"]["usd_per_accelerator_hour"], want_od, f"JSON {t} on-demand per accelerator")
        close(rec["spot"]["min_usd_per_accelerator_hour"], want_spot, f"JSON {t} spot per accelerator")
        close(num(rows[t]["on_demand_usd_per_accelerator_hour"]), want_od, f"CSV {t} on-demand per accelerator")
        close(num(rows[t]["spot_min_usd_per_accelerator_hour"]), want_spot, f"CSV {t} spot per accelerator")
        checked += want_od is not None
    check(checked > 20, f"only {checked} accelerated types checked")
    _, trows = parse_table(prices(["--region", "us-east-1", "--format", "table"]).stdout)
    for row in trows:
        t = row["INSTANCE TYPE"]
        od, lo = RECS.get((t, "us-east-1"), {"od": None})["od"], lowest(t, "us-east-1")
        for col, v in (("ON-DEMAND $/h PER ACCEL", per_accelerator(t, od)),
                       ("SPOT $/h PER ACCEL", per_accelerator(t, lo[1] if lo else None))):
            check(row[col] == (usd(v) if v is not None else "-"), f"table {t} {col}: {row[col]!r}, want {v}")


def case_snapshot_message():
    p = prices(["--region", "eu-west-3", "--instance-types", "c7i.large", "--format", "csv"], rc=1)
    has = sorted(r for (t, r), rec in RECS.items() if t == "c7i.large" and (rec["od"] is not None or rec["spot"]))
    check(len(has) == 7, f"the data prices c7i.large in {has}")
    msg = p.stderr
    check("accelerated types only" not in msg and "c7i.large" in msg and "eu-west-3" in msg and
          all(r in msg for r in has) and len(msg.strip().splitlines()) == 1 and not p.stdout,
          f"the message does not name what is missing ({has}): {msg!r}")
    # a type the snapshot does not have: its families, from the data
    p = prices(["--region", "us-east-1", "--instance-types", "x2iedn.large"], rc=2)
    families = sorted({t.rsplit(".", 1)[0] for t in HW})
    check("accelerated types only" not in p.stderr and all(f in p.stderr for f in families),
          f"the families of the snapshot ({families}) are not named: {p.stderr!r}")


def case_csv_format():
    args = ["--region", "us-east-1,us-east-2", "--instance-types", "g5.xlarge,g5.12xlarge,p5.4xlarge,p5e.48xlarge,c7i.large",
            "--nodes", "4,1,2,1,3"]
    text = prices([*args, "--format", "csv"]).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    doc = {(r["instance_type"], r["region"]): r for r in as_json(args)["prices"]}
    # the same document with every number kept as the text it was written as
    raw = json.loads(prices([*args, "--format", "json"]).stdout or "{}", parse_float=str, parse_int=str)
    doc_text = {(r["instance_type"], r["region"]): r for r in raw.get("prices", [])}
    header = next(csv.reader(io.StringIO(text)))
    for col in header:
        check(("as_of" not in col) or col.endswith("_utc"), f"a time column without _utc: {col}")
    stamp = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
    for row in rows:
        rec = doc[(row["instance_type"], row["region"])]
        rec_text = doc_text.get((row["instance_type"], row["region"]), {})
        for col, cell in row.items():
            if col == "spot_zone_count":   # a count where JSON has the list
                n = len(rec["spot"]["zones"])
                check(cell == (str(n) if rec["spot"]["source"] else ""), f"spot_zone_count {cell!r}, JSON has {n} zones")
                continue
            path = json_path(col)
            check(path is not None, f"CSV column {col} names no JSON field")
            v = rec
            for k in path or []:
                v = v.get(k) if isinstance(v, dict) else None
            if col.endswith("_utc"):
                check(cell == "" or stamp.fullmatch(cell), f"{col} = {cell!r} is not YYYY-MM-DDTHH:MM:SS")
                check((cell == "" and v is None) or (v is not None and v == cell + "Z"),
                      f"{col} {cell!r} against JSON {v!r}")
            elif re.fullmatch(r"-?[0-9.]+(e[-+]?[0-9]+)?", cell):
                check("." not in cell and "e" not in cell or cell == repr(float(cell)),
                      f"{col} = {cell!r} is not the shortest text of {float(cell)!r}")
                # the same double, and the same text as the JSON's (json_text: numbers kept as written)
                check(isinstance(v, (int, float)) and float(cell) == v, f"{col} {cell!r} against JSON {path} {v!r}")
                t = rec_text
                for k in path or []:
                    t = t.get(k) if isinstance(t, dict) else None
                check(t == cell, f"{col}: {cell!r} in CSV, {t!r} in JSON")
            else:
                check((cell == "" and v in (None, "")) or cell == str(v), f"{col} {cell!r} against JSON {path} {v!r}")


def json_path(col):
    """The JSON field a CSV column carries: the path joined by '_' (spot.min_usd_per_hour ->
    spot_min_usd_per_hour), the instance's hardware without 'instance_', times with '_utc'."""
    col = col[:-4] if col.endswith("_utc") else col
    for obj in ("on_demand", "spot", "interruption"):
        if col.startswith(obj + "_"):
            return [obj, col[len(obj) + 1:]]
    if col in ("vcpus", "memory_gib", "accelerator", "accelerator_count", "accelerator_memory_gib"):
        return ["instance", col]
    if col in ("instance_type", "region", "nodes", "total_accelerators", "placement_score"):
        return [col]
    return None


def case_rank_local_zones():
    t, r = "c7i.xlarge", "us-east-1"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        fx.write_json(path, fx.result(t, r, 1, 0, "cpu", 100.0, backend="cpu"))
        for extra, with_local in (([], False), (["--include-local-zones"], True)):
            for mode in ("lowest", "median"):
                zones = RECS[(t, r)]["spot"] if with_local else regular_zones(RECS[(t, r)]["spot"])
                want = min(zones.values()) if mode == "lowest" else statistics.median(zones.values())
                rc, out, err = fx.run(BIN, [path, "--source", "snapshot", "--market", "spot", "--spot-price", mode,
                                            "--format", "json", *extra])
                check(rc == 0, f"rank {mode} {extra}: exit {rc}: {err[-400:]}")
                rows = json.loads(out or "{}").get("rows", [])
                got = rows[0]["usd_per_hour"] if rows else None
                close(got, want, f"rank --spot-price {mode} {' '.join(extra)}")


def case_survival():
    """--nodes N with the spot columns: the N-node job's interruption rate and its chance of 24 h
    without one, from the Advisor's raw feed (data/spot-advisor-data.json, `r` the bucket) and the
    model's assumption written out here: the bucket's midpoint share p of nodes reclaimed over a
    720-hour month, a node's rate -ln(1 - p) / 720, the job's N times that, e^(-24 N lambda)."""
    advisor = json.load(open(os.path.join(DATA, "spot-advisor-data.json")))["spot_advisor"]
    shares = [0.025, 0.075, 0.125, 0.175, 0.25]
    want = {"g5.xlarge": 4, "g5.12xlarge": 1, "g6.xlarge": 2, "p5.48xlarge": 3}
    args = ["--instance-types", ",".join(want), "--nodes", ",".join(map(str, want.values())), "--region", "us-east-1"]

    def expect(t):
        b = advisor["us-east-1"]["Linux"].get(t, {}).get("r")
        if b is None:
            return None, None
        job = want[t] * -math.log(1 - shares[b]) / 720
        return job, math.exp(-24 * job)
    doc = as_json(args)
    seen_bucket = 0
    for r in doc["prices"]:
        job, p24 = expect(r["instance_type"])
        seen_bucket += job is not None
        close(r["interruption"]["job_rate_per_hour"], job, f"JSON {r['instance_type']} job rate")
        close(r["interruption"]["p_no_interruption_24h"], p24, f"JSON {r['instance_type']} P(24 h)")
        close(r["interruption"]["rate_per_node_hour"], job / want[r["instance_type"]] if job else None,
              f"JSON {r['instance_type']} node rate")
    check(seen_bucket >= 3, f"only {seen_bucket} types with an Advisor bucket: the case tests too little")
    errors = list(jsonschema.Draft202012Validator(json.load(open(os.path.join(REPO, "schemas", "prices-v1.json"))))
                  .iter_errors(doc))
    check(not errors, f"schema: {[e.message for e in errors[:3]]}")
    for r in as_csv(args):
        job, p24 = expect(r["instance_type"])
        close(num(r["interruption_job_rate_per_hour"]), job, f"CSV {r['instance_type']} job rate")
        close(num(r["interruption_p_no_interruption_24h"]), p24, f"CSV {r['instance_type']} P(24 h)")
    p = prices([*args, "--format", "table"])
    headers, trows = parse_table(p.stdout)
    check("JOB INTERRUPTIONS" in headers and "P(24 h UNINTERRUPTED)" in headers, f"table headers {headers}")
    for row in trows:
        job, p24 = expect(row["INSTANCE TYPE"])
        hours = 1 / job if job else None
        cell = "-" if job is None else f"1 per {hours:,.{1 if hours < 10 else 0}f} h"
        check(row.get("JOB INTERRUPTIONS") == cell, f"table {row['INSTANCE TYPE']}: {row.get('JOB INTERRUPTIONS')!r}, want {cell!r}")
        pct = probability(p24)
        check(row.get("P(24 h UNINTERRUPTED)") == pct, f"table {row['INSTANCE TYPE']}: {row.get('P(24 h UNINTERRUPTED)')!r}, want {pct!r}")
    legend = " ".join(p.stdout.split())
    check("P(24 h UNINTERRUPTED): e^(-rate x 24)" in legend and "720 h month" in legend, f"no legend for the columns:\n{p.stdout}")
    # beside the interruption columns a placement score must not read as one: offline no row has a
    # score and the default table has no PLACEMENT column, so the column is asked for by name
    p = prices([*args, "--format", "table", "--columns", "instance_type,interruption_job_rate_per_hour,placement_score"])
    headers, _ = parse_table(p.stdout)
    check("PLACEMENT 1-10" in headers and "launch likelihood, not interruption risk" in " ".join(p.stdout.split()),
          f"the placement score is not labelled a launch likelihood: {headers}\n{p.stdout}")
    # without --nodes the table keeps its columns (JSON and CSV carry the figures for one node)
    headers, _ = parse_table(prices(["--instance-types", "g5.xlarge", "--region", "us-east-1", "--format", "table"]).stdout)
    check("JOB INTERRUPTIONS" not in headers, f"JOB INTERRUPTIONS without --nodes: {headers}")



# The table's keys before they became the CSV's names (instbench 0.1): still accepted until 0.2.
OLD_KEYS = {"type": "instance_type", "accelerators": "accelerator", "accelerator_memory": "accelerator_memory_gib",
            "memory": "memory_gib", "on_demand": "on_demand_usd_per_hour", "spot": "spot_min_usd_per_hour",
            "spot_az": "spot_min_availability_zone", "azs": "spot_zone_count", "interruption": "interruption_label",
            "savings": "spot_min_savings_pct", "advisor_savings": "interruption_savings_pct",
            "placement": "placement_score", "on_demand_per_accelerator": "on_demand_usd_per_accelerator_hour",
            "spot_per_accelerator": "spot_min_usd_per_accelerator_hour", "on_demand_total": "on_demand_total_usd_per_hour",
            "spot_total": "spot_min_total_usd_per_hour", "job_interruptions": "interruption_job_rate_per_hour",
            "p_uninterrupted_24h": "interruption_p_no_interruption_24h"}


def reference(rec, key):
    """KEY's value in a record of the whole instbench.prices/v1 document (json_path; the zone count
    is the length of its list, present where spot has a source)."""
    if key == "spot_zone_count":
        return len(rec["spot"]["zones"]) if rec["spot"]["source"] else None
    v = rec
    for k in json_path(key) or []:
        v = v.get(k) if isinstance(v, dict) else None
    return v


def same_cell(cell, v, key, what):
    """A CSV cell against the document's value: empty for null, the same double, the same text, a
    time without its Z."""
    if key.endswith("_utc"):
        ok = (cell == "" and v is None) or (v is not None and cell + "Z" == v)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        ok = cell != "" and float(cell) == v
    else:
        ok = (cell == "" and v in (None, "")) or cell == str(v)
    check(ok, f"{what}: {key} {cell!r}, the prices/v1 document has {v!r}")


def shown_cell(cell, rec, key, what):
    """A table cell against the document's value, in docs/usage.md's style: money as usd(), counts
    as whole numbers, the accelerators as "N x NAME" (per instance; the total for NODES), "-" for
    unknown."""
    v = reference(rec, key)
    if key in ("accelerator", "total_accelerators"):
        inst = rec["instance"]
        n = inst["accelerator_count"] if key == "accelerator" else rec["total_accelerators"]
        want = f"{n} x {inst['accelerator']}" if inst["accelerator"] else "-"
    elif "usd" in key:
        want = usd(v) if v is not None else "-"
    elif key in ("nodes", "vcpus", "spot_zone_count", "placement_score", "interruption_bucket", "accelerator_count"):
        want = str(v) if v is not None else ("0" if key == "spot_zone_count" else "-")
    elif key in ("instance_type", "region", "interruption_label", "spot_min_zone_type"):
        want = v if v else "-"
    else:
        check(cell != "", f"{what}: {key} empty")
        return
    check(cell == want, f"{what}: {key} {cell!r}, want {want!r} (the prices/v1 document has {v!r})")


def case_columns():
    """--columns (issue 41) names the CSV's header in every format: each key picks that column of
    the table, the CSV and the JSON rows (instbench.price-rows/v1), in the order asked, the values
    checked against the whole instbench.prices/v1 document of the same query (its fields, not the
    picked output); the table's old keys still work, with one note naming the new key, and give
    what the new key gives; an unknown key lists the keys; rank --source refuses the rows, which
    lack what a price is read with."""
    args = ["--region", "us-east-1,eu-west-3", "--instance-types", "g5.xlarge,g5.12xlarge,p5.4xlarge,c7i.large",
            "--nodes", "4,1,2,3"]
    doc = as_json(args)
    ref = {(r["instance_type"], r["region"]): r for r in doc.get("prices", [])}
    check(len(ref) == 8, f"the case needs 8 rows, the document has {len(ref)}")
    header = next(csv.reader(io.StringIO(prices([*args, "--format", "csv"]).stdout)))
    check(all(json_path(k) or k == "spot_zone_count" for k in header), f"a CSV column names no JSON field: {header}")

    # every key at once, in reverse order: the CSV and the JSON rows carry exactly those, in that order
    keys = list(reversed(header))
    text = prices([*args, "--format", "csv", "--columns", ",".join(keys)]).stdout
    check(next(csv.reader(io.StringIO(text)), None) == keys, f"--columns in CSV: header {text.splitlines()[:1]}")
    rows = list(csv.DictReader(io.StringIO(text)))
    check(len(rows) == len(ref), f"--columns CSV: {len(rows)} rows, want {len(ref)}")
    for row in rows:
        rec = ref.get((row["instance_type"], row["region"]), {})
        for k in keys:
            same_cell(row[k], reference(rec, k), k, f"CSV {row['instance_type']} {row['region']}")
    out = prices([*args, "--format", "json", "--columns", ",".join(keys)]).stdout
    flat = json.loads(out or "{}")
    check(flat.get("schema") == "instbench.price-rows/v1" and flat.get("columns") == keys and
          flat.get("market") == "both", f"--columns JSON head: {out[:300]!r}")
    with open(os.path.join(REPO, "schemas", "price-rows-v1.json")) as f:
        try:
            jsonschema.validate(flat, json.load(f))
        except jsonschema.ValidationError as e:
            check(False, f"--columns JSON against schemas/price-rows-v1.json: {e.message}")
    check(len(flat.get("rows", [])) == len(ref), f"--columns JSON: {len(flat.get('rows', []))} rows")
    for row in flat.get("rows", []):
        check(list(row) == keys, f"JSON row keys {list(row)[:4]}..., want {keys[:4]}...")
        rec = ref.get((row.get("instance_type"), row.get("region")), {})
        for k in keys:
            v, got = reference(rec, k), row.get(k)
            ok = got == v if not isinstance(v, float) else isinstance(got, (int, float)) and float(got) == v
            check(ok or (v == "" and got is None), f"JSON rows {rec.get('instance_type')}: {k} {got!r}, the prices/v1 document has {v!r}")

    # each key alone, in each format
    for k in header:
        c = list(csv.reader(io.StringIO(prices([*args, "--format", "csv", "--columns", k]).stdout)))
        check(c[:1] == [[k]] and len(c) == len(ref) + 1, f"--columns {k} CSV: {c[:2]}")
        j = json.loads(prices([*args, "--format", "json", "--columns", k]).stdout or "{}")
        check(j.get("columns") == [k] and all(list(r) == [k] for r in j.get("rows", [])) and len(j.get("rows", [])) == len(ref),
              f"--columns {k} JSON: {str(j)[:200]}")
        pick = "instance_type,region" + ("" if k in ("instance_type", "region") else "," + k)
        both = prices([*args, "--format", "table", "--columns", pick]).stdout
        headers, trows = parse_table(both)
        check(len(headers) == (3 if k not in ("instance_type", "region") else 2) and len(trows) == len(ref),
              f"--columns {k} table: {headers} {len(trows)} rows")
        for tr in trows:
            vals = list(tr.values())
            rec = ref.get((vals[0], vals[1]), {})
            if rec and len(vals) == 3:
                shown_cell(vals[2], rec, k, f"table {vals[0]} {vals[1]}")

    # the old keys: one note naming the new key, the same output as the new key's, in every format
    for old, new in OLD_KEYS.items():
        check(new in header, f"old key {old}: {new} is not a CSV column")
        for fmt in ("table", "csv", "json"):
            po = prices([*args, "--format", fmt, "--columns", f"region,{old}"])
            pn = prices([*args, "--format", fmt, "--columns", f"region,{new}"])
            if fmt == "json":   # generated_at may tick between the runs
                po_out, pn_out = re.sub(r'"generated_at": "[^"]*"', "", po.stdout), re.sub(r'"generated_at": "[^"]*"', "", pn.stdout)
            else:
                po_out, pn_out = po.stdout, pn.stdout
            check(po_out == pn_out and po_out, f"--columns {old} ({fmt}) differs from {new}")
            notes = [l for l in po.stderr.splitlines() if f"'{old}'" in l]
            check(len(notes) == 1 and new in notes[0] and f"'{old}'" not in pn.stderr,
                  f"--columns {old}: the note naming {new}: {po.stderr!r}")
    # an unknown key: exit 2, the nearest and every key named
    for fmt in ("table", "csv", "json"):
        p = prices([*args, "--format", fmt, "--columns", "region,instance_typ"], rc=2)
        check(not p.stdout and "instance_type" in p.stderr and all(k in p.stderr for k in header),
              f"--columns instance_typ ({fmt}): {p.stderr[-400:]!r}")
    # without --format, --columns is a table even into a pipe
    lines = [l for l in prices([*args, "--columns", "instance_type,on_demand_usd_per_hour"]).stdout.splitlines() if l.strip()]
    check(lines[:1] and lines[0].split() == ["INSTANCE", "TYPE", "ON-DEMAND", "$/h"],
          f"--columns without --format, into a pipe: {lines[:3]}")

    # rank --source reads the whole document, and refuses the rows with a message saying so
    t, r = "g5.xlarge", "us-east-1"
    with tempfile.TemporaryDirectory() as d:
        res, whole, picked = (os.path.join(d, n) for n in ("r.json", "whole.json", "rows.json"))
        fx.write_json(res, fx.result(t, r, 1, 1, "A10G", 100.0))
        with open(whole, "w") as f:
            f.write(prices(["--region", r, "--instance-types", t, "--format", "json"]).stdout)
        with open(picked, "w") as f:
            f.write(prices(["--region", r, "--instance-types", t, "--format", "json", "--columns", "instance_type,region,"
                            "on_demand_usd_per_hour"]).stdout)
        rc, out, err = fx.run(BIN, [res, "--source", whole, "--market", "on-demand", "--format", "json"])
        rows = json.loads(out or "{}").get("rows", [])
        check(rc == 0 and rows and rows[0].get("usd_per_hour") == RECS[(t, r)]["od"], f"rank --source the document: {rc} {err[-300:]}")
        rc, out, err = fx.run(BIN, [res, "--source", picked, "--market", "on-demand", "--format", "json"])
        check(rc != 0 and "price-rows" in err and "without --columns" in err and "Traceback" not in err,
              f"rank --source the rows: exit {rc}: {err[-400:]!r}")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    sys.exit(f"unknown case {CASE}; cases: {', '.join(CASES)}")
if shutil.which("jq") is None and CASE == "json_tools":
    check(False, "jq is not installed (scripts/bootstrap.sh --test-deps installs it)")
else:
    CASES[CASE]()
print(f"prices_machine_output {CASE}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
