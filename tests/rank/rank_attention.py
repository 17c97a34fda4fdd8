#!/usr/bin/python3
"""Results that ran attention two ways (hardware.attention: "cudnn" / "unfused", the CUDA step's
two paths, and "fused" in results of versions before issue 37; on one H100 the unfused one was
1.2-1.4x faster than fused, docs/benchmarks.md) are the same work
but not the same measurement of the hardware: `instbench rank` keeps them in separate rows (never
one median), labels rows that differ only by that, carries the path in the `attention` column
(JSON, CSV), warns on stderr and in the table's legend when the ranked rows mix the two (or
cuDNN's deterministic and non-deterministic backward, cudnn-nondet), says
nothing when they do not, and skips a result whose hardware.attention is not a plain name.
Expectations come from the fixtures written here.  Usage: rank_attention.py INSTBENCH"""
import csv
import io
import json
import os
import statistics
import sys
import tempfile

sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib/testlib.py
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN = sys.argv[1]
WARNING = "ran attention more than one way"


def res(t, accel, sps, attention, i):
    doc = fx.result(t, "us-east-1", 1, 1, accel, sps, host="h%d" % i, timestamp="2026-11-21T10:%02d:00Z" % i)
    if attention is not None:
        doc["hardware"]["attention"] = attention
    return doc


# (instance type, device, samples/s, attention path)
MIXED = [("g5.xlarge", "NVIDIA A10G", 100.0, "fused"), ("g5.xlarge", "NVIDIA A10G", 104.0, "fused"),
         ("g5.xlarge", "NVIDIA A10G", 130.0, "unfused"), ("g6.xlarge", "NVIDIA L4", 80.0, "fused")]
PRICES = [fx.price_record("g5.xlarge", "us-east-1", 1.0, None), fx.price_record("g6.xlarge", "us-east-1", 0.8, None)]

with tempfile.TemporaryDirectory() as d:
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, fx.prices_doc(PRICES))

    def rank(folder, fmt, *extra):
        return fx.run(BIN, [folder, "--source", prices, "--market", "on-demand", "--format", fmt, *extra])

    mixed = os.path.join(d, "mixed")
    for i, (t, a, s, att) in enumerate(MIXED):
        fx.write_json(os.path.join(mixed, "r%d.json" % i), res(t, a, s, att, i))
    rc, out, err = rank(mixed, "json")
    check(rc == 0, "mixed: exit %d: %s" % (rc, err[-400:]))
    doc = json.loads(out) if rc == 0 else {"rows": []}
    # one row per (type, path): the expected medians from the inputs, never across paths
    want = {}
    for t, _, s, att in MIXED:
        want.setdefault((t, att), []).append(s)
    got = {(r["instance_type"], r.get("attention")): r for r in doc["rows"]}
    check(set(got) == set(want), "rows by (type, attention): %s, want %s" % (sorted(got), sorted(want)))
    for k, v in want.items():
        if k in got:
            check(abs(got[k]["samples_per_second"] - statistics.median(v)) < 1e-9,
                  "%s: samples/s %s, want the median of its own path's runs %s" % (k, got[k]["samples_per_second"], v))
    # the two g5.xlarge rows are told apart by their path; g6.xlarge has no twin and no variant
    for (t, att), r in got.items():
        if t == "g5.xlarge":
            check("%s attention" % att in r["configuration"], "label %r does not say %s attention" % (r["configuration"], att))
        else:
            check("attention" not in r["configuration"], "label %r names a variant without a twin" % r["configuration"])
    check(err.count(WARNING) == 1 and "(1 unfused, 2 fused;" in err,
          "mixed: want one warning counting 2 fused and 1 unfused configuration: %r" % err[-600:])

    # CSV carries the same column, read back by the csv module
    rc, out, err = rank(mixed, "csv")
    rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
    check(rc == 0 and sorted((r["instance_type"], r.get("attention")) for r in rows) == sorted(want),
          "csv: attention column %s" % [(r.get("instance_type"), r.get("attention")) for r in rows])

    # the table says it under the rows
    rc, out, err = rank(mixed, "table")
    check(rc == 0 and "ran it more than one way (unfused, fused;" in out, "table legend: %r" % out[-800:])

    # today's two paths, cuDNN's and unfused, mixed: the same warning and legend
    today = os.path.join(d, "today")
    for i, (t, a, s, att) in enumerate(MIXED):
        fx.write_json(os.path.join(today, "r%d.json" % i), res(t, a, s, "cudnn" if att == "fused" else att, i))
    rc, out, err = rank(today, "table")
    check(rc == 0 and err.count(WARNING) == 1 and "(2 cudnn, 1 unfused;" in err
          and "ran it more than one way (cudnn, unfused;" in out,
          "cudnn and unfused mixed: exit %d, %r %r" % (rc, err[-400:], out[-600:]))

    # cuDNN's deterministic and non-deterministic backward (hardware.cudnn.deterministic false:
    # docs/formats.md's cudnn-nondet) are two paths as well: two rows, the same warning and legend
    nondet = os.path.join(d, "nondet")
    for i, det in enumerate((True, False)):
        doc = res("g5.xlarge", "NVIDIA A10G", 130.0 + i, "cudnn", i)
        doc["hardware"]["cudnn"] = {"version": "9.19.0", "library": None, "fallback": None, "deterministic": det}
        fx.write_json(os.path.join(nondet, "r%d.json" % i), doc)
    rc, out, err = rank(nondet, "table")
    check(rc == 0 and "cudnn-nondet attention" in out and err.count(WARNING) == 1
          and "(1 cudnn, 1 cudnn-nondet;" in err and "ran it more than one way (cudnn, cudnn-nondet;" in out,
          "cudnn and cudnn-nondet mixed: exit %d, %r %r" % (rc, err[-400:], out[-600:]))

    # one path only (and CPU-style results without the field): no warning, no legend line
    same = os.path.join(d, "same")
    for i, (t, a, s, _) in enumerate(MIXED):
        fx.write_json(os.path.join(same, "r%d.json" % i), res(t, a, s, "unfused" if t == "g5.xlarge" else None, i))
    rc, out, err = rank(same, "table")
    check(rc == 0 and WARNING not in err and "more than one way" not in out, "one path: no warning wanted: %r %r" % (err, out[-400:]))
    rc, out, err = rank(same, "json")
    doc = json.loads(out) if rc == 0 else {"rows": []}
    check(sorted((r["instance_type"], r.get("attention")) for r in doc["rows"]) ==
          [("g5.xlarge", "unfused"), ("g6.xlarge", None)],
          "one path: rows %s" % [(r["instance_type"], r.get("attention")) for r in doc["rows"]])

    # hostile values: skipped with the field named, the rest ranked
    bad = os.path.join(d, "bad")
    fx.write_json(os.path.join(bad, "good.json"), res("g5.xlarge", "NVIDIA A10G", 100.0, "fused", 0))
    fx.write_json(os.path.join(bad, "esc.json"), res("g5.xlarge", "NVIDIA A10G", 100.0, "fu\x1b[31msed", 1))
    fx.write_json(os.path.join(bad, "num.json"), res("g5.xlarge", "NVIDIA A10G", 100.0, 7, 2))
    fx.write_json(os.path.join(bad, "long.json"), res("g5.xlarge", "NVIDIA A10G", 100.0, "f" * 100, 3))
    rc, out, err = rank(bad, "json")
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 1, "hostile: exit %d, %r" % (rc, out[:300]))
    check(err.count("hardware.attention") == 3 and "\x1b" not in err,
          "hostile: want 3 skips naming hardware.attention, no raw escape: %r" % err[-800:])

    # one machine name across two GPUs and two paths (docs/gpu-runs' "vm"): every label tells its
    # row from every other (device where another GPU ran the same backend, path where the same GPU
    # ran another), and --versus takes a label as printed
    vm = os.path.join(d, "vm")
    VM = [("NVIDIA H100 80GB HBM3", 2600.0, "cudnn"), ("NVIDIA H100 80GB HBM3", 1700.0, "unfused"),
          ("NVIDIA H200", 3200.0, "cudnn")]
    for i, (a, s, att) in enumerate(VM):
        doc = res("g5.xlarge", a, s, att, i)
        doc["instance"]["type"], doc["instance"]["hostname"] = None, "vm"
        fx.write_json(os.path.join(vm, "r%d.json" % i), doc)
    base = [vm, "--source", prices, "--price", "vm=3.93", "--price", "vm:spot=1.5", "--market", "both",
            "--interruption-rate", "0.01", "--format", "json"]
    rc, out, err = fx.run(BIN, base)
    labels = {(r["accelerator"], r["attention"]): r["configuration"] for r in json.loads(out)["rows"]
              if r["market"] == "on-demand"} if rc == 0 else {}
    check(labels == {("NVIDIA H100 80GB HBM3", "cudnn"): "1 x vm on-demand (cuda NVIDIA H100 80GB HBM3, cudnn attention)",
                     ("NVIDIA H100 80GB HBM3", "unfused"): "1 x vm on-demand (cuda NVIDIA H100 80GB HBM3, unfused attention)",
                     ("NVIDIA H200", "cudnn"): "1 x vm on-demand (cuda NVIDIA H200)"},
          "one name, two GPUs, two paths: labels %s (exit %d, %s)" % (labels, rc, err[-300:]))
    for want in labels.values():
        rc, out, err = fx.run(BIN, base + ["--versus", want.upper()])
        against = {r["breakeven_against"] for r in json.loads(out)["rows"] if r["market"] == "spot"} if rc == 0 else set()
        check(against == {want}, "--versus %r: against %s (exit %d, %s)" % (want.upper(), against, rc, err[-300:]))

print("rank_attention: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
