"""`instbench rank` counts each result once:
- the same file or run reached twice (a directory given twice, `dir` and `dir/r.json`, a symlinked
  directory, a hard link, a copy, the --append line beside the file, stdin redirected from it) is
  one run, and stderr says "N duplicates ignored";
- a tree of directory symlinks (24 levels of two links each: 2^24 paths): links to directories are
  not followed without --follow (2 links skipped, 1 result), and with it each directory is read
  once (24 duplicates, one per directory reached twice; a walk of every path would count 2^24 and
  take minutes, past the hang guard); loops and depth are bounded;
- CPU and CUDA runs (or two GPU models) on one instance type are separate configurations, never
  one median;
- a result file with a key given twice is refused, naming the key.
Results are synthetic (rank_fixtures.py, schemas/result-v1.json).  Usage: rank_counting.py INSTBENCH"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
from testlib import check, failures


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


def duplicates_said(err):
    m = re.search(r"(\d+) duplicates? ignored", err)
    return int(m.group(1)) if m else 0


RESULT = fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 330.0)


def same_run_counts_once(d, prices):
    res = os.path.join(d, "res")
    fx.write_json(os.path.join(res, "r.json"), RESULT)
    os.symlink(res, os.path.join(d, "res-link"))
    shutil.copytree(res, os.path.join(d, "copy"))
    with open(os.path.join(d, "runs.jsonl"), "w") as f:          # what --append writes beside the file
        f.write(json.dumps(RESULT, separators=(",", ":")) + "\n")
    top = os.path.join(d, "top")
    os.makedirs(top)
    os.symlink(res, os.path.join(top, "alias"))
    os.symlink(res, os.path.join(top, "alias2"))
    hard = os.path.join(d, "hard")
    os.makedirs(hard)
    fx.write_json(os.path.join(hard, "r.json"), RESULT)
    os.link(os.path.join(hard, "r.json"), os.path.join(hard, "again.json"))
    r = os.path.join(res, "r.json")
    cases = {
        "directory given twice": [res, res],
        "dir and dir/r.json": [res, r],
        "dir/r.json and dir": [r, res],
        "file given twice": [r, r],
        "a symlink to the directory": [res, os.path.join(d, "res-link")],
        "two links to it, --follow": [top, "--follow"],
        "a copy of the file": [res, os.path.join(d, "copy")],
        "its --append line": [res, os.path.join(d, "runs.jsonl")],
        "a hard link in the directory": [hard],
    }
    for what, args in cases.items():
        rc, doc, err, _ = rank(args + ["--source", prices])
        if not check(rc == 0, f"{what}: exit {rc}: {err}"):
            continue
        runs = fx.ranked(doc)[0]["runs"] if fx.ranked(doc) else None
        check(doc["inputs"]["results"] == 1 and runs == 1,
              f"{what}: counted {doc['inputs']['results']} results, {runs} runs (want 1)")
        dups = doc["inputs"].get("duplicates", 0)
        check(dups >= 1 and duplicates_said(err) == dups, f"{what}: duplicates {dups}, stderr: {err}")
    # stdin redirected from the file named too
    with open(r, "rb") as f:
        rc, doc, err, _ = rank(["-", res, "--source", prices], stdin=f)
    check(rc == 0 and doc["inputs"]["results"] == 1 and duplicates_said(err) == 1, f"stdin and dir: {rc} {err}")
    # Without --follow the links are noted, not followed: nothing found, nothing counted twice.
    rc, doc, err, _ = rank([top, "--source", prices])
    check(rc == 1 and "no usable results" in err and err.count("not followed (--follow") == 2,
          f"links without --follow: exit {rc}: {err}")
    # Two different runs of the configuration stay two.
    fx.write_json(os.path.join(res, "r2.json"), dict(RESULT, timestamp="2026-11-21T11:00:00Z"))
    rc, doc, err, _ = rank([res, res, "--source", prices])
    check(rc == 0 and fx.ranked(doc)[0]["runs"] == 2, f"two runs: {doc and fx.ranked(doc)}")


# A hang guard, not a speed bound: a rank of the symlink trees below takes about 0.1 s, as any
# small rank does; 2^24 paths walked one by one would take minutes.  The counts are the checks.
WALK_GUARD_S = 60


def symlink_fan_out(d, prices):
    levels = 24
    dirs = [os.path.join(d, "fan", f"l{i:02d}") for i in range(levels + 1)]
    for p in dirs:
        os.makedirs(p)
    for i in range(levels):
        for name in ("a", "b"):
            os.symlink(dirs[i + 1], os.path.join(dirs[i], name))
    fx.write_json(os.path.join(dirs[0], "top.json"), dict(RESULT, timestamp="2026-11-21T09:00:00Z"))
    fx.write_json(os.path.join(dirs[-1], "deep.json"), RESULT)
    rc, doc, err, dt = rank([dirs[0], "--source", prices], timeout=WALK_GUARD_S)
    check(rc == 0, f"fan-out without --follow: exit {rc} in {dt:.2f} s: {err[-500:]}")
    if doc:
        check(doc["inputs"]["results"] == 1 and doc["inputs"]["skipped"] == 2,
              f"fan-out without --follow: {doc['inputs']}")
    rc, doc, err, dt = rank([dirs[0], "--follow", "--source", prices], timeout=WALK_GUARD_S)
    check(rc == 0, f"fan-out with --follow: exit {rc} in {dt:.2f} s: {err[-500:]}")
    if doc:
        check(doc["inputs"]["results"] == 2 and fx.ranked(doc)[0]["runs"] == 2,
              f"fan-out with --follow: {doc['inputs']}, runs {fx.ranked(doc)[0]['runs']}")
        dups = doc["inputs"].get("duplicates")
        check(dups == levels, f"fan-out: {dups} duplicates, want {levels}")
    # A loop with --follow: reported once, no hang.
    loop = os.path.join(d, "loop")
    fx.write_json(os.path.join(loop, "r.json"), RESULT)
    os.symlink(loop, os.path.join(loop, "back"))
    rc, doc, err, dt = rank([loop, "--follow", "--source", prices], timeout=WALK_GUARD_S)
    check(rc == 0 and err.count("symlink loop") == 1, f"loop with --follow: {rc} {dt:.2f} s {err}")
    # Depth is bounded: 40 real levels, the result at the bottom is out of reach, said once.
    deep = os.path.join(d, "deep", *[f"d{i}" for i in range(40)])
    fx.write_json(os.path.join(deep, "r.json"), RESULT)
    fx.write_json(os.path.join(d, "deep", "r.json"), RESULT)
    rc, doc, err, dt = rank([os.path.join(d, "deep"), "--source", prices], timeout=30)
    check(rc == 0 and err.count("nesting too deep") == 1, f"depth: {rc} {err[-500:]}")


def backends_apart(d, prices):
    res = os.path.join(d, "mixed")
    runs = [fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 1000.0),
            fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 1020.0, timestamp="2026-11-21T11:00:00Z"),
            fx.result("g5.xlarge", "us-east-1", 1, 0, "", 10.0, backend="cpu", timestamp="2026-11-21T12:00:00Z"),
            fx.result("g5.xlarge", "us-east-1", 1, 0, "", 12.0, backend="cpu", timestamp="2026-11-21T13:00:00Z")]
    for i, r in enumerate(runs):
        fx.write_json(os.path.join(res, f"{i}.json"), r)
    rc, doc, err, _ = rank([res, "--source", prices])
    if check(rc == 0, f"mixed backends: exit {rc}: {err}"):
        rows = {r["configuration"]: r for r in fx.ranked(doc)}
        check(sorted(rows) == ["1 x g5.xlarge on-demand (cpu)", "1 x g5.xlarge on-demand (cuda)"],
              f"rows: {sorted(rows)}")
        cuda, cpu = rows.get("1 x g5.xlarge on-demand (cuda)"), rows.get("1 x g5.xlarge on-demand (cpu)")
        if cuda and cpu:
            check(cuda["runs"] == 2 and cuda["samples_per_second"] == 1010.0, f"cuda row {cuda}")
            check(cpu["runs"] == 2 and cpu["samples_per_second"] == 11.0, f"cpu row {cpu}")
            check(cpu["accelerators"] != cuda["accelerators"], "accelerator labels agree")
        # The table's spread stays the runs' own (2% and 18%), not 199% across backends.
        p = subprocess.run([BIN, "rank", res, "--source", prices, "--format", "table", "--market", "on-demand"],
                           capture_output=True, text=True)
        check("199" not in p.stdout and "2 (2.0%)" in p.stdout and "2 (18.2%)" in p.stdout,
              f"table spreads:\n{p.stdout}")
    # Two GPU models on one type and backend: apart too, named by device.
    fx.write_json(os.path.join(res, "4.json"), fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 500.0,
                                                         timestamp="2026-11-21T14:00:00Z"))
    rc, doc, err, _ = rank([res, "--source", prices])
    if check(rc == 0, f"two GPU models: exit {rc}: {err}"):
        names = sorted(r["configuration"] for r in fx.ranked(doc))
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
    rc, doc, err, _ = rank([res, "--source", prices])
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
    for step in (same_run_counts_once, symlink_fan_out, backends_apart, duplicate_keys):
        sub = os.path.join(d, step.__name__)
        os.makedirs(sub)
        step(sub, prices)

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank counting: all checks passed")
