#!/bin/sh
# Benchmark of `instbench rank` over 10,000 result files (target: under a second).
# Generates the files (complete instbench.result/v1 documents, ~2.5 KB each: 24 instance types,
# 1-8 nodes, 2 regions, 2 workloads, a few corrupt files) in a temporary directory, then times
# `instbench rank DIR --source snapshot --samples ... --format json` best of 3 (warm page cache)
# and prints the figure.
# usage: scripts/bench/bench_rank.sh [INSTBENCH] [N_FILES]      (default: build/instbench, 10000)
set -eu
BIN=${1:-build/instbench}
N=${2:-10000}
[ -x "$BIN" ] || { echo "bench_rank: no instbench binary at $BIN (build first, or pass its path)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

/usr/bin/python3 - "$T/results" "$N" "$HERE/../../tests/rank" <<'PY'
import json, os, random, sys
sys.path.insert(0, sys.argv[3])
import rank_fixtures as fx
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out)
rnd = random.Random(0)
for i in range(n):
    fp = "b" * 64 if i % 10 == 0 else "a" * 64
    r = fx.sweep_result(i, rnd, fingerprint=fp)
    with open(os.path.join(out, f"run{i:05d}.json"), "w") as f:
        if i % 997 == 0:
            f.write(json.dumps(r)[:100])   # a truncated file now and then
        else:
            json.dump(r, f, indent=1)
PY
du -sh "$T/results" | awk '{print "generated '"$N"' result files, " $1}'

# Timed in Python (no bc dependency): wall time of the whole process, best of 3.
/usr/bin/python3 - "$BIN" "$T/results" "$N" <<'PY'
import json, subprocess, sys, time
binary, results, n = sys.argv[1:4]
times = []
for i in range(3):
    t0 = time.perf_counter()
    p = subprocess.run([binary, "-q", "rank", results, "--source", "snapshot", "--samples", "128116700",
                        "--format", "json"], capture_output=True)
    times.append(time.perf_counter() - t0)
    if p.returncode != 0:
        sys.exit(f"instbench rank failed (exit {p.returncode}): {p.stderr.decode()[-500:]}")
    print(f"run {i + 1}: {times[-1]:.3f} s")
d = json.loads(p.stdout)
print(f"instbench rank over {n} result files: best of 3 = {min(times):.3f} s "
      f"({sum(r['rank'] is not None for r in d['rows'])} ranked rows from {d['inputs']['results']} results, {d['inputs']['skipped']} skipped; "
      f"target < 1 s)")
PY
