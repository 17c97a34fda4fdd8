#!/usr/bin/env python3
"""The prices CSV opened in a spreadsheet: LibreOffice Calc (headless) converts real `instbench
prices --format csv` output to xlsx, imported as docs/usage.md tells users to (comma-separated,
UTF-8, language English (USA), "Detect special numbers" on), and openpyxl reads it back: every
numeric column holds numbers equal to the CSV text (negative savings too), text stays the same
text (interruption labels such as 5-10% are not turned into dates or numbers), empty cells are
empty, and the *_utc time columns are date-times.  (With "Detect special numbers" off, the
conversion's default, LibreOffice 7.4 reads 2026-11-21 00:00:00 as text, hence docs/usage.md's
advice; Excel reads it as a date-time.)  Usage: prices_spreadsheet.py INSTBENCH
Exits 77 (ctest: skipped) when LibreOffice is not installed."""
import csv
import datetime
import io
import os
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import absent_path, check, failures  # noqa: E402
ABSENT = absent_path()

BIN = sys.argv[1]
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
if not SOFFICE:
    print("SKIP: LibreOffice (soffice) is not installed; scripts/bootstrap.sh --test-deps installs libreoffice-calc-nogui")
    sys.exit(77)
import openpyxl  # noqa: E402

TEXT = {"instance_type", "region", "on_demand_source", "spot_min_availability_zone", "spot_source",
        "interruption_label", "accelerator", "spot_min_zone_type"}
# CSV import options (LibreOffice's filter string): separator ',' (44), quote '"' (34), UTF-8 (76),
# from line 1, default column types, language English (USA) (1033: '.' decimals whatever the
# locale), quoted fields not forced to text, detect special numbers (dates and times).
IMPORT = "CSV:44,34,76,1,,1033,false,true"


def convert(tmp, name, text, infilter):
    src = os.path.join(tmp, name + ".csv")
    with open(src, "w", newline="") as f:
        f.write(text)
    argv = [SOFFICE, "-env:UserInstallation=file://" + os.path.join(tmp, "profile"), "--headless"]
    argv += ["--infilter=" + infilter] if infilter else []
    p = subprocess.run(argv + ["--convert-to", "xlsx", "--outdir", tmp, src], capture_output=True, text=True,
                       timeout=300)
    out = os.path.join(tmp, name + ".xlsx")
    check(p.returncode == 0 and os.path.exists(out), f"soffice: exit {p.returncode}: {p.stderr[-400:]}")
    return list(openpyxl.load_workbook(out).active.iter_rows(values_only=True)) if os.path.exists(out) else []


env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
env.update(AWS_EC2_METADATA_DISABLED="true", HOME=ABSENT, XDG_CACHE_HOME=ABSENT)
# ca-central-1: the advisor's -62 % saving for p5.48xlarge (a negative number must stay a number)
p = subprocess.run([BIN, "prices", "--source", "snapshot", "--region", "us-east-1,ca-central-1", "--format", "csv",
                    "--nodes", "4,1,2", "--instance-types", "g5.xlarge,p5.48xlarge,c7i.*"],
                   capture_output=True, text=True, env=env, timeout=120)
check(p.returncode == 0, f"prices --format csv: exit {p.returncode}: {p.stderr}")
rows = list(csv.reader(io.StringIO(p.stdout)))
header = rows[0] if rows else []
check(any(h.endswith("_utc") for h in header), f"no _utc time column: {header}")

def check_sheet(sheet, how):
    check(len(sheet) == len(rows) and (not sheet or list(sheet[0]) == header), f"{how} the sheet's rows or header differ")
    numbers = 0
    for r, (want, got) in enumerate(zip(rows[1:], sheet[1:]), 2):
        for col, text, cell in zip(header, want, got):
            where = f"{how} row {r} {col}"
            if text == "":
                check(cell is None, f"{where}: empty in CSV, {cell!r} in the sheet")
            elif col.endswith("_utc"):
                when = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")
                check(isinstance(cell, datetime.datetime) and cell == when, f"{where}: {cell!r} is not the date-time {text}")
            elif col in TEXT:
                check(cell == text, f"{where}: text {text!r} became {cell!r}")
            else:
                # Calc keeps 15 significant digits
                ok = isinstance(cell, (int, float)) and not isinstance(cell, bool) and \
                    abs(cell - float(text)) <= 1e-14 * max(1.0, abs(float(text)))
                check(ok, f"{where}: {text!r} is {cell!r} in the sheet, not that number")
                numbers += ok
    check(numbers > 100, f"{how} only {numbers} numbers seen")


check(any(w[header.index("interruption_savings_pct")] == "-62" for w in rows[1:]), "no negative saving in the CSV")
# Calc's plain --convert-to (its default import: what a user gets opening the file), and the
# filter docs/usage.md gives for a decimal-comma locale.
with tempfile.TemporaryDirectory() as tmp:
    check_sheet(convert(tmp, "prices", p.stdout, None), "default import:")
    check_sheet(convert(tmp, "prices", p.stdout, IMPORT), "with " + IMPORT + ":")

print(f"prices_spreadsheet: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
