#!/usr/bin/env python3
"""A traffic model of one ViT training step on a GPU (a MODEL, not a measurement).

For one training step (forward, backward, optimizer) it lists every kernel and GEMM of
  (a) instbench's CUDA step (src/cuda/vit.c; under bf16 the fused flash attention now replacing
      the unfused attention, everything else as vit.c is), and
  (b) PyTorch eager + timm's VisionTransformer under torch.autocast(bf16), attention through
      F.scaled_dot_product_attention (flash), torch.optim.AdamW (foreach implementation),
with its matmul FLOPs and the bytes it moves to and from DRAM, assuming each operand is read
once from DRAM and each output written once per kernel (re-reads that hit L1/L2 are free, nothing
stays in L2 from one kernel to the next).  A roofline per GPU of configs/gpu-peak-flops.json then
predicts the step: per kernel max(flops / dense tensor peak, bytes / DRAM bandwidth) (elementwise
kernels: bytes only), summed.  Launch overheads, tail effects, cache reuse across kernels and
GEMM efficiency below peak are not modelled.

Usage:  gpu_traffic_model.py [--model vit_base_patch16_224] [--batch 128] [--precision bf16]
                             [--gpus "H100 SXM,A10G"] [--variant current|fused-epilogues]
                             [--json] [--kernels] [--config configs/gpu-peak-flops.json]
        gpu_traffic_model.py --model custom --img 32 --patch 16 --dim 8 --depth 2 --heads 2
                             --classes 10 --batch 2 --check-trace TRACE
--check-trace compares the kernel launches and GEMM shapes the model expects of instbench's
step with a trace of one step (lines `launch NAME` and
`gemm batch=B M=M N=N K=K ab=bf16|fp32 c=bf16|fp32 bias=0|1`, M, N, K in the row-major terms of
src/cuda/gemm.h's cuda_gemm_desc: C is M x N); exit 1 listing the differences.
Exit status: 0 ok, 1 trace differs, 2 usage error (bad flag, unknown GPU, unreadable config)."""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CONFIG = os.path.join(HERE, "..", "configs", "gpu-peak-flops.json")

# name: (img, patch, embed dim, depth, heads, mlp ratio, classes), as src/model/config.c's presets
PRESETS = {
    "vit_tiny_patch16_224": (224, 16, 192, 12, 3, 4.0, 1000),
    "vit_small_patch16_224": (224, 16, 384, 12, 6, 4.0, 1000),
    "vit_base_patch16_224": (224, 16, 768, 12, 12, 4.0, 1000),
    "vit_large_patch16_224": (224, 16, 1024, 24, 16, 4.0, 1000),
}

HEADER = ("model, not a measurement: DRAM bytes assume each operand read once and each output "
          "written once per kernel; time per kernel = max(matmul FLOPs / dense peak, bytes / DRAM "
          "bandwidth); launch overhead and below-peak GEMMs not modelled")


class Shapes:
    """The step's dimensions in vit.c's names (B batch, T tokens, D, H heads, hd, F mlp hidden,
    C classes, K = 3*P*P patch length, N patches, P parameter count)."""

    def __init__(self, img, patch, dim, depth, heads, ratio, classes, batch, chans=3):
        self.img, self.patch, self.chans = img, patch, chans
        self.D, self.L, self.H, self.C, self.B = dim, depth, heads, classes, batch
        self.hd = dim // heads
        self.F = int(dim * ratio)                      # timm: int(dim * mlp_ratio)
        self.N = (img // patch) ** 2
        self.T = self.N + 1
        self.K = chans * patch * patch
        self.BT = batch * self.T
        self.offsets = param_offsets(self)
        self.P = self.offsets["total"]

    def describe(self):
        return {"img": self.img, "patch": self.patch, "dim": self.D, "depth": self.L, "heads": self.H,
                "mlp_hidden": self.F, "classes": self.C, "batch": self.B, "tokens": self.T,
                "params": self.P}


def param_offsets(s):
    """Element offsets of the bias vectors in the one fp32 parameter block, in the order of
    src/model/layout.c (timm's state_dict order).  gemm.c hands a bias to cuBLASLt's epilogue
    only when it is 16-byte aligned (offset % 4 == 0; the block itself is 256-byte aligned);
    otherwise the GEMM runs plain and add_bias_kernel adds it."""
    D, F, T, K = s.D, s.F, s.T, s.K
    o = {}
    at = D + T * D + D * K          # cls_token, pos_embed, patch_embed.proj.weight
    o["patch_b"] = at
    at += D
    o["blk"] = []
    for _ in range(s.L):
        b = {}
        at += 2 * D                 # norm1.weight, norm1.bias
        at += 3 * D * D
        b["qkv_b"] = at
        at += 3 * D
        at += D * D
        b["proj_b"] = at
        at += D
        at += 2 * D                 # norm2.*
        at += F * D
        b["fc1_b"] = at
        at += F
        at += D * F
        b["fc2_b"] = at
        at += D
        o["blk"].append(b)
    at += 2 * D                     # norm.*
    at += s.C * D
    o["head_b"] = at
    at += s.C
    o["total"] = at
    return o


# ---- kernel records --------------------------------------------------------------------------
# kind: "gemm" (cuBLASLt / cuDNN matmul), "attn" (fused attention: tensor-core FLOPs), "kernel"
# (elementwise / reduction: bytes only), "memset" (cudaMemsetAsync: bytes, not a kernel launch),
# "h2d" (PCIe copy: listed, not counted as DRAM traffic).
def rec(op, fn, kind, read, write, flops=0, recompute=0, gemm=None, src=""):
    return {"op": op, "fn": fn, "kind": kind, "flops": int(flops), "recompute_flops": int(recompute),
            "read": int(read), "write": int(write), "gemm": gemm, "src": src}


def esize(dt):
    return 2 if dt == "bf16" else 4


def gemm_rec(op, M, N, K, ab, c, bias, src, batch=1, a_bytes=None, b_bytes=None, extra_read=0,
             extra_write=0, epilogue=None, bias_dt="fp32"):
    """C [batch,M,N] (dtype c) = A [batch,M,K] B [batch,K,N] (dtype ab) (+ bias [N]).
    a_bytes/b_bytes override an operand's bytes (a [T,T] operand stored at a padded stride is
    still read T x T)."""
    a = batch * M * K * esize(ab) if a_bytes is None else a_bytes
    b = batch * K * N * esize(ab) if b_bytes is None else b_bytes
    rd = a + b + (N * esize(bias_dt) if bias else 0) + extra_read
    wr = batch * M * N * esize(c) + extra_write
    desc = {"batch": batch, "M": M, "N": N, "K": K, "ab": ab, "c": c, "bias": 1 if bias else 0}
    if epilogue:
        desc["epilogue"] = epilogue
    return rec(op, "gemm", "gemm", rd, wr, 2 * batch * M * N * K, 0, desc, src)


# ---- (a) instbench's CUDA step ---------------------------------------------------------------
def instbench_step(s, prec="bf16", variant="current"):
    """Mirrors src/cuda/vit.c op for op (function names in comments); under bf16 the attention is
    the fused flash attention (attn_*_kernel) replacing vit.c's qkv_split / S GEMM / softmax / PV
    GEMM / heads_merge and their backward.  variant "fused-epilogues" is the planned step:
    cuBLASLt GELU_AUX_BIAS / DGELU_BGRAD / BGRADA epilogues and bf16 GEMM outputs (bf16 only)."""
    B, T, D, H, hd, F, C, K, N, L, BT, P = s.B, s.T, s.D, s.H, s.hd, s.F, s.C, s.K, s.N, s.L, s.BT, s.P
    bf = prec == "bf16"
    fused = variant == "fused-epilogues" and bf
    act = "bf16" if bf else "fp32"
    ea = esize(act)
    f4 = 4
    ks = []

    def linear(op, M, out, inn, c, bias_off, src, **kw):
        # vit.c linear(): y [M,out] = x [M,in] W^T (+ bias); W read in the act dtype (wbf under bf16)
        aligned = bias_off is not None and bias_off % 4 == 0
        ks.append(gemm_rec(op, M, out, inn, act, c, bias_off is not None and aligned, src, **kw))
        if bias_off is not None and not aligned:   # gemm.c late bias: C += bias by a kernel
            ks.append(rec(op + ".late_bias", "add_bias_kernel", "kernel", M * out * esize(c) + out * f4,
                          M * out * esize(c), src="gemm.c add_bias_per_batch (unaligned bias)"))

    def bias_backward(op, M, n, src):
        # cuk_bias_backward: colsum_kernel reads dy fp32 [M,n], writes dy_act (bf16 only) and
        # chunks x n partial sums; colsum_finish_kernel sums the chunks into db [n]
        chunks = min(M, 256)
        ks.append(rec(op + ".colsum", "colsum_kernel", "kernel", M * n * f4,
                      (M * n * 2 if bf else 0) + chunks * n * f4, src=src))
        ks.append(rec(op + ".colsum_finish", "colsum_finish_kernel", "kernel", chunks * n * f4, n * f4, src=src))

    def linear_backward(op, M, out, inn, dx_c, src, dx=True, db=True, dy_act=False, epi=None):
        # vit.c linear_backward(): db = colsum(dy) (+ dy cast to bf16), dW [out,in] = dy^T x,
        # dx [M,in] = dy W.  dy_act: dy already in the act dtype (planned variant: no colsum)
        if db and not dy_act:
            bias_backward(op, M, out, src)
        dw_epi = "BGRADA" if dy_act and db else None        # db from the dW GEMM's epilogue
        ks.append(gemm_rec(op + ".dW", out, inn, M, act, "fp32", False, src, epilogue=dw_epi,
                           extra_write=out * f4 if dw_epi else 0))
        if dx:
            ks.append(gemm_rec(op + ".dx", M, inn, out, act, dx_c, False, src, **(epi or {})))

    def ln_forward(op, R, res, src):
        # cuk_layernorm_forward: res: x_out = x_in + res first (reads 2 fp32 rows, writes x_out);
        # always y act [R,D], mean/rstd fp32 [R]; reads w, b
        rd = R * D * f4 * (2 if res else 1) + 2 * D * f4
        wr = (R * D * f4 if res else 0) + R * D * ea + 2 * R * f4
        ks.append(rec(op, "ln_forward_kernel", "kernel", rd, wr, src=src))

    def ln_backward(op, R, src):
        # cuk_layernorm_backward: ln_backward_dx_kernel reads dy, x, mean, rstd, w and dx (+=);
        # ln_backward_dwdb_kernel reads dy, x, mean, rstd again, writes chunk partials;
        # chunk_sum_kernel sums them into dw, db
        chunks = min(R, 256)
        ks.append(rec(op + ".dx", "ln_backward_dx_kernel", "kernel", 3 * R * D * f4 + 2 * R * f4 + D * f4,
                      R * D * f4, src=src))
        ks.append(rec(op + ".dwdb", "ln_backward_dwdb_kernel", "kernel", 2 * R * D * f4 + 2 * R * f4,
                      chunks * 2 * D * f4, src=src))
        ks.append(rec(op + ".chunk_sum", "chunk_sum_kernel", "kernel", chunks * 2 * D * f4, 2 * D * f4, src=src))

    o = s.offsets
    # set_inputs: images fp32 [B,3,S,S] and labels int32 over PCIe on the copy stream
    ks.append(rec("inputs", "cudaMemcpyAsync H2D", "h2d", 0, B * s.chans * s.img * s.img * f4 + B * 4,
                  src="vit.h set_inputs (PCIe, not DRAM)"))
    # ---- forward (cuda_vit_forward) ----
    ks.append(rec("patchify", "patchify_kernel", "kernel", B * N * K * f4, B * N * K * ea,
                  src="cuk_patchify: images fp32 -> patches act [B*N,K]"))
    linear("patch", B * N, D, K, "fp32", o["patch_b"], "linear(patches) -> f fp32 [B*N,D]")
    ks.append(rec("tokens", "tokens_forward_kernel", "kernel", B * N * D * f4 + D * f4 + T * D * f4, BT * D * f4,
                  src="cuk_tokens_forward: f, cls, pos -> x_in fp32 [BT,D]"))
    for l in range(L):
        p = f"blk{l}."
        ob = o["blk"][l]
        ln_forward(p + "norm1", BT, l > 0, "cuk_layernorm_forward (l>0: x_mid[l-1] + f -> x_in)")
        if bf:
            if fused:   # planned: the GEMM writes bf16 q/k/v directly (fp32 sum + bias, rounded once)
                linear(p + "qkv", BT, 3 * D, D, "bf16", ob["qkv_b"], "linear(ln1) -> qkv bf16 [BT,3D]",
                       bias_dt="fp32")
            else:
                linear(p + "qkv", BT, 3 * D, D, "fp32", ob["qkv_b"], "linear(ln1) -> big fp32 [BT,3D]")
                ks.append(rec(p + "qkv.cast", "store_act_kernel", "kernel", BT * 3 * D * f4, BT * 3 * D * 2,
                              src="cuk_store_act: big fp32 -> qkv bf16 [BT,3D] (q|k|v per row)"))
            # attn_fwd_kernel: per 64-query tile, K/V tiles re-read from L2 (counted once from DRAM)
            ks.append(rec(p + "attn", "attn_fwd_kernel", "attn", BT * 3 * D * 2, BT * D * 2 + B * H * T * f4,
                          flops=4 * B * H * T * T * hd,
                          src="fused attention: q,k,v bf16 [BT,3D] -> att bf16 [BT,D], lse fp32 [B,H,T]"))
        else:
            # today's vit.c (fp32): qkv -> big, split to heads, S = q k^T, softmax in place, P v,
            # heads_merge.  T x T buffers are stored at row stride Ts; traffic counted T x T.
            linear(p + "qkv", BT, 3 * D, D, "fp32", ob["qkv_b"], "linear(ln1) -> big fp32 [BT,3D]")
            ks.append(rec(p + "qkv_split", "qkv_split_kernel", "kernel", BT * 3 * D * f4, BT * 3 * D * f4,
                          src="cuk_qkv_split: big -> q,k,v [3][B,H,T,hd]"))
            ks.append(gemm_rec(p + "S", T, T, hd, "fp32", "fp32", False, "S = q k^T (batch B*H)", batch=B * H))
            ks.append(rec(p + "softmax", "softmax_forward_kernel", "kernel", B * H * T * T * f4, B * H * T * T * f4,
                          src="cuk_softmax_forward: in place in P fp32"))
            ks.append(gemm_rec(p + "PV", T, hd, T, "fp32", "fp32", False, "o = P v (batch B*H)", batch=B * H))
            ks.append(rec(p + "heads_merge", "heads_permute_kernel", "kernel", BT * D * f4, BT * D * f4,
                          src="cuk_heads_merge: o [B,H,T,hd] -> att [BT,D]"))
        f_dt = "bf16" if fused else "fp32"   # planned: proj/fc2 outputs rounded to bf16 as autocast does
        linear(p + "proj", BT, D, D, f_dt, ob["proj_b"], "linear(att) -> f [BT,D]")
        ln_forward(p + "norm2", BT, True, "cuk_layernorm_forward (x_in + f -> x_mid)")
        if fused and f_dt == "bf16":
            ks[-1]["read"] -= BT * D * 2     # the residual operand f is bf16
        if fused:   # GELU_AUX_BIAS: a = GELU(h + b) bf16, aux h + b bf16 saved for backward
            ks.append(gemm_rec(p + "fc1", BT, F, D, act, "bf16", True, "fc1 GEMM, GELU_AUX_BIAS epilogue",
                               extra_write=BT * F * 2, epilogue="GELU_AUX_BIAS"))
        else:
            linear(p + "fc1", BT, F, D, "fp32", ob["fc1_b"], "linear(ln2) -> h fp32 [BT,F] (+ bias, epilogue)")
            ks.append(rec(p + "gelu", "gelu_forward_kernel", "kernel", BT * F * f4, BT * F * ea,
                          src="cuk_gelu_forward: a act = GELU(h)"))
        linear(p + "fc2", BT, D, F, f_dt, ob["fc2_b"], "linear(a) -> f [BT,D]")
    # final residual + norm on the class-token rows only (B rows at stride T*D), head, loss
    ln_forward("norm", B, True, "cuk_layernorm_forward on class rows (x_mid + f -> x_final)")
    if fused:
        ks[-1]["read"] -= B * D * 2
    linear("head", B, C, D, "fp32", o["head_b"], "linear(lnf) -> logits fp32 [B,C]")
    ks.append(rec("loss.rows", "ce_row_kernel", "kernel", B * C * f4 + B * 4, B * C * f4 + B * 8,
                  src="cuk_crossentropy: logits -> dlogits, row_loss f64"))
    ks.append(rec("loss.mean", "ce_mean_kernel", "kernel", B * 8, 4, src="cuk_crossentropy: mean in batch order"))
    # ---- backward (cuda_vit_backward) ----
    linear_backward("head", B, C, D, "fp32", "linear_backward(dlogits) -> dlnf fp32 [B,D]")
    ks.append(rec("dx.zero", "cudaMemsetAsync", "memset", 0, BT * D * f4, src="memset dx fp32 [BT,D]"))
    ln_backward("norm", B, "cuk_layernorm_backward, class rows")
    for l in reversed(range(L)):
        p = f"blk{l}."
        if fused:
            # fc2: dy = dx fp32 (colsum casts it); dx GEMM with DGELU_BGRAD: dh bf16 [BT,F] =
            # GELU'(aux) * (dy W), and fc1's db from the same epilogue; no gelu_backward, no fc1 colsum
            linear_backward(p + "fc2", BT, D, F, "bf16", "linear_backward(dx) -> dh bf16 (DGELU_BGRAD)",
                            epi={"extra_read": BT * F * 2, "extra_write": F * f4, "epilogue": "DGELU_BGRAD"})
            linear_backward(p + "fc1", BT, F, D, "fp32", "linear_backward(dh) -> f fp32 [BT,D]", db=False,
                            dy_act=True)
        else:
            linear_backward(p + "fc2", BT, D, F, "fp32", "linear_backward(dx) -> big fp32 [BT,F]")
            # cuk_gelu_bias_backward: colsum_kernel reads big and h fp32, writes dh in the act
            # dtype (bf16 into big_act; fp32 in place) and the partial sums of fc1's db
            chunks = min(BT, 256)
            ks.append(rec(p + "fc1.gelu_bgrad", "colsum_kernel", "kernel", 2 * BT * F * f4,
                          BT * F * ea + chunks * F * f4, src="cuk_gelu_bias_backward: dh = big * GELU'(h), db"))
            ks.append(rec(p + "fc1.gelu_bgrad_finish", "colsum_finish_kernel", "kernel", chunks * F * f4, F * f4,
                          src="cuk_gelu_bias_backward: db from the partial sums"))
            linear_backward(p + "fc1", BT, F, D, "fp32", "linear_backward_gemms(dh) -> f fp32 [BT,D]", db=False,
                            dy_act=True)
        ln_backward(p + "norm2", BT, "cuk_layernorm_backward(f, x_mid) += dx")
        linear_backward(p + "proj", BT, D, D, act, "linear_backward(dx) -> datt act [BT,D]")
        if bf:
            g_dt = "bf16" if fused else "fp32"   # planned: dq, dk, dv written in bf16
            eg = esize(g_dt)
            ks.append(rec(p + "attn_bwd.prep", "attn_bwd_prep_kernel", "kernel", 2 * BT * D * 2, B * H * T * f4,
                          src="Dlt = rowsum(dO * O): datt, att bf16 -> fp32 [B,H,T]"))
            # dKV: per 64-key tile every query's q, dO, lse, Dlt (L2 re-reads, DRAM once); k, v once
            ks.append(rec(p + "attn_bwd.dkv", "attn_bwd_dkv_kernel", "attn",
                          BT * 3 * D * 2 + BT * D * 2 + 2 * B * H * T * f4, 2 * BT * D * eg,
                          flops=8 * B * H * T * T * hd, recompute=2 * B * H * T * T * hd,
                          src="S, dP, dV, dK (S recomputed) -> dk, dv into big [BT,3D]"))
            ks.append(rec(p + "attn_bwd.dq", "attn_bwd_dq_kernel", "attn",
                          BT * 3 * D * 2 + BT * D * 2 + 2 * B * H * T * f4, BT * D * eg,
                          flops=6 * B * H * T * T * hd, recompute=4 * B * H * T * T * hd,
                          src="S, dP, dQ (S and dP recomputed: deterministic, no atomics) -> dq into big"))
            if fused:
                linear_backward(p + "qkv", BT, 3 * D, D, "fp32", "linear_backward(dqkv bf16) -> f fp32",
                                dy_act=True)
            else:
                linear_backward(p + "qkv", BT, 3 * D, D, "fp32", "linear_backward(big) -> f fp32 [BT,D]")
        else:
            # vit.c attention_backward (fp32): heads_split, dP = dO v^T, dv = P^T dO, softmax
            # backward in place, dq = dS k, dk = dS^T q, qkv_merge into big
            ks.append(rec(p + "heads_split", "heads_permute_kernel", "kernel", BT * D * f4, BT * D * f4,
                          src="cuk_heads_split: datt -> dO [B,H,T,hd]"))
            ks.append(gemm_rec(p + "dP", T, T, hd, "fp32", "fp32", False, "dP = dO v^T", batch=B * H))
            ks.append(gemm_rec(p + "dv", T, hd, T, "fp32", "fp32", False, "dv = P^T dO", batch=B * H))
            ks.append(rec(p + "softmax_bwd", "softmax_backward_kernel", "kernel", 2 * B * H * T * T * f4,
                          B * H * T * T * f4, src="cuk_softmax_backward: dP -> dS in place"))
            ks.append(gemm_rec(p + "dq", T, hd, T, "fp32", "fp32", False, "dq = dS k", batch=B * H))
            ks.append(gemm_rec(p + "dk", T, hd, T, "fp32", "fp32", False, "dk = dS^T q", batch=B * H))
            ks.append(rec(p + "qkv_merge", "qkv_merge_kernel", "kernel", BT * 3 * D * f4, BT * 3 * D * f4,
                          src="cuk_qkv_merge: dq,dk,dv -> big [BT,3D]"))
            linear_backward(p + "qkv", BT, 3 * D, D, "fp32", "linear_backward(big) -> f fp32 [BT,D]")
        ln_backward(p + "norm1", BT, "cuk_layernorm_backward(f, x_in) += dx")
    ks.append(rec("tokens_bwd", "tokens_backward_kernel", "kernel", BT * D * f4, B * N * D * f4 + T * D * f4 + D * f4,
                  src="cuk_tokens_backward: dx -> dcls, dpos, dpe (f) [B*N,D]"))
    linear_backward("patch", B * N, D, K, "fp32", "linear_backward(f), no dx (images need no grad)", dx=False)
    # ---- optimizer (cuda_vit_optimizer_step) ----
    ks.append(rec("adam", "adam_kernel", "kernel", 4 * P * f4, 3 * P * f4 + (P * 2 if bf else 0),
                  src="cuk_adam_step: p, g, m, v fp32 -> p, m, v (+ wbf bf16 copy)"))
    return ks


# ---- (b) PyTorch eager + timm under autocast ---------------------------------------------------
def pytorch_step(s, prec="bf16", optimizer="adamw"):
    """timm VisionTransformer, eager, torch.autocast(bf16), F.scaled_dot_product_attention (flash,
    FlashAttention-2 inside ATen), torch.optim.AdamW/Adam default foreach.  One record per CUDA
    kernel as ATen launches them; names are descriptive (ATen's own kernel names vary by version).
    Assumptions that could move a count are stated beside the op.  fp32 (no autocast): no casts,
    SDPA picks the memory-efficient kernel (flash has no fp32), modelled with flash's traffic."""
    B, T, D, H, hd, F, C, K, N, L, BT, P = s.B, s.T, s.D, s.H, s.hd, s.F, s.C, s.K, s.N, s.L, s.BT, s.P
    bf = prec == "bf16"
    a = 2 if bf else 4          # activation dtype of linear outputs / GEMM operands
    f4 = 4
    img = B * s.chans * s.img * s.img
    ks = []

    def ew(op, fn, rd, wr, src):
        ks.append(rec(op, fn, "kernel", rd, wr, src=src))

    def cast(op, n, src_b, dst_b, why):
        if src_b != dst_b:
            ew(op, "to_copy (cast)", n * src_b, n * dst_b, why)

    def linear(op, M, out, inn, x_fp32, src):
        # autocast: input cast (when it is fp32), weight and bias cast to bf16 once per forward
        # (autocast's cache of leaf casts), then addmm through cuBLASLt with the bias epilogue
        if bf and x_fp32:
            cast(op + ".in_cast", M * inn, 4, 2, "autocast cast of the fp32 input")
        cast(op + ".w_cast", out * inn, 4, a, "autocast weight cast (cached for the forward)")
        cast(op + ".b_cast", out, 4, a, "autocast bias cast")
        ks.append(gemm_rec(op, M, out, inn, "bf16" if bf else "fp32", "bf16" if bf else "fp32", True, src,
                           bias_dt="bf16" if bf else "fp32"))

    def linear_backward(op, M, out, inn, x_fp32, src, dx=True):
        # AddmmBackward: dx = g W, dW = g^T x, db = g.sum(0) (reduction); the bf16 weight/bias
        # grads cast back to fp32 (ToCopyBackward of the autocast casts); AccumulateGrad steals
        # them (grads are None after zero_grad(set_to_none=True)): no copy
        adt = "bf16" if bf else "fp32"
        if dx:
            ks.append(gemm_rec(op + ".dx", M, inn, out, adt, adt, False, src))
        ks.append(gemm_rec(op + ".dW", out, inn, M, adt, adt, False, src))
        ew(op + ".db", "reduce_kernel (sum)", M * out * a, out * a, "bias grad = g.sum(0)")
        cast(op + ".dW_cast", out * inn, a, 4, "ToCopyBackward: weight grad -> fp32")
        cast(op + ".db_cast", out, a, 4, "ToCopyBackward: bias grad -> fp32")
        if dx and bf and x_fp32:
            cast(op + ".dx_cast", M * inn, 2, 4, "ToCopyBackward of the input cast: dx -> fp32")

    def layer_norm(op, R):   # fp32 under autocast (fp32 op list): x fp32 -> y fp32, mean/rstd
        ew(op, "vectorized_layer_norm_kernel", R * D * f4 + 2 * D * f4, R * D * f4 + 2 * R * f4, "F.layer_norm fp32")

    def layer_norm_backward(op, R):
        # dX kernel reads dy, x, mean, rstd, gamma; the gamma/beta kernel reads dy, x, mean, rstd again
        ew(op + ".dx", "layer_norm_grad_input_kernel", 2 * R * D * f4 + 2 * R * f4 + D * f4, R * D * f4,
           "native_layer_norm_backward dX")
        ew(op + ".dwdb", "GammaBetaBackward kernel", 2 * R * D * f4 + 2 * R * f4, 2 * D * f4,
           "native_layer_norm_backward dgamma, dbeta")

    # ---- forward ----
    # images are made once on the GPU by the peer script (no copy per step)
    if bf:
        cast("images.cast", img, 4, 2, "conv2d under autocast: images fp32 -> bf16")
    cast("patch.w_cast", D * K, 4, a, "autocast conv weight cast")
    cast("patch.b_cast", D, 4, a, "autocast conv bias cast")
    ks.append(gemm_rec("patch", B * N, D, K, "bf16" if bf else "fp32", "bf16" if bf else "fp32", False,
                       "cuDNN conv 16x16/16 (implicit GEMM) -> [B,D,14,14]",
                       a_bytes=img * a))
    ew("patch.bias", "elementwise add_ (conv bias)", B * N * D * a + D * a, B * N * D * a,
       "ATen adds the conv bias after cuDNN's conv")
    if bf:   # torch.cat is on autocast's promote list: the bf16 patches are cast to fp32 first
        cast("tokens.promote", B * N * D, 2, 4, "cat promote: x bf16 -> fp32")
    ew("tokens.cat", "CatArrayBatchedCopy", B * N * D * f4 + D * f4, BT * D * f4, "torch.cat([cls, x], 1)")
    ew("tokens.pos", "elementwise add", BT * D * f4 + T * D * f4, BT * D * f4, "x + pos_embed (pos_drop p=0: no kernel)")
    for l in range(L):
        p = f"blk{l}."
        layer_norm(p + "norm1", BT)
        linear(p + "qkv", BT, 3 * D, D, True, "Attention.qkv -> [BT,3D] (bf16 under autocast)")
        # reshape/permute/unbind are views; flash takes q,k,v with any row stride (last dim
        # contiguous): no copies.  Output allocated [B,T,H,hd] contiguous, returned transposed,
        # so timm's x.transpose(1,2).reshape(B,N,C) is a view again: no copy.
        ks.append(rec(p + "attn", "flash_fwd_kernel", "attn", BT * 3 * D * a, BT * D * a + B * H * T * f4,
                      flops=4 * B * H * T * T * hd, src="F.scaled_dot_product_attention forward"))
        linear(p + "proj", BT, D, D, False, "Attention.proj")
        ew(p + "res1", "elementwise add", BT * D * f4 + BT * D * a, BT * D * f4, "x + attn(...) fp32 + bf16 -> fp32")
        layer_norm(p + "norm2", BT)
        linear(p + "fc1", BT, F, D, True, "Mlp.fc1")
        ew(p + "gelu", "GeluCUDAKernelImpl", BT * F * a, BT * F * a, "nn.GELU (erf), bf16 -> bf16")
        linear(p + "fc2", BT, D, F, False, "Mlp.fc2")
        ew(p + "res2", "elementwise add", BT * D * f4 + BT * D * a, BT * D * f4, "x + mlp(...) -> fp32")
    layer_norm("norm", BT)     # timm normalises every token, then pools the class token
    linear("head", B, C, D, True, "head(x[:, 0]) (the cast reads the strided class rows)")
    cast("loss.cast", B * C, a, 4, "cross_entropy runs in fp32 (autocast fp32 list)")
    ew("loss.log_softmax", "cunn_SoftMaxForward", B * C * f4, B * C * f4, "log_softmax")
    ew("loss.nll", "nll_loss_forward_reduce_cuda_kernel_2d", B * f4 + B * 8, 8, "nll_loss (mean)")
    # ---- backward ----
    ew("loss.ones", "fill (ones_like)", 0, 4, "autograd seeds dloss = 1")
    ew("loss.nll_bwd.zero", "fill (zeros)", 0, B * C * f4, "nll_loss_backward: grad_input zeros")
    ew("loss.nll_bwd", "nll_loss_backward_reduce_cuda_kernel_2d", B * 8 + 4, B * f4, "scatter -1/B")
    ew("loss.log_softmax_bwd", "cunn_SoftMaxBackward", 2 * B * C * f4, B * C * f4, "log_softmax backward")
    cast("loss.cast_bwd", B * C, 4, a, "ToCopyBackward: dlogits -> bf16")
    linear_backward("head", B, C, D, True, "head backward")
    ew("pool.zero", "fill (zeros)", 0, BT * D * f4, "SelectBackward: zeros [B,T,D] fp32")
    ew("pool.copy", "copy (into select)", B * D * f4, B * D * f4, "SelectBackward: class rows")
    layer_norm_backward("norm", BT)
    for l in reversed(range(L)):
        p = f"blk{l}."
        # the residual grad g fp32 reaches the bf16 fc2 output: the engine casts it to bf16
        cast(p + "res2.cast", BT * D, 4, a, "engine casts the grad to the bf16 input's dtype")
        linear_backward(p + "fc2", BT, D, F, False, "Mlp.fc2 backward")
        ew(p + "gelu_bwd", "GeluBackwardCUDAKernelImpl", 2 * BT * F * a, BT * F * a, "GELU backward bf16")
        linear_backward(p + "fc1", BT, F, D, True, "Mlp.fc1 backward")
        layer_norm_backward(p + "norm2", BT)
        ew(p + "res2.acc", "elementwise add (grad accumulate)", 2 * BT * D * f4, BT * D * f4,
           "autograd sums the residual and norm2 grads")
        cast(p + "res1.cast", BT * D, 4, a, "engine casts the grad to bf16 for proj's output")
        linear_backward(p + "proj", BT, D, D, False, "Attention.proj backward")
        # flash backward: dO and O are already contiguous in [B,T,H,hd] (the .contiguous() calls are
        # no-ops); dq_accum fp32 zeroed by the preprocess kernel, atomically accumulated (counted
        # read + written once) and converted to bf16; dk, dv written directly
        ks.append(rec(p + "attn_bwd.prep", "flash_bwd_dot_do_o_kernel", "kernel", 2 * BT * D * a,
                      B * H * T * f4 + BT * D * f4, src="D = rowsum(dO * O), dq_accum = 0"))
        ks.append(rec(p + "attn_bwd.main", "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", "attn",
                      BT * 3 * D * a + BT * D * a + 2 * B * H * T * f4 + BT * D * f4, 2 * BT * D * a + BT * D * f4,
                      flops=10 * B * H * T * T * hd, recompute=2 * B * H * T * T * hd,
                      src="S (recomputed), dP, dV, dK, dQ (atomicAdd into dq_accum)"))
        ks.append(rec(p + "attn_bwd.convert_dq", "flash_bwd_convert_dq_kernel", "kernel", BT * D * f4, BT * D * a,
                      src="dq_accum fp32 -> dq"))
        # dq, dk, dv come back as three [B,H,T,hd] grads: unbind's backward stacks them (a copy)
        # into [3,B,H,T,hd]; permute's backward is a view, and the reshape back to [B,T,3D] of
        # that non-contiguous view copies again
        ew(p + "qkv_grad.stack", "CatArrayBatchedCopy (stack)", 3 * BT * D * a, 3 * BT * D * a, "UnbindBackward")
        ew(p + "qkv_grad.reshape", "elementwise copy (reshape)", 3 * BT * D * a, 3 * BT * D * a,
           "reshape of the permuted grad to [B,T,3D]")
        linear_backward(p + "qkv", BT, 3 * D, D, True, "Attention.qkv backward")
        layer_norm_backward(p + "norm1", BT)
        ew(p + "res1.acc", "elementwise add (grad accumulate)", 2 * BT * D * f4, BT * D * f4,
           "autograd sums the residual and norm1 grads")
    ew("pos.grad", "reduce_kernel (sum)", BT * D * f4, T * D * f4, "pos_embed grad: sum over the batch")
    ew("cls.grad", "reduce_kernel (sum)", B * D * f4, D * f4, "cls_token grad: expand backward")
    if bf:
        cast("tokens.promote_bwd", B * N * D, 4, 2, "ToCopyBackward of the cat promote")
    # the grad reaches the conv as a transposed view of [B,N,D]; cuDNN wants NCHW contiguous
    ew("patch.grad_contig", "elementwise copy (contiguous)", B * N * D * a, B * N * D * a, "grad_output.contiguous()")
    ew("patch.db", "reduce_kernel (sum)", B * N * D * a, D * a, "conv bias grad")
    ks.append(gemm_rec("patch.dW", D, K, B * N, "bf16" if bf else "fp32", "bf16" if bf else "fp32", False,
                       "cuDNN conv wgrad (no dgrad: images need no grad)", b_bytes=img * a))
    cast("patch.dW_cast", D * K, a, 4, "ToCopyBackward: conv weight grad -> fp32")
    cast("patch.db_cast", D, a, 4, "ToCopyBackward: conv bias grad -> fp32")
    # ---- optimizer: _multi_tensor_adam (foreach), every op one pass over all P fp32 elements;
    # state steps live on the CPU (not capturable): no GPU kernel for them ----
    opt = [("p *= 1 - lr*wd", 1, 1)] if optimizer == "adamw" else []
    opt += [("lerp_(m, g, 1-b1)", 2, 1), ("mul_(v, b2)", 1, 1), ("addcmul_(v, g, g, 1-b2)", 2, 1),
            ("sqrt(v) -> denom", 1, 1), ("div_(denom, sqrt(bc2))", 1, 1), ("add_(denom, eps)", 1, 1),
            ("addcdiv_(p, m, denom, -step)", 3, 1)]
    for i, (what, r, w) in enumerate(opt):
        ew(f"adam.{i}", "multi_tensor_apply_kernel", r * P * f4, w * P * f4, "_foreach " + what)
    return ks


# ---- roofline ------------------------------------------------------------------------------------
def essential_flops(ks):
    return sum(k["flops"] - k["recompute_flops"] for k in ks)


def kernel_seconds(k, peak_flops, bw_bytes):
    if k["kind"] == "h2d":
        return 0.0
    mem = (k["read"] + k["write"]) / bw_bytes
    if k["kind"] in ("gemm", "attn"):
        return max(k["flops"] / peak_flops, mem)
    return mem


def roofline(ks, gpu, prec, batch):
    peak = gpu["bf16_tflops"] if prec == "bf16" else gpu["fp32_tflops"]
    if not peak:
        return None
    peak *= 1e12
    bw = gpu["mem_bw_gbs"] * 1e9
    per = [kernel_seconds(k, peak, bw) for k in ks]
    step = sum(per)
    gemm_only = essential_flops(ks) / peak
    dram = sum(k["read"] + k["write"] for k in ks if k["kind"] != "h2d")
    return {"gb_per_step": dram / 1e9, "tflop_per_step": sum(k["flops"] for k in ks) / 1e12,
            "predicted_ms": step * 1e3, "samples_per_s": batch / step, "gemm_only_ms": gemm_only * 1e3,
            "ratio_to_gemm_only": step / gemm_only, "kernel_ms": [t * 1e3 for t in per]}


def totals(ks):
    dram = [k for k in ks if k["kind"] != "h2d"]
    return {"read_bytes": sum(k["read"] for k in dram), "write_bytes": sum(k["write"] for k in dram),
            "flops": sum(k["flops"] for k in ks), "recompute_flops": sum(k["recompute_flops"] for k in ks),
            "essential_flops": essential_flops(ks),
            "launches": sum(1 for k in ks if k["kind"] in ("kernel", "gemm", "attn")),
            "pcie_bytes": sum(k["write"] for k in ks if k["kind"] == "h2d")}


# ---- trace check -----------------------------------------------------------------------------------
def expected_trace(ks):
    launches = collections.Counter(k["fn"] for k in ks if k["kind"] in ("kernel", "attn"))
    gemms = collections.Counter(gemm_key(k["gemm"]) for k in ks if k["kind"] == "gemm")
    return launches, gemms


def gemm_key(g):
    return (g["batch"], g["M"], g["N"], g["K"], g["ab"], g["c"], g["bias"])


def fmt_gemm(t):
    return "gemm batch=%d M=%d N=%d K=%d ab=%s c=%s bias=%d" % t


def read_trace(path):
    launches, gemms = collections.Counter(), collections.Counter()
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            w = line.split()
            if not w:
                continue
            if w[0] == "launch" and len(w) >= 2:
                launches[w[1].split("<")[0].split("(")[0]] += 1   # template / signature -> base name
            elif w[0] == "gemm":
                kv = dict(x.split("=", 1) for x in w[1:] if "=" in x)
                try:
                    gemms[(int(kv["batch"]), int(kv["M"]), int(kv["N"]), int(kv["K"]), kv["ab"], kv["c"],
                           int(kv["bias"]))] += 1
                except (KeyError, ValueError):
                    raise ValueError(f"{path}:{n}: malformed gemm line: {line.strip()}")
    return launches, gemms


def check_trace(ks, path):
    want_l, want_g = expected_trace(ks)
    got_l, got_g = read_trace(path)
    diffs = []
    for name in sorted(set(want_l) | set(got_l)):
        if want_l[name] != got_l[name]:
            diffs.append(f"launch {name}: model {want_l[name]}, trace {got_l[name]}")
    for key in sorted(set(want_g) | set(got_g)):
        if want_g[key] != got_g[key]:
            diffs.append(f"{fmt_gemm(key)}: model {want_g[key]}, trace {got_g[key]}")
    if diffs:
        swapped = collections.Counter({(b, n, m, k, ab, c, bi): v for (b, m, n, k, ab, c, bi), v in got_g.items()})
        if swapped == want_g:
            diffs.append("hint: the trace's GEMMs match with M and N swapped: it seems to use cuBLAS's "
                         "column-major terms, the model uses cuda_gemm_desc's row-major ones")
    return diffs, sum(got_l.values()), sum(got_g.values())


# ---- output -------------------------------------------------------------------------------------------
def human(n):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.2f}{unit}"
    return str(n)


def print_kernels(title, ks):
    """Identical consecutive-in-kind records (same op suffix, kernel and sizes: the L blocks)
    collapse into one line with a count."""
    print(f"\n{title}: kernels of one step (bytes = DRAM traffic, each operand read once, each output written once)")
    groups = collections.OrderedDict()
    for k in ks:
        op = k["op"].split(".", 1)[1] if k["op"].startswith("blk") else k["op"]
        if k["op"].startswith("blk"):
            op = "blk*." + op
        g = k["gemm"]
        shape = "" if not g else " [%dx %dx%dx%d %s->%s%s%s]" % (
            g["batch"], g["M"], g["N"], g["K"], g["ab"], g["c"], " +bias" if g["bias"] else "",
            " " + g["epilogue"] if g.get("epilogue") else "")
        key = (op, k["fn"], k["kind"], k["flops"], k["read"], k["write"], shape)
        groups.setdefault(key, [0, k["src"]])[0] += 1
    print(f"  {'count':>5} {'op':<26} {'kernel':<56} {'FLOP':>9} {'read B':>9} {'write B':>9}")
    for (op, fn, kind, fl, rd, wr, shape), (n, src) in groups.items():
        print(f"  {n:>5} {op:<26} {fn + shape:<56} {human(fl):>9} {human(rd):>9} {human(wr):>9}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="vit_base_patch16_224", choices=sorted(PRESETS) + ["custom"])
    ap.add_argument("--img", type=int), ap.add_argument("--patch", type=int), ap.add_argument("--dim", type=int)
    ap.add_argument("--depth", type=int), ap.add_argument("--heads", type=int), ap.add_argument("--classes", type=int)
    ap.add_argument("--mlp-ratio", type=float)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    ap.add_argument("--variant", choices=["current", "fused-epilogues"], default="current",
                    help="instbench's step as built (current) or the planned cuBLASLt-epilogue step")
    ap.add_argument("--optimizer", choices=["adamw", "adam"], default="adamw",
                    help="PyTorch's optimizer (adam: weight decay 0, one foreach pass fewer)")
    ap.add_argument("--gpus", action="append", help="GPU names from the config, comma-separated (default: all)")
    ap.add_argument("--config", default=DEFAULT_CONFIG, help="gpu-peak-flops.json")
    ap.add_argument("--json", action="store_true", help="one JSON document with every kernel and roofline")
    ap.add_argument("--kernels", action="store_true", help="list the kernels of both sides before the table")
    ap.add_argument("--check-trace", metavar="FILE", help="compare instbench's modelled launches with a trace")
    a = ap.parse_args(argv)

    dims = (a.img, a.patch, a.dim, a.depth, a.heads, a.mlp_ratio, a.classes)
    base = PRESETS["vit_base_patch16_224" if a.model == "custom" else a.model]
    img, patch, dim, depth, heads, ratio, classes = (v if v is not None else d for v, d in zip(dims, base))
    if a.model != "custom" and any(v is not None for v in dims):
        ap.error("--img/--patch/--dim/--depth/--heads/--classes/--mlp-ratio need --model custom")
    bad = [n for n, v in (("img", img), ("patch", patch), ("dim", dim), ("depth", depth), ("heads", heads),
                          ("classes", classes), ("batch", a.batch)) if v <= 0]
    if bad or ratio <= 0:
        ap.error("dimensions must be positive: " + ", ".join(bad or ["mlp-ratio"]))
    if dim % heads or img % patch:
        ap.error("--dim must divide by --heads and --img by --patch")
    s = Shapes(img, patch, dim, depth, heads, ratio, classes, a.batch)

    ours = instbench_step(s, a.precision, a.variant)
    if a.check_trace:
        try:
            diffs, nl, ng = check_trace(ours, a.check_trace)
        except (OSError, ValueError) as e:
            print(f"gpu_traffic_model.py: {e}", file=sys.stderr)
            return 2
        if diffs:
            print(f"trace {a.check_trace} differs from the model ({a.precision}, {a.variant}):")
            for d in diffs:
                print("  " + d)
            return 1
        print(f"trace matches the model: {nl} launches, {ng} GEMMs")
        return 0

    try:
        with open(a.config) as fh:
            table = json.load(fh)
        gpus = table["gpus"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"gpu_traffic_model.py: cannot read GPU table {a.config}: {e}", file=sys.stderr)
        return 2
    by_name = {g["name"]: g for g in gpus}
    if a.gpus:
        want = [n.strip() for arg in a.gpus for n in arg.split(",") if n.strip()]
        unknown = [n for n in want if n not in by_name]
        if unknown:
            print(f"gpu_traffic_model.py: unknown GPU {', '.join(unknown)}; known: {', '.join(by_name)}",
                  file=sys.stderr)
            return 2
        gpus = [by_name[n] for n in want]
    missing = [g["name"] for g in gpus if not g.get("mem_bw_gbs")]
    if missing:
        print(f"gpu_traffic_model.py: no mem_bw_gbs for {', '.join(missing)} in {a.config}", file=sys.stderr)
        return 2

    torch_ks = pytorch_step(s, a.precision, a.optimizer)
    sides = {"instbench": ours, "pytorch": torch_ks}
    rows = []
    for g in gpus:
        r = {"gpu": g["name"], "mem_bw_gbs": g["mem_bw_gbs"],
             "peak_tflops": g["bf16_tflops"] if a.precision == "bf16" else g["fp32_tflops"]}
        for side, ks in sides.items():
            r[side] = roofline(ks, g, a.precision, s.B)
        rows.append(r)

    if a.json:
        doc = {"header": HEADER, "model": a.model, "shapes": s.describe(), "precision": a.precision,
               "variant": a.variant, "optimizer": a.optimizer,
               "sides": {k: {"totals": totals(v), "kernels": v} for k, v in sides.items()}, "gpus": rows}
        json.dump(doc, sys.stdout, indent=1)
        print()
        return 0

    if a.kernels:
        print_kernels(f"instbench ({a.variant})", ours)
        print_kernels("PyTorch eager + timm", torch_ks)
        print()
    ti, tp = totals(ours), totals(torch_ks)
    print(HEADER)
    print(f"{a.model} batch {s.B} {a.precision}, instbench {a.variant}; PyTorch eager + timm, SDPA flash, "
          f"{'AdamW' if a.optimizer == 'adamw' else 'Adam'} foreach")
    print(f"launches per step: instbench {ti['launches']}, PyTorch {tp['launches']} (approx.); "
          f"TFLOP = executed matmul FLOPs incl. attention recompute; GEMM-only = essential matmul FLOPs / peak")
    print(f"{'GPU':<14} {'side':<10} {'GB/step':>8} {'TFLOP':>7} {'ms/step':>8} {'samples/s':>10} {'/GEMM-only':>10}")
    for r in rows:
        for side in sides:
            v = r[side]
            if v is None:
                print(f"{r['gpu']:<14} {side:<10} {'n/a: no ' + a.precision + ' tensor peak':>46}")
                continue
            print(f"{r['gpu']:<14} {side:<10} {v['gb_per_step']:>8.2f} {v['tflop_per_step']:>7.2f} "
                  f"{v['predicted_ms']:>8.1f} {v['samples_per_s']:>10.0f} {v['ratio_to_gemm_only']:>9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
