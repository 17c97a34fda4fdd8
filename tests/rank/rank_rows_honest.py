"""Every rank row says what it is (issue 21): an extrapolated `measure --count` result, an identity
the hardware contradicts, and runs that disagree or carry warnings are marked in JSON, CSV, the
table and the SVG, and a real N-node run supersedes an extrapolation to N nodes.  Expectations
are computed here from the fixtures (the rule: samples/s x nodes / measured nodes), never read
back from instbench.
Usage: rank_rows_honest.py INSTBENCH"""
import csv
import hashlib
import io
import json
import os
import statistics
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN = sys.argv[1]
R = fx.result
PRICES = fx.prices_doc([
    fx.price_record("g5.xlarge", "us-east-1", 1.006, {"use1-az1": 0.45, "use1-az2": 0.41}, bucket=4),
    fx.price_record("g5.12xlarge", "us-east-1", 5.672, {"use1-az1": 2.08}, bucket=4),
    fx.price_record("g6.xlarge", "us-east-1", 0.805, None),
    fx.price_record("g6.2xlarge", "us-east-1", 0.978, None),
])


def quality(doc, cv=None, codes=None, texts=None, mfu=None):
    """Sets the run-quality fields of a result fixture as measure writes them."""
    ms = doc["measurement"]
    if cv is not None:
        ms["step_time_s"]["cv"] = cv
    if codes is not None:
        ms["warning_codes"] = codes
    if texts is not None:
        ms["warnings"] = texts
    if mfu is not None:
        ms["peak_tflops"], ms["mfu"] = 1.0, mfu
    return doc


def rank(d, files, *extra):
    args = [os.path.join(d, f) for f in files] + ["--source", os.path.join(d, "prices.json"), *extra]
    return fx.run(BIN, args)


def rows_by_label(doc):
    return {r["configuration"]: r for r in doc["rows"]}


def table_lines(out):
    """{configuration label: the table line}, found by the label the JSON gave the row."""
    return out.splitlines()


with tempfile.TemporaryDirectory() as d:
    fx.write_json(os.path.join(d, "prices.json"), PRICES)
    one_node = R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 300.0, count=4, timestamp="2026-11-21T10:00:00Z")
    real_single = R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 310.0, timestamp="2026-11-21T11:00:00Z")
    big = R("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 1100.0)
    fx.write_json(os.path.join(d, "extra.json"), one_node)
    fx.write_json(os.path.join(d, "single.json"), real_single)
    fx.write_json(os.path.join(d, "big.json"), big)

    # ---- extrapolated: JSON and CSV ----
    rc, out, err = rank(d, ["extra.json", "single.json", "big.json"], "--format", "json", "--market", "spot")
    check(rc == 0, f"extrapolated: exit {rc}: {err[-300:]}")
    doc = json.loads(out) if rc == 0 else {"rows": []}
    rows = rows_by_label(doc)
    four = rows.get("4 x g5.xlarge spot")
    want_sps = 300.0 * 4 / 1   # measured on 1 node, scaled to the 4 the row prices
    check(four is not None and four["extrapolated"] is True and four["measured_nodes"] == 1 and four["nodes"] == 4,
          f"extrapolated JSON row: {four}")
    if four:
        check(fx.close(four["samples_per_second"], want_sps), f"extrapolated samples/s {four['samples_per_second']}")
        check(fx.close(four["samples_per_dollar"], want_sps * 3600 / (4 * 0.41)),
              f"extrapolated samples/$ {four['samples_per_dollar']}")
    for label in ("1 x g5.xlarge spot", "1 x g5.12xlarge spot"):
        r = rows.get(label)
        check(r is not None and r["extrapolated"] is False and r["measured_nodes"] == r["nodes"],
              f"{label}: measured row marked {r and (r['extrapolated'], r['measured_nodes'])}")

    rc, out, err = rank(d, ["extra.json", "single.json", "big.json"], "--format", "csv", "--market", "spot")
    by_cfg = {r["configuration"]: r for r in csv.DictReader(io.StringIO(out, newline=""))}
    c4 = by_cfg.get("4 x g5.xlarge spot", {})
    check(c4.get("extrapolated") == "true" and c4.get("measured_nodes") == "1" and c4.get("nodes") == "4",
          f"extrapolated CSV row: {c4}")
    check(by_cfg.get("1 x g5.xlarge spot", {}).get("extrapolated") == "false", "measured CSV row not 'false'")

    # ---- extrapolated: the table's mark and legend ----
    rc, out, err = rank(d, ["extra.json", "single.json", "big.json"], "--format", "table", "--market", "spot",
                        "--wide")
    lines = out.splitlines()
    marked = [ln for ln in lines if "4 x g5.xlarge spot ^" in ln]
    check(len(marked) == 1, f"table: the extrapolated row has no '^' mark:\n{out}")
    check(not any("1 x g5.xlarge spot ^" in ln or "1 x g5.12xlarge spot ^" in ln for ln in lines),
          f"table: a measured row is marked:\n{out}")
    legend = [ln for ln in lines if ln.startswith("^ extrapolated")]
    check(len(legend) == 1 and "linear scaling" in out and "communication" in out,
          f"table: no legend line saying what '^' assumes:\n{out}")

    # ---- extrapolated: the SVG draws such points differently ----
    svg = os.path.join(d, "plot.svg")
    rc, out, err = rank(d, ["extra.json", "single.json", "big.json"], "--format", "json", "--plot", svg)
    check(rc == 0, f"plot: exit {rc}: {err[-300:]}")
    ranked = fx.ranked(json.loads(out)) if rc == 0 else []
    want_hollow = sorted(f"#{r['rank']}" for r in ranked if r["extrapolated"])
    ns = "{http://www.w3.org/2000/svg}"
    circles = ET.parse(svg).getroot().iter(ns + "circle") if os.path.exists(svg) else []
    hollow, solid = [], []
    for c in circles:
        title = c.find(ns + "title")
        if title is None or not (title.text or "").startswith("#"):
            continue
        (hollow if c.get("class") == "extrapolated" else solid).append(title.text.split()[0])
    check(sorted(hollow) == want_hollow and len(want_hollow) == 2,
          f"SVG: extrapolated points {sorted(hollow)}, want {want_hollow}")
    check(all(c not in hollow for c in solid), "SVG: a point drawn both ways")

    # ---- a real 4-node run supersedes the extrapolation to 4 nodes ----
    real4 = R("g5.xlarge", "us-east-1", 4, 1, "NVIDIA A10G", 1000.0, timestamp="2026-11-21T12:00:00Z")
    fx.write_json(os.path.join(d, "real4.json"), real4)
    rc, out, err = rank(d, ["extra.json", "real4.json"], "--format", "json", "--market", "on-demand")
    doc = json.loads(out) if rc == 0 else {"rows": [], "inputs": {}}
    four = rows_by_label(doc).get("4 x g5.xlarge on-demand")
    check(four is not None and four["extrapolated"] is False and four["runs"] == 1
          and fx.close(four["samples_per_second"], 1000.0),
          f"superseded: the real 4-node run is not the one used: {four}")
    check(doc["inputs"].get("superseded") == 1, f"superseded count {doc['inputs']}")
    check("extrapolated result left out" in err, f"superseded: not said on stderr: {err}")

    # ---- identity mismatch ----
    mism = R("g6.2xlarge", "us-east-1", 1, 1, "NVIDIA L4", 50.0, backend="cpu")
    mism["instance"]["identity_mismatch"] = True
    mism["instance"]["identity_differences"] = ["accelerators: g6.2xlarge has 1 x L4, this run has none"]
    ok = R("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 200.0)
    ok["instance"]["identity_mismatch"] = False
    fx.write_json(os.path.join(d, "mism.json"), mism)
    fx.write_json(os.path.join(d, "ok.json"), ok)
    rc, out, err = rank(d, ["mism.json", "ok.json"], "--format", "json", "--market", "on-demand")
    rows = rows_by_label(json.loads(out)) if rc == 0 else {}
    check(rows.get("1 x g6.2xlarge on-demand", {}).get("identity_mismatch") is True,
          f"identity_mismatch not true: {rows.get('1 x g6.2xlarge on-demand')}")
    check(rows.get("1 x g6.xlarge on-demand", {}).get("identity_mismatch") is False, "a checked row is marked")
    rc, out, err = rank(d, ["mism.json", "ok.json"], "--format", "csv", "--market", "on-demand")
    by_cfg = {r["configuration"]: r for r in csv.DictReader(io.StringIO(out, newline=""))}
    check(by_cfg.get("1 x g6.2xlarge on-demand", {}).get("identity_mismatch") == "true", f"CSV identity: {by_cfg}")
    rc, out, err = rank(d, ["mism.json", "ok.json"], "--format", "table", "--market", "on-demand")
    check(any("1 x g6.2xlarge on-demand !" in ln for ln in out.splitlines())
          and any(ln.startswith("! identity mismatch") for ln in out.splitlines()),
          f"table: no '!' mark and legend for the mismatched row:\n{out}")
    check(not any("1 x g6.xlarge on-demand !" in ln for ln in out.splitlines()), f"table: clean row marked:\n{out}")

    # ---- run quality: spread, cv and warnings ----
    a = quality(R("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 15.8, timestamp="2026-11-21T10:00:00Z"),
                cv=0.78, codes=["cv_high"], texts=["step-time CV 78.0% > 5%"])
    b = quality(R("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 81.5, timestamp="2026-11-21T11:00:00Z"),
                cv=0.02, texts=["load average above vCPUs before the run (shared machine?)"])   # an older result
    c = quality(R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 300.0), cv=0.01, mfu=1.3)
    clean = [R("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", v, timestamp=f"2026-11-21T1{i}:00:00Z")
             for i, v in enumerate((1000.0, 1040.0))]   # 4% apart: within 10%
    for name, doc_ in (("a", a), ("b", b), ("c", c), ("c1", clean[0]), ("c2", clean[1])):
        fx.write_json(os.path.join(d, f"q{name}.json"), doc_)
    files = ["qa.json", "qb.json", "qc.json", "qc1.json", "qc2.json"]
    rc, out, err = rank(d, files, "--format", "json", "--market", "on-demand")
    rows = rows_by_label(json.loads(out)) if rc == 0 else {}
    g6 = rows.get("1 x g6.xlarge on-demand", {})
    check(g6.get("runs") == 2 and g6.get("samples_per_second_min") == 15.8 and g6.get("samples_per_second_max") == 81.5
          and fx.close(g6.get("samples_per_second", 0), statistics.median([15.8, 81.5])),
          f"spread of two disagreeing runs: {g6}")
    check(g6.get("cv") == 0.78, f"worst run's cv: {g6.get('cv')}")
    check(g6.get("warnings") == ["cv_high", "shared_machine"], f"warnings union: {g6.get('warnings')}")
    check(rows.get("1 x g5.xlarge on-demand", {}).get("warnings") == ["mfu_over_100"],
          f"MFU above 1 not flagged: {rows.get('1 x g5.xlarge on-demand')}")
    big_row = rows.get("1 x g5.12xlarge on-demand", {})
    check(big_row.get("warnings") == [] and big_row.get("runs") == 2, f"clean row: {big_row}")
    rc, out, err = rank(d, files, "--format", "csv", "--market", "on-demand")
    by_cfg = {r["configuration"]: r for r in csv.DictReader(io.StringIO(out, newline=""))}
    check(by_cfg.get("1 x g6.xlarge on-demand", {}).get("warnings") == "cv_high;shared_machine",
          f"CSV warnings: {by_cfg.get('1 x g6.xlarge on-demand')}")
    check(by_cfg.get("1 x g5.12xlarge on-demand", {}).get("warnings") == "", "CSV: clean row has warnings")
    rc, out, err = rank(d, files, "--format", "table", "--market", "on-demand")
    lines = out.splitlines()
    check(any("1 x g6.xlarge on-demand ~" in ln for ln in lines), f"table: disagreeing runs not marked:\n{out}")
    check(any("1 x g5.xlarge on-demand ~" in ln for ln in lines), f"table: MFU warning not marked:\n{out}")
    check(not any("1 x g5.12xlarge on-demand ~" in ln for ln in lines), f"table: runs 4% apart marked:\n{out}")
    qleg = [ln for ln in lines if ln.startswith("~ run quality")]
    check(len(qleg) == 1 and "10%" in qleg[0], f"table: no legend line for '~':\n{out}")

    # two machines off EC2 whose hostnames --price cannot take (a space, an escape): two rows, each
    # under a name --price can give (its name characters, '_' for the rest, and a hash of the raw
    # name), never one median over both
    odd = []
    for i, (host, sps) in enumerate((("my laptop", 100.0), ("gpu box\x1b[31m", 5.0), ("gpu box\x1b[32m", 7.0))):
        doc_ = R(None, "us-east-1", 1, 1, "NVIDIA A10G", sps, host=host)
        fx.write_json(os.path.join(d, f"odd{i}.json"), doc_)
        odd.append(f"odd{i}.json")
    rc, out, err = rank(d, odd, "--format", "json", "--market", "on-demand")
    hosts = sorted((r["host"], r["samples_per_second"]) for r in json.loads(out)["rows"]) if out else []  # unpriced: exit 1
    check(len(hosts) == 3 and [h[1] for h in hosts] == [5.0, 7.0, 100.0] and
          all(h is not None and " " not in h and "\x1b" not in h for h, _ in hosts) and
          hosts[0][0].startswith("gpu_box") and hosts[0][0] != hosts[1][0] and
          hosts[2][0] == "my_laptop-" + hashlib.sha256(b"my laptop").hexdigest()[:8],
          f"odd hostnames: rows {hosts} (exit {rc}, {err[-300:]})")
    if len(hosts) == 3:
        rc, out, err = rank(d, odd, "--format", "json", "--market", "on-demand", "--price", f"{hosts[2][0]}=0.2")
        priced = [r for r in json.loads(out)["rows"] if r["rank"] is not None] if rc in (0, 1) else []
        check(len(priced) == 1 and priced[0]["usd_per_hour"] == 0.2 and priced[0]["samples_per_second"] == 100.0,
              f"--price {hosts[2][0]}=0.2: {priced} ({rc}, {err[-300:]})")

print("rank_rows_honest: " + ("all checks passed" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
