"""`instbench rank` numbers against an independent Python computation.

Random (seeded) results and prices; for many option combinations the JSON rows and the CSV rows
(parsed back with Python's csv module) must hold exactly the configurations the Python model
expects, in the expected order, with samples/s (median of runs), $/h, samples per dollar, time and
cost to target all within 1e-9 relative.  Usage: rank_math.py INSTBENCH"""
import csv
import io
import json
import os
import random
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
from testlib import check, failures


# Instance types: (name, accelerators per node, GPU name).  ml.* is SageMaker: on-demand only.
TYPES = [("g5.xlarge", 1, "NVIDIA A10G"), ("g5.12xlarge", 4, "NVIDIA A10G"), ("g6.xlarge", 1, "NVIDIA L4"),
         ("p4d.24xlarge", 8, "NVIDIA A100-SXM4-40GB"), ("p3.2xlarge", 1, "Tesla V100-SXM2-16GB"),
         ("ml.g5.xlarge", 1, "NVIDIA A10G"), ("g4dn.xlarge", 1, "Tesla T4")]
REGIONS = ["us-east-1", "us-west-2"]
FP_A = "a1b2c3d4" + "0" * 56
FP_B = "b7" + "1" * 62


def scenario(seed, d):
    rnd = random.Random(seed)
    results = []
    for t, acc, gpu in TYPES:
        for region in REGIONS:
            for nodes in (1, 2, 4):
                if rnd.random() < 0.35:
                    continue
                base = rnd.uniform(50, 5000) * acc * nodes
                for _ in range(rnd.randint(1, 4)):
                    # Some multi-node runs record the cluster via instance.count only.
                    use_count = nodes > 1 and rnd.random() < 0.3
                    results.append(fx.result(t, region, 1 if use_count else nodes, acc, gpu,
                                             base * rnd.uniform(0.9, 1.1), fingerprint=FP_A,
                                             count=nodes if use_count else 1))
    # A second workload that must never mix with the first.
    for t, acc, gpu in TYPES[:3]:
        results.append(fx.result(t, "us-east-1", 1, acc, gpu, rnd.uniform(10, 100), fingerprint=FP_B,
                                 model="vit_large_patch16_224"))
    records = []
    for t, acc, gpu in TYPES:
        for region in REGIONS:
            if rnd.random() < 0.15:
                continue   # no price at all: must show as unpriced, not vanish
            od = round(rnd.uniform(0.3, 4) * acc, 4) if rnd.random() > 0.1 else None
            zones = None
            if not t.startswith("ml.") and rnd.random() > 0.15:
                zones = {f"{region}{c}": round(rnd.uniform(0.1, 0.9) * (od or 2), 5) for c in "abcdf"[:rnd.randint(1, 5)]}
            if od is None and zones is None:
                od = 1.0
            az_scores = {a: rnd.randint(1, 10) for a in (zones or {}) if rnd.random() < 0.5}
            records.append(fx.price_record(t, region, od, zones, bucket=rnd.choice([None, rnd.randint(0, 4)]),
                                           placement=rnd.choice([None, rnd.randint(1, 10)]), az_scores=az_scores))
    prices = fx.prices_doc(records)
    for i, r in enumerate(results):
        fx.write_json(os.path.join(d, "results", f"sub{i % 3}", f"r{i:04d}.json"), r)
    fx.write_json(os.path.join(d, "prices.json"), prices)
    return results, prices


def compare(case, args, results, prices, kw, sort="samples-per-dollar", d=None):
    rc, out, err = fx.run(BIN, args + ["--format", "json"])
    check(rc == 0, f"{case}: exit {rc}: {err}")
    if rc != 0:
        return
    doc, json_text = json.loads(out), out
    check(doc["schema"] == "instbench.rank/v2", f"{case}: schema {doc['schema']}")
    wl = [r for r in results if r["workload"]["fingerprint"] == doc["workload"]["fingerprint"]]
    check(doc["workload"]["results"] == len(wl), f"{case}: workload results {doc['workload']['results']} != {len(wl)}")
    priced, unpriced = fx.expected_rows(wl, prices, **kw)
    target = kw.get("target")
    priced.sort(key=fx.sort_key(sort, target))
    got = fx.ranked(doc)
    check(len(got) == len(priced), f"{case}: {len(got)} rows, expected {len(priced)}")
    for i, (g, e) in enumerate(zip(got, priced)):
        where = f"{case} row {i + 1}"
        check(g["rank"] == i + 1, f"{where}: rank {g['rank']}")
        check((g["instance_type"], g["nodes"], g["region"], g["market"]) ==
              (e["instance_type"], e["nodes"], e["region"], e["market"]),
              f"{where}: got {g['configuration']} {g['region']}, expected {fx.label(e)} {e['region']}")
        check(g["configuration"] == fx.label(e), f"{where}: label {g['configuration']!r}")
        for k in ("samples_per_second", "usd_per_hour", "samples_per_dollar", "usd_per_hour_per_node"):
            ek = "price_per_node" if k == "usd_per_hour_per_node" else k
            check(fx.close(g[k], e[ek]), f"{where}: {k} {g[k]!r} != {e[ek]!r}")
        check(g["runs"] == e["runs"], f"{where}: runs {g['runs']} != {e['runs']}")
        check(fx.close(g["samples_per_second_min"], e["min"]) and
              fx.close(g["samples_per_second_max"], e["max"]), f"{where}: spread")
        if target:
            check(fx.close(g["hours_to_target"], e["hours_to_target"]), f"{where}: hours {g['hours_to_target']}")
            check(fx.close(g["cost_to_target_usd"], e["cost_to_target_usd"]), f"{where}: cost {g['cost_to_target_usd']}")
        else:
            check(g["hours_to_target"] is None and g["cost_to_target_usd"] is None, f"{where}: target figures w/o target")
        check(g["pareto"] == e["pareto"], f"{where}: pareto {g['pareto']} != {e['pareto']}")
        if e["market"] == "spot" and "az" in e:
            check(g["spot_az"] == e["az"], f"{where}: az {g['spot_az']} != {e['az']}")
        if e["market"] == "spot":
            check(g["interruption_bucket"] == e["interruption_bucket"],
                  f"{where}: interruption {g['interruption_bucket']} != {e['interruption_bucket']}")
            check(g["placement_score"] == e["placement_score"],
                  f"{where}: placement {g['placement_score']} != {e['placement_score']}")
            if e["interruption_bucket"] is not None:
                check(g["interruption_label"] == fx.INTERRUPTION_LABELS[e["interruption_bucket"]],
                      f"{where}: interruption label {g['interruption_label']}")
        if e["market"] == "on-demand":
            check(all(g[k] is None for k in ("spot_az", "interruption_bucket", "interruption_label", "placement_score")),
                  f"{where}: on-demand row has spot info")
        check((g["measured_nodes"], g["extrapolated"]) == (e["measured_nodes"], e["extrapolated"]),
              f"{where}: measured_nodes/extrapolated {g['measured_nodes']}/{g['extrapolated']} != "
              f"{e['measured_nodes']}/{e['extrapolated']}")
    exp_unpriced = sorted((u["instance_type"], u["nodes"], u["region"], u["market"]) for u in unpriced)
    got_unpriced = sorted((u["instance_type"], u["nodes"], u["region"], u["market"]) for u in fx.unpriced(doc))
    check(exp_unpriced == got_unpriced, f"{case}: unpriced {got_unpriced} != {exp_unpriced}")
    for u in fx.unpriced(doc):
        check(u["instance_type"] in u["unpriced_reason"] and len(u["unpriced_reason"]) > 10, f"{case}: vague reason {u['unpriced_reason']!r}")

    # CSV: the same rows, parsed back by the csv module, plain numbers.
    rc, out, err = fx.run(BIN, args + ["--format", "csv"])
    check(rc == 0, f"{case} csv: exit {rc}")
    every = list(csv.DictReader(io.StringIO(out, newline="")))
    rows = [r for r in every if r["rank"] != ""]
    check(len(rows) == len(priced), f"{case} csv: {len(rows)} rows, expected {len(priced)}")
    csv_unpriced = sorted((u["instance_type"], int(u["nodes"]), u["region"], u["market"]) for u in every
                          if u["rank"] == "")
    check(csv_unpriced == exp_unpriced and all(u["unpriced_reason"] and u["usd_per_hour"] == ""
                                               for u in every if u["rank"] == ""),
          f"{case} csv: unpriced rows {csv_unpriced} != {exp_unpriced}")
    # The same figures as the same text: JSON's numbers read as their literal text equal the CSV cells.
    text_doc = json.loads(json_text, parse_float=str, parse_int=str)
    for g, c in zip(text_doc["rows"], every):
        for k, v in g.items():
            if isinstance(v, str) and k in c and k not in ("price_as_of_utc",):
                check(c[k] == v, f"{case}: {k} is {v!r} in JSON but {c[k]!r} in CSV")
    for i, (g, e) in enumerate(zip(rows, priced)):
        where = f"{case} csv row {i + 1}"
        check(int(g["rank"]) == i + 1, f"{where}: rank")
        check(g["configuration"] == fx.label(e) and g["region"] == e["region"], f"{where}: {g['configuration']}")
        for k, ek in (("samples_per_second", "samples_per_second"), ("usd_per_hour", "usd_per_hour"),
                      ("samples_per_dollar", "samples_per_dollar")):
            check(fx.close(float(g[k]), e[ek]), f"{where}: {k} {g[k]} != {e[ek]}")
        if target:
            check(fx.close(float(g["hours_to_target"]), e["hours_to_target"]), f"{where}: hours")
            check(fx.close(float(g["cost_to_target_usd"]), e["cost_to_target_usd"]), f"{where}: cost")
        check(int(g["nodes"]) == e["nodes"] and int(g["runs"]) == e["runs"], f"{where}: nodes/runs")
        check((int(g["measured_nodes"]), g["extrapolated"]) == (e["measured_nodes"], str(e["extrapolated"]).lower()),
              f"{where}: csv measured_nodes/extrapolated {g['measured_nodes']}/{g['extrapolated']}")
        if e["market"] == "spot":
            check(g["placement_score"] == ("" if e["placement_score"] is None else str(e["placement_score"])),
                  f"{where}: csv placement {g['placement_score']!r}")
    for u in unpriced:
        check(f"not ranked: {fx.label(u)}" in err, f"{case} csv: unpriced {fx.label(u)} not reported on stderr")


for seed in range(1, 5):
    with tempfile.TemporaryDirectory() as d:
        results, prices = scenario(seed, d)
        base = [os.path.join(d, "results"), "--source", os.path.join(d, "prices.json"), "--workload", "a1b2"]
        rnd = random.Random(seed * 7)
        target = rnd.choice([10 ** 6, 1281167 * 90])
        compare(f"seed{seed} default", base, results, prices, {})
        compare(f"seed{seed} target", base + ["--samples", str(target)], results, prices, {"target": target})
        compare(f"seed{seed} epochs", base + ["--epochs", "90", "--dataset-size", "1281167"], results, prices,
                {"target": 90 * 1281167})
        for s in ("throughput", "cost", "time"):
            compare(f"seed{seed} sort {s}", base + ["--sort", s, "--samples", str(target)], results, prices,
                    {"target": target}, sort=s)
        compare(f"seed{seed} sort cost no target", base + ["--sort", "cost"], results, prices, {}, sort="cost")
        compare(f"seed{seed} spot median", base + ["--spot-price", "median", "--market", "spot"], results, prices,
                {"spot": "median", "markets": ("spot",)})
        compare(f"seed{seed} az", base + ["--az", "us-east-1b"], results, prices, {"spot": "az", "az": "us-east-1b"})
        compare(f"seed{seed} on-demand", base + ["--market", "on-demand"], results, prices,
                {"markets": ("on-demand",)})
        compare(f"seed{seed} region", base + ["--region", "us-west-2"], results, prices, {"region": "us-west-2"})
        compare(f"seed{seed} pareto", base + ["--pareto"], results, prices, {"pareto_only": True})
        # Constraints set between the extremes so that they bite.
        pri, _ = fx.expected_rows([r for r in results if r["workload"]["fingerprint"] == FP_A], prices,
                                  target=target)
        hours = sorted(r["rank_hours"] for r in pri)   # the figures constraints judge (spot: expected)
        costs = sorted(r["rank_cost"] for r in pri)
        hourly = sorted(r["usd_per_hour"] for r in pri)
        dl, bu, mh = hours[len(hours) // 2], costs[len(costs) // 2], hourly[len(hourly) // 3]
        compare(f"seed{seed} deadline", base + ["--samples", str(target), "--deadline", repr(dl)], results, prices,
                {"target": target, "deadline": dl})
        compare(f"seed{seed} budget", base + ["--samples", str(target), "--budget", repr(bu)], results, prices,
                {"target": target, "budget": bu})
        compare(f"seed{seed} max-hourly", base + ["--max-hourly", repr(mh)], results, prices, {"max_hourly": mh})
        compare(f"seed{seed} all constraints", base + ["--samples", str(target), "--deadline", repr(hours[-2]),
                                                       "--budget", repr(costs[-2]), "--max-hourly", repr(hourly[-2]),
                                                       "--pareto", "--sort", "time"],
                results, prices, {"target": target, "deadline": hours[-2], "budget": costs[-2],
                                  "max_hourly": hourly[-2], "pareto_only": True}, sort="time")
        # Spot at its raw price, and at a rate the user gives (every spot row alike, buckets or not):
        # order, Pareto frontier and constraints follow the figures each mode ranks by.
        compare(f"seed{seed} spot-risk off", base + ["--spot-risk", "off", "--pareto", "--samples", str(target),
                                                     "--deadline", repr(dl)], results, prices,
                {"spot_risk": False, "pareto_only": True, "target": target, "deadline": dl})
        compare(f"seed{seed} rate 30h", base + ["--interruption-rate", "30h", "--samples", str(target), "--budget",
                                               repr(bu), "--sort", "cost"], results, prices,
                {"interruption_rate": 1 / 30, "target": target, "budget": bu}, sort="cost")
        compare(f"seed{seed} rate 0.5 pareto", base + ["--interruption-rate", "0.5", "--pareto"], results, prices,
                {"interruption_rate": 0.5, "pareto_only": True})
        # The other workload on its own, picked by prefix; the default pick is the larger group.
        compare(f"seed{seed} workload B", base[:-1] + ["b7"], results, prices, {})
        compare(f"seed{seed} workload B by model", base[:-1] + ["vit_large_patch16_224"], results, prices, {})
        rc, out, err = fx.run(BIN, base[:-2] + ["--format", "json"])
        doc = json.loads(out) if rc == 0 else {}
        check(rc == 0 and doc["workload"]["fingerprint"] == FP_A, f"seed{seed}: default group is not the largest")
        check("2 workloads found" in err and FP_B[:12] in err, f"seed{seed}: groups not listed on stderr: {err}")
        check(sorted(w["fingerprint"] for w in doc.get("workloads", [])) == sorted([FP_A, FP_B]),
              f"seed{seed}: workloads list")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank math: all checks passed")
