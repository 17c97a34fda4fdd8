#!/usr/bin/env python3
"""The PyTorch training step a user would run on a GPU, timed: timm's VisionTransformer (or, when
timm is not installed, the same architecture defined below with timm's state_dict names and
F.scaled_dot_product_attention as timm's fused_attn uses), nn.CrossEntropyLoss, torch.optim.Adam,
bf16 via torch.autocast('cuda', dtype=torch.bfloat16), synthetic data made once on the GPU.
PyTorch at its best as a careful user runs it (issue 37): eager with Adam's defaults (foreach),
torch.compile with Adam(fused=True) (one kernel per step for the optimizer, as instbench's); --adam
says otherwise, and the JSON line records which ran ("adam").  Every step ends with torch.cuda.synchronize(), as instbench's runner does.
Prints one JSON line: {"samples_per_second": ..., "step_time_s": [...], ...}.
Used by scripts/bench/bench_gpu_vs_torch.sh."""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {  # name: (img, patch, embed, depth, heads, mlp_ratio, classes)
    "vit_tiny_patch16_224": (224, 16, 192, 12, 3, 4.0, 1000),
    "vit_small_patch16_224": (224, 16, 384, 12, 6, 4.0, 1000),
    "vit_base_patch16_224": (224, 16, 768, 12, 12, 4.0, 1000),
    "vit_large_patch16_224": (224, 16, 1024, 24, 16, 4.0, 1000),
}


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4).unbind(0)
        if hasattr(F, "scaled_dot_product_attention"):
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            x = ((q * self.hd ** -0.5) @ k.transpose(-2, -1)).softmax(-1) @ v
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, ratio):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-6), Attention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim, eps=1e-6), Mlp(dim, int(dim * ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, patch, dim):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, patch, patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class ViT(nn.Module):
    def __init__(self, img, patch, dim, depth, heads, ratio, classes):
        super().__init__()
        self.num_classes = classes
        self.patch_embed = PatchEmbed(patch, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, (img // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, ratio) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--model", default="vit_base_patch16_224", choices=sorted(PRESETS))
ap.add_argument("--batch-size", type=int, default=128)
ap.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--warmup", type=int, default=5)
ap.add_argument("--builtin", action="store_true", help="use the model defined here even if timm is installed")
ap.add_argument("--compile", action="store_true", help="torch.compile the model (default: eager, as timm runs it)")
ap.add_argument("--adam", choices=["default", "fused"],
                help="torch.optim.Adam's implementation: default (foreach on CUDA) or fused=True "
                     "(default: fused with --compile, default in eager)")
ap.add_argument("--profile", metavar="TSV",
                help="after the timed steps, run --profile-steps more under torch.profiler and write every GPU "
                     "kernel, memcpy and memset to TSV (kind, start ns, end ns, name: scripts/gpu/kernel_classes.py)")
ap.add_argument("--profile-steps", type=int, default=5)
a = ap.parse_args()
if not torch.cuda.is_available():
    sys.exit("bench_torch_gpu_step.py: torch sees no CUDA GPU")
torch.backends.cuda.matmul.allow_tf32 = False   # torch's default: fp32 means fp32 (as instbench)
torch.manual_seed(0)
dev = torch.device("cuda")
source = "builtin"
model = None
if not a.builtin:
    try:
        import timm
        model = timm.create_model(a.model, pretrained=False)
        source = "timm " + timm.__version__
    except ImportError:
        pass
if model is None:
    model = ViT(*PRESETS[a.model])
model = model.to(dev).train()
num_classes = model.num_classes
if a.compile:   # compiled during the warm-up steps, which are not timed
    model = torch.compile(model)
crit = nn.CrossEntropyLoss()
adam = a.adam or ("fused" if a.compile else "default")
opt = torch.optim.Adam(model.parameters(), fused=True) if adam == "fused" else torch.optim.Adam(model.parameters())
images = torch.randn(a.batch_size, 3, 224, 224, device=dev)
labels = torch.randint(0, num_classes, (a.batch_size,), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
        loss = crit(model(images), labels)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    return loss


for _ in range(a.warmup):
    step()
times = []
for _ in range(a.steps):
    t0 = time.perf_counter()
    loss = step()
    times.append(time.perf_counter() - t0)
st = sorted(times)


def sdpa_backend(op_names):
    """The SDPA implementation the step ran, read from the aten ops the profiler saw."""
    for op, name in (("_scaled_dot_product_cudnn_attention", "cudnn"),
                     ("_scaled_dot_product_flash_attention", "flash"),
                     ("_scaled_dot_product_efficient_attention", "mem_efficient"),
                     ("_scaled_dot_product_fused_attention_overrideable", "overrideable")):
        if any(op in n for n in op_names):
            return name
    return "math" if any("scaled_dot_product_attention" in n for n in op_names) else None


profile_info = {}
if a.profile:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(a.profile_steps):
            step()
    ops, rows = set(), []
    for e in prof.events():
        ops.add(e.name)
        if "CUDA" not in str(getattr(e, "device_type", "")):
            continue
        # the GPU track also carries user annotations spanning kernels (Optimizer.step#Adam.step):
        # written as such, never counted as a kernel
        if getattr(e, "is_user_annotation", False) or "#" in e.name or e.name.startswith("ProfilerStep"):
            kind = "annotation"
        else:
            kind = "memcpy" if "Memcpy" in e.name else "memset" if "Memset" in e.name else "kernel"
        rows.append((kind, int(e.time_range.start * 1000), int(e.time_range.end * 1000), e.name.replace("\t", " ")))
    with open(a.profile, "w") as f:
        f.write("# torch.profiler, %d steps, %s\n" % (a.profile_steps, "compile" if a.compile else "eager"))
        for r in sorted(rows, key=lambda r: r[1]):
            f.write("%s\t%d\t%d\t%s\n" % r)
    profile_info = {"profile_steps": a.profile_steps, "sdpa_backend": sdpa_backend(ops)}
print(json.dumps({"samples_per_second": a.batch_size * len(times) / sum(times),
                  "median_samples_per_second": a.batch_size / st[len(st) // 2],
                  "step_time_s": times, "last_loss": float(loss), "torch": torch.__version__, "model_source": source,
                  "mode": "compile" if a.compile else "eager",
                  "adam": adam,
                  "device": torch.cuda.get_device_name(0),
                  "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30,
                  "cudnn_version": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
                  **profile_info}))
