"""`instbench rank` as a table reads as docs/usage.md says ("Tables"): upper-case headers, money with
$ and two decimals (three significant digits below $0.10), time to the target in minutes, hours
or days and hours, samples per dollar grouped, a sources line under the table, and no word of the
snapshot when every price comes from a price file.  --columns keys stay lower case, JSON keeps
plain numbers.  Every expected string is computed here from the fixtures (rank_fixtures'
independent model and testlib's formatting rules), never taken from instbench.
Usage: rank_table_style.py INSTBENCH"""
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import check, duration, failures, parse_table, usd  # noqa: E402

BIN = sys.argv[1]
REGION = "us-east-1"
RESULTS = [fx.result("g5.xlarge", REGION, 1, 1, "NVIDIA A10G", 300.0, host="h0"),
           fx.result("g5.12xlarge", REGION, 1, 4, "NVIDIA A10G", 1100.0, host="h1"),
           fx.result("p4d.24xlarge", REGION, 1, 8, "NVIDIA A100-SXM4-40GB", 4000.0, host="h2"),
           fx.result("g5.xlarge", REGION, 4, 1, "NVIDIA A10G", 1150.0, host="h3"),
           # a CPU type: its prices are below $0.10 and its time to a target runs into years
           fx.result("c7i.large", REGION, 1, 0, "", 2.5, backend="cpu", host="h4")]
AGE_S = 3 * 3600 + 300   # the prices' age: 3.1 h, far from any rounding edge
AS_OF = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - AGE_S))
PRICES = fx.prices_doc([
    fx.price_record("g5.xlarge", REGION, 1.006, {"us-east-1a": 0.4246, "us-east-1b": 0.45}, bucket=4,
                    as_of=AS_OF, source="file"),
    fx.price_record("g5.12xlarge", REGION, 5.672, {"us-east-1a": 2.0796}, bucket=4, as_of=AS_OF, source="file"),
    fx.price_record("p4d.24xlarge", REGION, 21.9576, {"us-east-1c": 2.4659}, bucket=2, as_of=AS_OF, source="file"),
    fx.price_record("c7i.large", REGION, 0.08925, {"us-east-1a": 0.0122}, bucket=4, as_of=AS_OF, source="file")])
UNITS = re.compile(r"\$/h|/s$|/\$$")


def sps_text(v):
    """samples/s as docs/usage.md says tables show it: grouped, two decimals below 100, else one."""
    return f"{v:,.2f}" if v < 100 else f"{v:,.1f}"


def check_headers(headers, what):
    """Upper case; units keep theirs ($/h, SAMPLES/s)."""
    words = [UNITS.sub("", w) for h in headers for w in h.split()]
    check(headers and all(w == w.upper() for w in words), f"{what}: headers not upper case: {headers}")


with tempfile.TemporaryDirectory() as d:
    for i, r in enumerate(RESULTS):
        fx.write_json(os.path.join(d, "res", f"r{i}.json"), r)
    pfile = os.path.join(d, "prices.json")
    fx.write_json(pfile, PRICES)
    base = [os.path.join(d, "res"), "--source", pfile]

    # Targets whose times fall in each unit: days and hours, tenths of an hour, minutes, under one.
    for target in (1e9, 2e6, 1e5, 1e3):
        what = f"--samples {target:g}"
        rc, out, err = fx.run(BIN, base + ["--samples", f"{target:g}", "--format", "table"])
        if not check(rc == 0, f"{what}: exit {rc}: {err[-400:]}"):
            continue
        headers, rows = parse_table(out)
        check_headers(headers, what)
        want, _ = fx.expected_rows(RESULTS, PRICES, target=target)
        check(len(rows) == len(want), f"{what}: {len(rows)} rows, want {len(want)}:\n{out}")
        by_label = {r.get("CONFIGURATION"): r for r in rows}
        for e in want:
            got = by_label.get(fx.label(e))
            if not check(got is not None, f"{what}: no row {fx.label(e)}:\n{out}"):
                continue
            exp = {"$/h": usd(e["usd_per_hour"]), "SAMPLES/$": f"{e['samples_per_dollar']:,.0f}",
                   "TIME": duration(e["hours_to_target"] * 3600), "COST": usd(e["cost_to_target_usd"]),
                   "PRICE SOURCE, AGE": "file " + duration(AGE_S)}
            for col, v in exp.items():
                check(got.get(col) == v, f"{what}: {fx.label(e)} {col} is {got.get(col)!r}, want {v!r}")
        check(re.search(r"^sources: .*Spot Instance Advisor", out, re.M) is not None,
              f"{what}: no sources line naming the interruption's source:\n{out[-600:]}")
        check("snapshot" not in out and "snapshot" not in err, f"{what}: prices from a file, yet the snapshot is "
                                                               f"named:\n{out}\n{err}")

    # A budget below every row's cost leaves no row: the table says the constraint dropped them (how
    # many, the reference model counts), not that nothing was priced, and no "prices: no prices".
    target, budget = 1e9, 0.01
    every, _ = fx.expected_rows(RESULTS, PRICES, target=target)
    check(every and not fx.expected_rows(RESULTS, PRICES, target=target, budget=budget)[0], "the budget leaves rows")
    rc, out, err = fx.run(BIN, base + ["--samples", f"{target:g}", "--budget", str(budget), "--format", "table"])
    check(rc == 0 and f"no configuration meets the constraints ({len(every)} over --budget)" in out and
          "no prices" not in out and "no priced configuration" not in out,
          f"--budget {budget}: exit {rc}, the table says:\n{out}")

    # samples/s is written one way in the table and in the block of rows not ranked under it (a
    # type the price file lacks): two decimals below 100 in both, not "2.5" above and "2.50" below
    unpriced = fx.result("g6.xlarge", REGION, 1, 1, "NVIDIA L4", 1.2345, host="h5")
    fx.write_json(os.path.join(d, "unpriced", "u.json"), unpriced)
    rc, out, err = fx.run(BIN, base + [os.path.join(d, "unpriced"), "--format", "table"])
    _, rows = parse_table(out)
    by_label = {r.get("CONFIGURATION"): r for r in rows}
    for r in RESULTS:
        lab = fx.label({"nodes": r["topology"]["nodes"], "instance_type": r["instance"]["type"], "market": "on-demand"})
        want = sps_text(r["measurement"]["samples_per_second"])
        check(by_label.get(lab, {}).get("SAMPLES/s") == want, f"{lab}: SAMPLES/s {by_label.get(lab)}, want {want!r}")
    block = out[out.find("not ranked"):]
    check(rc == 0 and f"1 x g6.xlarge on-demand ({sps_text(1.2345)} samples/s)" in block,
          f"the row not ranked: want {sps_text(1.2345)} samples/s:\n{block[:400]}\n{err[-300:]}")

    # --columns keys are the lower-case ids they were; the headers they pick are upper case.
    rc, out, err = fx.run(BIN, base + ["--samples", "1e9", "--format", "table", "--columns",
                                       "rank,usd_per_hour,samples_per_usd,hours,cost,price"])
    headers, _ = parse_table(out)
    check(rc == 0 and headers == ["RANK", "$/h", "SAMPLES/$", "TIME", "COST", "PRICE SOURCE, AGE"],
          f"--columns: exit {rc}, headers {headers}: {err[-300:]}")
    # without the price's source among them, the sources line says how to add it: --wide adds no
    # column to those --columns picks, so it names the key
    rc, out, err = fx.run(BIN, base + ["--format", "table", "--wide", "--columns", "configuration,usd_per_hour"])
    legend = next((ln for ln in out.splitlines() if ln.startswith("sources:")), "")
    check(rc == 0 and "(--columns ...,price_source shows it)" in legend and "--wide" not in legend,
          f"--columns without price_source: the sources line says {legend!r}")

    # JSON keeps plain numbers.
    rc, out, err = fx.run(BIN, base + ["--samples", "1e9", "--format", "json"])
    if check(rc == 0, f"json: exit {rc}: {err[-300:]}"):
        rows = fx.ranked(json.loads(out))
        check(rows and all(isinstance(r["usd_per_hour"], (int, float)) for r in rows), f"json rows: {rows[:1]}")

print("rank_table_style: " + ("all checks passed" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
