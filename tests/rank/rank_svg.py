"""`instbench rank --plot`: the SVG is well-formed XML (text escaped even when a label carries
markup characters), renders to PNG with rsvg-convert, has one labelled point per ranked row at the
right coordinates (read back through the chart's own axis ticks, log here), joins exactly the Pareto
rows (computed independently in Python), and no two labels overlap (tests/output/svg_check.py).
Usage: rank_svg.py INSTBENCH"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import math
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "output"))   # svg_check
import rank_fixtures as fx  # noqa: E402
import svg_check as svgc  # noqa: E402

BIN = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"
from testlib import check, failures, usd


results = [fx.result("g5.xlarge", "us-east-1", 4, 1, "NVIDIA A10G", 1250.0),
           fx.result("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 1300.0),
           fx.result("p4d.24xlarge", "us-east-1", 1, 8, "NVIDIA A100-SXM4-40GB", 9000.0),
           fx.result("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 200.0)]
prices = fx.prices_doc([
    fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45, "us-east-1b": 0.41}, bucket=1, placement=7),
    fx.price_record("g5.12xlarge", "us-east-1", 5.672, {"us-east-1a": 2.1}, bucket=0),
    fx.price_record("p4d.24xlarge", "us-east-1", 32.77, {"us-east-1c": 12.0}, bucket=3),
    fx.price_record("g6.xlarge", "us-east-1", 0.805, None)])

with tempfile.TemporaryDirectory() as d:
    for i, r in enumerate(results):
        fx.write_json(os.path.join(d, "res", f"{i}.json"), r)
    # Markup characters in the prices file name reach the chart's subtitle: they must be escaped.
    pfile = os.path.join(d, "p&<x>'\".json")
    fx.write_json(pfile, prices)
    svg = os.path.join(d, "out", "chart.svg")
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", pfile, "--format", "json", "--plot", svg,
                                "--create-dirs"])   # out/ does not exist yet
    check(rc == 0, f"exit {rc}: {err}")
    doc = json.loads(out) if rc == 0 else {"rows": []}
    try:
        root = ET.parse(svg).getroot()
    except Exception as e:  # noqa: BLE001
        root = None
        check(False, f"SVG is not well-formed XML: {e}")
    if root is not None:
        check(root.tag == NS + "svg", f"root element {root.tag}")
        texts = ["".join(t.itertext()) for t in root.iter(NS + "text")]
        check(any("vit_base_patch16_224" in t for t in texts), "title does not name the workload")
        check(any("2026-11-21" in t for t in texts), "title does not give the price date")
        check(any("p&<x>'\"" in t for t in texts), "escaped file name not round-tripped")
        circles = list(root.iter(NS + "circle"))
        check(len(circles) == len(fx.ranked(doc)), f"{len(circles)} points for {len(fx.ranked(doc))} rows")
        labels = {"".join(c.find(NS + "title").itertext()) for c in circles}
        for r in fx.ranked(doc):
            check(any(l.startswith(f"#{r['rank']} {r['configuration']}:") for l in labels),
                  f"no point labelled {r['configuration']}")
        check(sorted(t for t in texts if t.startswith("#") and ":" not in t) ==
              sorted(f"#{r['rank']}" for r in fx.ranked(doc)), "every point is not tagged with its rank")
        # Independent Pareto: the frontier line must pass through exactly those rows' points.
        priced, _ = fx.expected_rows(results, prices)
        frontier = [r for r in priced if r["pareto"]]
        check(len(frontier) >= 2, "fixture should have a frontier of at least two points")
        lines = list(root.iter(NS + "polyline"))
        check(len(lines) == 1, f"{len(lines)} frontier lines")
        if lines and circles:
            pts = [tuple(map(float, p.split(","))) for p in lines[0].get("points").split()]
            check(len(pts) == len(frontier), f"frontier has {len(pts)} points, expected {len(frontier)}")
            # Map data to pixels through the chart's own axis ticks (log here: both spans > 10x).
            _, tox, px = svgc.axis_map(root, "x")
            _, toy, py = svgc.axis_map(root, "y")
            for p in px + py:
                check(False, p)
            if tox and toy:
                for (px_, py_), r in zip(sorted(pts), sorted(frontier, key=lambda r: r["usd_per_hour"])):
                    check(abs(px_ - tox(r["usd_per_hour"])) < 0.05 and abs(py_ - toy(r["rank_sps"])) < 0.05,
                          f"frontier point {px_},{py_} is not {fx.label(r)}")
        # Every point where the ticks put its data (from the independent model, not the JSON), and
        # each axis log exactly when its data span more than a decade.
        expected = {f"#{r['rank']} {r['configuration']}": None for r in fx.ranked(doc)}
        # a spot row stands at its effective samples/s (the figure it is ranked by)
        model = {fx.label(r): (r["usd_per_hour"], r["rank_sps"]) for r in priced}
        expected = {k: model.get(k.split(" ", 1)[1], (math.nan, math.nan)) for k in expected}
        check(svgc.expected_scale([v[0] for v in expected.values()]) == "log" and
              svgc.expected_scale([v[1] for v in expected.values()]) == "log", "fixture should span > 10x on both axes")
        svgc.check_points(root, check, expected)
        for p in svgc.text_problems(root):
            check(False, p)
        with open(svg) as f:
            check(not svgc.nonfinite(f.read()), "nan/inf in the chart")
    rsvg = shutil.which("rsvg-convert")
    if rsvg:
        png = os.path.join(d, "chart.png")
        p = subprocess.run([rsvg, "-o", png, svg], capture_output=True)
        check(p.returncode == 0, f"rsvg-convert failed: {p.stderr.decode()}")
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "rsvg-convert did not write a PNG")
    else:
        check(False, "rsvg-convert not installed (Debian librsvg2-bin; scripts/bootstrap.sh --test-deps installs it)")

    # A point's label writes samples/s as the table does (two decimals below 100, one above), and
    # $/h as money: a CPU type measured at 2.5 samples/s, each point at its ranked figure (the model's).
    slow = [fx.result("c7i.large", "us-east-1", 1, 0, "", 2.5, backend="cpu")]
    slow_prices = fx.prices_doc([fx.price_record("c7i.large", "us-east-1", 0.08925, {"us-east-1a": 0.0122}, bucket=4)])
    fx.write_json(os.path.join(d, "slow", "r.json"), slow[0])
    fx.write_json(os.path.join(d, "slow.json"), slow_prices)
    slow_svg = os.path.join(d, "slow.svg")
    rc, out, err = fx.run(BIN, [os.path.join(d, "slow"), "--source", os.path.join(d, "slow.json"), "--plot", slow_svg,
                                "--format", "csv"])
    labels = set()
    if check(rc == 0, f"slow chart: exit {rc}: {err}"):
        labels = {"".join(c.find(NS + "title").itertext()) for c in ET.parse(slow_svg).getroot().iter(NS + "circle")}
    for r in fx.expected_rows(slow, slow_prices)[0]:
        v = r["rank_sps"]
        want = f"{fx.label(r)}: {usd(r['usd_per_hour'])}/h, " + (f"{v:,.2f} " if v < 100 else f"{v:,.1f} ")
        check(any(want in lab for lab in labels), f"no label has {want!r}: {labels}")

    # No priced row at all: still a valid chart, and the command says why in the rows.
    empty = os.path.join(d, "empty.svg")
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", pfile, "--max-hourly", "0.01",
                                "--plot", empty, "--format", "csv"])
    check(rc == 0, f"empty chart: exit {rc}: {err}")
    try:
        ET.parse(empty)
    except Exception as e:  # noqa: BLE001
        check(False, f"empty chart is not XML: {e}")
    # An unwritable plot path (its directory exists) is a runtime error with a message, found before
    # the ranking.
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", pfile, "--plot", "/proc/x.svg"])
    check(rc == 1 and "x.svg" in err, f"unwritable plot: exit {rc}: {err}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank svg: all checks passed")
