"""`instbench rank` counts each result once:
- CPU and CUDA runs (or two GPU models) on one instance type are separate configurations, never
  one median;
- a result file with a key given twice is refused, naming the key.
Results are synthetic (rank_fixtures.py, schemas/result-v1.json).  Usage: rank_counting.py INSTBENCH"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def rank(args, stdin=None, timeout=20):
    """(exit, JSON document or None, stderr, seconds)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([BIN, "rank", "--format", "json", "--market", "on-demand"] + args, stdin=stdin,
                           capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, f"timed out after {timeout} s", timeout
    dt = time.monotonic() - t0
    err = p.stderr.decode(errors="replace")
    check(p.returncode >= 0 and "Sanitizer" not in err and "runtime error:" not in err,
          f"rank {args}: crashed or sanitizer report:\n{err[-2000:]}")
    doc = json.loads(p.stdout) if p.returncode == 0 else None
    return p.returncode, doc, err, dt


RESULT = fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 330.0)


def backends_apart(d, prices):
    res = os.path.join(d, "mixed")
    runs = [fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 1000.0),
            fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 1020.0, timestamp="2026-11-21T11:00:00Z"),
            fx.result("g5.xlarge", "us-east-1", 1, 0, "", 10.0, backend="cpu", timestamp="2026-11-21T12:00:00Z"),
            fx.result("g5.xlarge", "us-east-1", 1, 0, "", 12.0, backend="cpu", timestamp="2026-11-21T13:00:00Z")]
    for i, r in enumerate(runs):
        fx.write_json(os.path.join(res, f"{i}.json"), r)
    rc, doc, err, _ = rank([res, "--prices", prices])
    if check(rc == 0, f"mixed backends: exit {rc}: {err}"):
        rows = {r["configuration"]: r for r in doc["rows"]}
        check(sorted(rows) == ["1 x g5.xlarge on-demand (cpu)", "1 x g5.xlarge on-demand (cuda)"],
              f"rows: {sorted(rows)}")
        cuda, cpu = rows.get("1 x g5.xlarge on-demand (cuda)"), rows.get("1 x g5.xlarge on-demand (cpu)")
        if cuda and cpu:
            check(cuda["runs"]["count"] == 2 and cuda["samples_per_second"] == 1010.0, f"cuda row {cuda}")
            check(cpu["runs"]["count"] == 2 and cpu["samples_per_second"] == 11.0, f"cpu row {cpu}")
            check(cpu["accelerator"]["label"] != cuda["accelerator"]["label"], "accelerator labels agree")
        # The table's spread stays the runs' own (2% and 18%), not 199% across backends.
        p = subprocess.run([BIN, "rank", res, "--prices", prices, "--format", "table", "--market", "on-demand"],
                           capture_output=True, text=True)
        check("199" not in p.stdout and "2 (2.0%)" in p.stdout and "2 (18.2%)" in p.stdout,
              f"table spreads:\n{p.stdout}")
    # Two GPU models on one type and backend: apart too, named by device.
    fx.write_json(os.path.join(res, "4.json"), fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 500.0,
                                                         timestamp="2026-11-21T14:00:00Z"))
    rc, doc, err, _ = rank([res, "--prices", prices])
    if check(rc == 0, f"two GPU models: exit {rc}: {err}"):
        names = sorted(r["configuration"] for r in doc["rows"])
        check(names == ["1 x g5.xlarge on-demand (cpu)", "1 x g5.xlarge on-demand (cuda NVIDIA A10G)",
                        "1 x g5.xlarge on-demand (cuda NVIDIA L4)"], f"rows: {names}")


def duplicate_keys(d, prices):
    res = os.path.join(d, "dupkeys")
    os.makedirs(res)
    fx.write_json(os.path.join(res, "good.json"), RESULT)
    text = json.dumps(RESULT)
    cases = {  # file -> (text, the key the reason must name)
        "sps.json": (text.replace('"samples_per_second": 330.0', '"samples_per_second": 330.0, "samples_per_second": 1e6'),
                     "measurement.samples_per_second"),
        "schema.json": ('{"schema": "instbench.result/v1", ' + text[1:], "schema"),
        "device.json": (text.replace('"name": "NVIDIA A10G"', '"name": "NVIDIA A10G", "name": "NVIDIA H100"'),
                        "hardware.devices[0].name"),
    }
    for name, (body, _) in cases.items():
        check(body != text, f"{name}: fixture did not change")
        with open(os.path.join(res, name), "w") as f:
            f.write(body)
    with open(os.path.join(res, "array.json"), "w") as f:   # in an array, the element is refused
        f.write("[" + cases["sps.json"][0] + "]")
    rc, doc, err, _ = rank([res, "--prices", prices])
    check(rc == 0 and doc and doc["inputs"]["results"] == 1, f"duplicate keys: {rc} {err}")
    for name, (_, key) in cases.items():
        lines = [l for l in err.splitlines() if f"/{name}: " in l]
        check(len(lines) == 1 and f'"{key}"' in lines[0] and "twice" in lines[0],
              f"{name}: no skip line naming {key}: {lines}")
    check(any("array.json[0]: " in l and "measurement.samples_per_second" in l for l in err.splitlines()),
          f"array element with a duplicate key not refused: {err}")


with tempfile.TemporaryDirectory() as d:
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45})]))
    for step in (backends_apart, duplicate_keys):
        sub = os.path.join(d, step.__name__)
        os.makedirs(sub)
        step(sub, prices)

if failures:
    print("\n".join(failures))
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank counting: all checks passed")
