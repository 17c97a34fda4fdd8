"""`instbench rank` stays bounded in memory and in output on big or endless inputs:
- a 60 MiB JSON array of results peaks under 200 MB RSS (about 3x its size; parsing the array
  whole took 2.8 GB) and every element is counted;
- a .jsonl of 40 MiB is streamed: its peak stays under 3x the largest line plus the results;
- `rank -` fed /dev/zero stops at once with a reason, in little memory;
- a million junk array elements give 20 warning lines and one count per reason, not a million.
Peak RSS is the child's ru_maxrss (kernel-measured).
Usage: rank_memory.py INSTBENCH [--no-rss-bounds]  (the latter for sanitizer builds, whose peaks
are the sanitizer's quarantine and shadow memory: counts and cut-offs are still checked)"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
RSS_BOUNDS = "--no-rss-bounds" not in sys.argv[2:]
from testlib import check, failures


# Runs the command in a fresh Python child whose only child is instbench, so RUSAGE_CHILDREN's
# ru_maxrss there is instbench's peak alone; prints it as the last stderr line.
_MEASURE = """import os, resource, subprocess, sys
src = os.environ.get("RANK_MEMORY_STDIN")
p = subprocess.run(sys.argv[1:], stdin=open(src, "rb") if src else subprocess.DEVNULL, capture_output=True)
sys.stdout.buffer.write(p.stdout)
sys.stderr.buffer.write(p.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(p.returncode)
"""


def run_measured(args, stdin=None):
    env = dict(os.environ, RANK_MEMORY_STDIN=stdin or "")
    p = subprocess.run([sys.executable, "-c", _MEASURE, BIN, "rank"] + args, capture_output=True, timeout=300,
                       env=env)
    err = p.stderr.decode(errors="replace").rstrip("\n").split("\n")
    return p.returncode, p.stdout.decode(errors="replace"), "\n".join(err[:-1]), int(err[-1]) * 1024


with tempfile.TemporaryDirectory() as d:
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45})]))
    good = fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 330.0)

    # ~60 MiB array: results padded with a long warning string, so each element is a few KiB
    good["measurement"]["warnings"] = ["x" * 3000]
    one = json.dumps(good)


    def runs(n):
        """N distinct runs (a copy of one run counts once): each its own throughput."""
        out = []
        for i in range(n):
            good["measurement"]["samples_per_second"] = 330.0 + i * 1e-3
            out.append(json.dumps(good))
        return out


    n = (60 << 20) // (len(one) + 1)
    arr = os.path.join(d, "big.json")
    with open(arr, "w") as f:
        f.write("[" + ",".join(runs(n)) + "]")
    size = os.path.getsize(arr)
    rc, out, err, rss = run_measured([arr, "--source", prices, "--format", "json"])
    check(rc == 0, f"60 MiB array: exit {rc}: {err[-300:]}")
    if rc == 0:
        check(json.loads(out)["inputs"]["results"] == n, f"60 MiB array: {json.loads(out)['inputs']} != {n} results")
    check(not RSS_BOUNDS or rss < 200e6, f"60 MiB array ({size / 2**20:.0f} MiB): peak RSS {rss / 1e6:.0f} MB >= 200 MB")
    print(f"60 MiB array: {n} results, peak RSS {rss / 1e6:.0f} MB")

    # ~40 MiB of JSON lines: streamed, so memory is a line at a time plus the results
    jl = os.path.join(d, "big.jsonl")
    n2 = (40 << 20) // (len(one) + 1)
    with open(jl, "w") as f:
        f.write("\n".join(runs(n2)) + "\n")
    rc, out, err, rss2 = run_measured([jl, "--source", prices, "--format", "json"])
    check(rc == 0 and json.loads(out)["inputs"]["results"] == n2, f"40 MiB jsonl: exit {rc}: {err[-300:]}")
    check(not RSS_BOUNDS or rss2 < 32e6, f"40 MiB jsonl: peak RSS {rss2 / 1e6:.0f} MB >= 32 MB (read whole, not streamed?)")
    print(f"40 MiB jsonl: {n2} results, peak RSS {rss2 / 1e6:.0f} MB")

    # endless binary stdin: cut off at once
    rc, out, err, rss3 = run_measured(["-", "--source", prices], stdin="/dev/zero")
    check(rc == 1 and "binary data" in err, f"rank - < /dev/zero: exit {rc}: {err[-300:]}")
    check(not RSS_BOUNDS or rss3 < 100e6, f"rank - < /dev/zero: peak RSS {rss3 / 1e6:.0f} MB")

    # a million junk elements: warnings capped, then counted
    junk = os.path.join(d, "junk.json")
    with open(junk, "w") as f:
        f.write("[" + ",".join(["1"] * 1000000) + "," + json.dumps(good) + "]")
    rc, out, err, _ = run_measured([junk, "--source", prices, "--format", "json"])
    lines = err.split("\n")
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 1, f"junk array: exit {rc}: {err[-300:]}")
    check(len([x for x in lines if x.startswith("warning: skipped")]) == 20, f"junk array: {len(lines)} stderr lines")
    check(any("999980 more skipped: not a JSON object" in x for x in lines), f"junk array: no closing count: {lines[-3:]}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank_memory: ok" + ("" if RSS_BOUNDS else " (RSS bounds not checked: sanitizer build)"))
