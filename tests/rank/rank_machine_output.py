"""rank's machine formats taken as they are by the tools users pipe them into (issue 21):
- one set of column names: the CSV header, the JSON row keys and --columns (which applies to all
  three formats) are the same words; an unknown one exits 2 with a suggestion;
- jq walks the rows (warnings is always an array) and pandas.json_normalize makes a frame whose
  numeric columns are numbers; figures equal the independent model in rank_fixtures;
- LibreOffice Calc (soffice --headless --convert-to xlsx), read back with openpyxl: numbers in every
  numeric column, a date-time in price_as_of_utc;
- the CSV carries the workload (model, precision, batch, backend, fingerprint) and the unpriced
  rows with empty price cells and their reason;
- rank -o FILE writes whole or not at all, its format from the extension; with no RESULT, rank
  reads ./instbench-results/ (measure's default) and says so when it is missing.
Usage: rank_machine_output.py INSTBENCH"""
import csv
import datetime
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN = sys.argv[1]
R = fx.result
RESULTS = [
    R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 210.0),
    R("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 205.5, count=4, host="node9"),
    R("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 820.0),
    R("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 150.0),   # no price below: an unpriced row
]
RESULTS[2]["measurement"]["warning_codes"] = ["cv_high"]
PRICES = fx.prices_doc([
    fx.price_record("g5.xlarge", "us-east-1", 1.006, {"use1-az1": 0.4246, "use1-az4": 0.5}, bucket=4, placement=6),
    fx.price_record("g5.12xlarge", "us-east-1", 5.672, {"use1-az1": 2.0842}, bucket=4),
])
NUMERIC = {"rank", "nodes", "measured_nodes", "batch_size_per_device", "accelerators_per_node", "accelerators_total",
           "usd_per_hour", "usd_per_hour_per_node", "samples_per_second", "samples_per_dollar", "target_samples",
           "hours_to_target", "cost_to_target_usd", "runs", "samples_per_second_min", "samples_per_second_max", "cv",
           "interruption_bucket", "placement_score"}
TARGET = 1e8


def run(args, cwd=None, binary=BIN):
    p = subprocess.run([binary, "rank"] + args, capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    res = os.path.join(d, "results")
    for i, r in enumerate(RESULTS):
        fx.write_json(os.path.join(res, f"r{i}.json"), r)
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, PRICES)
    base = [res, "--source", prices, "--samples", str(TARGET)]
    priced, unpriced = fx.expected_rows(RESULTS, PRICES, target=TARGET)
    priced.sort(key=fx.sort_key("samples-per-dollar", TARGET))

    rc, out, err = run(base + ["--format", "json"])
    check(rc == 0, f"json: exit {rc}: {err[-300:]}")
    doc = json.loads(out) if rc == 0 else {"rows": [], "columns": []}
    rc, csv_out, err = run(base + ["--format", "csv"])
    check(rc == 0, f"csv: exit {rc}: {err[-300:]}")
    header = next(csv.reader(io.StringIO(csv_out)), [])

    # ---- one set of names ----
    check(header == doc["columns"], f"CSV header {header} != JSON columns {doc['columns']}")
    check(all(list(r) == doc["columns"] for r in doc["rows"]), "a JSON row's keys are not the columns")
    schema = json.load(open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "schemas", "rank-v2.json")))
    check(schema["properties"]["columns"]["items"]["enum"] == doc["columns"],
          f"schemas/rank-v2.json's columns differ from the JSON's: {doc['columns']}")
    helptext = subprocess.run([BIN, "rank", "--help"], capture_output=True, text=True).stdout
    check(all(k in helptext for k in doc["columns"]), f"rank --help does not name every column: "
          f"{[k for k in doc['columns'] if k not in helptext]}")
    pick = ["configuration", "samples_per_dollar", "measured_nodes", "warnings", "price_as_of_utc"]
    rc, out, err = run(base + ["--format", "csv", "--columns", ",".join(pick)])
    check(rc == 0 and out.splitlines()[0] == ",".join(pick), f"--columns ignored by CSV: {out[:200]!r} {err}")
    rc, out, err = run(base + ["--format", "json", "--columns", ",".join(pick)])
    sub = json.loads(out) if rc == 0 else {"rows": [{}], "columns": []}
    check(sub["columns"] == pick and all(list(r) == pick for r in sub["rows"]),
          f"--columns ignored by JSON: {sub['columns']} {sub['rows'][:1]}")
    rc, out, err = run(base + ["--format", "table", "--columns", "configuration,samples_per_usd"])
    check(rc == 0 and "SAMPLES/$" in out, f"an old table key is no longer accepted: {err}")
    rc, out, err = run(base + ["--format", "csv", "--columns", "configuration,samples_per_usd"])
    check(rc == 0 and out.splitlines()[0] == "configuration,samples_per_dollar",
          f"an old key is not written as today's: {out[:80]!r}")
    check("'samples_per_usd' is now spelled samples_per_dollar" in err and "accepted until" in err,
          f"an old key without its note: {err!r}")
    rc, out, err = run(base + ["--format", "json", "--columns", "configuration,samples_per_dolar"])
    check(rc == 2 and "did you mean samples_per_dollar?" in err, f"unknown column: exit {rc}: {err}")

    # ---- jq ----
    jq = subprocess.run(["jq", "-r", ".rows[] | select(.rank != null) | [.configuration, .samples_per_dollar, "
                         "(.warnings | length)] | @tsv"], input=json.dumps(doc), capture_output=True, text=True)
    check(jq.returncode == 0, f"jq over the rows: {jq.stderr}")
    got = [ln.split("\t") for ln in jq.stdout.splitlines()]
    check([g[0] for g in got] == [fx.label(e) for e in priced], f"jq rows {[g[0] for g in got]}")
    for g, e in zip(got, priced):
        check(fx.close(float(g[1]), e["samples_per_dollar"]), f"jq {g[0]}: samples/$ {g[1]} != {e['samples_per_dollar']}")
    jq = subprocess.run(["jq", "-r", "[.rows[] | .warnings[]] | unique | join(\",\")"], input=json.dumps(doc),
                        capture_output=True, text=True)
    check(jq.returncode == 0 and jq.stdout.strip() == "cv_high", f"jq .warnings[]: {jq.stdout!r} {jq.stderr}")

    # ---- pandas ----
    import pandas as pd
    frame = pd.json_normalize(doc["rows"])
    check(list(frame.columns) == doc["columns"], f"json_normalize columns {list(frame.columns)}")
    ranked = frame[frame["rank"].notna()]
    for col in ("samples_per_second", "samples_per_dollar", "usd_per_hour", "hours_to_target", "nodes"):
        check(pd.api.types.is_numeric_dtype(ranked[col]), f"pandas: {col} is {ranked[col].dtype}")
    table = pd.read_csv(io.StringIO(csv_out))
    for col in ("usd_per_hour", "samples_per_dollar", "cost_to_target_usd", "runs", "measured_nodes"):
        check(pd.api.types.is_numeric_dtype(table[col]), f"pandas read_csv: {col} is {table[col].dtype}")
    check(table["extrapolated"].dtype == bool, f"pandas read_csv: extrapolated is {table['extrapolated'].dtype}")

    # ---- the workload and the unpriced rows in the CSV ----
    rows = list(csv.DictReader(io.StringIO(csv_out, newline="")))
    r0 = RESULTS[0]
    want = {"model": r0["workload"]["model"], "precision": r0["workload"]["precision"],
            "batch_size_per_device": str(r0["workload"]["batch_size_per_device"]),
            "backend": r0["hardware"]["backend"], "fingerprint": r0["workload"]["fingerprint"]}
    check(all({k: r[k] for k in want} == want for r in rows), f"workload columns: {[{k: r[k] for k in want} for r in rows][:1]}")
    empty = [r for r in rows if r["rank"] == ""]
    check(sorted(r["configuration"] for r in empty) == sorted(fx.label(u) for u in unpriced),
          f"unpriced CSV rows {[r['configuration'] for r in empty]} != {[fx.label(u) for u in unpriced]}")
    check(all(r["usd_per_hour"] == "" and r["samples_per_dollar"] == "" and "g6.xlarge" in r["unpriced_reason"]
              for r in empty), f"unpriced CSV rows: {empty}")
    check(all(r["unpriced_reason"] == "" for r in rows if r["rank"]), "a ranked row has an unpriced_reason")

    # ---- LibreOffice Calc ----
    soffice = shutil.which("soffice")
    if check(soffice is not None, "soffice (libreoffice-calc-nogui) is not installed"):
        import openpyxl
        src = os.path.join(d, "rank.csv")
        with open(src, "w") as f:
            f.write(csv_out)
        xl = os.path.join(d, "xl")
        env = dict(os.environ, HOME=d)   # a profile of its own: no interference with a user's Calc
        p = subprocess.run([soffice, "--headless", "--convert-to", "xlsx", "--outdir", xl, src], capture_output=True,
                           text=True, env=env, timeout=180)
        path = os.path.join(xl, "rank.xlsx")
        if check(p.returncode == 0 and os.path.exists(path), f"soffice: {p.returncode} {p.stderr[-300:]}"):
            sheet = list(openpyxl.load_workbook(path).active.iter_rows(values_only=True))
            head = list(sheet[0])
            check(head == header, f"Calc header {head}")
            for line, r in enumerate(sheet[1:], 2):
                for k, v in zip(head, r):
                    if k in NUMERIC and v is not None:
                        check(isinstance(v, (int, float)) and not isinstance(v, bool),
                              f"Calc row {line}: {k} = {v!r} is {type(v).__name__}, not a number")
                    if k == "price_as_of_utc" and r[0] is not None:
                        check(isinstance(v, datetime.datetime) and v == datetime.datetime(2026, 11, 21),
                              f"Calc row {line}: price_as_of_utc = {v!r} is not a date-time")
            # the spreadsheet's sum of a column is Python's sum of the model's figures
            col = head.index("samples_per_dollar")
            total = sum(r[col] for r in sheet[1:] if r[col] is not None)
            check(fx.close(total, sum(e["samples_per_dollar"] for e in priced)), f"Calc sum {total}")

    # ---- rank -o ----
    out_csv = os.path.join(d, "ranked.csv")
    rc, out, err = run(base + ["-o", out_csv])
    check(rc == 0 and out == "" and open(out_csv).read() == csv_out, f"-o x.csv: exit {rc}, stdout {out[:80]!r}")
    out_json = os.path.join(d, "ranked.json")
    rc, out, err = run(base + ["-o", out_json])
    check(rc == 0 and json.load(open(out_json))["schema"] == "instbench.rank/v2", f"-o x.json: exit {rc} {err}")
    before = open(out_json).read()
    rc, out, err = run(base + ["--columns", "nope", "-o", out_json])
    check(rc == 2 and open(out_json).read() == before, "a refused run touched the -o file")
    rc, out, err = run([os.path.join(d, "nothing-here"), "--source", prices, "-o", out_json])
    check(rc == 1 and open(out_json).read() == before, f"a run with nothing to rank touched the -o file: {rc}")
    # a run that fails after the ranking (the chart cannot be written, nothing priced) leaves it too
    before = '{"a file the user had": true}\n'
    with open(out_json, "w") as f:
        f.write(before)
    rc, out, err = run(base + ["-o", out_json, "--plot", "/dev/full"])
    check(rc == 1 and open(out_json).read() == before, f"a failed chart: exit {rc}, the -o file touched: {err[-200:]}")
    box = json.load(open(next(os.path.join(res, f) for f in sorted(os.listdir(res)) if f.endswith(".json"))))
    box["instance"]["type"], box["instance"]["hostname"] = None, "box"
    fx.write_json(os.path.join(d, "box", "box.json"), box)
    rc, out, err = run([os.path.join(d, "box"), "--source", prices, "-o", out_json])
    check(rc == 1 and open(out_json).read() == before and "not ranked: " in err and "--price box=USD" in err,
          f"nothing priced: exit {rc}, the -o file touched or the reasons not said: {err[-300:]}")
    # the ranking never replaces a result it read, nor the report with its chart
    victim = os.path.join(d, "box", "box.json")
    kept = open(victim).read()
    rc, out, err = run([os.path.join(d, "box"), "--source", prices, "--price", "box=1", "-o", victim])
    check(rc == 2 and open(victim).read() == kept and "an input" in err, f"-o naming an input: exit {rc}: {err[-200:]}")
    rc, out, err = run([os.path.join(d, "box"), "--source", prices, "--price", "box=1", "--plot", victim])
    check(rc == 2 and open(victim).read() == kept, f"--plot naming an input: exit {rc}: {err[-200:]}")
    rc, out, err = run(base + ["-o", out_json, "--plot", os.path.join(d, "box", "..", "ranked.json")])
    check(rc == 2 and open(out_json).read() == before and "name one file" in err, f"-o and --plot one file: exit {rc}")
    check(not [f for f in os.listdir(d) if f.startswith(".ranked") or ".tmp" in f], f"temporary files left: {os.listdir(d)}")

    missing = os.path.join(d, "no-such-dir", "rank.csv")
    rc, out, err = run(base + ["-o", missing])
    check(rc == 2 and "no-such-dir" in err and "--create-dirs" in err and not os.path.exists(os.path.dirname(missing)),
          f"-o into a missing directory: exit {rc}: {err}")
    rc, out, err = run(base + ["--plot", os.path.join(d, "no-plot-dir", "r.svg"), "--format", "json"])
    check(rc == 2 and not os.path.exists(os.path.join(d, "no-plot-dir")), f"--plot into a missing directory: {rc}")
    rc, out, err = run(base + ["-o", missing, "--create-dirs"])
    check(rc == 0 and open(missing).read() == csv_out, f"-o with --create-dirs: exit {rc}: {err}")

    # ---- the default input ----
    cwd = os.path.join(d, "work")
    os.makedirs(cwd)
    rc, out, err = run(["--source", prices, "--format", "json"], cwd=cwd)
    check(rc == 2 and "instbench-results" in err, f"no RESULT and no ./instbench-results/: exit {rc}: {err}")
    shutil.copytree(res, os.path.join(cwd, "instbench-results"))
    rc, out, err = run(["--source", prices, "--format", "json", "--samples", str(TARGET)], cwd=cwd)
    check(rc == 0 and [r["configuration"] for r in json.loads(out)["rows"]] == [r["configuration"] for r in doc["rows"]],
          f"rank with no RESULT does not read ./instbench-results/: exit {rc}: {err[-300:]}")

print("rank_machine_output: " + ("all checks passed" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
