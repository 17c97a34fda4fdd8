"""Every command's tables fit the terminal: each command runs on a real pseudo-terminal of 80, 120
and 200 columns (its size set with TIOCSWINSZ, COLUMNS unset) and no line it prints on stdout is
wider than the terminal, measured here in characters after stripping colour escapes.  The columns
left out are named by a note, --wide brings them back (a line wider than 80 appears), and through
a pipe every column is printed.
Usage: cli_width.py INSTBENCH TEST_DATA_DIR"""
import os
import re
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import absent_path, check, failures, on_pty, scratch_dir  # noqa: E402
ABSENT = absent_path()

BIN, DATA = sys.argv[1], sys.argv[2]
ESC = re.compile(r"\x1b\[[0-9;]*m")
UNITS = re.compile(r"^(vCPUs|AZs|GiB|\$/h)$|/s$")
TINY = ["--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "32", "--patch-size", "8",
        "--embed-dim", "64", "--heads", "2", "--classes", "10", "--batch-size", "4", "--steps", "2", "--warmup", "1"]
ENV = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
ENV.update(INSTBENCH_CPU_PEAK_SECONDS="0.05", NO_COLOR="1", AWS_CONFIG_FILE=ABSENT,
           AWS_SHARED_CREDENTIALS_FILE=ABSENT, AWS_EC2_METADATA_DISABLED="true")


def width_run(args, cols):
    """stdout on a terminal COLS wide; returns (exit code, stdout lines)."""
    rc, out = on_pty([BIN, *args], ENV, cols=cols)
    text = ESC.sub("", out.decode(errors="replace")).replace("\r", "")
    return rc, text.split("\n")


tmp = scratch_dir("instbench-width-")
results = os.path.join(tmp, "results")
os.makedirs(results)
# two results the snapshot prices (identity given by flags) and one priced by the user
for i, (typ, extra) in enumerate((("g5.xlarge", []), ("g5.12xlarge", ["--count", "4"]), (None, ["--hourly-cost", "0.4"]))):
    ident = ["--instance-type", typ, "--region", "us-east-1", "--market", "on-demand",
             "--identity-mismatch", "ok"] if typ else []   # a CPU run recorded under a GPU type on purpose
    p = subprocess.run([BIN, "-q", "measure", *TINY, *ident, *extra, "--output", os.path.join(results, f"r{i}.json")],
                       capture_output=True, text=True, env=ENV, timeout=300)
    check(p.returncode == 0, f"measure {typ}: exit {p.returncode}: {p.stderr[-300:]}")

PRICES = ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge,g5.12xlarge,p4d.24xlarge,g6e.48xlarge",
          "--region", "us-east-1,us-west-2"]
COMMANDS = [["models"], ["models", "--layout"], PRICES,
            ["rank", "--source", "snapshot", "--samples", "1e9", results],
            ["verify", "--reference", os.path.join(DATA, "ref_a_adam_bf16.safetensors")],
            ["measure", *TINY, "--output", os.path.join(tmp, "m.json")]]
for cols in (80, 120, 200):
    for args in COMMANDS:
        rc, lines = width_run(args, cols)
        what = f"{cols} columns: instbench {' '.join(args[:3])}"
        check(rc == 0, f"{what}: exit {rc}")
        check(len(lines) > 3, f"{what}: printed {len(lines)} lines")
        wide = [ln for ln in lines if len(ln) > cols]
        check(not wide, f"{what}: {len(wide)} line(s) wider than {cols}, e.g. {wide[:1]}")
        # one header case in every table: upper case, units and AWS's plurals keeping theirs
        for i in range(1, len(lines)):
            if lines[i] and set(lines[i]) <= {"-", " "}:
                words = [UNITS.sub("", w) for w in lines[i - 1].split()]
                check(all(w == w.upper() for w in words), f"{what}: header not upper case: {lines[i - 1]!r}")

# at 80 columns the prices and rank tables leave columns out and say so; --wide brings them back
for args in (PRICES, ["rank", "--source", "snapshot", "--samples", "1e9", results]):
    _, narrow = width_run(args, 80)
    check(any(re.match(r"\(\d+ more columns?: --wide", ln) for ln in narrow), f"{args[0]} at 80: no note: {narrow}")
    _, full = width_run(args + ["--wide"], 80)
    check(any(len(ln) > 80 for ln in full), f"{args[0]} --wide at 80: no line wider than 80")
    piped = subprocess.run([BIN, *args, "--format", "table"], capture_output=True, text=True, env=ENV)
    check(piped.returncode == 0 and "more column" not in piped.stdout and
          ("ADVISOR SAVINGS" if args is PRICES else "RUNS (SPREAD)") in piped.stdout,
          f"{args[0]} through a pipe must print every column: {piped.stdout[:300]}")
# the measured figure outlives the derived ones: at 80 columns rank keeps SAMPLES/s whenever it
# keeps SAMPLES/$ (issue 41: it dropped the measurement and kept EFF. SAMPLES/$)
for cols in (60, 80):
    _, narrow = width_run(["rank", "--source", "snapshot", "--samples", "1e9", "--market", "both", results], cols)
    head = next((ln for i, ln in enumerate(narrow[:-1]) if narrow[i + 1].startswith("----")), "")
    check("SAMPLES/s" in head or "SAMPLES/$" not in head, f"rank at {cols}: SAMPLES/s dropped before SAMPLES/$: {head!r}")

# at 50 columns the table cannot fit (its five never-dropped columns need about 70), but every line
# around it, the header lines and the notes under it, wraps to the terminal
_, narrow = width_run(["rank", "--source", "snapshot", "--samples", "1e9", "--market", "both", results], 50)
top = next((i for i in range(len(narrow) - 1) if narrow[i + 1].startswith("----")), None)
end = next((i for i in range(top or 0, len(narrow)) if not narrow[i].strip()), len(narrow)) if top is not None else 0
prose = [ln for i, ln in enumerate(narrow) if top is None or not top <= i < end]
check(top is not None and any(ln.startswith("workload ") for ln in prose) and
      any(ln.startswith("* Pareto frontier") for ln in prose), f"rank at 50: no table or no header/notes: {narrow}")
wide = [ln for ln in prose if len(ln) > 50]
check(not wide, f"rank at 50: {len(wide)} line(s) outside the table wider than 50, e.g. {wide[:2]}")

# --columns picks and orders; an unknown key is a usage error naming the keys
_, picked = width_run(PRICES + ["--columns", "spot_min_usd_per_hour,instance_type"], 80)
header = next((ln for ln in picked if ln.startswith("SPOT")), "")
check(re.match(r"SPOT \$/h \(LOWEST\)\s+INSTANCE TYPE$", header), f"--columns spot_min_usd_per_hour,instance_type: header {header!r}")
p = subprocess.run([BIN, *PRICES, "--columns", "instance_type,nope"], capture_output=True, text=True, env=ENV)
check(p.returncode == 2 and "'nope' is not a column (columns: instance_type, region, on_demand_usd_per_hour" in p.stderr,
      f"--columns nope: {p.stderr}")
p = subprocess.run([BIN, *PRICES, "--columns", "instance_type,regoin"], capture_output=True, text=True, env=ENV)
check(p.returncode == 2 and "'regoin' is not a column; did you mean region?" in p.stderr, f"--columns regoin: {p.stderr}")

print("cli_width: " + ("all checks passed" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
