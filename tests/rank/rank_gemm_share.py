#!/usr/bin/env python3
"""rank and how close each row came to its own machine (issue 37): GEMM SHARE (gemm_share), the
step's share of the GEMM rate measured in situ on the model's shapes (measurement.gemm_share =
model_tflops / (hardware.gemm_tflops_measured x devices), written by measure):
- a configuration with two runs: the median of the runs' shares (computed here from the runs'
  own model_tflops and gemm_tflops_measured, not from rank's output);
- a 4-node configuration with two real 4-node runs and a 1-node `measure --count 4` run they
  supersede: the median of the two real runs' shares, the extrapolated run's left out as every
  other figure of the row leaves it out;
- a result of an older version without the field, and one whose share is malformed (a string, a
  negative number): null, and the result still ranked;
- JSON and CSV carry it, the table shows it as a percentage with --columns.
Usage: rank_gemm_share.py INSTBENCH"""
import csv
import io
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN = sys.argv[1]
R = fx.result


def with_gemm(doc, model_tflops, gemm_tflops):
    devices = doc["topology"]["world_size"]
    doc["measurement"]["model_tflops"] = model_tflops
    doc["hardware"]["gemm_tflops_measured"] = gemm_tflops
    doc["measurement"]["gemm_share"] = model_tflops / (gemm_tflops * devices)
    return doc


runs = [with_gemm(R("p5.48xlarge", "us-east-1", 1, 8, "NVIDIA H100 80GB HBM3", 20000.0, host="a"), 2400.0, 700.0),
        with_gemm(R("p5.48xlarge", "us-east-1", 1, 8, "NVIDIA H100 80GB HBM3", 21000.0, host="b"), 2600.0, 690.0)]
old = R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 400.0)
bad = R("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 150.0)
bad["measurement"]["gemm_share"] = "high"
neg = R("g6.2xlarge", "us-east-1", 1, 1, "NVIDIA L4", 160.0)
neg["measurement"]["gemm_share"] = -0.5
# 4 x g5.2xlarge: two runs on all four nodes, and a 1-node run extrapolated to them (superseded)
real4 = [with_gemm(R("g5.2xlarge", "us-east-1", 4, 1, "NVIDIA A10G", v, host=h), mt, 31.0)
         for v, h, mt in ((800.0, "r1", 60.0), (840.0, "r2", 70.0))]
extrap = with_gemm(R("g5.2xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 230.0, count=4, host="x1"), 5.0, 31.0)
PRICES = fx.prices_doc([fx.price_record(t, "us-east-1", 1.0 + i, None)
                        for i, t in enumerate(["p5.48xlarge", "g5.xlarge", "g6.xlarge", "g6.2xlarge", "g5.2xlarge"])])
share = statistics.median([r["measurement"]["model_tflops"] /
                           (r["hardware"]["gemm_tflops_measured"] * r["topology"]["world_size"]) for r in runs])
share4 = statistics.median([r["measurement"]["model_tflops"] /
                            (r["hardware"]["gemm_tflops_measured"] * r["topology"]["world_size"]) for r in real4])
want = {"p5.48xlarge": share, "g5.xlarge": None, "g6.xlarge": None, "g6.2xlarge": None, "g5.2xlarge": share4}

with tempfile.TemporaryDirectory() as d:
    res = os.path.join(d, "results")
    for i, doc in enumerate(runs + [old, bad, neg] + real4 + [extrap]):
        fx.write_json(os.path.join(res, "r%d.json" % i), doc)
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, PRICES)
    base = [res, "--prices", prices, "--market", "on-demand"]

    rc, out, err = fx.run(BIN, base + ["--format", "json"])
    if check(rc == 0, "json: exit %d: %s" % (rc, err[-400:])):
        rows = {r["instance_type"]: r for r in json.loads(out)["rows"]}
        check(set(rows) == set(want), "rows %s (a malformed share must not lose its result)" % sorted(rows))
        for t, w in want.items():
            got = rows.get(t, {}).get("gemm_share", "missing")
            if w is None:
                check(got is None, "%s: gemm_share %r, want null" % (t, got))
            else:
                check(isinstance(got, float) and abs(got - w) <= 1e-12, "%s: gemm_share %r, want %r" % (t, got, w))

    rc, out, err = fx.run(BIN, base + ["--format", "csv"])
    if check(rc == 0, "csv: exit %d" % rc):
        rows = {r["instance_type"]: r for r in csv.DictReader(io.StringIO(out))}
        got = rows.get("p5.48xlarge", {}).get("gemm_share", "")
        check(got != "" and abs(float(got) - share) <= 1e-9, "csv gemm_share %r, want %r" % (got, share))
        check(rows.get("g5.xlarge", {}).get("gemm_share") == "", "csv: no share must be empty: %r" % rows.get("g5.xlarge"))

    rc, out, err = fx.run(BIN, base + ["--format", "table", "--columns", "configuration,gemm_share"])
    if check(rc == 0, "table: exit %d: %s" % (rc, err[-300:])):
        line = [x for x in out.splitlines() if "p5.48xlarge" in x]
        check("GEMM SHARE" in out and line and ("%.0f%%" % (100 * share)) in line[0],
              "table: want GEMM SHARE %.0f%% on the p5 row: %s" % (100 * share, out[-600:]))

print("rank_gemm_share: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
