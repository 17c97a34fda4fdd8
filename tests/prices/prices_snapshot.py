#!/usr/bin/python3
"""The shipped price snapshot: the committed configs/prices-snapshot.json is what
scripts/data/make_price_snapshot.py generates today (the build embeds that file as it is); every
(instance type, region) of the vendored CSV (data/) is present with the CSV's values (checked here from the
CSV itself); the interruption buckets are the Spot Advisor's; `instbench prices --source snapshot`
for every type and region reproduces them (so the embedded copy parses and is complete).  The
generator, run on a feed of its own, keeps an advisor savings of -1 as -1 and one the feed leaves
out as null, and refuses an entry without a bucket.

usage: prices_snapshot.py INSTBENCH SOURCE_DIR PRICE_DATA_DIR   (PRICE_DATA_DIR: the repository's data/)
"""
import csv
import json
import os
import subprocess
import sys

INSTBENCH, SRC, DATA = [os.path.abspath(a) for a in sys.argv[1:4]]
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import absent_path, check, failures as errors, scratch_dir


ABSENT = absent_path()
gen = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "data", "make_price_snapshot.py"), "--data", DATA,
                      "--check"], capture_output=True, text=True)
check(gen.returncode == 0, "committed snapshot is stale: " + gen.stderr)

rows = []
for name in ("aws-accelerated-prices.csv", "aws-cpu-prices.csv", "aws-accelerated-prices-2026.csv"):   # accelerator (2021-2025 and 2026 families) and CPU
    rows += list(csv.DictReader(open(os.path.join(DATA, name), newline="")))
advisor = json.load(open(os.path.join(DATA, "spot-advisor-data.json")))["spot_advisor"]
want = {}
for r in rows:
    w = want.setdefault((r["instance_type"], r["region"]), {"od": set(), "spot": {}, "hw": set()})
    w["hw"].add((r["vcpus"], r["memory_gib"], r["accelerator"], r["accelerator_count"], r["gpu_memory_mib_total"]))
    if r["on_demand_usd_per_hour"]:
        w["od"].add(float(r["on_demand_usd_per_hour"]))
    if r["spot_usd_per_hour"]:
        w["spot"][r["availability_zone"]] = float(r["spot_usd_per_hour"])

snap = json.load(open(os.path.join(SRC, "configs", "prices-snapshot.json")))
check(snap["schema"] == "instbench.prices/v1", "schema")
check(snap["snapshot"]["date"] and "skypilot" in snap["snapshot"]["source"], "snapshot date/source missing")


def known(obj, key, written):
    """OBJ (a record's on_demand or interruption) when it holds a value: instbench writes an object
    with null scalars for "none" (WRITTEN), the snapshot file's generator a null object."""
    if written:
        check(isinstance(obj, dict), "an object, never null, where there is no data: %r" % (obj,))
        return obj if obj and obj.get(key) is not None else None
    return obj


def compare(recs, what, written=False):
    check(set(recs) == set(want), "%s: pairs differ from the CSV: missing %s, extra %s"
          % (what, sorted(set(want) - set(recs))[:5], sorted(set(recs) - set(want))[:5]))
    for key, w in want.items():
        rec = recs.get(key)
        if rec is None:
            continue
        od = known(rec["on_demand"], "usd_per_hour", written)
        if w["od"]:
            check(len(w["od"]) == 1 and od is not None and od["usd_per_hour"] == next(iter(w["od"])),
                  "%s %s: on-demand %r vs CSV %r" % (what, key, od, w["od"]))
        else:
            check(od is None, "%s %s: on-demand %r but the CSV has none" % (what, key, od))
        # the type's hardware, as the CSV states it (instbench passes it on)
        (vcpus, mem, acc, count, mib), = w["hw"]
        hw = rec.get("instance") or {}
        check(hw.get("vcpus") == int(float(vcpus)) and hw.get("memory_gib") == float(mem) and
              hw.get("accelerator") == (acc or None) and hw.get("accelerator_count") == (int(float(count)) if acc else 0)
              and (hw.get("accelerator_memory_gib") is None) == (mib == "") and
              (mib == "" or abs(hw["accelerator_memory_gib"] * 1024 - float(mib)) < 1),
              "%s %s: hardware %r vs CSV %r" % (what, key, hw, w["hw"]))
        if written:
            check(isinstance(rec["spot"], dict) and isinstance(rec["spot"]["zones"], list),
                  "%s %s: spot %r is not an object with a zones list" % (what, key, rec["spot"]))
        zones = {z["availability_zone"]: z["usd_per_hour"] for z in (rec["spot"] or {"zones": []})["zones"]}
        check(zones == w["spot"], "%s %s: spot %r vs CSV %r" % (what, key, zones, w["spot"]))
        adv = advisor.get(key[1], {}).get("Linux", {}).get(key[0])
        got = known(rec["interruption"], "bucket", written)
        if adv is None:
            check(got is None, "%s %s: interruption %r but the advisor has none" % (what, key, got))
        else:
            check(got and got["bucket"] == adv["r"] and got["savings_pct"] == adv["s"],
                  "%s %s: interruption %r vs advisor %r" % (what, key, got, adv))


compare({(r["instance_type"], r["region"]): r for r in snap["prices"]}, "configs/prices-snapshot.json")

types = sorted({t for t, _ in want})
regions = sorted({r for _, r in want})
env = dict(os.environ, AWS_EC2_METADATA_DISABLED="true", HOME=ABSENT, XDG_CACHE_HOME=ABSENT)
p = subprocess.run([INSTBENCH, "prices", "--source", "snapshot", "--format", "json", "--instance-types",
                    ",".join(types), "--region", ",".join(regions)], capture_output=True, text=True, env=env,
                   cwd="/")
check(p.returncode == 0, "instbench prices --source snapshot failed: " + p.stderr)
if p.returncode == 0:
    out = json.loads(p.stdout)
    check(out["snapshot"]["date"] == snap["snapshot"]["date"], "the embedded snapshot's date differs")
    # instbench prints every type x region asked for; the CSV's pairs must carry its values
    got = {(r["instance_type"], r["region"]): r for r in out["prices"] if (r["instance_type"], r["region"]) in want}
    compare(got, "instbench --source snapshot", written=True)


def own_feed(entries):
    """The generator's snapshot from data/'s g5.xlarge rows in us-east-1 and us-west-2 and a feed
    whose Linux entries are ENTRIES ({region: entry}): (exit status, {region: record}, stderr)."""
    d = scratch_dir("instbench-feed-")
    for name in ("aws-accelerated-prices.csv", "aws-cpu-prices.csv", "aws-accelerated-prices-2026.csv"):
        with open(os.path.join(DATA, name), newline="") as f, open(os.path.join(d, name), "w", newline="") as out:
            rd = csv.DictReader(f)
            w = csv.DictWriter(out, rd.fieldnames)
            w.writeheader()
            w.writerows(r for r in rd if r["instance_type"] == "g5.xlarge" and r["region"] in entries)
    with open(os.path.join(d, "spot-advisor-data.json"), "w") as f:
        json.dump({"spot_advisor": {r: {"Linux": {"g5.xlarge": e}} for r, e in entries.items()}}, f)
    out = os.path.join(d, "snapshot.json")
    p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "data", "make_price_snapshot.py"), "--data", d,
                        "--json", out], capture_output=True, text=True)
    recs = {r["region"]: r for r in json.load(open(out))["prices"]} if p.returncode == 0 else {}
    return p.returncode, recs, p.stderr


# -1 is a real saving (the feed's figures go negative: -62 above), and a missing one is unknown
rc, recs, err = own_feed({"us-east-1": {"r": 4, "s": -1}, "us-west-2": {"r": 1}})
check(rc == 0 and len(recs) == 2, "generator on its own feed: exit %d, %d records: %s" % (rc, len(recs), err))
if recs:
    check(recs["us-east-1"]["interruption"] == {"bucket": 4, "label": ">20%", "savings_pct": -1},
          "feed s=-1: %r" % (recs["us-east-1"]["interruption"],))
    check(recs["us-west-2"]["interruption"] == {"bucket": 1, "label": "5-10%", "savings_pct": None},
          "feed without s: %r, want savings_pct null" % (recs["us-west-2"]["interruption"],))
# a savings without a bucket is no Advisor entry the reader takes (prices_json.c): refused, named
rc, recs, err = own_feed({"us-east-1": {"s": 40}})
check(rc != 0 and "g5.xlarge us-east-1" in err and "'r'" in err, "feed entry without r: exit %d: %s" % (rc, err))

print("%d (type, region) pairs checked, %d problems" % (len(want), len(errors)))
sys.exit(1 if errors else 0)
