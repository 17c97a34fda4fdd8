#!/usr/bin/env bash
# The main job on the embedded defaults, with no GPU and no AWS credentials needed:
#   1. measure this machine: CPU backend, vit_tiny_patch16_224, batch 32, bf16, fresh host data
#      every step, a 20 s timed window -> instbench-results/quickstart.json
#   2. prices of the four 1-GPU spot vs one 4-GPU on-demand comparison (g5.xlarge vs g5.12xlarge, us-east-1): live AWS when
#      credentials are present, else the cache, else the shipped snapshot (its date printed)
#   3. rank the result by samples per dollar (on EC2 the type comes from instance metadata; a
#      machine off EC2 has no instance type, so AWS cannot price it: rank says why, and this
#      script prints the exact `rank --price` command that ranks it at your hourly cost)
# Usage: scripts/quickstart.sh [extra `instbench measure` flags]
#   e.g. scripts/quickstart.sh --hourly-cost 0.40   (this machine costs you $0.40 an hour)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/instbench
[ -x "$bin" ] || { echo "quickstart: build first (scripts/bootstrap.sh)" >&2; exit 1; }
mkdir -p instbench-results

echo "== instbench measure (CPU backend, vit_tiny_patch16_224, batch 32, bf16, 20 s)" >&2
"$bin" measure --backend cpu --model vit_tiny_patch16_224 --batch-size 32 --precision bf16 \
  --duration 20 --output instbench-results/quickstart.json --format table "$@"

echo >&2
echo "== instbench prices (4 x g5.xlarge spot vs 1 x g5.12xlarge on-demand)" >&2
"$bin" prices --instance-types g5.xlarge,g5.12xlarge --region us-east-1 --format table

result=instbench-results/quickstart.json
echo >&2
echo "== instbench rank $result" >&2
rank_rc=0
"$bin" rank --format table "$result" || rank_rc=$?   # 1: nothing could be priced (handled below)

# Off EC2, unless --hourly-cost priced it, nothing could: say exactly how to rank this machine.
# (measure writes the result pretty-printed, one key per line; "type" first appears in "instance".)
if grep -m1 '"type":' "$result" | grep -q null && ! grep -q '"usd_per_hour"' "$result"; then
  host=$(sed -n 's/^[[:space:]]*"hostname":[[:space:]]*"\(.*\)",\{0,1\}[[:space:]]*$/\1/p' "$result" | head -n 1)
  echo >&2
  echo "== this machine is not an EC2 instance type, so AWS cannot price it; to rank it at what it costs" >&2
  echo "   you an hour (own hardware, another cloud), in US dollars per hour:" >&2
  if printf '%s' "$host" | grep -Eq '^[A-Za-z0-9._-]+$'; then
    echo "   $bin rank --price $host=<USD> $result" >&2
  fi
  echo "   or record the price when measuring: scripts/quickstart.sh --hourly-cost <USD>" >&2
  # the job did what it could off EC2: the result is measured and the way to rank it printed
  [ "$rank_rc" = 1 ] && rank_rc=0
fi
exit "$rank_rc"
