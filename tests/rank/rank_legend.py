"""The legend under `instbench rank`'s table stays short (issue 41: 15-19 lines under a 5-row
table): by default the sources line, one line per mark the rows carry, the best spot row's
break-even and a pointer to --explain; --explain (or -v) adds how the spot figures are made
(the spot model's assumptions, the next rows' break-evens).  The rows themselves are the same
either way.  Fixtures: rank_fixtures' results and a price file (no AWS).
Usage: rank_legend.py INSTBENCH"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN = sys.argv[1]
REGION = "us-east-1"
RESULTS = [fx.result("g5.xlarge", REGION, 1, 1, "NVIDIA A10G", 300.0, host="h0"),
           fx.result("g5.12xlarge", REGION, 1, 4, "NVIDIA A10G", 1100.0, host="h1"),
           fx.result("p4d.24xlarge", REGION, 1, 8, "NVIDIA A100-SXM4-40GB", 4000.0, host="h2"),
           fx.result("g5.xlarge", REGION, 4, 1, "NVIDIA A10G", 1150.0, host="h3"),
           fx.result("g5.2xlarge", REGION, 1, 1, "NVIDIA A10G", 310.0, host="h4")]
PRICES = fx.prices_doc([
    fx.price_record("g5.xlarge", REGION, 1.006, {"us-east-1a": 0.4246}, bucket=4, source="file"),
    fx.price_record("g5.2xlarge", REGION, 1.212, {"us-east-1a": 0.47}, bucket=3, source="file"),
    fx.price_record("g5.12xlarge", REGION, 5.672, {"us-east-1a": 2.0796}, bucket=4, source="file"),
    fx.price_record("p4d.24xlarge", REGION, 21.9576, {"us-east-1c": 2.4659}, bucket=2, source="file")])


def below_table(out):
    """The lines after the table's rows (the legend), without blank ones."""
    lines = out.splitlines()
    rule = next((i for i, ln in enumerate(lines) if ln.startswith("----")), None)
    if rule is None:
        return [], []
    end = next((i for i in range(rule + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[:end], [ln for ln in lines[end:] if ln.strip()]


with tempfile.TemporaryDirectory() as d:
    for i, r in enumerate(RESULTS):
        fx.write_json(os.path.join(d, "res", f"r{i}.json"), r)
    pfile = os.path.join(d, "prices.json")
    fx.write_json(pfile, PRICES)
    base = [os.path.join(d, "res"), "--source", pfile, "--samples", "1e8", "--market", "both", "--format", "table",
            "--wide"]
    rc, short, err = fx.run(BIN, base)
    check(rc == 0, f"rank: exit {rc}: {err[-300:]}")
    rc, full, err = fx.run(BIN, base + ["--explain"])
    check(rc == 0, f"rank --explain: exit {rc}: {err[-300:]}")
    rc, verbose, _ = fx.run(BIN, ["-v"] + base)
    check(rc == 0, f"rank -v: exit {rc}")
    table_s, legend_s = below_table(short)
    table_f, legend_f = below_table(full)
    check(table_s == table_f, "the rows differ with --explain")
    # 10 rows (5 configurations x 2 markets) under a legend of at most 5 lines (output_note wraps
    # at the fitted width; piped, every line is one note)
    check(len(legend_s) <= 5, f"default legend has {len(legend_s)} lines: {legend_s}")
    check(any(ln.startswith("sources:") for ln in legend_s), f"no sources line: {legend_s}")
    check(any("--explain" in ln for ln in legend_s), f"no pointer to --explain: {legend_s}")
    check(not any(ln.startswith("spot risk:") for ln in legend_s), "the spot model is explained by default")
    check(sum("stays ahead of" in ln or "falls behind" in ln or "is behind" in ln for ln in legend_s) == 1,
          f"one break-even by default: {legend_s}")
    # --explain: the spot model and more break-evens; -v the same as --explain
    check(any(ln.startswith("spot risk:") for ln in legend_f), f"--explain lacks the spot model: {legend_f}")
    check(sum("stays ahead of" in ln or "falls behind" in ln or "is behind" in ln for ln in legend_f) >= 2,
          f"--explain shows the next break-evens: {legend_f}")
    check(not any("--explain" in ln for ln in legend_f), "--explain still points to itself")
    check(below_table(verbose)[1] == legend_f, "-v does not give --explain's legend")

print("rank_legend: %s" % ("ok" if not failures else "%d failed" % len(failures)))
sys.exit(1 if failures else 0)
