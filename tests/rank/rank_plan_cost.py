#!/usr/bin/python3
"""What reaching the target costs on a Savings Plan (issue 39): a plan's commitment is owed for
every hour of the term whether the nodes train or not, so a savings-plan row's COST to a target is
the rate for the target's hours plus the commitment of the term's other hours that nothing else
uses (--plan-utilisation U: the rest of the fleet uses U of them), a target longer than the term
starting another whole term; --budget and --sort cost judge that same figure, in the table, JSON and
CSV alike, and the legend says which view is shown.  A plan whose rate is above on-demand never
pays: its PLAN PAYS vs OD reads "never" in every format.

The repro: a Compute plan, 1 year, no upfront, g5.xlarge at $0.60/h, `rank --market all --samples
1e6 --sort cost --budget 100` against the fake AWS (tests/fakes/aws_fake_server.py).  Every figure is
recomputed here from the rate, the term (AWS: 1 year = 31,536,000 s = 8,760 h) and the throughput.
usage: rank_plan_cost.py INSTBENCH SCHEMA"""
import csv
import io
import json
import math
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import require as check  # noqa: E402

BIN, SCHEMA = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="instbench-rank-plan-cost-")
T, REGION, SPS = "g5.xlarge", "us-east-1", 4.8
OD, SPOT, RATE = 1.006, 0.45, 0.60
TERM_H = 8760.0


def plan_rates(rate):
    return [{"savingsPlanOffering": {"offeringId": "sp-1", "paymentOption": "No Upfront", "planType": "Compute",
                                     "durationSeconds": 31536000, "currency": "USD"},
             "rate": rate, "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2",
             "usageType": "USE1-BoxUsage:" + T, "operation": "RunInstances",
             "properties": [{"name": "region", "value": REGION}, {"name": "instanceType", "value": T},
                            {"name": "tenancy", "value": "shared"}, {"name": "productDescription", "value": "Linux/UNIX"}]}]


def want_cost(hours, u):
    terms = math.ceil(hours / TERM_H)
    return hours * RATE + (terms * TERM_H - hours) * RATE * (1 - u)


def main():
    fx.write_json(os.path.join(TMP, "sp.json"), plan_rates("%.2f" % RATE))
    fx.write_json(os.path.join(TMP, "blocks.json"), [])
    fx.write_json(os.path.join(TMP, "results", "r1.json"), fx.result(T, REGION, 1, 1, "NVIDIA A10G", SPS))
    fx.write_json(os.path.join(TMP, "prices.json"), [{"instance_type": T, "region": REGION, "on_demand": OD,
                                                      "spot": {"use1-az1": SPOT}}])
    fake, env = fx.markets_fake(TMP)
    try:
        import jsonschema
        with open(SCHEMA) as f:
            schema = json.load(f)
        results = os.path.join(TMP, "results")

        def rank(*extra, fmt="json"):
            rc, out, err = fx.run(BIN, ["--market", "all", "--prices", "live", "--spot-risk", "off", "--format", fmt]
                                  + list(extra) + [results], env=env)
            check(rc == 0, "rank %s: rc %d\n%s" % (extra, rc, err))
            if fmt == "json":
                doc = json.loads(out)
                jsonschema.validate(doc, schema)
                return doc
            return out

        hours = 1e6 / SPS / 3600   # 57.9 h
        # the repro: the plan owes the whole year's commitment, $5,256, so --budget 100 drops it and
        # --sort cost ranks it after on-demand ($58.26)
        doc = rank("--samples", "1e6", "--sort", "cost", "--budget", "100")
        rows = {r["market"]: r for r in fx.ranked(doc)}
        check("savings-plan" not in rows and doc["removed"]["budget"] >= 1,
              "--budget 100 kept the plan (owed $%.2f): %s" % (want_cost(hours, 0), rows.get("savings-plan")))
        check("on-demand" in rows and fx.close(rows["on-demand"]["cost_to_target_usd"], hours * OD),
              "on-demand row: %s" % rows.get("on-demand"))

        doc = rank("--samples", "1e6", "--sort", "cost")
        ranked = fx.ranked(doc)
        plan = [r for r in ranked if r["market"] == "savings-plan"]
        check(len(plan) == 1 and fx.close(plan[0]["cost_to_target_usd"], want_cost(hours, 0)) and
              fx.close(plan[0]["cost_to_target_usd"], RATE * TERM_H),
              "plan cost %s, wanted the year's commitment %s" % (plan and plan[0]["cost_to_target_usd"], RATE * TERM_H))
        check(doc.get("savings_plan") == {"plan": "Compute 1y No Upfront", "term_hours": 8760, "utilisation": 0},
              "savings_plan: %s" % doc.get("savings_plan"))
        costs = [r["cost_to_target_usd"] for r in ranked]
        check(costs == sorted(costs), "--sort cost does not follow the printed costs: %s" % costs)
        check([r["market"] for r in ranked].index("on-demand") < [r["market"] for r in ranked].index("savings-plan"),
              "the plan ranks ahead of on-demand: %s" % [(r["market"], r["cost_to_target_usd"]) for r in ranked])

        # the table prints the same figure and its legend says which view it is
        out = rank("--samples", "1e6", "--sort", "cost", fmt="table")
        m = re.search(r"^ *\d+\*? +1 x g5\.xlarge savings-plan .*", out, re.M)
        check(m and "$5,256" in m.group(0), "table row: %s\n%s" % (m and m.group(0), out))
        check("savings-plan rows: COST is the whole term's commitment" in out and "--plan-utilisation" in out,
              "legend:\n%s" % out)
        out = rank("--samples", "1e6", "--sort", "cost", "--explain", fmt="table")
        check("whether the nodes train or not; COST: the whole term's commitment" in out, "--explain:\n%s" % out)
        # CSV: the JSON's very text
        out = rank("--samples", "1e6", "--sort", "cost", fmt="csv")
        crow = [r for r in csv.DictReader(io.StringIO(out)) if r["market"] == "savings-plan"]
        check(crow and float(crow[0]["cost_to_target_usd"]) == plan[0]["cost_to_target_usd"], "csv: %s" % crow)

        # the rest of the fleet uses the plan: only the share it leaves idle counts
        for u in ("1", "0.25"):
            doc = rank("--samples", "1e6", "--plan-utilisation", u)
            p = [r for r in fx.ranked(doc) if r["market"] == "savings-plan"][0]
            check(doc["savings_plan"]["utilisation"] == float(u), "savings_plan %s" % doc["savings_plan"])
            check(fx.close(p["cost_to_target_usd"], want_cost(hours, float(u))),
                  "--plan-utilisation %s: %s, wanted %s" % (u, p["cost_to_target_usd"], want_cost(hours, float(u))))
        doc = rank("--samples", "1e6", "--plan-utilisation", "1", "--budget", "100")
        check(any(r["market"] == "savings-plan" for r in fx.ranked(doc)), "--plan-utilisation 1 --budget 100 drops it")
        out = rank("--samples", "1e6", "--plan-utilisation", "0.25", fmt="table")
        check("75%" in out and "--plan-utilisation 0.25" in out, "legend with 0.25:\n%s" % out)

        # a target longer than the term starts a second whole term
        big = 10000 * 3600 * SPS
        doc = rank("--samples", "%.17g" % big)
        p = [r for r in fx.ranked(doc) if r["market"] == "savings-plan"][0]
        check(fx.close(p["cost_to_target_usd"], want_cost(10000, 0)) and
              fx.close(p["cost_to_target_usd"], 2 * TERM_H * RATE), "two terms: %s" % p["cost_to_target_usd"])

        # bad values and the wrong market: exit 2
        for bad in (["--plan-utilisation", "1.5", "--market", "all"], ["--plan-utilisation", "-0.1", "--market", "all"],
                    ["--plan-utilisation", "nan", "--market", "all"], ["--plan-utilisation", "0.5"]):
            rc, _, err = fx.run(BIN, bad + ["--samples", "1e6", results], env=env)
            check(rc == 2 and "--plan-utilisation" in err, "%s: rc %d %s" % (bad, rc, err))

        # a rate above on-demand never pays: "never" in the table, JSON and CSV
        fake.stop()
        fx.write_json(os.path.join(TMP, "sp.json"), plan_rates("17.56"))
        fake, env = fx.markets_fake(TMP)
        doc = rank("--samples", "1e6")
        p = [r for r in fx.ranked(doc) if r["market"] == "savings-plan"][0]
        check(p["plan_break_even_on_demand"] == "never" and p["plan_break_even_spot"] == "never",
              "break-even of a rate above on-demand: %s %s" % (p["plan_break_even_on_demand"], p["plan_break_even_spot"]))
        out = rank("--samples", "1e6", "--wide", fmt="table")
        m = re.search(r"^ *\d+\*? +1 x g5\.xlarge savings-plan .*", out, re.M)
        check(m and "never" in m.group(0) and "%" not in m.group(0).split("savings-plan")[1].replace("never", ""),
              "table row: %s" % (m and m.group(0)))
        out = rank("--samples", "1e6", fmt="csv")
        crow = [r for r in csv.DictReader(io.StringIO(out)) if r["market"] == "savings-plan"]
        check(crow and crow[0]["plan_break_even_on_demand"] == "never", "csv: %s" % crow)

        # PLAN PAYS vs SPOT and spot's own columns only when spot is ranked too: under --market
        # savings-plan or on-demand alone they would be empty on every row (the legend says how to
        # get the break-even against spot)
        def header(*markets):
            rc, out, err = fx.run(BIN, ["--prices", "live", "--spot-risk", "off", "--format", "table", "--explain"]
                                  + list(markets) + [results], env=env)
            check(rc == 0, "rank %s: rc %d\n%s" % (markets, rc, err))
            return next((line for line in out.splitlines() if line.startswith("RANK ")), ""), out
        head, out = header("--market", "savings-plan")
        spot_only = ("vs SPOT", "SPOT AZ", "INTERRUPTION", "PLACEMENT")
        check("PLAN PAYS vs OD" in head and not any(c in head for c in spot_only) and "--market all" in out,
              "--market savings-plan: %s\n%s" % (head, out))
        head, _ = header("--market", "on-demand")
        check("SAMPLES/$" in head and not any(c in head for c in spot_only), "--market on-demand: %s" % head)
        head, _ = header("--market", "all")
        check("PLAN PAYS vs OD" in head and all(c in head for c in spot_only), "--market all: %s" % head)
        print("ok: a savings-plan row's cost to target owes its commitment")
    finally:
        fake.stop()
        shutil.rmtree(TMP, ignore_errors=True)


main()
