#!/usr/bin/env bash
# The main job on the embedded defaults, with no GPU and no AWS credentials needed:
#   1. measure this machine: CPU backend, vit_tiny_patch16_224, batch 32, bf16, fresh host data
#      every step, a 20 s timed window -> instbench-results/quickstart.json
#   2. prices of the seed's comparison (g5.xlarge vs g5.12xlarge, us-east-1): live AWS when
#      credentials are present, else the cache, else the shipped snapshot (its date printed)
#   3. rank the result by samples per dollar (a machine off EC2 has no instance type, so rank
#      says why it cannot price it; on EC2 the type comes from instance metadata)
# Usage: scripts/quickstart.sh [extra `instbench measure` flags]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/instbench
[ -x "$bin" ] || { echo "quickstart: build first (scripts/bootstrap.sh)" >&2; exit 1; }
mkdir -p instbench-results

echo "== instbench measure (CPU backend, vit_tiny_patch16_224, batch 32, bf16, 20 s)" >&2
"$bin" measure --backend cpu --model vit_tiny_patch16_224 --batch-size 32 --precision bf16 \
  --duration 20 --output instbench-results/quickstart.json --format table "$@"

echo >&2
echo "== instbench prices (the seed's 4 x g5.xlarge spot vs 1 x g5.12xlarge question)" >&2
"$bin" prices --instance-types g5.xlarge,g5.12xlarge --regions us-east-1 --format table

echo >&2
echo "== instbench rank instbench-results/quickstart.json" >&2
"$bin" rank --format table instbench-results/quickstart.json
