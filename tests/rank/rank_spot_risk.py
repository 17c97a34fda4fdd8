"""`instbench rank`'s spot risk against an independent model and a simulation.

- Every spot-risk figure of the JSON (and the CSV) equals tests/rank/spot_model.py (60-digit
  decimal arithmetic from the formulas) within 1e-9 relative, over a grid of nodes (1..16), the
  five Advisor buckets, checkpoint costs, restart times and intervals (given and Daly's optimum),
  and a user rate in each of its three spellings; the default checkpoint cost follows from the
  results' parameter count; on-demand rows and --spot-risk off carry nulls.
- A Monte-Carlo simulation of the renewal process (numpy, seeded) agrees with spot_efficiency
  (its mean time) and p90_hours_to_target within the simulation's 99.9% confidence intervals.
- The seed pair (4 x 1-GPU spot against 1 x 4-GPU on-demand at the same throughput) changes
  places exactly at breakeven_rate_per_node_hour: --interruption-rate just below and just above.
- The table: EFF. SAMPLES/$, BREAK-EVEN "1 per H h", the legend, the break-even sentence, --wide.
- Bad values of the new flags exit 2 with one line.
- docs/usage.md's worked example (the seed pair from the shipped snapshot): its commands, run as
  written, print the rows and sentences it shows.
Usage: rank_spot_risk.py INSTBENCH [docs/usage.md]"""
import csv
import io
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
import spot_model as sm  # noqa: E402
from testlib import check, failures, offline_env, parse_table, probability  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
RISK_KEYS = ["spot_rate_per_node_hour", "spot_job_rate_per_hour", "checkpoint_cost_s", "restart_s",
             "checkpoint_interval_s", "spot_efficiency", "effective_samples_per_second",
             "effective_samples_per_dollar", "expected_hours_to_target", "p90_hours_to_target",
             "expected_cost_to_target_usd", "p90_cost_to_target_usd", "p_no_interruption"]
ALL_RISK = RISK_KEYS + ["spot_rate_source", "checkpoint_cost_source", "breakeven_rate_per_node_hour",
                        "breakeven_against"]
# One instance type per Advisor bucket, so one run covers all five.
BUCKET_TYPES = ["g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g5.16xlarge"]
PARAMS = 86567656   # rank_fixtures' ViT-B/16


def close(a, b, rel=1e-9):
    if a is None or b is None:
        return a is b
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


def rank_json(args):
    rc, out, err = fx.run(BIN, args + ["--format", "json"])
    check(rc == 0, f"rank {args}: exit {rc}: {err}")
    return json.loads(out) if rc == 0 else None


def grid_inputs(d):
    results = []
    for t in BUCKET_TYPES:
        for i, nodes in enumerate((1, 2, 4, 8, 16)):
            results.append(fx.result(t, "us-east-1", nodes, 1, "NVIDIA A10G", 150.0 * nodes * (1 + 0.07 * i),
                                     host=f"{t}-{nodes}"))
    records = [fx.price_record(t, "us-east-1", 1.2 + 0.3 * b, {"use1-az1": 0.35 + 0.05 * b, "use1-az2": 0.5}, bucket=b)
               for b, t in enumerate(BUCKET_TYPES)]
    for i, r in enumerate(results):
        fx.write_json(os.path.join(d, "grid", f"r{i:02d}.json"), r)
    fx.write_json(os.path.join(d, "grid-prices.json"), fx.prices_doc(records))
    return [os.path.join(d, "grid"), "--source", os.path.join(d, "grid-prices.json")]


def expected_risk(row, rate, delta, restart, tau, target):
    return sm.spot_figures(row["samples_per_second"], row["usd_per_hour"], row["nodes"], rate, delta, restart, tau,
                           target)


def check_doc(case, doc, rate_of, delta, restart, tau, target, source, delta_source):
    """Every row of DOC against the model; RATE_OF(row) the per-node rate it must use."""
    rows = [r for r in doc["rows"] if r["rank"] is not None]
    od = [r for r in rows if r["market"] == "on-demand"]
    best_od = max(od, key=lambda r: r["samples_per_dollar"])
    for r in rows:
        name = f'{case}: {r["configuration"]}'
        if r["market"] == "on-demand":
            check(all(r[k] is None for k in ALL_RISK), f"{name}: on-demand row has spot-risk values")
            continue
        want = expected_risk(r, rate_of(r), delta, restart, tau, target)
        for k in RISK_KEYS:
            check(close(r[k], want[k]), f"{name}: {k} {r[k]} != model {want[k]}")
        check(r["spot_rate_source"] == source, f"{name}: spot_rate_source {r['spot_rate_source']}")
        check(r["checkpoint_cost_source"] == delta_source, f"{name}: checkpoint_cost_source {r['checkpoint_cost_source']}")
        be = sm.breakeven(r["samples_per_second"], r["usd_per_hour"], r["nodes"], delta, restart, tau,
                          best_od["samples_per_dollar"], rate_of(r), target)
        check(close(r["breakeven_rate_per_node_hour"], be),
              f"{name}: breakeven {r['breakeven_rate_per_node_hour']} != model {be}")
        check(r["breakeven_against"] == best_od["configuration"], f"{name}: breakeven_against {r['breakeven_against']}")
    # ranked by the figure the model gives: effective samples/$ on spot rows, raw on on-demand
    figure = [r["effective_samples_per_dollar"] if r["market"] == "spot" else r["samples_per_dollar"] for r in rows]
    check(all(a >= b for a, b in zip(figure, figure[1:])), f"{case}: rows not in effective samples/$ order: {figure}")


def test_grid(d):
    base = grid_inputs(d)
    target = 2e8
    n = 0
    for delta in (None, 5.0, 600.0):
        for restart_min in (None, 0.0, 60.0):
            for tau_min in (None, 20.0, 240.0):
                args = base + ["--samples", str(target)]
                if delta is not None:
                    args += ["--checkpoint-cost", repr(delta)]
                if restart_min is not None:
                    args += ["--restart-minutes", repr(restart_min)]
                if tau_min is not None:
                    args += ["--checkpoint-every", repr(tau_min)]
                doc = rank_json(args)
                if not doc:
                    continue
                dl = delta if delta is not None else sm.default_checkpoint_s(PARAMS, "bf16")
                rs = restart_min * 60 if restart_min is not None else sm.DEFAULT_RESTART_S
                tau = tau_min * 60 if tau_min is not None else None
                case = f"delta {delta} R {restart_min} tau {tau_min}"
                k = doc["spot_risk"]
                check(k["mode"] == "on" and k["rate_source"] == "advisor" and k["rate_per_node_hour"] is None
                      and k["advisor_bucket_shares"] == [float(x) for x in sm.SHARES] and k["advisor_window_hours"] == 720
                      and close(k["checkpoint_cost_s"], dl) and k["restart_s"] == rs
                      and k["checkpoint_interval_s"] == tau and k["checkpoint_interval"] == ("daly" if tau is None else "user"),
                      f"{case}: spot_risk assumptions {k}")
                check_doc(case, doc, lambda r: sm.bucket_rate(BUCKET_TYPES.index(r["instance_type"])), dl, rs, tau,
                          target, "advisor", "user" if delta is not None else "default")
                n += 1
    check(n == 27, f"grid: {n} of 27 cases ran")
    # the user's rate, in each spelling, for every spot row alike; no target: those keys null
    for spelled, rate in (("0.004", 0.004), ("250h", 1 / 250), ("12.5d", 1 / 300)):
        doc = rank_json(base + ["--interruption-rate", spelled])
        if doc:
            check_doc(f"--interruption-rate {spelled}", doc, lambda r: rate,
                      sm.default_checkpoint_s(PARAMS, "bf16"), sm.DEFAULT_RESTART_S, None, None, "user", "default")
    # CSV carries the same numbers as the JSON
    doc = rank_json(base + ["--samples", "1e9"])
    rc, out, err = fx.run(BIN, base + ["--samples", "1e9", "--format", "csv"])
    check(rc == 0, f"csv: exit {rc}: {err}")
    if doc and rc == 0:
        rows = list(csv.DictReader(io.StringIO(out)))
        for j, c in zip(doc["rows"], rows):
            for k in RISK_KEYS + ["breakeven_rate_per_node_hour"]:
                want = j[k]
                check((c[k] == "" and want is None) or (want is not None and c[k] and close(float(c[k]), want)),
                      f"csv {c['configuration']}: {k} {c[k]!r} != json {want}")


def test_off_and_unknown(d):
    base = grid_inputs(d)
    doc = rank_json(base + ["--spot-risk", "off", "--samples", "1e8"])
    if doc:
        rows = [r for r in doc["rows"] if r["rank"] is not None]
        check(all(r[k] is None for r in rows for k in ALL_RISK), "--spot-risk off: spot-risk values present")
        check(doc["spot_risk"]["mode"] == "off", f"--spot-risk off: spot_risk.mode {doc['spot_risk']['mode']}")
        spd = [r["samples_per_dollar"] for r in rows]
        check(spd == sorted(spd, reverse=True), "--spot-risk off: not in raw samples/$ order")
    # spot alone: no on-demand row to break even against (null), and no BREAK-EVEN column
    doc = rank_json(base + ["--market", "spot"])
    if doc:
        check(all(r["breakeven_rate_per_node_hour"] is None and r["breakeven_against"] is None
                  and r["spot_efficiency"] is not None for r in doc["rows"]), "--market spot: a break-even without on-demand")
    rc, out, err = fx.run(BIN, base + ["--market", "spot", "--format", "table"])
    check(rc == 0 and "EFF. SAMPLES/$" in out and "BREAK-EVEN" not in out and "stays ahead" not in out,
          f"--market spot table: {out}")
    # a spot price without an Advisor bucket: no rate to assume, ranked at its raw price
    r = fx.result("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 100.0)
    fx.write_json(os.path.join(d, "nobucket", "r.json"), r)
    fx.write_json(os.path.join(d, "nobucket.json"),
                  fx.prices_doc([fx.price_record("g6.xlarge", "us-east-1", 0.8, {"use1-az1": 0.3})]))
    doc = rank_json([os.path.join(d, "nobucket"), "--source", os.path.join(d, "nobucket.json")])
    if doc:
        spot = [r for r in doc["rows"] if r["market"] == "spot"][0]
        check(all(spot[k] is None for k in ALL_RISK), "no bucket: spot-risk values present")
    # the model's figure per node, with --interruption-rate, for the same row
    doc = rank_json([os.path.join(d, "nobucket"), "--source", os.path.join(d, "nobucket.json"),
                     "--interruption-rate", "100h"])
    if doc:
        spot = [r for r in doc["rows"] if r["market"] == "spot"][0]
        check(close(spot["spot_rate_per_node_hour"], 0.01) and spot["spot_rate_source"] == "user",
              f"no bucket + --interruption-rate: {spot['spot_rate_per_node_hour']} {spot['spot_rate_source']}")


def test_monte_carlo(d):
    """The renewal process simulated: segments of tau work + delta, exponential interruptions,
    restarts that restart when interrupted.  The first two targets are whole numbers of intervals
    (their mean is Daly's work / efficiency exactly); the third ends in a partial interval.  The
    fourth most likely runs clean (P90 = the uninterrupted time), the fifth has an 80% chance of it,
    and the sixth is one segment shorter than the interval (a short job is not charged a whole
    interval's overhead).  P90 is a closed form, exact when the run most likely goes clean, and
    an approximation of the delay otherwise: within the simulation's interval when the job spans
    many intervals, within 5% of the simulated quantile for the one-segment job, whose delay (a
    restart and a nearly uniform loss) the Cornish-Fisher expansion follows least well."""
    import numpy as np
    rng = np.random.default_rng(20261125)
    runs = 40000
    for nodes, rate, tau_min, delta_s, restart_min, work_h in ((4, 0.05, 30, 60.0, 10, 100.0),
                                                               (1, 1.0, 15, 30.0, 15, 20.0),
                                                               (2, 0.3, 20, 45.0, 5, 30.1),
                                                               (1, 0.001, 240, 36.0, 10, 50.0),
                                                               (1, 0.001, 240, 36.0, 10, 200.0),
                                                               (4, 0.01, 1440, 36.0, 10, 10.0)):
        sps = 100.0 * nodes
        r = fx.result("g5.xlarge", "us-east-1", nodes, 1, "NVIDIA A10G", sps)
        folder = os.path.join(d, f"mc{nodes}")
        fx.write_json(os.path.join(folder, "r.json"), r)
        fx.write_json(os.path.join(d, "mc.json"),
                      fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.0, {"use1-az1": 0.4}, bucket=4)]))
        doc = rank_json([folder, "--source", os.path.join(d, "mc.json"), "--market", "spot",
                         "--interruption-rate", repr(rate), "--checkpoint-every", str(tau_min), "--checkpoint-cost",
                         repr(delta_s), "--restart-minutes", str(restart_min), "--samples", repr(sps * 3600 * work_h)])
        if not doc:
            continue
        row = doc["rows"][0]
        t = sm.simulate(rng, runs, nodes * rate, work_h, tau_min / 60, delta_s / 3600, restart_min / 60)
        mean, sd = float(t.mean()), float(t.std())
        z = 3.29   # 99.9%
        check(abs(mean - row["expected_hours_to_target"]) <= z * sd / math.sqrt(runs),
              f"MC {nodes} nodes: simulated mean {mean:.4f} h, rank expects {row['expected_hours_to_target']:.4f} h "
              f"(sd {sd:.3f})")
        whole = abs(work_h * 60 / tau_min - round(work_h * 60 / tau_min)) < 1e-9
        check(not whole or close(row["expected_hours_to_target"], work_h / row["spot_efficiency"]),
              "MC: whole intervals, expected hours != work / efficiency")
        # the 90th percentile's distribution-free interval: order statistics around 0.9 runs
        srt = np.sort(t)
        half = z * math.sqrt(runs * 0.9 * 0.1)
        lo, hi = srt[int(math.floor(0.9 * runs - half))], srt[int(math.ceil(0.9 * runs + half))]
        slack = 0.05 if work_h < tau_min / 60 else 1e-9
        check(lo * (1 - slack) <= row["p90_hours_to_target"] <= hi * (1 + slack),
              f"MC {nodes} nodes: p90 {row['p90_hours_to_target']:.4f} h outside the simulation's [{lo:.4f}, {hi:.4f}]"
              f" (+-{slack:.0%})")
        # no interruption at all: the share of runs that took exactly the uninterrupted time
        clean = work_h + math.ceil(work_h * 60 / tau_min - 1e-9) * delta_s / 3600
        share = float(np.mean(np.abs(t - clean) < 1e-9))
        se = math.sqrt(max(share * (1 - share), 1e-12) / runs)
        check(abs(share - row["p_no_interruption"]) <= z * se + 1e-4,
              f"MC {nodes} nodes: uninterrupted share {share:.5f} != p_no_interruption {row['p_no_interruption']:.5f}")


def test_seed_pair(d):
    """4 x g5.xlarge spot against 1 x g5.12xlarge on-demand, equal throughput."""
    folder = os.path.join(d, "seed")
    fx.write_json(os.path.join(folder, "spot.json"), fx.result("g5.xlarge", "us-east-1", 4, 1, "NVIDIA A10G", 800.0))
    fx.write_json(os.path.join(folder, "od.json"),
                  fx.result("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 800.0, host="big"))
    prices = os.path.join(d, "seed-prices.json")
    fx.write_json(prices, fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", None, {"use1-az1": 0.45}, bucket=4),
                                         fx.price_record("g5.12xlarge", "us-east-1", 5.672, None)]))
    base = [folder, "--source", prices, "--checkpoint-cost", "120", "--restart-minutes", "10"]
    doc = rank_json(base)
    if not doc:
        return
    spot = [r for r in doc["rows"] if r["market"] == "spot"][0]
    od = [r for r in doc["rows"] if r["market"] == "on-demand" and r["rank"] is not None][0]
    be = spot["breakeven_rate_per_node_hour"]
    want = sm.breakeven(800.0, spot["usd_per_hour"], 4, 120.0, 600.0, None, od["samples_per_dollar"])
    check(be is not None and close(be, want), f"seed pair: breakeven {be} != model {want}")
    if not be:
        return
    for factor, first in ((1 - 1e-6, "spot"), (1 + 1e-6, "on-demand")):
        doc = rank_json(base + ["--interruption-rate", repr(be * factor)])
        if doc:
            top = [r for r in doc["rows"] if r["rank"] == 1][0]
            check(top["market"] == first, f"seed pair at {factor} x break-even: {top['configuration']} ranks first")
    rc, out, err = fx.run(BIN, base + ["--format", "table", "--explain", "--interruption-rate", repr(be / 2)])
    check(rc == 0, f"seed table: exit {rc}: {err}")
    hours = 1 / be
    h = f"{hours:,.0f}" if hours >= 10 else f"{hours:,.1f}"
    sentence = (f"4 x g5.xlarge spot stays ahead of 1 x g5.12xlarge on-demand unless a node is reclaimed more often "
                f"than once every {h} hours")
    flat = " ".join(out.split())
    check(sentence in flat, f"seed table lacks the break-even sentence {sentence!r}:\n{out}")
    check(f"1 per {h} h" in out, f"seed table lacks BREAK-EVEN 1 per {h} h:\n{out}")
    for header in ("EFF. SAMPLES/$", "BREAK-EVEN", "spot risk:"):
        check(header in out, f"seed table lacks {header!r}")
    check("P90 TIME" not in out, "P90 TIME without --wide")
    rc, out, err = fx.run(BIN, base + ["--format", "table", "--wide", "--samples", "1e9"])
    check(rc == 0 and "P90 TIME" in out and "P(NO INTERRUPTION)" in out, f"--wide lacks P90 TIME / P(NO INTERRUPTION):\n{out}")
    # P(NO INTERRUPTION) never reads as a certainty it is not: a target of minutes leaves the spot
    # row above 99.95% (">99.9%", not "100.0%"), a long one below 0.05% ("<0.1%", not "0.0%")
    for samples, edge in (("2e5", ">99.9%"), ("1e11", "<0.1%")):
        rc, out, err = fx.run(BIN, base + ["--format", "table", "--wide", "--samples", samples])
        doc = rank_json(base + ["--samples", samples])
        if rc != 0 or not doc:
            check(False, f"--samples {samples}: exit {rc}: {err[-300:]}")
            continue
        want = {r["configuration"]: probability(r["p_no_interruption"]) for r in doc["rows"]
                if r["market"] == "spot" and r["p_no_interruption"] is not None}
        shown = {r["CONFIGURATION"].split(" ~")[0]: r.get("P(NO INTERRUPTION)") for r in parse_table(out)[1]}
        got = {c: shown.get(c + " spot", shown.get(c)) for c in want}
        check(got == want and edge in want.values(), f"--samples {samples}: P(NO INTERRUPTION) {got}, want {want} "
              f"(one of them {edge})")
    # a user's rate above the search's usual top (1 per node-hour): a row behind at that rate has a
    # break-even below it, never "never" (with 10-second checkpoints it is still ahead at 1)
    doc = rank_json([folder, "--source", prices, "--checkpoint-cost", "10", "--restart-minutes", "10",
                     "--interruption-rate", "5"])
    if doc:
        spot = [r for r in doc["rows"] if r["market"] == "spot"][0]
        want = sm.breakeven(800.0, spot["usd_per_hour"], 4, 10.0, 600.0, None, od["samples_per_dollar"], 5.0)
        check(sm.breakeven(800.0, spot["usd_per_hour"], 4, 10.0, 600.0, None, od["samples_per_dollar"]) is None,
              "--interruption-rate 5: the case wants a row still ahead at 1 per node-hour")
        check(spot["effective_samples_per_dollar"] < od["samples_per_dollar"] and want is not None and
              spot["breakeven_rate_per_node_hour"] is not None and close(spot["breakeven_rate_per_node_hour"], want),
              f"--interruption-rate 5: behind, yet breakeven {spot['breakeven_rate_per_node_hour']} (model {want})")


def test_sort_time(d):
    """--sort time orders by when the job is done: a spot row's expected hours to the target (the
    segment model's, whose last interval is shorter than the rest yet costs a whole checkpoint),
    the figure --deadline reads and EXPECTED TIME shows, not the target at the long-run effective
    rate (hours / efficiency). An on-demand configuration is placed between the two figures of a
    spot row (from the model), so the two orders differ, then every row is checked in order."""
    target, delta, tau_min = 5e7, 600.0, 240.0
    tau_s = tau_min * 60
    for case, work_tau in (("the last interval short", 3.05), ("the last interval nearly whole", 2.95)):
        # the spot row's target ends WORK_TAU intervals in: its sps from the target
        sps = target / (work_tau * tau_s)
        want = sm.spot_figures(sps, 1.0, 1, sm.bucket_rate(4), delta, sm.DEFAULT_RESTART_S, tau_s, target)
        exp_h = want["expected_hours_to_target"]
        steady = target / sps / 3600 / want["spot_efficiency"]
        check(abs(exp_h - steady) > 1e-4 * exp_h, f"{case}: model gives no gap ({exp_h} h, {steady} h)")
        od_sps = target / ((exp_h + steady) / 2) / 3600     # done between the two figures
        folder = os.path.join(d, f"sort-time-{work_tau}")
        fx.write_json(os.path.join(folder, "a.json"), fx.result("g5.16xlarge", "us-east-1", 1, 1, "NVIDIA A10G", sps,
                                                                host="a"))
        fx.write_json(os.path.join(folder, "b.json"), fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", od_sps,
                                                                host="b"))
        prices = os.path.join(d, f"sort-time-{work_tau}-prices.json")
        fx.write_json(prices, fx.prices_doc([
            fx.price_record("g5.16xlarge", "us-east-1", 4.0, {"use1-az1": 1.0}, bucket=4),
            fx.price_record("g5.xlarge", "us-east-1", 1.0, {"use1-az1": 0.4}, bucket=0)]))
        doc = rank_json([folder, "--source", prices, "--samples", repr(target), "--sort", "time",
                         "--checkpoint-cost", repr(delta), "--checkpoint-every", repr(tau_min)])
        if not doc:
            continue
        rows = [r for r in doc["rows"] if r["rank"] is not None]
        spot_a = [r for r in rows if r["instance_type"] == "g5.16xlarge" and r["market"] == "spot"]
        check(len(spot_a) == 1 and close(spot_a[0]["expected_hours_to_target"], exp_h),
              f"--sort time, {case}: the spot row's expected hours {spot_a and spot_a[0]['expected_hours_to_target']} "
              f"!= model {exp_h}")
        done = [r["expected_hours_to_target"] if r["market"] == "spot" else r["hours_to_target"] for r in rows]
        check(all(a <= b for a, b in zip(done, done[1:])),
              f"--sort time, {case}: rows not in order of the time the job is done: "
              + ", ".join(f"{r['configuration']} {r['market']} {h:.6g} h" for r, h in zip(rows, done)))


def test_target_frontier(d):
    """With a target a spot row's effective figures are the job's (target / expected time, target /
    expected cost), so the default order, the Pareto frontier and BREAK-EVEN agree with EXPECTED
    TIME and COST.  An on-demand row is placed strictly between a spot row's long-run figures and
    its job's on both axes (from the model), so the two readings give opposite answers, in both
    directions: a target ending just past three intervals (a fourth checkpoint for a twentieth of
    an interval: the job does worse than the long run) and one shorter than an interval at a high
    rate (the long run's failures cost a whole interval's exposure: the job does better)."""
    target, tau_min = 5e7, 240.0
    tau_s = tau_min * 60
    cases = (("a short last interval", None, 600.0, 3.05), ("shorter than an interval", 0.25, 60.0, 0.3))
    for case, user_rate, delta, work_tau in cases:
        rate = user_rate if user_rate is not None else float(sm.bucket_rate(4))
        sps = target / (work_tau * tau_s)
        run = sm.spot_figures(sps, 1.0, 1, rate, delta, sm.DEFAULT_RESTART_S, tau_s)
        job = sm.spot_figures(sps, 1.0, 1, rate, delta, sm.DEFAULT_RESTART_S, tau_s, target)
        s_run, s_job = run["effective_samples_per_second"], job["effective_samples_per_second"]
        better = s_job > s_run
        check(abs(s_job - s_run) > 1e-3 * s_run, f"{case}: model gives no gap ({s_run}, {s_job})")
        # between on both axes: samples/s, and at $1.00/h (the spot row's price too) samples/$
        folder = os.path.join(d, f"frontier-{work_tau}")
        fx.write_json(os.path.join(folder, "a.json"), fx.result("g5.16xlarge", "us-east-1", 1, 1, "NVIDIA A10G", sps,
                                                                host="a"))
        fx.write_json(os.path.join(folder, "b.json"), fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G",
                                                                (s_run + s_job) / 2, host="b"))
        prices = os.path.join(d, f"frontier-{work_tau}-prices.json")
        fx.write_json(prices, fx.prices_doc([
            fx.price_record("g5.16xlarge", "us-east-1", 40.0, {"use1-az1": 1.0}, bucket=4),
            fx.price_record("g5.xlarge", "us-east-1", 1.0, None)]))
        args = [folder, "--source", prices, "--samples", repr(target), "--checkpoint-cost", repr(delta),
                "--checkpoint-every", repr(tau_min)] + (["--interruption-rate", repr(user_rate)] if user_rate else [])
        doc = rank_json(args)
        if not doc:
            continue
        by = {(r["instance_type"], r["market"]): r for r in doc["rows"] if r["rank"] is not None}
        a, b = by.get(("g5.16xlarge", "spot")), by.get(("g5.xlarge", "on-demand"))
        if not check(a is not None and b is not None, f"{case}: rows missing: {sorted(by)}"):
            continue
        check(close(a["effective_samples_per_second"], s_job) and
              close(a["effective_samples_per_dollar"], job["effective_samples_per_dollar"]),
              f"{case}: the spot row's effective figures {a['effective_samples_per_second']}, "
              f"{a['effective_samples_per_dollar']} are not the job's {s_job}, {job['effective_samples_per_dollar']}")
        check((a["rank"] < b["rank"]) == better,
              f"{case}: spot ranks {a['rank']}, on-demand {b['rank']}; the job's figures put spot "
              f"{'ahead' if better else 'behind'}")
        check((a["pareto"], b["pareto"]) == (better, not better),
              f"{case}: Pareto marks spot {a['pareto']}, on-demand {b['pareto']}: the row "
              f"{'behind' if better else 'ahead'} on the job's time and cost is dominated")
        # BREAK-EVEN against that on-demand row (the best): above the spot row's own rate exactly
        # when the row ranks ahead of it
        be = a["breakeven_rate_per_node_hour"]
        want = sm.breakeven(sps, 1.0, 1, delta, sm.DEFAULT_RESTART_S, tau_s, b["samples_per_dollar"], rate, target)
        check(a["breakeven_against"] == b["configuration"] and
              (be is None and want is None or be is not None and want is not None and close(be, want)),
              f"{case}: breakeven {be} against {a['breakeven_against']}, model {want}")
        check(((be is None) or be > rate) == better, f"{case}: break-even {be} against the row's own rate {rate}")
        # the table: the frontier's star on the same row
        rc, out, err = fx.run(BIN, args + ["--format", "table"])
        starred = [ln for ln in out.splitlines() if re.match(r"\s*\d+\*", ln)]
        want_star = "g5.16xlarge spot" if better else "g5.xlarge on-demand"
        check(rc == 0 and any(want_star in ln for ln in starred) and
              not any(("g5.xlarge on-demand" if better else "g5.16xlarge spot") in ln for ln in starred),
              f"{case}: table stars {starred}, want {want_star!r} starred and not the other")


def test_bad_flags(d):
    base = grid_inputs(d)
    bad = [["--interruption-rate", v] for v in ("0", "-1", "abc", "5x", "5hh", "0h", "1e9", "nan", "inf", "h", "-3d")]
    bad += [["--checkpoint-cost", v] for v in ("0", "-5", "nan", "1e9", "x")]
    bad += [["--restart-minutes", v] for v in ("-1", "1e9", "inf")]
    bad += [["--checkpoint-every", v] for v in ("0", "-10", "x")]
    bad += [["--spot-risk", "maybe"], ["--spot-risk", "off", "--interruption-rate", "100h"],
            ["--spot-risk", "off", "--checkpoint-cost", "5"]]
    for flags in bad:
        rc, out, err = fx.run(BIN, base + flags + ["--format", "json"])
        lines = [l for l in err.splitlines() if l.strip()]
        check(rc == 2 and out == "", f"{flags}: exit {rc} (want 2), stdout {out[:80]!r}")
        check(len(lines) == 1 and lines[0].startswith("instbench rank:"), f"{flags}: stderr not one line: {err!r}")


def test_doc_example(d, page):
    """Each `instbench rank seed/ ...` line of the worked example, run on the seed pair with the
    snapshot's prices (no credentials, empty cache: `auto` is the snapshot), prints every row and
    sentence shown under it."""
    text = open(page, encoding="utf-8").read()
    m = re.search(r"### Spot with its risk.*?(?=\n### )", text, re.S)
    if not check(m is not None, "docs/usage.md: no 'Spot with its risk' section"):
        return
    seed = os.path.join(d, "doc", "seed")
    fx.write_json(os.path.join(seed, "4.json"), fx.result("g5.xlarge", "us-east-1", 4, 1, "NVIDIA A10G", 790.0))
    fx.write_json(os.path.join(seed, "12.json"),
                  fx.result("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 820.0, host="big"))
    columns = None
    blocks = re.findall(r"```sh\n(.*?)```", m.group(0), re.S)
    ran = 0
    for block in blocks:
        block = block.replace("\\\n", " ")
        cmds = []
        for ln in block.splitlines():
            if ln.startswith("instbench rank"):
                cmds.append([shlex.split(ln)[2:], []])
            elif ln.startswith("#") and cmds:
                cmds[-1][1].append(ln[1:].strip())
        for argv, shown in cmds:
            if "--columns" in argv:
                i = argv.index("--columns") + 1
                if argv[i] == "...":
                    argv[i] = columns
                columns = argv[i]
            p = subprocess.run([BIN, "rank"] + argv + ["--format", "table"], capture_output=True, text=True,
                               cwd=os.path.join(d, "doc"), env=offline_env(os.path.join(d, "doc"), {"COLUMNS": "250"}))
            check(p.returncode == 0, f"doc example {argv}: exit {p.returncode}: {p.stderr}")
            out = " ".join(p.stdout.split())
            # rows as shown, and sentences (continuation lines joined); the elided legend is skipped
            pieces = []
            for ln in shown:
                if ln.startswith("RANK") or "(...)" in ln or ln.endswith("...") or ln.startswith("often;"):
                    continue
                if pieces and not re.match(r"\d+\*? ", ln) and not re.match(r"\d+ x ", ln):
                    pieces[-1] += " " + ln
                else:
                    pieces.append(ln)
            for piece in pieces:
                check(" ".join(piece.split()) in out, f"doc example {' '.join(argv)}: not printed: {piece!r}\n{p.stdout}")
            ran += 1
    check(ran == 3, f"doc example: {ran} rank commands run, 3 expected")


def test_measured_checkpoint(d):
    """Results carrying measure's timed checkpoint: delta is the slowest write_s among the workload's
    results (source measured), every figure follows the model with it; --checkpoint-cost still wins;
    a result with a null or hostile checkpoint counts as not measured."""
    base = grid_inputs(d)
    folder = base[0]
    names = sorted(os.listdir(folder))
    timed = {names[0]: 3.25, names[1]: 41.5, names[2]: None, names[3]: "slow", names[4]: -2}
    for name, w in timed.items():
        path = os.path.join(folder, name)
        doc = json.load(open(path))
        doc["checkpoint"] = None if w is None else {"bytes": PARAMS * 14, "write_s": w, "read_s": 1.0, "dir_fs": "ext4"}
        fx.write_json(path, doc)
    doc = rank_json(base + ["--samples", "2e8"])
    if doc:
        check(close(doc["spot_risk"]["checkpoint_cost_s"], 41.5), f"measured: delta {doc['spot_risk']['checkpoint_cost_s']}")
        check_doc("measured checkpoint", doc, lambda r: sm.bucket_rate(BUCKET_TYPES.index(r["instance_type"])), 41.5,
                  sm.DEFAULT_RESTART_S, None, 2e8, "advisor", "measured")
    doc = rank_json(base + ["--checkpoint-cost", "7"])
    if doc:
        check_doc("measured, overridden", doc, lambda r: sm.bucket_rate(BUCKET_TYPES.index(r["instance_type"])), 7.0,
                  sm.DEFAULT_RESTART_S, None, None, "advisor", "user")
    for name in names[:2]:   # back to unmeasured for the tests after this one
        path = os.path.join(folder, name)
        doc = json.load(open(path))
        doc.pop("checkpoint")
        fx.write_json(path, doc)


with tempfile.TemporaryDirectory() as d:
    test_grid(d)
    test_measured_checkpoint(d)
    test_off_and_unknown(d)
    test_monte_carlo(d)
    test_seed_pair(d)
    test_sort_time(d)
    test_target_frontier(d)
    test_bad_flags(d)
    if len(sys.argv) > 2:
        test_doc_example(d, sys.argv[2])
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank spot risk: all checks passed")
