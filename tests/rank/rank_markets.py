#!/usr/bin/python3
"""`instbench rank --market all`: one configuration (2 x p5.48xlarge) ranked on-demand, spot,
capacity-block and savings-plan in one table, against the fake AWS (tests/fakes/aws_fake_server.py:
on-demand and spot prices, Capacity Block offerings and Savings Plan rates from files written here).
Every money figure is recomputed here: the block's whole-block cost (ceil(hours / block hours)
blocks, each paid whole), its wait, the plan's commitment and its break-even against on-demand
and against spot at Daly's efficiency (tests/rank/spot_model.py, written from Daly 2006, not from
instbench).  Rows are validated against schemas/rank-v2.json.
usage: rank_markets.py INSTBENCH SCHEMA PRICE_DATA_DIR"""
import csv
import datetime
import json
import math
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
import spot_model  # noqa: E402
from testlib import fail, require as check  # noqa: E402

BIN, SCHEMA, DATA = sys.argv[1], sys.argv[2], sys.argv[3]
TMP = tempfile.mkdtemp(prefix="instbench-rank-markets-")
T, REGION, NODES, SPS = "p5.48xlarge", "us-east-1", 2, 2000.0
# the prices the fake serves (an on-demand price near AWS's for p5.48xlarge in us-east-1, made-up
# spot prices: inputs, not claims);
# the fake serves on-demand rounded to 4 decimals, spot to 6 (its docstring)
OD_PRICE, SPOT_PRICES = 55.04, {"use1-az1": 23.456789, "use1-az2": 19.876543, "use1-az4": 21.0}
TARGET = SPS * 3600 * 100          # 100 hours of training: two 72-hour blocks
RATE, DELTA_S, RESTART_S = 0.002, 120.0, 600.0   # the spot model's inputs, given on the command line
PLAN_RATE = 14.75                  # Compute, 1 year, no upfront, per node-hour


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def served():
    return round(OD_PRICE, 4), {az: float("%.6f" % p) for az, p in SPOT_PRICES.items()}


def main():
    now = datetime.datetime.now(datetime.timezone.utc).replace(minute=30, second=0, microsecond=0)
    start1, start2 = now + datetime.timedelta(days=2), now + datetime.timedelta(days=5)
    blocks = [
        {"id": "cb-a", "region": REGION, "instance_type": T, "availability_zone": "us-east-1a", "instance_count": NODES,
         "start": iso(start2), "end": iso(start2 + datetime.timedelta(hours=72)), "duration_hours": 72,
         "upfront_fee": "4800.00"},
        {"id": "cb-b", "region": REGION, "instance_type": T, "availability_zone": "us-east-1b", "instance_count": NODES,
         "start": iso(start1), "end": iso(start1 + datetime.timedelta(hours=72)), "duration_hours": 72,
         "upfront_fee": "5100.00"},
        # another count: not this configuration's
        {"id": "cb-c", "region": REGION, "instance_type": T, "availability_zone": "us-east-1a", "instance_count": 1,
         "start": iso(start1), "end": iso(start1 + datetime.timedelta(hours=72)), "duration_hours": 72,
         "upfront_fee": "100.00"},
    ]
    rates = [{"savingsPlanOffering": {"offeringId": "sp-1", "paymentOption": "No Upfront", "planType": "Compute",
                                      "durationSeconds": 31536000, "currency": "USD"},
              "rate": str(PLAN_RATE), "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2",
              "usageType": "USE1-BoxUsage:" + T, "operation": "RunInstances",
              "properties": [{"name": "region", "value": REGION}, {"name": "instanceType", "value": T},
                             {"name": "tenancy", "value": "shared"}, {"name": "productDescription", "value": "Linux/UNIX"}]}]
    fx.write_json(os.path.join(TMP, "blocks.json"), blocks)
    fx.write_json(os.path.join(TMP, "sp.json"), rates)
    fx.write_json(os.path.join(TMP, "results", "r.json"), fx.result(T, REGION, NODES, 8, "NVIDIA H100", SPS))
    fx.write_json(os.path.join(TMP, "prices.json"), [{"instance_type": T, "region": REGION, "on_demand": OD_PRICE,
                                                      "spot": SPOT_PRICES}])
    fake, env = fx.markets_fake(TMP)
    try:
        args = ["--market", "all", "--block-duration", "3d", "--samples", "%d" % TARGET, "--interruption-rate",
                str(RATE), "--checkpoint-cost", str(DELTA_S), "--restart-minutes", str(RESTART_S / 60),
                os.path.join(TMP, "results")]
        rc, out, err = fx.run(BIN, args + ["--format", "json"], env=env)
        check(rc == 0, "rank --market all: rc %d\n%s" % (rc, err))
        doc = json.loads(out)
        import jsonschema
        with open(SCHEMA) as f:
            jsonschema.validate(doc, json.load(f))
        rows = {r["market"]: r for r in doc["rows"]}
        check(sorted(rows) == ["capacity-block", "on-demand", "savings-plan", "spot"], "markets: %s" % sorted(rows))
        od, spot = served()
        hours = TARGET / SPS / 3600

        # the block: the cheapest per hour (cb-a), two of them for 100 hours, each paid whole
        b = rows["capacity-block"]
        per_hour = 4800.0 / 72
        want_b = {"usd_per_hour": per_hour, "usd_per_hour_per_node": per_hour / NODES,
                  "samples_per_dollar": SPS * 3600 / per_hour, "blocks_to_target": 2.0, "block_hours": 72.0,
                  "block_fee_usd": 4800.0, "cost_to_target_usd": 2 * 4800.0, "hours_to_target": hours}
        for k, v in want_b.items():
            check(b.get(k) is not None and math.isclose(b[k], v, rel_tol=1e-12), "block %s: %s, wanted %s" % (k, b.get(k), v))
        wait = (start2 - datetime.datetime.now(datetime.timezone.utc)).total_seconds() / 3600
        check(b.get("wait_hours") is not None and abs(b["wait_hours"] - wait) < 0.05, "wait %s, wanted %s" % (b.get("wait_hours"), wait))
        check(b.get("interruption_label") is None and b.get("spot_efficiency") is None,
              "a block has no interruption risk: %s" % b)

        # --deadline: the cheapest block per hour (cb-a) starts 5 days out and its 100 hours end past
        # a deadline that the dearer cb-b, starting in 2 days, meets: the row takes cb-b, the cheapest
        # block that finishes in time, rather than leaving the market with no row.  With a deadline
        # neither meets, the cheapest, which the deadline then removes.
        hours_a = (start2 - datetime.datetime.now(datetime.timezone.utc)).total_seconds() / 3600 + hours
        hours_b = (start1 - datetime.datetime.now(datetime.timezone.utc)).total_seconds() / 3600 + hours
        for deadline, fee in (((hours_a + hours_b) / 2, 5100.0), (hours_a + 24, 4800.0), (hours_b - 24, None)):
            rc, out, err = fx.run(BIN, ["--market", "capacity-block"] + args[2:] +
                                  ["--deadline", "%.3f" % deadline, "--format", "json"], env=env)
            doc = json.loads(out) if rc == 0 else {}
            kept = [r for r in doc.get("rows", []) if r["market"] == "capacity-block" and r["rank"] is not None]
            removed = doc.get("removed", {}).get("deadline")
            if fee is None:
                check(rc == 0 and not kept and removed == 1,
                      "--deadline %.1f h, before any block ends: kept %s, removed %s, %s" % (deadline, kept, removed, err[-300:]))
            else:
                check(rc == 0 and len(kept) == 1 and kept[0]["block_fee_usd"] == fee and
                      kept[0]["cost_to_target_usd"] == 2 * fee,
                      "--deadline %.1f h: the block %s, wanted the one of fee %s (%s)" % (deadline, kept, fee, err[-300:]))

        # the plan: its commitment, and when it pays against on-demand and against spot with its risk
        p = rows["savings-plan"]
        s = rows["spot"]
        eff = spot_model.spot_figures(SPS, s["usd_per_hour"], NODES, RATE, DELTA_S, RESTART_S)["spot_efficiency"]
        want_p = {"usd_per_hour": NODES * PLAN_RATE, "plan_commitment_usd_per_hour": NODES * PLAN_RATE,
                  "plan_term_usd": NODES * PLAN_RATE * 8760, "plan_break_even_on_demand": PLAN_RATE / od,
                  "plan_break_even_spot": PLAN_RATE * eff / s["usd_per_hour_per_node"],
                  # the commitment is owed for the whole term, trained or not (nothing else uses the plan)
                  "cost_to_target_usd": hours * NODES * PLAN_RATE + (8760 - hours) * NODES * PLAN_RATE}
        for k, v in want_p.items():
            check(p.get(k) is not None and math.isclose(p[k], v, rel_tol=1e-9), "plan %s: %s, wanted %s" % (k, p.get(k), v))
        check(s["usd_per_hour_per_node"] in spot.values(), "spot price %s not one served %s" % (s["usd_per_hour_per_node"], spot))
        check(rows["on-demand"].get("plan_break_even_on_demand") is None and s.get("blocks_to_target") is None,
              "block and plan columns on other markets: %s" % rows["on-demand"])

        # the table: one table with all four rows, the block's whole cost, and the legend for both
        rc, out, err = fx.run(BIN, args + ["--format", "table", "--wide", "--explain"], env=env)
        import re
        markets = re.findall(r"^ +\d+\*? +2 x p5\.48xlarge (\S+)", out, re.M)
        check(rc == 0 and sorted(markets) == ["capacity-block", "on-demand", "savings-plan", "spot"],
              "table rows %s:\n%s\n%s" % (markets, out, err))
        check("2 x 3d 0h" in out and "8,760 hours" in out and "capacity-block rows" in out and "savings-plan rows" in out and
              "never purchases" in out, "table legend:\n%s" % out)

        # two configurations of one type: each block priced for its own node count, the quotes asked
        # together (one DescribeCapacityBlockOfferings per count, one rate query for the type)
        fx.write_json(os.path.join(TMP, "results", "one.json"), fx.result(T, REGION, 1, 8, "NVIDIA H100", SPS / 2,
                                                                          host="one"))
        fake.control(reset_stats=True)
        rc, out, err = fx.run(BIN, args + ["--format", "json"], env=env)
        blocks_by_nodes = {r["nodes"]: r for r in json.loads(out)["rows"] if r["market"] == "capacity-block"} if rc == 0 else {}
        check(set(blocks_by_nodes) == {1, 2} and blocks_by_nodes[1]["block_fee_usd"] == 100.0 and
              blocks_by_nodes[2]["block_fee_usd"] == 4800.0, "per node count: %s %s" % (blocks_by_nodes, err[-500:]))
        ops = fake.stats()["by_operation"]
        check(ops.get("DescribeCapacityBlockOfferings") == 2 and ops.get("DescribeSavingsPlansOfferingRates") == 1,
              "quotes asked: %s" % ops)
        os.remove(os.path.join(TMP, "results", "one.json"))

        # the plan ranked alone: its break-even against on-demand still asks for the on-demand price
        # (no on-demand row to take it from); against spot there is no spot row, and the legend says so
        alone = ["--market", "savings-plan"] + args[4:]
        rc, out, err = fx.run(BIN, alone + ["--format", "json"], env=env)
        rows1 = json.loads(out)["rows"] if rc == 0 else []
        check(len(rows1) == 1 and rows1[0]["market"] == "savings-plan" and rows1[0]["plan_break_even_on_demand"] is not None
              and math.isclose(rows1[0]["plan_break_even_on_demand"], PLAN_RATE / od, rel_tol=1e-9)
              and rows1[0]["plan_break_even_spot"] is None, "--market savings-plan: %s %s" % (rows1, err[-500:]))
        rc, out, err = fx.run(BIN, alone + ["--format", "table", "--explain"], env=env)
        check(rc == 0 and "no spot row ranked here: --market all" in out, "--market savings-plan legend:\n%s" % out)

        # offline (no credentials): the rows are kept, unpriced, saying why; exit 0 with the others
        env2 = dict(env)
        del env2["AWS_ACCESS_KEY_ID"], env2["AWS_SECRET_ACCESS_KEY"]
        rc, out, err = fx.run(BIN, args + ["--format", "json", "--source", "snapshot"], env=env2)
        doc = json.loads(out) if rc == 0 else {}
        un = [r for r in doc.get("rows", []) if r["market"] in ("capacity-block", "savings-plan")]
        check(rc == 0 and len(un) == 2 and all(r["unpriced_reason"] and "live only" in r["unpriced_reason"] for r in un),
              "offline: rc %d %s %s" % (rc, un, err))

        # bad input: exit 2
        for bad, words in ((["--market", "capacity-block", "--block-duration", "15d"], "14d or 21d"),
                           (["--block-duration", "3d"], "needs --market capacity-block"),
                           (["--term", "3y"], "needs --market savings-plan")):
            rc, out, err = fx.run(BIN, bad + [os.path.join(TMP, "results")], env=env2)
            check(rc == 2 and words in err, "%s: rc %d %s" % (bad, rc, err))
        print("ok: rank --market all, 4 markets of one configuration")
    finally:
        fake.stop()
        shutil.rmtree(TMP, ignore_errors=True)


main()
