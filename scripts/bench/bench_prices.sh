#!/usr/bin/env bash
# Benchmark: on-demand + spot prices for 40 instance types x 4 regions from the local AWS test
# endpoint (tests/fakes/aws_fake_server.py, every signature checked with botocore) with 50 ms added
# per request, fetched by `instbench prices` and by the AWS CLI scripted as a user would (a loop of
# `aws pricing get-products` per type and region, one `aws ec2 describe-spot-price-history` per
# region with every type).  Prints both wall times and the ratio (target: instbench >= 10x faster),
# checks that both got the same on-demand prices and that no request failed its signature check.
#
# usage: scripts/bench/bench_prices.sh [--quick] [--latency-ms N] [--cli-budget S] [--instbench PATH]
#   --quick        10 types x 2 regions (a smoke run; the target is for the full size)
#   --latency-ms   added latency per request (default 50)
#   --cli-budget   seconds the AWS CLI loop may run (default 240): past it the loop stops and its
#                  total is extrapolated from the invocations done (each costs about the same: a
#                  Python start-up plus one request); the report says so
#   --instbench    the binary (default: build/instbench, else the first build*/instbench found)
# Environment: AWS_CLI (default /usr/bin/aws, Debian's awscli), PRICE_DATA (default data/, the
#              vendored price table).
set -euo pipefail
cd "$(dirname "$0")/../.."

n_types=40 regions=(us-east-1 us-west-2 us-east-2 ap-northeast-1) latency=50 bin="" budget=240
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) n_types=10 regions=(us-east-1 us-west-2) ;;
    --latency-ms) latency=$2; shift ;;
    --instbench) bin=$2; shift ;;
    --cli-budget) budget=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench_prices: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
. scripts/bench/fake_aws_lib.sh
find_instbench bench_prices
aws=${AWS_CLI:-/usr/bin/aws}
command -v "$aws" >/dev/null || { echo "bench_prices: the AWS CLI ($aws) is missing (apt-get install awscli)" >&2; exit 1; }
data=${PRICE_DATA:-data}
csv=$data/aws-accelerated-prices.csv
[ -r "$csv" ] || { echo "bench_prices: $csv is missing (set PRICE_DATA)" >&2; exit 1; }

fake_aws_workdir

# The instance types: those priced on demand in the most of these regions, then by name.
types=$(/usr/bin/python3 - "$csv" "$n_types" "${regions[@]}" <<'EOF'
import csv, sys
path, n, regions = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
have = {}
for r in csv.DictReader(open(path, newline="")):
    if r["region"] in regions and r["on_demand_usd_per_hour"]:
        have.setdefault(r["instance_type"], set()).add(r["region"])
print(" ".join(sorted(have, key=lambda t: (-len(have[t]), t))[:n]))
EOF
)
read -r -a types <<<"$types"

fake_aws_start bench_prices --prices "$csv" --latency-ms "$latency" --timeout 900

export AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
export AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=$work/none AWS_SHARED_CREDENTIALS_FILE=$work/none
export AWS_PAGER="" XDG_CACHE_HOME=$work/cache
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_PRICING AWS_ENDPOINT_URL_EC2 || true

stats() { curl -s "$ep/__stats"; }
reset() { curl -s -X POST -d '{"reset_stats": true}' "$ep/__control" >/dev/null; }
now() { date +%s.%N; }

n_pairs=$(( ${#types[@]} * ${#regions[@]} ))
echo "bench_prices: ${#types[@]} instance types x ${#regions[@]} regions (${regions[*]}), on-demand + spot," \
     "${latency} ms added per request" >&2

# ---- instbench -----------------------------------------------------------------------------
reset
t0=$(now)
AWS_ENDPOINT_URL=$ep "$bin" prices --source live --market both --no-placement-scores --format json \
  --instance-types "$(IFS=,; echo "${types[*]}")" --region "$(IFS=,; echo "${regions[*]}")" \
  >"$work/instbench.json" 2>"$work/instbench.err" || { cat "$work/instbench.err" >&2; exit 1; }
t1=$(now)
stats >"$work/instbench.stats"

# ---- the AWS CLI, as a user would script it ------------------------------------------------
reset
mkdir -p "$work/cli"
t2=$(now) start_s=$(date +%s)
total=$(( ${#types[@]} * ${#regions[@]} + ${#regions[@]} )) done_n=0
for r in "${regions[@]}"; do
  for t in "${types[@]}"; do
    [ $(( $(date +%s) - start_s )) -ge "$budget" ] && break 2
    "$aws" pricing get-products --region us-east-1 --endpoint-url "$ep" --service-code AmazonEC2 \
      --filters "Type=TERM_MATCH,Field=instanceType,Value=$t" "Type=TERM_MATCH,Field=regionCode,Value=$r" \
                "Type=TERM_MATCH,Field=operatingSystem,Value=Linux" "Type=TERM_MATCH,Field=tenancy,Value=Shared" \
                "Type=TERM_MATCH,Field=preInstalledSw,Value=NA" "Type=TERM_MATCH,Field=capacitystatus,Value=Used" \
      --output json >"$work/cli/od_${t}_${r}.json"
    done_n=$((done_n + 1))
  done
  "$aws" ec2 describe-spot-price-history --region "$r" --endpoint-url "$ep" --instance-types "${types[@]}" \
    --product-descriptions Linux/UNIX --start-time "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --output json >"$work/cli/spot_${r}.json"
  done_n=$((done_n + 1))
done
t3=$(now)
stats >"$work/cli.stats"

# ---- report and cross-check ----------------------------------------------------------------
/usr/bin/python3 - "$work" "$t0" "$t1" "$t2" "$t3" "$n_pairs" "$done_n" "$total" <<'EOF'
import glob, json, os, sys
work = sys.argv[1]
t0, t1, t2, t3 = map(float, sys.argv[2:6])
n_pairs, done_n, total = map(int, sys.argv[6:9])
ib, cli_measured = t1 - t0, t3 - t2
cli = cli_measured * total / done_n
si, sc = (json.load(open(os.path.join(work, f))) for f in ("instbench.stats", "cli.stats"))
problems = []
for name, s in (("instbench", si), ("aws cli", sc)):
    if s["signature_failures"] or s["auth_failures"]:
        problems.append("%s: %d signature / %d auth failures" % (name, s["signature_failures"], s["auth_failures"]))
# the same on-demand prices from both
mine = {(r["instance_type"], r["region"]): r for r in json.load(open(os.path.join(work, "instbench.json")))["prices"]}
for path in glob.glob(os.path.join(work, "cli", "od_*.json")):
    t, r = os.path.basename(path)[3:-5].rsplit("_", 1)
    docs = [json.loads(p) for p in json.load(open(path))["PriceList"]]
    usd = None
    for d in docs:
        for offer in d["terms"]["OnDemand"].values():
            for dim in offer["priceDimensions"].values():
                if dim["unit"] == "Hrs":
                    usd = float(dim["pricePerUnit"]["USD"])
    got = mine[(t, r)]["on_demand"]
    if (usd is None) != (got is None) or (usd is not None and abs(usd - got["usd_per_hour"]) > 1e-9):
        problems.append("%s %s: aws cli %r, instbench %r" % (t, r, usd, got))
# and the same cheapest spot price per (type, region)
for path in glob.glob(os.path.join(work, "cli", "spot_*.json")):
    r = os.path.basename(path)[5:-5]
    latest = {}
    for h in json.load(open(path))["SpotPriceHistory"]:
        k = (h["InstanceType"], h["AvailabilityZone"])
        if k not in latest or h["Timestamp"] > latest[k][0]:
            latest[k] = (h["Timestamp"], float(h["SpotPrice"]))
    for (t, az), (_, p) in latest.items():
        zones = {z["availability_zone"]: z["usd_per_hour"] for z in (mine[(t, r)]["spot"] or {"zones": []})["zones"]}
        if abs(zones.get(az, -1) - p) > 1e-9:
            problems.append("%s %s %s: aws cli spot %r, instbench %r" % (t, r, az, p, zones.get(az)))
print("instbench prices : %7.2f s  (%d requests, at most %d in flight)" % (ib, si["requests"], si["max_in_flight"]))
if done_n == total:
    print("aws cli loop     : %7.2f s  (%d requests, %d CLI invocations)" % (cli, sc["requests"], done_n))
else:
    print("aws cli loop     : %7.2f s  extrapolated: %d of %d invocations took %.2f s (--cli-budget)"
          % (cli, done_n, total, cli_measured))
print("speed-up         : %7.1fx  (target >= 10x; %d (type, region) pairs, on-demand + spot)" % (cli / ib, n_pairs))
for p in problems[:10]:
    print("MISMATCH:", p)
sys.exit(1 if problems else 0)
EOF
