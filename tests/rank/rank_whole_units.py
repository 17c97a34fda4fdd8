#!/usr/bin/python3
"""What is paid whole, counted at its edges: a Capacity Block is paid whole and a Savings Plan's term
is owed whole, so a target that needs exactly one block's (one term's) hours costs one, and one
second more costs two.  The edges are where a ceiling over a rounded division goes wrong: a target
of exactly 24 h at 2,585.49 samples/s is 24.000000000000004 h in doubles.

One configuration, 3 x p5.48xlarge, three runs with spread (median 2,585.49 samples/s), ranked on
every market against the fake AWS (tests/fakes/aws_fake_server.py): two 24-hour blocks for 3 nodes
(the cheaper per hour waits 7 h 13 min; another 24-hour one costs more per hour; one for 2 nodes
is another configuration's), a Compute plan at an odd rate, 1 year, with --plan-utilisation 0.3.
Targets: 24 h exactly (as --epochs 2 --dataset-size 111,693,168, a dataset that is no multiple of
the 3,072 global batch), 24 h + 1 s, one term exactly and one term + 1 s.  Every figure is recomputed
here in exact rational arithmetic (fractions) from the decimals this test wrote: hours to the
target, blocks, the block's $/h, fee, wait and cost, the plan's commitment, term and cost, and the
table's BLOCKS and COST cells.  With a target, the rows rank by samples per dollar of what the
target costs on each market (blocks paid whole, the plan's idle commitment: a plan at a low rate no
longer ranks first while its target costs 190 times spot's), and the table says so.
usage: rank_whole_units.py INSTBENCH"""
import datetime
import decimal
import json
import math
import os
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from fractions import Fraction as Q

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes", "output")]
import rank_fixtures as fx  # noqa: E402
import svg_check as svgc  # noqa: E402
from testlib import check, duration, failures, parse_table, usd  # noqa: E402

BIN = sys.argv[1]
T, REGION, NODES = "p5.48xlarge", "us-east-1", 3
RUNS = ["2400.125", "2585.49", "2700.5"]       # samples/s of the three runs; the median is the middle one
SPS = Q(sorted(RUNS, key=Q)[1])
FEE, FEE_DEAR, FEE_TWO = "2345.67", "2399.99", "900.00"   # a 3-node block, a dearer one, a 2-node one
RATE, TERM_H, U = "15.1", 8760, Q("0.3")        # the plan per node-hour; 1 year = 31,536,000 s; utilisation
OD, SPOT = 55.04, {"use1-az1": 23.456789, "use1-az2": 19.876543}
DAY_SAMPLES = SPS * 86400                       # 223,386,336: 24 h of work exactly
TERM_SAMPLES = SPS * 3600 * TERM_H              # 81,536,012,640: one term exactly


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def dec(q):
    """A fraction that is a finite decimal, written out exactly (as the command line takes it)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        text = str(decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator))
    if Q(text) != q:
        raise ValueError("%s is not a short decimal" % q)
    return text


def rank(env, results, *extra, fmt="json"):
    rc, out, err = fx.run(BIN, ["--market", "all", "--block-duration", "1d", "--plan-utilisation", dec(U),
                                "--format", "json" if fmt == "rows" else fmt] + list(extra) + [results], env=env)
    check(rc == 0, "rank %s: rc %d\n%s" % (extra, rc, err[-800:]))
    if rc != 0:
        return None
    if fmt == "rows":   # the JSON's rows as ranked
        return json.loads(out)["rows"]
    return {r["market"]: r for r in json.loads(out)["rows"]} if fmt == "json" else out


def close(got, want, what, rel=1e-12):
    ok = isinstance(got, (int, float)) and not isinstance(got, bool) and math.isclose(got, want, rel_tol=rel)
    check(ok, "%s: %r, wanted %r" % (what, got, float(want)))


def main():
    tmp = tempfile.mkdtemp(prefix="instbench-rank-whole-")
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    soon, later = now + datetime.timedelta(hours=7, minutes=13), now + datetime.timedelta(days=3)
    day = datetime.timedelta(hours=24)
    blocks = [{"id": "cb-a", "region": REGION, "instance_type": T, "availability_zone": "us-east-1a",
               "instance_count": NODES, "start": iso(soon), "end": iso(soon + day), "duration_hours": 24,
               "upfront_fee": FEE},
              {"id": "cb-b", "region": REGION, "instance_type": T, "availability_zone": "us-east-1b",
               "instance_count": NODES, "start": iso(later), "end": iso(later + day), "duration_hours": 24,
               "upfront_fee": FEE_DEAR},
              {"id": "cb-c", "region": REGION, "instance_type": T, "availability_zone": "us-east-1a",
               "instance_count": 2, "start": iso(soon), "end": iso(soon + day), "duration_hours": 24,
               "upfront_fee": FEE_TWO}]
    rates = [{"savingsPlanOffering": {"offeringId": "sp-1", "paymentOption": "No Upfront", "planType": "Compute",
                                      "durationSeconds": 31536000, "currency": "USD"},
              "rate": RATE, "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2",
              "usageType": "USE1-BoxUsage:" + T, "operation": "RunInstances",
              "properties": [{"name": "region", "value": REGION}, {"name": "instanceType", "value": T},
                             {"name": "tenancy", "value": "shared"}, {"name": "productDescription", "value": "Linux/UNIX"}]}]
    fx.write_json(os.path.join(tmp, "blocks.json"), blocks)
    fx.write_json(os.path.join(tmp, "sp.json"), rates)
    fx.write_json(os.path.join(tmp, "prices.json"), [{"instance_type": T, "region": REGION, "on_demand": OD,
                                                      "spot": SPOT}])
    results = os.path.join(tmp, "results")
    for i, v in enumerate(RUNS):
        fx.write_json(os.path.join(results, "r%d.json" % i),
                      fx.result(T, REGION, NODES, 8, "NVIDIA H100", float(v), host="node%d" % i))
    fake, env = fx.markets_fake(tmp)
    try:
        fee, rate = Q(FEE), Q(RATE)
        # (what, the target's flags, its samples, blocks it needs, plan terms it needs)
        cases = [("24 h as 2 epochs", ["--epochs", "2", "--dataset-size", dec(DAY_SAMPLES / 2)], DAY_SAMPLES, 1, 1),
                 ("24 h + 1 s", ["--samples", dec(DAY_SAMPLES + SPS)], DAY_SAMPLES + SPS, 2, 1),
                 ("one term", ["--samples", dec(TERM_SAMPLES)], TERM_SAMPLES, 365, 1),
                 ("one term + 1 s", ["--samples", dec(TERM_SAMPLES + SPS)], TERM_SAMPLES + SPS, 366, 2)]
        check((DAY_SAMPLES / 2) % (128 * 8 * NODES) != 0, "the dataset must not be a multiple of the global batch")
        for what, flags, target, n_blocks, n_terms in cases:
            before = time.time()
            rows = rank(env, results, *flags)
            after = time.time()
            if rows is None:
                continue
            hours = target / SPS / 3600
            check(math.ceil(hours / 24) == n_blocks and math.ceil(hours / TERM_H) == n_terms,
                  "%s: the case's own arithmetic" % what)
            b, p = rows.get("capacity-block", {}), rows.get("savings-plan", {})
            for m, r in (("block", b), ("plan", p)):
                close(r.get("samples_per_second"), SPS, "%s %s samples/s (median of %s)" % (what, m, RUNS))
                close(r.get("hours_to_target"), hours, "%s %s hours" % (what, m))
                close(r.get("target_samples"), target, "%s %s target" % (what, m))
            # the block: the cheapest per hour for exactly 3 nodes, paid whole however little is used
            check(b.get("blocks_to_target") == n_blocks, "%s: %s blocks, wanted %d (%.17g h on 24-hour blocks)" %
                  (what, b.get("blocks_to_target"), n_blocks, float(hours)))
            close(b.get("cost_to_target_usd"), n_blocks * fee, "%s block cost" % what)
            close(b.get("block_fee_usd"), fee, "%s block fee" % what)
            close(b.get("block_hours"), 24, "%s block hours" % what)
            close(b.get("usd_per_hour"), fee / 24, "%s block $/h" % what)
            close(b.get("usd_per_hour_per_node"), fee / 24 / NODES, "%s block $/h per node" % what)
            close(b.get("samples_per_dollar"), SPS * 3600 / (fee / 24), "%s block samples/$" % what)
            wait = b.get("wait_hours")
            start = soon.timestamp()
            # rank's clock reads whole seconds (time(2)) somewhere between BEFORE and AFTER
            check(isinstance(wait, float) and
                  (start - after) / 3600 - 1e-9 <= wait <= (start - math.floor(before)) / 3600 + 1e-9,
                  "%s: wait %r h, wanted the hours from the run to the block's start %s" % (what, wait, iso(soon)))
            # the plan: the commitment of every hour of each term the target starts
            commit = rate * NODES
            close(p.get("usd_per_hour"), commit, "%s plan $/h" % what)
            close(p.get("plan_commitment_usd_per_hour"), commit, "%s plan commitment" % what)
            close(p.get("plan_term_usd"), commit * TERM_H, "%s plan term" % what)
            close(p.get("plan_break_even_on_demand"), rate / Q(OD), "%s plan vs on-demand" % what)
            want = hours * commit + (n_terms * TERM_H - hours) * commit * (1 - U)
            close(p.get("cost_to_target_usd"), want, "%s plan cost (%d term%s)" % (what, n_terms, "s"[:n_terms > 1]))
            # with a target, a row bought ahead ranks by samples per dollar of what the target costs
            # there, not by its $/h as if every hour trained (the plan at 45.3 $/h ranked first while
            # its idle commitment made a day's target cost 190 times spot's); on-demand and spot (risk
            # off here: their raw figures) by samples/s x 3600 / $/h
            close(b.get("effective_samples_per_dollar"), target / (n_blocks * fee), "%s block's ranking figure" % what)
            close(p.get("effective_samples_per_dollar"), target / want, "%s plan's ranking figure" % what)
            plain = rank(env, results, *flags, "--spot-risk", "off", fmt="rows")
            if plain is not None:
                spot = min(Q(str(v)) for v in SPOT.values())
                figure = {"on-demand": SPS * 3600 / (Q(str(OD)) * NODES), "spot": SPS * 3600 / (spot * NODES),
                          "capacity-block": target / (n_blocks * fee), "savings-plan": target / want}
                order = [r["market"] for r in plain if r["configuration"].startswith("3 x")]
                # --plot puts every row where its rank puts it against the iso-cost lines: a row bought
                # ahead at its target's cost over its time (x), at its samples/s (y)
                if n_blocks == 1:
                    svg = os.path.join(tmp, "plot.svg")
                    plotted = rank(env, results, *flags, "--spot-risk", "off", "--plot", svg, fmt="rows")
                    per_h = {m: SPS * 3600 / f for m, f in figure.items()}   # $/h that gives each figure
                    want_pts = {"#%d %s" % (r["rank"], r["configuration"]): (float(per_h[r["market"]]), float(SPS))
                                for r in plotted or [] if r["configuration"].startswith("3 x")}
                    try:
                        svgc.check_points(ET.parse(svg).getroot(), check, want_pts, "%s --plot: " % what)
                    except (OSError, ET.ParseError) as e:
                        check(False, "%s --plot: %s" % (what, e))
                check(order == sorted(figure, key=lambda m: -figure[m]),
                      "%s: rows in the order %s, wanted by samples per dollar of the target's cost: %s" % (
                          what, order, {m: float(f) for m, f in figure.items()}))
                # the table shows the figure it sorts by, EFF. SAMPLES/$, though no spot row has the
                # risk model's figures (--spot-risk off): the header names that column
                table = rank(env, results, *flags, "--spot-risk", "off", fmt="table")
                rows = {r["CONFIGURATION"].split(" ~")[0]: r for r in parse_table(table)[1]} if table else {}
                for m, f in figure.items():
                    cell = rows.get("3 x %s %s" % (T, m), {}).get("EFF. SAMPLES/$")
                    check(cell == "{:,.0f}".format(float(f)), "%s --spot-risk off: table %s EFF. SAMPLES/$ %r, wanted "
                          "%s\n%s" % (what, m, cell, "{:,.0f}".format(float(f)), (table or "")[:1500]))
            # --deadline is a time from now: a block's WAIT until it starts counts (7 h 13 min here), so
            # a day's target on a block misses 30 h and makes 32; the rows that start now make both
            if n_blocks == 1:
                wait_h = (soon.timestamp() - time.time()) / 3600
                for limit, block_kept in ((30, 24 + wait_h <= 30), (32, 24 + wait_h <= 32)):
                    kept = rank(env, results, *flags, "--spot-risk", "off", "--deadline", str(limit), fmt="rows")
                    markets = sorted(r["market"] for r in kept or [] if r["configuration"].startswith("3 x"))
                    want_m = sorted(["on-demand", "spot", "savings-plan"] + (["capacity-block"] if block_kept else []))
                    check(markets == want_m, "%s --deadline %d: rows %s, wanted %s (the block waits %.2f h)" % (
                        what, limit, markets, want_m, wait_h))
            # --sort time: the job done soonest from now first; every row here trains at the same
            # samples/s, and the block starts 7 h 13 min late, so it comes last (by samples/$ it
            # would come before on-demand)
            by_time = rank(env, results, *flags, "--spot-risk", "off", "--sort", "time", fmt="rows")
            order = [r["market"] for r in by_time or [] if r["configuration"].startswith("3 x")]
            check(len(order) == 4 and order[-1] == "capacity-block",
                  "%s --sort time: %s, wanted the block (waiting %.2f h) last" % (
                      what, order, (soon.timestamp() - time.time()) / 3600))
            # the table: the same count and cost, in people's units (testlib's rules from docs/usage.md)
            out = rank(env, results, *flags, "--wide", fmt="table")
            if out is None:
                continue
            shown = {r["CONFIGURATION"].split(" ~")[0]: r for r in parse_table(out)[1]}
            tb, tp = shown.get("3 x p5.48xlarge capacity-block", {}), shown.get("3 x p5.48xlarge savings-plan", {})
            want_cells = ((tb, "BLOCKS", "%d x %s" % (n_blocks, duration(24 * 3600))), (tb, "COST", usd(float(n_blocks * fee))),
                          (tb, "TIME", duration(float(hours) * 3600)), (tp, "COST", usd(float(want))))
            for row, col, cell in want_cells:
                check(row.get(col) == cell, "%s: table %s %r, wanted %r in %r" % (what, col, row.get(col), cell, row))
            check("sorted by samples-per-dollar (capacity-block and savings-plan rows: samples per dollar of what "
                  "the target costs there, EFF. SAMPLES/$)" in " ".join(out.split()), "%s: the table does not say how "
                  "the rows bought ahead are ranked:\n%s" % (what, out[:900]))
            # a column --columns leaves out is not named as the one they rank by
            picked = rank(env, results, *flags, "--columns", "rank,configuration,samples_per_dollar", fmt="table")
            check(picked is not None and "samples per dollar of what the target costs there)" in
                  " ".join(picked.split()) and "EFF. SAMPLES" not in picked,
                  "%s --columns without EFF. SAMPLES/$: the header names it:\n%s" % (what, (picked or "")[:600]))
        # without a target the rows bought ahead rank by their rate as if every hour paid for trains,
        # and the table says so by default (with a target that line gives way to what COST holds)
        out = rank(env, results, fmt="table")
        flat = " ".join((out or "").split())
        check("capacity-block and savings-plan rows: SAMPLES/$ as if every hour of the block or the plan's term "
              "trains" in flat, "no target: the table does not say how rows bought ahead are ranked:\n%s" % out)
        out = rank(env, results, "--samples", dec(DAY_SAMPLES), fmt="table")
        check("as if every hour" not in " ".join((out or "").split()), "with a target: the no-target line:\n%s" % out)
    finally:
        fake.stop()
        shutil.rmtree(tmp, ignore_errors=True)


main()
print("rank_whole_units: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
