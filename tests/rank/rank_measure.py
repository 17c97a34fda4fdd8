"""End to end: results written by the real `instbench measure` (a tiny CPU run) are ranked by
`instbench rank`; the numbers are recomputed in Python from the result files themselves, repeated
runs of one configuration combine, and a different batch size forms a separate workload group.
Usage: rank_measure.py INSTBENCH"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
from testlib import check, failures


def measure(out, itype, market, batch, extra=()):
    cmd = [BIN, "-q", "measure", "--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "1",
           "--image-size", "32", "--batch-size", str(batch), "--steps", "2", "--warmup", "1", "--workers", "1",
           "--instance-type", itype, "--region", "us-east-1", "--market", market, "--output", out,
           "--identity-mismatch", "ok", "--create-dirs", *extra]   # a CPU run recorded under a GPU type on purpose
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"measure failed ({p.returncode}): {p.stderr.decode()[-1500:]}")
    with open(out) as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as d:
    runs = [("g5.xlarge", "spot", 2), ("g5.xlarge", "on-demand", 2), ("g6.xlarge", "on-demand", 2),
            ("g5.xlarge", "spot", 3)]
    results = [measure(os.path.join(d, "res", f"m{i}.json"), *r) for i, r in enumerate(runs)]
    prices = fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45, "us-east-1b": 0.41}),
                            fx.price_record("g6.xlarge", "us-east-1", 0.805, {"us-east-1c": 0.33})])
    fx.write_json(os.path.join(d, "p.json"), prices)
    fp_main = results[0]["workload"]["fingerprint"]
    check(results[1]["workload"]["fingerprint"] == fp_main, "same workload, different fingerprint")
    check(results[3]["workload"]["fingerprint"] != fp_main, "batch size does not change the fingerprint")

    target = 1281167
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", os.path.join(d, "p.json"), "--workload",
                                fp_main[:8], "--samples", str(target), "--format", "json"])
    check(rc == 0, f"rank exit {rc}: {err}")
    check("2 workloads found" in err, "the second workload is not listed")
    if rc == 0:
        doc = json.loads(out)
        group = [r for r in results if r["workload"]["fingerprint"] == fp_main]
        priced, unpriced = fx.expected_rows(group, prices, target=target)
        priced.sort(key=fx.sort_key("samples-per-dollar", target))
        check(len(fx.ranked(doc)) == len(priced) == 4 and not unpriced, f"rows {len(fx.ranked(doc))}")
        for g, e in zip(fx.ranked(doc), priced):
            check(g["configuration"] == fx.label(e), f"order: {g['configuration']} != {fx.label(e)}")
            for k in ("samples_per_second", "usd_per_hour", "samples_per_dollar", "hours_to_target",
                      "cost_to_target_usd"):
                check(fx.close(g[k], e[k]), f"{g['configuration']}: {k} {g[k]} != {e[k]}")
        g5 = [g for g in fx.ranked(doc) if g["instance_type"] == "g5.xlarge"][0]
        sps = [r["measurement"]["samples_per_second"] for r in group if r["instance"]["type"] == "g5.xlarge"]
        check(g5["runs"] == 2 and fx.close(g5["samples_per_second"], statistics.median(sps)),
              "two g5.xlarge runs not combined at their median")
        # measure recorded the contradiction (a CPU run as a GPU type), rank carries it to every row
        check(all(r["instance"]["identity_mismatch"] is True for r in results), "measure did not record the mismatch")
        check(all(g["identity_mismatch"] is True for g in doc["rows"]), "a row of mismatched runs is not marked")
        # the union of the runs' own warning codes, as measure wrote them
        for g in fx.ranked(doc):
            codes = {c for r in group if r["instance"]["type"] == g["instance_type"]
                     for c in r["measurement"]["warning_codes"]}
            check(set(g["warnings"]) == codes, f"{g['configuration']}: warnings {g['warnings']} != {sorted(codes)}")

# The workload list tells apart groups that differ only where the fingerprint looks beyond model,
# precision and batch: each line names the data mode and optimizer its results recorded, and two
# groups that still read alike (--depth 1 and 2 are both "custom") say that more differs.
with tempfile.TemporaryDirectory() as d:
    variants = [(), ("--data", "device"), ("--optimizer", "adamw", "--lr", "0.0003"),
                ("--depth", "2")]
    res = [measure(os.path.join(d, "res", f"v{i}.json"), "g5.xlarge", "on-demand", 2, v)
           for i, v in enumerate(variants)]
    check(len({r["workload"]["fingerprint"] for r in res}) == 4, "the variants are not four workloads")
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", "snapshot", "--format", "json"])
    check(rc == 0 and "4 workloads found" in err, f"rank exit {rc}: {err}")
    lines = {r["workload"]["fingerprint"]: next((ln for ln in err.splitlines()
                                                 if r["workload"]["fingerprint"][:16] in ln), "") for r in res}
    for r in res:
        w, ln = r["workload"], lines[r["workload"]["fingerprint"]]
        o = w["optimizer"]
        want = f"data {w['data']}, {o['name']} lr {o['lr']:.6g}" + (f" wd {o['weight_decay']:.6g}"
                                                                    if o["weight_decay"] else "")
        check(want in ln, f"workload line {ln!r} does not name {want!r}")
    alike = [lines[r["workload"]["fingerprint"]] for r in (res[0], res[3])]
    check(all("settings the line does not name" in ln for ln in alike), f"lines alike not marked: {alike}")
    check(all("settings the line does not name" not in lines[r["workload"]["fingerprint"]] for r in res[1:3]),
          "a line told apart by what it names is marked as alike")

if failures:
    sys.exit(1)
print("rank on measure's results: all checks passed")
