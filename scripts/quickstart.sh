#!/usr/bin/env bash
# The main job on the embedded defaults, with no GPU and no AWS credentials needed:
#   1. measure this machine: CPU backend, vit_tiny_patch16_224, batch 32, bf16, fresh host data
#      every step, a 20 s timed window -> instbench-results/quickstart.json
#   2. prices of four g5.xlarge against one g5.12xlarge (--nodes 4,1: the same four A10G GPUs),
#      us-east-1: live AWS when credentials are present, else the cache, else the shipped,
#      dated snapshot
#   3. rank the result by samples per dollar (on EC2 the type comes from instance metadata; a
#      machine off EC2 has no instance type, so AWS cannot price it: rank says why)
#   4. a ranking made only of real measurements (scripts/quickstart_rank.py): the H100 and H200 runs
#      shipped under docs/gpu-runs/ and this machine's fresh one, each row saying where its throughput and
#      its price come from (a price only where one is true), then the one command that ranks your
#      own results
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
echo "== instbench prices (4 x g5.xlarge against 1 x g5.12xlarge, both markets)" >&2
"$bin" prices --instance-types g5.xlarge,g5.12xlarge --nodes 4,1 --region us-east-1 --format table

result=instbench-results/quickstart.json
echo >&2
echo "== instbench rank $result" >&2
rank_rc=0
"$bin" rank --format table "$result" || rank_rc=$?   # 1: nothing could be priced (handled below)

# 1: nothing could be priced (off EC2 without --hourly-cost); step 4 says how to rank it.
[ "$rank_rc" = 1 ] && rank_rc=0
[ "$rank_rc" = 0 ] || exit "$rank_rc"

python3 scripts/quickstart_rank.py "$bin" "$result"
