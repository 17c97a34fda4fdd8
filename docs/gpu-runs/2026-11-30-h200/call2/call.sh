#!/bin/bash
# second device call of 2026-11-30: ceeb546 (eight bf16 a thread) against 577375b (measured in call 1)
T0=$(date +%s)
cd "$(dirname "$0")/.." && tar xzf build-gpu-carry/bundle.tgz && cd build-gpu-bundle || exit 1
W=/tmp/w; mkdir -p $W
pack() { (cd /tmp && tar czf $OUT/r.tgz w); echo "--- packed at $(( $(date +%s) - T0 )) s"; }
./bin/instbench --version | head -1; cat bin/baseline/REVISION
./run check --only verify --out $W/p1 2>&1 | tail -4
grep -q '^PASS  verify' $W/p1/summary.txt || { echo "verify failed"; cat $W/p1/*.log | tail -40; pack; exit 1; }
timeout 150 ./run check --only torch --torch-models vit_base_patch16_224 --out $W/p2 > $W/p2.log 2>&1
echo "p2 rc=$? at $(( $(date +%s) - T0 )) s"
cat $W/p2/torch.log 2>/dev/null | head -8; cat $W/p2/bench/kernels.txt 2>/dev/null | head -22
pack
mkdir -p $W/ab
timeout $(( 280 - ($(date +%s) - T0) - 10 )) ./run sh scripts/bench/bench_gpu_ab.sh --a bin/baseline/instbench --b bin/instbench --pairs 2 --out $W/ab -- --model vit_base_patch16_224 --batch-size 128 --precision bf16 --steps 60 --warmup 10 --checkpoint off > $W/ab/ab.txt 2>&1
echo "ab rc=$? at $(( $(date +%s) - T0 )) s"; cat $W/ab/ab.txt
for f in $W/ab/*.json; do echo "$f $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["measurement"]["samples_per_second"])' $f)"; done
pack
