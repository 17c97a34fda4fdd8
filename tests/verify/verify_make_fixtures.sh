#!/usr/bin/env bash
# Regenerates the committed timm reference fixtures tests/data/ref_*.safetensors (scripts/data/make_reference.py,
# Debian's /usr/bin/python3 with timm 0.9.16).  Two configs of different shapes, each in fp32 and bf16:
#   a: 32x32 images, patch 8 (16 patches), D=32, depth 2, 2 heads, MLP ratio 4, 10 classes, batch 4,
#      3 Adam steps (torch defaults)
#   b: 24x24 images, patch 6 (16 patches), D=36, depth 3, 4 heads (head_dim 9), MLP ratio 3, 7 classes,
#      batch 3, 3 AdamW steps (lr 2e-3, betas 0.9/0.95, weight decay 0.05)
set -euo pipefail
cd "$(dirname "$0")/../.."
py=/usr/bin/python3
for prec in fp32 bf16; do
  $py scripts/data/make_reference.py --img-size 32 --patch-size 8 --embed-dim 32 --depth 2 --num-heads 2 \
      --mlp-ratio 4 --num-classes 10 --batch-size 4 --steps 3 --seed 1 --optimizer adam \
      --precision $prec --output tests/data/ref_a_adam_$prec.safetensors
  $py scripts/data/make_reference.py --img-size 24 --patch-size 6 --embed-dim 36 --depth 3 --num-heads 4 \
      --mlp-ratio 3 --num-classes 7 --batch-size 3 --steps 3 --seed 2 --optimizer adamw --lr 2e-3 \
      --betas 0.9 0.95 --weight-decay 0.05 --precision $prec --output tests/data/ref_b_adamw_$prec.safetensors
done
