#!/usr/bin/env bash
# Benchmark: one `instbench prices --source live` for 10 instance types x 2 regions (on-demand, spot,
# placement scores: 44 requests, none depending on another) against the fake AWS
# (tests/fakes/aws_fake_server.py, every signature checked with botocore) with 50 ms added per response,
# against the one-round-trip floor.  The half of issue 22's scripts/bench/bench_s3.sh about prices.
#
# Prints the median wall time of --runs runs, split into the fake AWS's own time (first request
# received to last answered: the latency plus its botocore signature checks, serialised by
# Python) and instbench's, the floor (dependency depth x latency: one round trip of --latency-ms,
# since no call waits for another), their ratio (target <= 3), a run asking for one price (one
# request: process start-up + one round trip, the floor as this machine reaches it), and the
# server's counts for the run: requests, connections, sequential round trips (the longest chain of
# requests each sent after the previous answer), most requests in flight together.
#
# usage: scripts/bench/bench_prices_latency.sh [--latency-ms N] [--runs N] [--instbench PATH]
#   --latency-ms   added latency per response (default 50)
#   --runs         runs to take the median of (default 5)
#   --instbench    the binary (default: build/instbench, else the first build*/instbench found)
# Environment: PRICE_DATA (default data/, the vendored price table).
set -euo pipefail
cd "$(dirname "$0")/../.."

latency=50 runs=5 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --latency-ms) latency=$2; shift ;;
    --runs) runs=$2; shift ;;
    --instbench) bin=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench_prices_latency: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
. scripts/bench/fake_aws_lib.sh
find_instbench bench_prices_latency
csv=${PRICE_DATA:-data}/aws-accelerated-prices.csv
[ -r "$csv" ] || { echo "bench_prices_latency: $csv is missing (set PRICE_DATA)" >&2; exit 1; }

fake_aws_workdir

fake_aws_start bench_prices_latency --prices "$csv" --latency-ms "$latency" --timeout 600

/usr/bin/python3 - "$bin" "$csv" "$latency" "$runs" "$ep_port" "$work" <<'EOF'
import csv, json, os, resource, statistics, subprocess, sys, time, urllib.request
binary, path, latency_ms, runs, port, work = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), \
    sys.argv[5], sys.argv[6]
ep = "http://127.0.0.1:%s" % port
regions = ["us-east-1", "us-west-2"]
have = {}
for r in csv.DictReader(open(path, newline="")):
    if r["on_demand_usd_per_hour"] and r["spot_usd_per_hour"]:
        have.setdefault(r["instance_type"], set()).add(r["region"])
types = sorted(t for t, rs in have.items() if set(regions) <= rs)[:10]
env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
env.update(AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
           AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.path.join(work, "none"),
           AWS_SHARED_CREDENTIALS_FILE=os.path.join(work, "none"), AWS_ENDPOINT_URL=ep,
           XDG_CACHE_HOME=os.path.join(work, "cache"))


def call(p, body=None):
    req = urllib.request.Request(ep + p, data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def timed(args):
    """RUNS runs of `instbench prices ARGS`: per run (wall s, the server's span s, its counts)."""
    out = []
    for _ in range(runs):
        call("/__control", {"reset_stats": True})
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.run([binary, "prices", "--source", "live", "--format", "json"] + args, env=env,
                           capture_output=True, text=True)
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        if p.returncode != 0:
            sys.exit("bench_prices_latency: prices failed:\n" + p.stderr[-2000:])
        st = call("/__stats")
        st["connections"] -= 1   # the /__stats request's own
        if st["signature_failures"] or st["auth_failures"]:
            sys.exit("bench_prices_latency: signature/auth failures: %r" % st)
        st["cpu_s"] = cpu
        out.append((wall, st["span_s"], st))
    return out


def med(xs):
    return statistics.median(xs)


full = timed(["--instance-types", ",".join(types), "--region", ",".join(regions)])
one = timed(["--instance-types", types[0], "--region", regions[0], "--market", "on-demand"])
walls, spans, own = [w for w, _, _ in full], [s for _, s, _ in full], [w - s for w, s, _ in full]
counts = [st for _, _, st in full]
ideal = 1 * latency_ms / 1000   # no call of prices depends on another
print("instbench prices, %d types x %d regions: %6.3f s  median of %d (best %.3f s); %d requests on %d "
      "connections" % (len(types), len(regions), med(walls), runs, min(walls), counts[0]["requests"],
                       med([st["connections"] for st in counts])))
print("  of which the fake AWS              : %6.3f s  (first request received to last answered: the latency"
      " plus its Python signature checks)" % med(spans))
print("  of which instbench                 : %6.3f s  (the rest: start-up, signing, parsing, output, cache)"
      % med(own))
print("instbench's CPU time (user + system) : %6.3f s  median: what it costs whatever the load"
      % med([st["cpu_s"] for st in counts]))
print("round trips one after another        : %s  (per run; the dependency depth is 1)"
      % " ".join(str(st["sequential_rounds"]) for st in counts))
print("one-round-trip floor                 : %6.3f s  (%.0f ms added per response)" % (ideal, latency_ms))
print("ratio                                : %6.2fx  (best run %.2fx; target <= 3x)"
      % (med(walls) / ideal, min(walls) / ideal))
print("one price (1 request, same harness)  : %6.3f s  median (start-up + one round trip)" % med([w for w, _, _ in one]))
EOF
