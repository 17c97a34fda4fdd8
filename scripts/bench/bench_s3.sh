#!/usr/bin/env bash
# Benchmark (issue 22's bar): ranking 1,000 result objects straight from S3 against copying them with
# the AWS CLI and ranking the copy, side by side in one run, both 50 ms away from the S3 server.
#
# S3 is moto's server (build-venv/moto, made by scripts/ci/moto_env.sh) on a free loopback port with
# signature checking on (an IAM user's keys; tests/fakes/moto_server.py), and scripts/bench/delay_proxy.py in
# front of it adding --latency-ms to every answer.  N result files (tests/rank/rank_fixtures.py's
# result(): 24 instance types, 1-8 nodes, 2 regions, varied samples/s) are uploaded straight to
# moto (boto3, not through the proxy), then, through the proxy and with the same keys:
#   instbench: `instbench rank s3://BUCKET/PREFIX/ --source snapshot --format json`
#   peer:      `aws s3 cp --recursive s3://BUCKET/PREFIX/ DIR` (the AWS CLI's default transfer
#              settings: 10 concurrent requests), then `instbench rank DIR` with the same flags
# Both must rank all N results to the same rows.  Prints the machine, each side's wall time (median
# of --runs, each run alternating the two), the ratio (target >= 10x), the proxy's counts per side
# (requests, connections, most requests waiting at once, round trips one after another), instbench's
# time with no latency added (straight to moto: what the server and instbench take by themselves
# here), its latency floor (round trips x latency), moto's own floor (the same GETs signed and sent
# 128 at a time by curl --aws-sigv4, straight to moto: no client of this server can be faster) and
# the best ratio that floor allows, and, unless --no-prices, the figure of
# scripts/bench/bench_prices_latency.sh (prices, 10 types x 2 regions, at the same latency).
# Everything listens on 127.0.0.1 only; moto, the proxy and the scratch directory are removed on
# every exit (the proxy also stops by itself when its parent goes or after --timeout).
#
# usage: scripts/bench/bench_s3.sh [--objects N] [--latency-ms N] [--runs N] [--instbench PATH]
#                            [--aws PATH] [--no-prices]
#   --objects     result objects under the prefix (default 1000)
#   --latency-ms  added latency per answer (default 50)
#   --runs        runs of each side, alternating; the median is shown (default 1)
#   --instbench   the binary (default: build/instbench, else the first build*/instbench found)
#   --aws         the AWS CLI (default: Debian's /usr/bin/aws, else `aws` on PATH)
#   --no-prices   leave out bench_prices_latency.sh's line
# Environment: INSTBENCH_MOTO_VENV (default build-venv/moto).
set -euo pipefail
cd "$(dirname "$0")/../.."

objects=1000 latency=50 runs=1 bin="" aws="" prices=1
while [ $# -gt 0 ]; do
  case "$1" in
    --objects) objects=$2; shift ;;
    --latency-ms) latency=$2; shift ;;
    --runs) runs=$2; shift ;;
    --instbench) bin=$2; shift ;;
    --aws) aws=$2; shift ;;
    --no-prices) prices=0 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "bench_s3: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for v in "$objects" "$latency" "$runs"; do
  case "$v" in ''|*[!0-9]*) echo "bench_s3: --objects, --latency-ms and --runs take whole numbers" >&2; exit 2 ;; esac
done
[ "$objects" -ge 1 ] && [ "$runs" -ge 1 ] || { echo "bench_s3: --objects and --runs must be at least 1" >&2; exit 2; }
. scripts/bench/fake_aws_lib.sh
find_instbench bench_s3
if [ -z "$aws" ]; then
  if [ -x /usr/bin/aws ]; then aws=/usr/bin/aws; else aws=$(command -v aws || true); fi
fi
[ -n "$aws" ] && [ -x "$aws" ] || { echo "bench_s3: no AWS CLI (apt-get install awscli, or pass --aws)" >&2; exit 1; }
venv=${INSTBENCH_MOTO_VENV:-build-venv/moto}
[ -x "$venv/bin/moto_server" ] || { echo "bench_s3: $venv/bin/moto_server is missing: run scripts/ci/moto_env.sh" >&2; exit 1; }

work=$(mktemp -d)
child=""
# The driver records the pids of what it starts (moto, the proxy) in $work/pids: stopped here on
# every exit path, whatever became of the driver.  Children run in the background and are waited
# for, so that a signal reaches this trap at once rather than when they are done.
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  if [ -s "$work/pids" ]; then
    while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$work/pids"
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

echo "machine: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "peer: $("$aws" --version 2>&1 | head -1)"

INSTBENCH_MOTO_VENV=$venv /usr/bin/python3 - "$bin" "$aws" "$objects" "$latency" "$runs" "$work" <<'EOF' &
import json, os, random, resource, signal, statistics, subprocess, sys, time
binary, aws, n, latency_ms, runs, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), \
    int(sys.argv[5]), sys.argv[6]
sys.path[:0] = ["tests/fakes", "tests/rank"]
import rank_fixtures as fx          # noqa: E402
med = statistics.median
from moto_server import MotoServer  # noqa: E402

signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # so the with-blocks below stop moto
BUCKET, PREFIX = "bench-results", "sweep/2026-11/"
RANK = ["-q", "rank", "--source", "snapshot", "--format", "json"]
cpu = {}   # program -> CPU seconds of each timed run, in order (instbench: s3, local per run, then bare)


def note_pid(pid):
    with open(os.path.join(work, "pids"), "a") as f:
        f.write("%d\n" % pid)


def make_results(out):
    """N result files, ~2.3 KB each, as scripts/bench/bench_rank.sh makes them (no corrupt ones)."""
    rnd = random.Random(0)
    os.makedirs(out)
    for i in range(n):
        r = fx.sweep_result(i, rnd, host="node%d" % i,
                            timestamp="2026-11-%02dT%02d:%02d:00Z" % (1 + i % 28, i % 24, i % 60))
        with open(os.path.join(out, "run%05d.json" % i), "w") as f:
            json.dump(r, f, indent=1)
    return sorted(os.listdir(out))


UPLOAD = """
import os
from concurrent.futures import ThreadPoolExecutor
src, bucket, prefix = args[0], args[1], args[2]
def put(name):
    with open(os.path.join(src, name), 'rb') as f:
        s3.put_object(Bucket=bucket, Key=prefix + name, Body=f.read())
with ThreadPoolExecutor(4) as ex:
    list(ex.map(put, sorted(os.listdir(src))))
print(sum(o['Size'] for p in s3.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix)
          for o in p.get('Contents', [])))
"""


def start_proxy(target_port):
    pf, stats = os.path.join(work, "proxy.port"), os.path.join(work, "proxy.stats")
    p = subprocess.Popen(["/usr/bin/python3", "scripts/bench/delay_proxy.py", "--target", str(target_port),
                          "--delay-ms", str(latency_ms), "--port-file", pf, "--stats", stats,
                          "--timeout", "1800"])
    note_pid(p.pid)
    for _ in range(100):
        if os.path.exists(pf):
            return p, int(open(pf).read()), stats
        if p.poll() is not None:
            break
        time.sleep(0.1)
    p.kill()
    sys.exit("bench_s3: the delaying proxy did not start")


def proxy_counts(proxy, stats):
    """The proxy's counts since the last call (it writes them on SIGUSR1, then resets)."""
    try:
        os.unlink(stats)
    except FileNotFoundError:
        pass
    proxy.send_signal(signal.SIGUSR1)
    for _ in range(100):
        if os.path.exists(stats):
            return json.load(open(stats))
        time.sleep(0.02)
    return {"connections": 0, "exchanges": 0, "max_waiting": 0, "rounds": 0}


def timed(argv, env):
    """(wall s, stdout); the child's CPU time (user + system) is added to cpu[argv[0]]."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1200)
    wall, r1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.setdefault(argv[0], []).append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    if p.returncode != 0:
        sys.exit("bench_s3: %s failed (exit %d):\n%s" % (" ".join(argv[:3]), p.returncode, p.stderr[-2000:]))
    return wall, p.stdout


def ranked(out):
    d = json.loads(out)
    rows = sorted(json.dumps({k: r.get(k) for k in ("configuration", "market", "samples_per_s", "usd_per_hour")},
                             sort_keys=True) for r in d["rows"])
    return d["inputs"]["results"], rows


with MotoServer() as m:
    note_pid(m.proc.pid)
    src = os.path.join(work, "src")
    names = make_results(src)
    m.create_bucket(BUCKET)
    t0 = time.monotonic()
    size = int(m.s3(UPLOAD, src, BUCKET, PREFIX))
    print("objects: %d results under s3://%s/%s, %.1f MB, uploaded straight to moto in %.1f s"
          % (len(names), BUCKET, PREFIX, size / 1e6, time.monotonic() - t0))
    proxy, port, stats = start_proxy(m.port)
    ep = "http://127.0.0.1:%d" % port
    env = m.env()
    env.update(AWS_ENDPOINT_URL=ep, AWS_DEFAULT_REGION="us-east-1", HOME=work, AWS_PAGER="",
               AWS_CONFIG_FILE=os.path.join(work, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(work, "none"),
               XDG_CACHE_HOME=os.path.join(work, "cache"))

    ours, peers, copies, ranks, counts = [], [], [], [], {"instbench": None, "aws": None}
    for run in range(runs):
        proxy_counts(proxy, stats)
        wall, out = timed([binary] + RANK + ["s3://%s/%s" % (BUCKET, PREFIX)], env)
        counts["instbench"] = proxy_counts(proxy, stats)
        got = ranked(out)
        ours.append(wall)
        dest = os.path.join(work, "copy%d" % run)
        cp, _ = timed([aws, "s3", "cp", "--recursive", "--only-show-errors", "--endpoint-url", ep,
                       "s3://%s/%s" % (BUCKET, PREFIX), dest], env)
        counts["aws"] = proxy_counts(proxy, stats)
        rk, out = timed([binary] + RANK + [dest], env)
        ref = ranked(out)
        peers.append(cp + rk)
        copies.append(cp)
        ranks.append(rk)
        if got != ref or got[0] != n:
            sys.exit("bench_s3: the two sides differ: %d results / %d rows from S3, %d / %d from the copy (of %d)"
                     % (got[0], len(got[1]), ref[0], len(ref[1]), n))
    proxy.terminate()
    proxy.wait(timeout=10)
    # the same command with no latency added, straight to moto: the server's own pace on this machine
    direct = dict(env, AWS_ENDPOINT_URL=m.url)
    bare = med([timed([binary] + RANK + ["s3://%s/%s" % (BUCKET, PREFIX)], direct)[0] for _ in range(runs)])
    # moto's own floor: the same N GETs, signed by curl (--aws-sigv4) and sent 128 at a time straight to
    # moto, no latency and nothing parsed: what any client of this server pays here at the least
    urls = [x for name in names for x in ("-o", "/dev/null", "%s/%s/%s%s" % (m.url, BUCKET, PREFIX, name))]
    fl = []
    for _ in range(runs):
        t0 = time.monotonic()
        p = subprocess.run(["curl", "-sS", "--fail", "--parallel", "--parallel-max", "128", "--aws-sigv4",
                            "aws:amz:us-east-1:s3", "--user", "%s:%s" % (m.access_key, m.secret_key),
                            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"] + urls, capture_output=True, text=True)
        fl.append(time.monotonic() - t0)
        if p.returncode != 0:   # a curl without --aws-sigv4 (before 7.75), or moto refusing it: no line
            fl = []
            break
    floor = med(fl) if fl else None

a, b = med(ours), med(peers)
c = lambda k: ("%(exchanges)d requests on %(connections)d connections, at most %(max_waiting)d waiting at once, "
               "%(rounds)d round trips one after another" % counts[k])
print("latency: %.0f ms added to every answer (scripts/bench/delay_proxy.py in front of moto); %d run%s, medians"
      % (latency_ms, runs, "" if runs == 1 else "s"))
print("instbench rank s3://          : %7.2f s  (%s)" % (a, c("instbench")))
print("aws s3 cp --recursive + rank  : %7.2f s  (copy %.2f s: %s; local rank %.2f s)"
      % (b, med(copies), c("aws"), med(ranks)))
print("ratio                         : %7.1fx  (target >= 10x)" % (b / a))
print("instbench, no latency added   : %7.2f s  (straight to moto: the server's and instbench's own time;"
      " instbench's CPU time per rank s3:// %.2f s)" % (bare, med(cpu[binary][0:2 * runs:2] + cpu[binary][2 * runs:])))
print("instbench's latency floor     : %7.2f s  (%d round trips one after another x %.0f ms)"
      % (counts["instbench"]["rounds"] * latency_ms / 1000, counts["instbench"]["rounds"], latency_ms))
if floor:
    print("moto's own floor              : %7.2f s  (%d signed GETs by curl --parallel, 128 at once, no latency:"
          " no client of this server is faster here)" % (floor, n))
    print("best ratio this server allows : %7.1fx  (the peer's time / moto's own floor)" % (b / floor))
EOF
child=$!
wait "$child"
child=""

if [ "$prices" = 1 ]; then
  # its own fake AWS (the Pricing and EC2 APIs), the same added latency
  scripts/bench/bench_prices_latency.sh --latency-ms "$latency" --runs 3 --instbench "$bin" >"$work/prices.txt" &
  child=$!
  wait "$child"
  child=""
  sed -n 's/^\(instbench prices, .*\)$/\1/p; s/^ratio *: */  prices ratio to the one-round-trip floor: /p' "$work/prices.txt"
fi
