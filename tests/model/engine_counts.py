#!/usr/bin/env python3
"""engine_counts: `instbench models` against timm and a hand FLOP formula.

For every preset and two overridden configs: the parameter layout (`models --layout`) must list
timm's state_dict names in timm's order with timm's shapes; the parameter count must equal
timm's; vit_base_patch16_224 must have timm's published 86,567,656 parameters; and the FLOPs per
sample must equal a formula written out here from the model's matmuls.  Exit 77 (skip) when timm
is not installed."""
import json
import subprocess
import sys

try:
    import timm  # noqa: F401
    import torch  # noqa: F401
except ImportError:
    print("timm/torch not installed: skipping")
    sys.exit(77)

BIN = sys.argv[1]
failures = []


def run(*args):
    out = subprocess.run([BIN, "models", "--format", "json", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def flops_formula(img, patch, dim, depth, mlp_ratio, classes, chans=3):
    n = (img // patch) ** 2
    t = n + 1
    hidden = int(dim * mlp_ratio)
    fwd = 2 * n * (chans * patch * patch) * dim                          # patch embedding conv
    fwd += depth * (2 * t * dim * 3 * dim + 2 * t * dim * dim             # qkv, proj
                    + 2 * t * dim * hidden + 2 * t * hidden * dim         # fc1, fc2
                    + 2 * t * t * dim + 2 * t * t * dim)                  # q k^T, attn v (all heads)
    fwd += 2 * dim * classes                                              # head, class token only
    return fwd, 3 * fwd


cases = [
    ("vit_tiny_patch16_224", [], {}),
    ("vit_small_patch16_224", [], {}),
    ("vit_base_patch16_224", [], {}),
    ("vit_large_patch16_224", [], {}),
    ("vit_tiny_patch16_224", ["--image-size", "64", "--patch-size", "8", "--depth", "3", "--classes", "10"],
     dict(img_size=64, patch_size=8, depth=3, num_classes=10)),
    ("vit_small_patch16_224", ["--embed-dim", "96", "--heads", "4", "--mlp-ratio", "2.5", "--image-size", "32"],
     dict(embed_dim=96, num_heads=4, mlp_ratio=2.5, img_size=32)),
]

for name, flags, overrides in cases:
    label = name + (" " + " ".join(flags) if flags else "")
    # weight_init="skip": timm's truncated-normal initialisation of ViT-L's 304M weights was 20 of
    # this test's 30 s, and only names, shapes and counts are compared
    model = timm.create_model(name, pretrained=False, weight_init="skip", **overrides)
    sd = model.state_dict()
    ours = run("--layout", "--model", name, *flags)
    timm_list = [(k, list(v.shape)) for k, v in sd.items()]
    ours = ours["tensors"]   # instbench.model-layout/v1
    our_list = [(t["name"], t["shape"]) for t in ours]
    if timm_list != our_list:
        diff = next((i for i, (a, b) in enumerate(zip(timm_list, our_list)) if a != b), min(len(timm_list), len(our_list)))
        failures.append(f"{label}: layout differs from timm at #{diff}: "
                        f"timm {timm_list[diff] if diff < len(timm_list) else None} "
                        f"ours {our_list[diff] if diff < len(our_list) else None}")
    offset = 0
    for t in ours:
        if t["offset"] != offset:
            failures.append(f"{label}: {t['name']} at offset {t['offset']}, expected {offset} (contiguous)")
        offset += t["numel"]
    info = run("--model", name, *flags)["models"][0]   # instbench.models/v1
    n_timm = sum(p.numel() for p in model.parameters())
    if info["params"] != n_timm:
        failures.append(f"{label}: {info['params']} parameters, timm has {n_timm}")
    fwd, train = flops_formula(info["img_size"], info["patch_size"], info["embed_dim"], info["depth"],
                               info["mlp_ratio"], info["num_classes"])
    if info["forward_flops_per_sample"] != fwd or info["train_flops_per_sample"] != train:
        failures.append(f"{label}: FLOPs {info['forward_flops_per_sample']}/{info['train_flops_per_sample']}, "
                        f"formula {fwd}/{train}")
    print(f"{label}: {n_timm} parameters, {fwd / 1e9:.3f} GFLOP forward per sample")
    del model

base = run("--model", "vit_base_patch16_224")["models"][0]
if base["params"] != 86567656:
    failures.append(f"vit_base_patch16_224: {base['params']} parameters, published 86,567,656")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
