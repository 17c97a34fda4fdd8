#!/usr/bin/python3
"""Write a reference file for `instbench verify` from timm itself.

The reference is not us: this builds timm's VisionTransformer, runs one training step on a fixed
random batch and records, in a safetensors file,

  <param>          every parameter by its timm state_dict name (the initial weights), F32
  input            F32 [B, 3, H, W]          labels  I64 [B]
  logits           F32 [B, classes]          loss    F32 []   (mean cross-entropy)
  grad.<param>     F32, gradient of the mean loss at the initial weights, for every parameter
  losses           F32 [steps]: the loss at each of `steps` successive optimizer steps on the same
                   batch, each computed before its update (losses[0] == loss)
  __metadata__     the config and optimizer as strings, plus precision, seed, timm/torch versions

bf16 references run forward + loss under torch.autocast('cpu', dtype=torch.bfloat16), which is
what a PyTorch user's mixed-precision step does; weights, gradients and optimizer stay fp32.

timm initialises biases to zero and LayerNorm weights to one (and the class token to ~1e-6), so a
backend that dropped a bias gradient or mishandled the LayerNorm affine would still match.  We
therefore perturb them after timm's init: LayerNorm weights 1 + 0.1 N(0,1), every bias and LayerNorm
bias 0.02 N(0,1), cls_token 0.02 N(0,1).  Other weights keep timm's init.

Run with Debian's /usr/bin/python3 (torch 1.13) and timm installed with pip --no-deps.
Usage: scripts/data/make_reference.py --model vit_tiny_patch16_224 --batch-size 4 --output ref.safetensors
       scripts/data/make_reference.py --img-size 32 --patch-size 8 --embed-dim 32 --depth 2 \
           --num-heads 2 --num-classes 10 --batch-size 4 --steps 3 --output tiny.safetensors
"""
import argparse
import json
import struct
import sys

PRESETS = {
    # timm name: (img, patch, embed, depth, heads, mlp_ratio, classes)
    "vit_tiny_patch16_224": (224, 16, 192, 12, 3, 4.0, 1000),
    "vit_small_patch16_224": (224, 16, 384, 12, 6, 4.0, 1000),
    "vit_base_patch16_224": (224, 16, 768, 12, 12, 4.0, 1000),
    "vit_large_patch16_224": (224, 16, 1024, 24, 16, 4.0, 1000),
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(PRESETS), default=None,
                   help="preset; explicit dimension flags override it")
    p.add_argument("--img-size", type=int)
    p.add_argument("--patch-size", type=int)
    p.add_argument("--embed-dim", type=int)
    p.add_argument("--depth", type=int)
    p.add_argument("--num-heads", type=int)
    p.add_argument("--mlp-ratio", type=float, help="default 4.0 (timm's)")
    p.add_argument("--num-classes", type=int)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--optimizer", choices=["adam", "adamw"], default="adam")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--betas", type=float, nargs=2, default=[0.9, 0.999], metavar=("BETA1", "BETA2"))
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=None,
                   help="default: torch's (0 for adam, 0.01 for adamw)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--output", required=True)
    a = p.parse_args(argv)

    dims = list(PRESETS[a.model]) if a.model else [None] * 7
    names = ["img_size", "patch_size", "embed_dim", "depth", "num_heads", "mlp_ratio", "num_classes"]
    for i, n in enumerate(names):
        v = getattr(a, n)
        if v is not None:
            dims[i] = v
    if dims[5] is None:
        dims[5] = 4.0  # timm's default
    missing = [n for n, v in zip(names, dims) if v is None]
    if missing:
        p.error("give --model or every dimension; missing: " + ", ".join("--" + m.replace("_", "-") for m in missing))
    for n, v in zip(names, dims):
        setattr(a, n, v)
        if v <= 0:
            p.error(f"--{n.replace('_', '-')} must be positive")
    if a.img_size % a.patch_size:
        p.error("--img-size must be a multiple of --patch-size")
    if a.embed_dim % a.num_heads:
        p.error("--embed-dim must be a multiple of --num-heads")
    if a.batch_size <= 0 or a.steps <= 0:
        p.error("--batch-size and --steps must be positive")
    if a.weight_decay is None:
        a.weight_decay = 0.0 if a.optimizer == "adam" else 0.01
    return a


# ---- safetensors writer (the format is small enough that no package is needed) ----

def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, dtype 'F32'|'I64', shape tuple, bytes little-endian)."""
    header = {"__metadata__": metadata}
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # keep the data 8-byte aligned
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, _, data in tensors:
            f.write(data)
    import os
    os.replace(tmp, path)


def f32_bytes(t):
    return t.detach().to("cpu").float().contiguous().numpy().astype("<f4").tobytes()


def main(argv):
    a = parse_args(argv)
    import torch
    import torch.nn.functional as F
    import timm
    from timm.models.vision_transformer import VisionTransformer

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    model = VisionTransformer(img_size=a.img_size, patch_size=a.patch_size, embed_dim=a.embed_dim,
                              depth=a.depth, num_heads=a.num_heads, mlp_ratio=a.mlp_ratio,
                              num_classes=a.num_classes)
    # timm's explicit softmax attention path, never F.scaled_dot_product_attention (torch 1.13 has
    # none, but a newer torch would make timm pick it).
    for blk in model.blocks:
        if hasattr(blk.attn, "fused_attn"):
            blk.attn.fused_attn = False
    model.train()

    # Perturb what timm initialises to constants (see the module docstring).
    with torch.no_grad():
        for name, p in model.named_parameters():
            is_norm = name.endswith(".weight") and ("norm" in name.rsplit(".", 2)[-2])
            if is_norm:
                p.add_(0.1 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.02 * torch.randn_like(p))
            elif name == "cls_token":
                p.copy_(0.02 * torch.randn_like(p))

    names = [n for n, _ in model.named_parameters()]
    sd_names = list(model.state_dict().keys())
    if names != sd_names:
        sys.exit("make_reference: parameters and state_dict differ (buffers?): " + str(set(sd_names) ^ set(names)))
    init = {n: p.detach().clone() for n, p in model.named_parameters()}

    images = torch.randn(a.batch_size, 3, a.img_size, a.img_size)
    labels = torch.randint(0, a.num_classes, (a.batch_size,), dtype=torch.int64)

    opt_cls = torch.optim.Adam if a.optimizer == "adam" else torch.optim.AdamW
    opt = opt_cls(model.parameters(), lr=a.lr, betas=tuple(a.betas), eps=a.eps, weight_decay=a.weight_decay)

    losses, logits0, loss0, grads0 = [], None, None, None
    for step in range(a.steps):
        opt.zero_grad(set_to_none=True)
        if a.precision == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = model(images)
                loss = F.cross_entropy(logits, labels)
        else:
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
        loss.backward()
        if step == 0:
            logits0 = logits.detach().float().clone()
            loss0 = loss.detach().float().clone()
            grads0 = {n: p.grad.detach().float().clone() for n, p in model.named_parameters()}
        losses.append(float(loss.detach()))
        opt.step()

    tensors = []
    for n in names:
        tensors.append((n, "F32", tuple(init[n].shape), f32_bytes(init[n])))
    tensors.append(("input", "F32", tuple(images.shape), f32_bytes(images)))
    tensors.append(("labels", "I64", tuple(labels.shape), labels.numpy().astype("<i8").tobytes()))
    tensors.append(("logits", "F32", tuple(logits0.shape), f32_bytes(logits0)))
    tensors.append(("loss", "F32", (), f32_bytes(loss0.reshape(()))))
    for n in names:
        tensors.append(("grad." + n, "F32", tuple(grads0[n].shape), f32_bytes(grads0[n])))
    tensors.append(("losses", "F32", (a.steps,), f32_bytes(torch.tensor(losses, dtype=torch.float32))))

    meta = {
        "format": "instbench.reference/v1",
        "img_size": str(a.img_size), "patch_size": str(a.patch_size), "embed_dim": str(a.embed_dim),
        "depth": str(a.depth), "num_heads": str(a.num_heads), "mlp_ratio": repr(float(a.mlp_ratio)),
        "num_classes": str(a.num_classes), "batch_size": str(a.batch_size), "steps": str(a.steps),
        "optimizer": a.optimizer, "lr": repr(a.lr), "beta1": repr(a.betas[0]), "beta2": repr(a.betas[1]),
        "eps": repr(a.eps), "weight_decay": repr(float(a.weight_decay)),
        "precision": a.precision, "seed": str(a.seed),
        "timm_version": timm.__version__, "torch_version": torch.__version__,
        "init": "timm init; LayerNorm weights 1+0.1N, biases and cls_token 0.02N",
    }
    write_safetensors(a.output, tensors, meta)
    print(f"make_reference: wrote {a.output}: {len(names)} parameters, loss {losses[0]:.6f} -> "
          f"{losses[-1]:.6f} over {a.steps} {a.optimizer} steps ({a.precision})", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
