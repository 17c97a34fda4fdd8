#!/usr/bin/python3
"""`rank --versus CONFIG`: spot's break-even against the alternative the user weighs, not only the
best on-demand row.  The seed pair as docs/usage.md tells it (4 x g5.xlarge spot against 1 x
g5.12xlarge on-demand) with a 1 x g5.xlarge on-demand row present, which is the best on-demand row
by samples per dollar: without --versus the break-even is against it; with --versus '1 x
g5.12xlarge on-demand' against that row, recomputed here with spot_model.py (Daly 2006, written
apart from instbench), and the legend names the row.  A spot row, a configuration not ranked and a
market not ranked are usage errors.  usage: rank_versus.py INSTBENCH"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import json  # noqa: E402
import rank_fixtures as fx  # noqa: E402
import spot_model as sm  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN = sys.argv[1]
d = tempfile.mkdtemp(prefix="instbench-versus-")
try:
    folder = os.path.join(d, "results")
    fx.write_json(os.path.join(folder, "small.json"), fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 210.0))
    fx.write_json(os.path.join(folder, "spot.json"),
                  fx.result("g5.xlarge", "us-east-1", 4, 1, "NVIDIA A10G", 800.0, host="n1"))
    fx.write_json(os.path.join(folder, "big.json"), fx.result("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 800.0,
                                                              host="big"))
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.006, {"use1-az1": 0.45}, bucket=4),
                                         fx.price_record("g5.12xlarge", "us-east-1", 5.672, None)]))
    base = [folder, "--source", prices, "--checkpoint-cost", "120", "--restart-minutes", "10", "--format", "json"]

    def rows(extra):
        rc, out, err = fx.run(BIN, base + extra)
        check(rc == 0, f"rank {extra}: exit {rc} {err}")
        return json.loads(out)["rows"] if rc == 0 else []

    def spot4(rs):
        return next(r for r in rs if r["market"] == "spot" and r["nodes"] == 4)

    def od(rs, t):
        return next(r for r in rs if r["market"] == "on-demand" and r["instance_type"] == t)

    rs = rows([])
    best = max((r for r in rs if r["market"] == "on-demand"), key=lambda r: r["samples_per_dollar"])
    check(best["configuration"] == "1 x g5.xlarge on-demand" and spot4(rs)["breakeven_against"] == best["configuration"],
          f"default: against {spot4(rs)['breakeven_against']}, best on-demand {best['configuration']}")
    for versus in ("1 x g5.12xlarge on-demand", "g5.12xlarge", "1xg5.12xlarge:on-demand"):
        rs = rows(["--versus", versus])
        s, big = spot4(rs), od(rs, "g5.12xlarge")
        want = sm.breakeven(800.0, s["usd_per_hour"], 4, 120.0, 600.0, None, big["samples_per_dollar"])
        check(s["breakeven_against"] == "1 x g5.12xlarge on-demand" and s["breakeven_rate_per_node_hour"] is not None
              and want and fx.close(s["breakeven_rate_per_node_hour"], want, 1e-6),
              f"--versus {versus!r}: against {s['breakeven_against']} at {s['breakeven_rate_per_node_hour']}, model {want}")
    rc, out, err = fx.run(BIN, base[:-1] + ["table", "--versus", "1 x g5.12xlarge on-demand"])
    check(rc == 0 and "falls to 1 x g5.12xlarge on-demand (--versus)" in " ".join(out.split()), f"legend:\n{out}")
    rc, out, err = fx.run(BIN, base[:-1] + ["table"])
    check(rc == 0 and "falls to 1 x g5.xlarge on-demand (the best on-demand row" in " ".join(out.split()),
          f"default legend:\n{out}")
    for bad, words in (("4 x g5.xlarge spot", "a spot row cannot be"), ("2 x g5.xlarge", "none of the configurations"),
                       ("1 x g5.12xlarge savings-plan", "not ranked")):
        rc, out, err = fx.run(BIN, base + ["--versus", bad])
        check(rc == 2 and words in err and out == "", f"--versus {bad!r}: exit {rc} {err}")
finally:
    shutil.rmtree(d, ignore_errors=True)
if failures:
    sys.exit(1)
print("ok: rank --versus")
