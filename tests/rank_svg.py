"""`instbench rank --plot`: the SVG is well-formed XML (text escaped even when a label carries
markup characters), renders to PNG with rsvg-convert, has one labelled point per ranked row at the
right coordinates, and joins exactly the Pareto rows (computed independently in Python).
Usage: rank_svg.py INSTBENCH"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"
from testlib import check, failures


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
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--prices", pfile, "--format", "json", "--plot", svg])
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
        check(len(circles) == len(doc["rows"]), f"{len(circles)} points for {len(doc['rows'])} rows")
        labels = {"".join(c.find(NS + "title").itertext()) for c in circles}
        for r in doc["rows"]:
            check(any(l.startswith(f"#{r['rank']} {r['configuration']}:") for l in labels),
                  f"no point labelled {r['configuration']}")
        check(sorted(t for t in texts if t.startswith("#") and ":" not in t) ==
              sorted(f"#{r['rank']}" for r in doc["rows"]), "every point is not tagged with its rank")
        # Independent Pareto: the frontier line must pass through exactly those rows' points.
        priced, _ = fx.expected_rows(results, prices)
        frontier = [r for r in priced if r["pareto"]]
        check(len(frontier) >= 2, "fixture should have a frontier of at least two points")
        lines = list(root.iter(NS + "polyline"))
        check(len(lines) == 1, f"{len(lines)} frontier lines")
        if lines and circles:
            pts = [tuple(map(float, p.split(","))) for p in lines[0].get("points").split()]
            check(len(pts) == len(frontier), f"frontier has {len(pts)} points, expected {len(frontier)}")
            # Map data to pixels with two circles of known data (the axes are linear from zero).
            by_label = {"".join(c.find(NS + "title").itertext()).split(":")[0]: (float(c.get("cx")), float(c.get("cy")))
                        for c in circles}
            rows = {f"#{r['rank']} {r['configuration']}": r for r in doc["rows"]}
            pix = [(by_label[k], rows[k]) for k in by_label if k in rows]
            (x0, y0), r0 = min(pix, key=lambda p: p[1]["usd_per_hour"])
            (x1, y1), r1 = max(pix, key=lambda p: p[1]["usd_per_hour"])
            sx = (x1 - x0) / (r1["usd_per_hour"] - r0["usd_per_hour"])
            ox = x0 - sx * r0["usd_per_hour"]
            (_, ya), ra = min(pix, key=lambda p: p[1]["samples_per_second"])
            (_, yb), rb = max(pix, key=lambda p: p[1]["samples_per_second"])
            sy = (yb - ya) / (rb["samples_per_second"] - ra["samples_per_second"])
            oy = ya - sy * ra["samples_per_second"]
            for (px, py), r in zip(sorted(pts), sorted(frontier, key=lambda r: r["usd_per_hour"])):
                check(abs(px - (ox + sx * r["usd_per_hour"])) < 0.05 and
                      abs(py - (oy + sy * r["samples_per_second"])) < 0.05,
                      f"frontier point {px},{py} is not {fx.label(r)}")
            for (cx, cy), r in pix:
                check(abs(cx - (ox + sx * r["usd_per_hour"])) < 0.05 and
                      abs(cy - (oy + sy * r["samples_per_second"])) < 0.05, f"point of {r['configuration']} misplaced")
    rsvg = shutil.which("rsvg-convert")
    if rsvg:
        png = os.path.join(d, "chart.png")
        p = subprocess.run([rsvg, "-o", png, svg], capture_output=True)
        check(p.returncode == 0, f"rsvg-convert failed: {p.stderr.decode()}")
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "rsvg-convert did not write a PNG")
    else:
        check(False, "rsvg-convert not installed (Debian librsvg2-bin; scripts/bootstrap.sh installs it)")

    # No priced row at all: still a valid chart, and the command says why in the rows.
    empty = os.path.join(d, "empty.svg")
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--prices", pfile, "--max-hourly", "0.01",
                                "--plot", empty, "--format", "csv"])
    check(rc == 0, f"empty chart: exit {rc}: {err}")
    try:
        ET.parse(empty)
    except Exception as e:  # noqa: BLE001
        check(False, f"empty chart is not XML: {e}")
    # An unwritable plot path is a runtime error with a message.
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--prices", pfile, "--plot", "/proc/nope/x.svg"])
    check(rc == 1 and "x.svg" in err, f"unwritable plot: exit {rc}: {err}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank svg: all checks passed")
