"""The --plot chart's scales and labels, checked against the test's own data: each point sits where
the chart's own axis ticks put its $/h and samples/s; an axis is log exactly when its data span more
than 10x; iso-cost lines are lines of constant samples per dollar inside the plot box; no two text
boxes overlap and all lie in the viewBox (boxes estimated as src/output/svg.c documents, see
tests/svg_check.py); degenerate inputs (one point, equal values, a zero, missing or non-finite
price, no point, negative values, twelve decades, a span of 1e-7 relative, a crowd of points) give
valid XML without nan or inf.  Charts come from `instbench rank --plot` and, for inputs rank never
hands the writer (a zero or non-finite price), from tests/svg_plot_cases.c.
Usage: svg_plot.py INSTBENCH SVG_PLOT_CASES"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
# svg_check, testlib, rank_fixtures
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes", "rank")]
import rank_fixtures as fx  # noqa: E402
import svg_check as svgc  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN, CASES = sys.argv[1], sys.argv[2]
NS = svgc.NS


def check_chart(path, expected, where):
    """Every check of one chart; EXPECTED: {title prefix: (usd_per_hour, samples_per_second)}."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check(not svgc.nonfinite(text), f"{where}: nan/inf in the chart: {svgc.nonfinite(text)[:3]}")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        check(False, f"{where}: not XML: {e}")
        return None
    check(root.tag == NS + "svg", f"{where}: root element {root.tag}")
    svgc.check_points(root, check, expected, where + ": ")
    svgc.check_iso(root, check, where + ": ")
    for p in svgc.text_problems(root):
        check(False, f"{where}: {p}")
    return root


# ---- charts from `instbench rank --plot`, every price the test's own (--price) ----------------
# name: [(instance type, nodes, samples/s, on-demand $/h per node or None: unpriced)]
CLI_CASES = {
    "linear": [("g5.xlarge", 1, 1000.0, 1.0), ("g5.2xlarge", 1, 1500.0, 1.8), ("g5.4xlarge", 1, 2600.0, 3.1),
               ("g5.8xlarge", 1, 2900.0, 4.5)],
    "mixed_log_x": [("g5.xlarge", 1, 1000.0, 0.5), ("g5.2xlarge", 1, 1500.0, 2.0), ("g5.4xlarge", 1, 2600.0, 9.0),
                    ("g5.8xlarge", 1, 2900.0, 30.0)],
    "mixed_log_y": [("g5.xlarge", 1, 60.0, 1.0), ("g5.2xlarge", 1, 300.0, 1.6), ("g5.4xlarge", 1, 2600.0, 3.0),
                    ("g5.8xlarge", 1, 9000.0, 6.5)],
    "log_log": [("g5.xlarge", 1, 90.0, 0.2), ("g5.2xlarge", 1, 1500.0, 2.0), ("g5.4xlarge", 1, 2600.0, 9.0),
                ("g5.8xlarge", 2, 16000.0, 30.0)],
    "just_over_a_decade": [("g5.xlarge", 1, 100.0, 1.0), ("g5.2xlarge", 1, 1001.0, 10.01)],
    "exactly_a_decade": [("g5.xlarge", 1, 100.0, 1.0), ("g5.2xlarge", 1, 1000.0, 10.0)],
    "one_point": [("g5.xlarge", 1, 300.0, 1.006)],
    "equal_price": [("g5.xlarge", 1, 300.0, 2.0), ("g5.2xlarge", 1, 450.0, 2.0), ("g5.4xlarge", 1, 5000.0, 2.0)],
    "equal_speed": [("g5.xlarge", 1, 700.0, 0.5), ("g5.2xlarge", 1, 700.0, 1.5), ("g5.4xlarge", 1, 700.0, 2.5)],
    "missing_price": [("g5.xlarge", 1, 300.0, 1.0), ("g5.2xlarge", 1, 400.0, 1.4), ("workstation", 1, 700.0, None)],
}

with tempfile.TemporaryDirectory() as d:
    for name, rows in CLI_CASES.items():
        res = os.path.join(d, name)
        args = [res, "--source", "snapshot", "--market", "on-demand", "--format", "json",
                "--plot", os.path.join(d, name + ".svg")]
        expected = {}
        for i, (itype, nodes, sps, usd) in enumerate(rows):
            host = itype if itype == "workstation" else f"h{i}"
            fx.write_json(os.path.join(res, f"{i}.json"),
                          fx.result(None if itype == "workstation" else itype, "us-east-1", nodes, 1, "NVIDIA A10G",
                                    sps, host=host))
            if usd is not None:
                args += ["--price", f"{itype}={usd}"]
                expected[f"{nodes} x {itype} on-demand"] = (usd * nodes, sps)
        rc, out, err = fx.run(BIN, args)
        if not check(rc == 0, f"{name}: exit {rc}: {err}"):
            continue
        doc = json.loads(out)
        # Titles carry the rank the tool gave; the data each must show is the test's own.
        by_title = {f"#{r['rank']} {r['configuration']}": expected.get(r["configuration"]) for r in fx.ranked(doc)}
        check(all(v is not None for v in by_title.values()) and len(by_title) == len(expected),
              f"{name}: ranked {sorted(by_title)}, priced {sorted(expected)}")
        root = check_chart(os.path.join(d, name + ".svg"), {k: v for k, v in by_title.items() if v}, name)
        if root is not None and name == "linear":
            # Axes use the space: the data fill most of each axis (no range from zero).
            for which, vals in (("x", [v[0] for v in expected.values()]), ("y", [v[1] for v in expected.values()])):
                _, to_px, _ = svgc.axis_map(root, which)
                box = svgc.plot_rect(root)
                extent = box[2] - box[0] if which == "x" else box[3] - box[1]
                if to_px:
                    check(abs(to_px(max(vals)) - to_px(min(vals))) > 0.75 * extent,
                          f"linear: the {which} data use less than 3/4 of the axis")
        if root is not None and name.startswith("mixed"):
            paths = [p for p in root.iter(NS + "path") if p.get("class") == "iso"]
            check(paths and all(len(p.get("d").split()) > 2 for p in paths),
                  f"{name}: iso-cost lines on mixed axes should be curves")

    # ---- the writer alone, on inputs rank never gives it --------------------------------------
    out = os.path.join(d, "cases")
    os.makedirs(out)
    p = subprocess.run([CASES, out], capture_output=True, text=True)
    check(p.returncode == 0, f"svg_plot_cases: exit {p.returncode}: {p.stderr}")
    names = sorted(f[:-4] for f in os.listdir(out) if f.endswith(".svg"))
    check(len(names) >= 13, f"only {len(names)} writer cases: {names}")
    for name in names:
        with open(os.path.join(out, name + ".json")) as f:
            pts = json.load(f)
        root = check_chart(os.path.join(out, name + ".svg"), {f"{k}": tuple(v) for k, v in pts.items()}, name)
        if root is not None and name == "crowd":
            tags = [t for t in root.iter(NS + "text") if t.get("class") == "tag"]
            check(0 < len(tags) < 120, f"crowd: {len(tags)} of 120 tags placed (some should be dropped)")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("svg plot: all checks passed")
