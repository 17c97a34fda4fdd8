"""Checks of an instbench SVG chart that do not trust the writer, shared by rank_svg.py and
svg_plot.py.

Scales are read back from the chart itself: each axis is <g class="x-axis|y-axis"
data-scale="linear|log">, each tick a <g class="xtick|ytick"> holding its grid line (the tick's
pixel position: x1 of an x tick, y1 of a y tick) and its label (the tick's value, "16k" and "1.5M"
meaning thousands and millions).  axis_map() fits the declared scale through two labelled ticks and
requires every other labelled tick to sit where that scale puts it, so a chart whose ticks are
spaced linearly but declared log (or the reverse) fails; to_px() then maps data to pixels.

Text extents are estimated the way src/output/svg.c documents it: N characters at font size S
are 0.62 * S * N wide (0.7 * S * N bold), S above the baseline and 0.3 * S below it; text-anchor
start/middle/end puts the box right of/around/left of x; rotate(-90 X Y) turns the box about
(X, Y)."""
import math
import re

NS = "{http://www.w3.org/2000/svg}"
CHAR_EM, CHAR_EM_BOLD, ASCENT, DESCENT = 0.62, 0.7, 1.0, 0.3


def tick_value(s):
    s = s.strip()
    mult = {"k": 1e3, "M": 1e6}.get(s[-1:], 1)
    return float(s[:-1] if mult != 1 else s) * mult


def axis_ticks(root, which):
    """(scale, [(pixel, value)]) of axis WHICH ('x' or 'y'), labelled ticks only."""
    axes = [g for g in root.iter(NS + "g") if g.get("class") == which + "-axis"]
    if len(axes) != 1:
        return None, []
    ticks = []
    for g in axes[0].iter(NS + "g"):
        if g.get("class") != which + "tick":
            continue
        line, text = g.find(NS + "line"), g.find(NS + "text")
        if line is None or text is None:
            continue
        ticks.append((float(line.get("x1" if which == "x" else "y1")), tick_value("".join(text.itertext()))))
    return axes[0].get("data-scale"), ticks


def axis_map(root, which, tol_px=0.05):
    """(scale, to_px, problems): to_px(value) -> pixel through the chart's own ticks."""
    scale, ticks = axis_ticks(root, which)
    problems = []
    if scale not in ("linear", "log"):
        return scale, None, [f"{which} axis declares no scale ({scale})"]
    if len(ticks) < 2:
        return scale, None, [f"{which} axis has {len(ticks)} labelled ticks"]
    f = math.log10 if scale == "log" else (lambda v: v)
    (p0, v0), (p1, v1) = min(ticks), max(ticks)
    if scale == "log" and (v0 <= 0 or v1 <= 0):
        return scale, None, [f"{which} log axis has a tick <= 0"]
    if f(v1) == f(v0):
        return scale, None, [f"{which} axis ticks at {p0} and {p1} read the same value {v0}"]
    b = (p1 - p0) / (f(v1) - f(v0))
    a = p0 - b * f(v0)
    for p, v in ticks:
        if abs(a + b * f(v) - p) > tol_px:
            problems.append(f"{which} tick {v} at {p}, the {scale} scale of the other ticks puts it at {a + b * f(v):.2f}")
    to_px = Mapping(lambda v: a + b * f(v) if scale == "linear" or v > 0 else math.nan,
                    lambda p: (p - a) / b if scale == "linear" else 10 ** ((p - a) / b))
    return scale, to_px, problems


class Mapping:
    """to_px(value) -> pixel; to_px.inv(pixel) -> value."""

    def __init__(self, fwd, inv):
        self.fwd, self.inv = fwd, inv

    def __call__(self, v):
        return self.fwd(v)


def plot_rect(root):
    """(x0, y0, x1, y1) of the plot box: the unfilled <rect>."""
    for r in root.iter(NS + "rect"):
        if r.get("fill") == "none":
            x, y = float(r.get("x")), float(r.get("y"))
            return x, y, x + float(r.get("width")), y + float(r.get("height"))
    return None


def check_iso(root, check, where=""):
    """Iso-cost paths stay in the plot box and are lines of constant y / x in data: every vertex,
    mapped back through the ticks, lies on y = k x with k from the path's last vertex (0.1 px)."""
    _, tox, _ = axis_map(root, "x")
    _, toy, _ = axis_map(root, "y")
    box = plot_rect(root)
    paths = [p for p in root.iter(NS + "path") if p.get("class") == "iso"]
    for p in paths:
        pts = [tuple(map(float, v.split(","))) for v in re.findall(r"-?[\d.]+,-?[\d.]+", p.get("d"))]
        check(len(pts) >= 2, f"{where}iso line with {len(pts)} points")
        for x, y in pts:
            check(box[0] - 0.01 <= x <= box[2] + 0.01 and box[1] - 0.01 <= y <= box[3] + 0.01,
                  f"{where}iso line point {x},{y} outside the plot box {box}")
        if not (tox and toy and len(pts) >= 2):
            continue
        xe, ye = pts[-1]
        k = toy.inv(ye) / tox.inv(xe)
        for x, y in pts:
            want = toy(k * tox.inv(x))
            check(abs(want - y) < 0.1, f"{where}iso line vertex {x},{y} is off y = {k:.6g} x (expected y {want:.2f})")
    return paths


def text_box(t):
    fs = float(t.get("font-size"))
    bold = t.get("font-weight") == "bold"
    n = len("".join(t.itertext()))
    w = (CHAR_EM_BOLD if bold else CHAR_EM) * fs * n
    x, y = float(t.get("x")), float(t.get("y"))
    anchor = t.get("text-anchor", "start")
    x0 = x if anchor == "start" else x - w / 2 if anchor == "middle" else x - w
    box = (x0, y - ASCENT * fs, x0 + w, y + DESCENT * fs)
    m = re.fullmatch(r"\s*rotate\(\s*(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s*\)\s*", t.get("transform") or "")
    if t.get("transform"):
        assert m and float(m.group(1)) == -90, f"unexpected transform {t.get('transform')}"
        cx, cy = float(m.group(2)), float(m.group(3))
        # rotate(-90) about (cx, cy): (x, y) -> (cx + (y - cy), cy - (x - cx))
        xs = [cx + (yy - cy) for yy in (box[1], box[3])]
        ys = [cy - (xx - cx) for xx in (box[0], box[2])]
        box = (min(xs), min(ys), max(xs), max(ys))
    return box


def text_problems(root):
    """Overlapping text boxes and boxes outside the viewBox, as messages."""
    vb = [float(v) for v in root.get("viewBox").split()]
    boxes = [("".join(t.itertext()), text_box(t)) for t in root.iter(NS + "text")]
    out = []
    eps = 1e-6
    for s, (x0, y0, x1, y1) in boxes:
        if x0 < vb[0] - eps or y0 < vb[1] - eps or x1 > vb[0] + vb[2] + eps or y1 > vb[1] + vb[3] + eps:
            out.append(f"text {s!r} box {x0:.1f},{y0:.1f},{x1:.1f},{y1:.1f} leaves the viewBox")
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i][1], boxes[j][1]
            if a[0] < b[2] - eps and b[0] < a[2] - eps and a[1] < b[3] - eps and b[1] < a[3] - eps:
                out.append(f"texts {boxes[i][0]!r} and {boxes[j][0]!r} overlap")
    return out


def nonfinite(svg_text):
    """Words nan/inf/infinity anywhere in the file (any case)."""
    return re.findall(r"(?i)\b(?:nan|inf|infinity)\b", svg_text)


def expected_scale(values):
    """What the chart should use for VALUES: log exactly when all are > 0 and max/min > 10."""
    v = [x for x in values if math.isfinite(x)]
    return "log" if v and min(v) > 0 and max(v) / min(v) > 10 else "linear"


def check_points(root, check, expected, where=""):
    """EXPECTED: {title prefix ("#1 1 x g5.xlarge spot"): (usd_per_hour, samples_per_second)}.  Each
    circle is found by its title, and must sit where the axis ticks put its data (0.05 px).  Also: the scale of each axis is log exactly when its data span > 10x."""
    xs, tox, px = axis_map(root, "x")
    ys, toy, py = axis_map(root, "y")
    for p in px + py:
        check(False, where + p)
    check(xs == expected_scale([v[0] for v in expected.values()]), f"{where}x scale {xs} for the data")
    check(ys == expected_scale([v[1] for v in expected.values()]), f"{where}y scale {ys} for the data")
    circles = list(root.iter(NS + "circle"))
    check(len(circles) == len(expected), f"{where}{len(circles)} points for {len(expected)} rows")
    if not (tox and toy):
        return
    for c in circles:
        title = "".join(c.find(NS + "title").itertext()).split(":")[0]
        if not check(title in expected, f"{where}unexpected point {title}"):
            continue
        usd, sps = expected[title]
        cx, cy, ex, ey = float(c.get("cx")), float(c.get("cy")), tox(usd), toy(sps)
        check(abs(cx - ex) < 0.05 and abs(cy - ey) < 0.05,
              f"{where}point {title} ({usd} $/h, {sps} samples/s) at {cx},{cy}; the ticks put it at {ex:.2f},{ey:.2f}")
