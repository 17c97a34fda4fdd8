#!/usr/bin/env python3
"""Generates the price snapshot shipped with instbench, in the instbench.prices/v1 format.

Inputs (see their SOURCE.md files beside them):
  aws-accelerated-prices.csv  one row per (instance type, region, availability zone ID):
                              on-demand and spot USD/h, from skypilot-org/skypilot-catalog
  aws-cpu-prices.csv          the same for the CPU families the CPU backend runs on (c7i, c7a,
                              m7i, m7a, r7i, c6i, m6i in seven regions), same source and columns
  aws-accelerated-prices-2026.csv  the 2026 families (p6-b200, p6-b300, g7e, trn2) from a newer
                              commit of the same compilation, same columns, read on its own date
  spot-advisor-data.json      AWS Spot Instance Advisor feed: interruption bucket and savings
Outputs:
  configs/prices-snapshot.json  the snapshot, one record per (instance type, region) of the CSV
The build embeds that file into the binary (cmake/embed_file.cmake, into the build directory),
so it works from any cwd.

Every record also carries the type's hardware as the catalogue states it ("instance": vCPUs, host
memory, accelerator model, count and total accelerator memory; null where the source is empty).

Every (instance type, region) pair of the CSVs becomes a record, even when its on-demand price is
empty (on_demand: null).  Spot zones are the CSV's availability-zone IDs (use1-az1: AWS's stable
zone IDs, not the per-account names like us-east-1a).  The snapshot's date is the day the data
was read (the newest input's); every price is stamped with its own input's date at 00:00 UTC, so
the older rows keep the date they were read on.  A (type, region) pair in two inputs is an error.

Usage: scripts/data/make_price_snapshot.py [--data DIR] [--json OUT.json] [--check]
  --check  regenerate in memory and exit 1 if the committed file differs (used by the tests).
"""
import argparse
import collections
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Each input and the day it was read (its SOURCE.md says from where).
INPUTS = (("aws-accelerated-prices.csv", "2026-11-21"), ("aws-cpu-prices.csv", "2026-11-21"),
          ("aws-accelerated-prices-2026.csv", "2026-11-28"))
SNAPSHOT_DATE = max(d for _, d in INPUTS)
SNAPSHOT_SOURCE = (
    "skypilot-org/skypilot-catalog catalogs/v8/aws/vms.csv at commit 00148f2a, read 2026-11-21, and "
    "for p6-b200, p6-b300, g7e and trn2 catalogs/v9/aws/vms.csv at commit 3e9a1751, read 2026-11-28 "
    "(AWS public price list and spot price history as compiled by SkyPilot; not a live quote); "
    "interruption buckets from the AWS Spot Instance Advisor feed as embedded in alexei-led/spotinfo "
    "at commit 05e93313 (feed last changed 2025-06-28)"
)
AS_OF = SNAPSHOT_DATE + "T00:00:00Z"


def hardware(itype, rows):
    """The type's hardware from its catalogue rows (all rows must agree)."""
    def num(v, kind):
        return None if v == "" else kind(float(v))
    facts = {(r["vcpus"], r["memory_gib"], r["accelerator"], r["accelerator_count"], r["gpu_memory_mib_total"])
             for r in rows}
    if len(facts) != 1:
        sys.exit(f"{itype}: rows disagree on the hardware: {sorted(facts)}")
    vcpus, mem, acc, count, acc_mib = facts.pop()
    return {"vcpus": num(vcpus, int), "memory_gib": num(mem, float), "accelerator": acc or None,
            "accelerator_count": num(count, int) if acc else 0,
            "accelerator_memory_gib": None if acc_mib == "" else round(float(acc_mib) / 1024, 3)}


def build(data_dir):
    rows = []
    for name, day in INPUTS:
        with open(os.path.join(data_dir, name), newline="") as f:
            rows += [dict(r, as_of=day + "T00:00:00Z", input=name) for r in csv.DictReader(f)]
    with open(os.path.join(data_dir, "spot-advisor-data.json")) as f:
        advisor = json.load(f)["spot_advisor"]

    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault((r["instance_type"], r["region"]), []).append(r)

    records = []
    for (itype, region), rs in sorted(groups.items()):
        inputs = {r["input"] for r in rs}
        if len(inputs) > 1:
            sys.exit(f"{itype} {region}: in more than one input: {sorted(inputs)}")
        as_of = rs[0]["as_of"]
        ods = {r["on_demand_usd_per_hour"] for r in rs if r["on_demand_usd_per_hour"]}
        if len(ods) > 1:
            sys.exit(f"{itype} {region}: zones disagree on the on-demand price: {sorted(ods)}")
        on_demand = None
        if ods:
            on_demand = {"usd_per_hour": float(ods.pop()), "source": "snapshot", "as_of": as_of}
        zones = [
            {"availability_zone": r["availability_zone"], "usd_per_hour": float(r["spot_usd_per_hour"]),
             "timestamp": as_of}
            for r in sorted(rs, key=lambda r: r["availability_zone"]) if r["spot_usd_per_hour"]
        ]
        spot = {"source": "snapshot", "as_of": as_of, "zones": zones} if zones else None
        adv = advisor.get(region, {}).get("Linux", {}).get(itype)
        interruption = None
        if adv is not None:
            labels = ["<5%", "5-10%", "10-15%", "15-20%", ">20%"]
            if adv.get("r") not in range(len(labels)):
                sys.exit(f"{itype} {region}: the advisor feed's entry {adv} has no interruption bucket 0..4 ('r')")
            # "s" as the feed says it, negative where spot costs more (-62, -1): a savings figure
            # the feed leaves out is unknown (null), never a number standing for it
            interruption = {"bucket": adv["r"], "label": labels[adv["r"]], "savings_pct": adv.get("s")}
        records.append({"instance_type": itype, "region": region, "on_demand": on_demand,
                        "spot": spot, "interruption": interruption, "placement_score": None,
                        "instance": hardware(itype, rs)})

    doc = {"schema": "instbench.prices/v1", "generated_at": AS_OF,
           "snapshot": {"date": SNAPSHOT_DATE, "source": SNAPSHOT_SOURCE}, "prices": records}
    # One record per line: small diffs when the data changes, and grep-able.
    lines = ['{"schema": "instbench.prices/v1", "generated_at": %s, "snapshot": %s, "prices": ['
             % (json.dumps(doc["generated_at"]), json.dumps(doc["snapshot"]))]
    lines += [json.dumps(r) + ("," if i + 1 < len(records) else "") for i, r in enumerate(records)]
    lines.append("]}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == doc
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(ROOT, "data"))
    ap.add_argument("--json", default=os.path.join(ROOT, "configs", "prices-snapshot.json"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text = build(a.data)
    if a.check:
        if not os.path.exists(a.json) or open(a.json).read() != text:
            print(f"{a.json} is stale: re-run scripts/data/make_price_snapshot.py", file=sys.stderr)
            return 1
        return 0
    tmp = a.json + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.json)
    print(f"wrote {a.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
