"""scripts/gpu_traffic_model.py against references computed here, never taken from the script:
(i)   its matmul FLOPs = 3 x the forward matmul FLOPs of src/model/flops.c's formula (re-derived
      below) less the patch GEMM's dx, which no side computes (images need no gradient), plus the
      fused attention's recomputation, listed apart (6 B T^2 D per block: S in the dK/dV kernel,
      S and dP in the dQ kernel); the fp32 step recomputes nothing;
(ii)  the bytes of a few kernels counted by hand (LayerNorm forward with and without the residual,
      the qkv cast, Adam on both sides) with the parameter count re-derived from the shapes;
(iii) the roofline of the qkv GEMM and of the whole step on the H100 SXM entry of the JSON;
(iv)  every preset x precision x GPU runs; usage errors exit 2 with a message on stderr;
(v)   --check-trace accepts a trace written here from src/cuda/vit.c's op order (tiny configs,
      one with biases that miss cuBLASLt's 16-byte alignment) and rejects altered ones;
(vi)  docs/benchmarks.md's traffic-model table is what the script prints today.
Usage: gpu_traffic_model_test.py SCRIPT CONFIG_JSON"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import check, failures, require  # noqa: E402

SCRIPT, CONFIG = sys.argv[1], sys.argv[2]
PRESETS = {"vit_tiny_patch16_224": (192, 12, 3), "vit_small_patch16_224": (384, 12, 6),
           "vit_base_patch16_224": (768, 12, 12), "vit_large_patch16_224": (1024, 24, 16)}


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, "--config", CONFIG, *args], capture_output=True, text=True)


def model_json(*args):
    r = run("--json", *args)
    require(r.returncode == 0, f"{args}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def dims(D, L, H, B, img=224, p=16, C=1000, ratio=4.0):
    N = (img // p) ** 2
    return dict(D=D, L=L, H=H, B=B, N=N, T=N + 1, K=3 * p * p, F=int(D * ratio), C=C)


def forward_flops_per_sample(d):
    """src/model/flops.c: 2*M*N*K per matmul; patch [N,K]x[K,D], qkv/proj/fc1/fc2, QK^T and AV,
    head on the class token."""
    D, T, N, K, F, L, C = d["D"], d["T"], d["N"], d["K"], d["F"], d["L"], d["C"]
    patch = 2 * N * K * D
    linear = L * 2 * T * (3 * D * D + D * D + 2 * D * F)
    attention = L * 2 * (2 * T * T * D)
    return patch, patch + linear + attention + 2 * D * C


def param_count(d):
    D, T, K, F, L, C = d["D"], d["T"], d["K"], d["F"], d["L"], d["C"]
    block = 2 * D + 3 * D * D + 3 * D + D * D + D + 2 * D + F * D + F + D * F + D
    return D + T * D + D * K + D + L * block + 2 * D + C * D + C


def kern(doc, side, op):
    hits = [k for k in doc["sides"][side]["kernels"] if k["op"] == op]
    require(len(hits) == 1, f"{side}: {len(hits)} kernels named {op}")
    return hits[0]


# ---- (i) FLOPs ----
for model, B in (("vit_base_patch16_224", 128), ("vit_tiny_patch16_224", 32)):
    D, L, H = PRESETS[model]
    d = dims(D, L, H, B)
    patch_fwd, fwd = forward_flops_per_sample(d)
    train = B * (3 * fwd - patch_fwd)        # no dx for the patch GEMM
    recompute = L * 6 * B * d["T"] ** 2 * D
    for prec in ("bf16", "fp32"):
        doc = model_json("--model", model, "--batch", str(B), "--precision", prec, "--gpus", "H100 SXM")
        ours = doc["sides"]["instbench"]["kernels"]
        mm = sum(k["flops"] for k in ours if k["kind"] in ("gemm", "attn"))
        rc = sum(k["recompute_flops"] for k in ours)
        want_rc = recompute if prec == "bf16" else 0
        check(rc == want_rc, f"{model} {prec}: recompute FLOPs {rc}, want {want_rc}")
        check(mm == train + want_rc, f"{model} {prec}: matmul FLOPs {mm}, want 3 x forward - patch dx "
                                     f"{train} + recompute {want_rc} (off by {mm - train - want_rc})")
        check(sum(k["flops"] for k in ours if k["kind"] not in ("gemm", "attn")) == 0,
              f"{model} {prec}: FLOPs on an elementwise kernel")
        pt = doc["sides"]["pytorch"]["totals"]
        check(pt["essential_flops"] == train, f"{model} {prec}: PyTorch essential FLOPs {pt['essential_flops']}, want {train}")

# ---- (ii) bytes by hand: vit_base, batch 128, bf16 ----
D, L, H = PRESETS["vit_base_patch16_224"]
d = dims(D, L, H, 128)
BT, P = d["B"] * d["T"], param_count(d)
check(P == 86567656, f"ViT-B/16 parameter count {P}, timm's is 86567656")
doc = model_json("--gpus", "H100 SXM")
check(doc["shapes"]["params"] == P, f"script's parameter count {doc['shapes']['params']}, want {P}")
k = kern(doc, "instbench", "blk0.norm1")   # no residual: reads x_in, w, b
check((k["read"], k["write"]) == (BT * D * 4 + 2 * D * 4, BT * D * 2 + 2 * BT * 4), f"blk0.norm1 bytes {k}")
k = kern(doc, "instbench", "blk1.norm1")   # x_mid + f -> x_in fp32, ln1 bf16, mean/rstd
check((k["read"], k["write"]) == (2 * BT * D * 4 + 2 * D * 4, BT * D * 4 + BT * D * 2 + 2 * BT * 4),
      f"blk1.norm1 bytes {k}")
k = kern(doc, "instbench", "blk5.qkv.cast")
check((k["fn"], k["read"], k["write"]) == ("store_act_kernel", BT * 3 * D * 4, BT * 3 * D * 2), f"qkv cast {k}")
k = kern(doc, "instbench", "adam")         # reads p, g, m, v; writes p, m, v fp32 and the bf16 copy
check((k["read"], k["write"]) == (16 * P, 12 * P + 2 * P), f"adam bytes {k}")
adam_pt = sum(k["read"] + k["write"] for k in doc["sides"]["pytorch"]["kernels"] if k["op"].startswith("adam."))
check(adam_pt == 80 * P, f"PyTorch AdamW foreach bytes {adam_pt}, want 20 fp32 passes = {80 * P}")
k = kern(doc, "pytorch", "blk3.norm1")     # fp32 in, fp32 out under autocast
check((k["read"], k["write"]) == (BT * D * 4 + 2 * D * 4, BT * D * 4 + 2 * BT * 4), f"PyTorch norm1 bytes {k}")

# ---- (iii) roofline on the H100 SXM entry ----
gpu = [g for g in json.load(open(CONFIG))["gpus"] if g["name"] == "H100 SXM"][0]
peak, bw = gpu["bf16_tflops"] * 1e12, gpu["mem_bw_gbs"] * 1e9
ours = doc["sides"]["instbench"]["kernels"]
i = [n for n, k in enumerate(ours) if k["op"] == "blk0.qkv"][0]
flops = 2 * BT * 3 * D * D
byts = BT * D * 2 + 3 * D * D * 2 + 3 * D * 4 + BT * 3 * D * 4   # ln1 bf16, W bf16, bias fp32 -> fp32 out
check(ours[i]["flops"] == flops and ours[i]["read"] + ours[i]["write"] == byts, f"qkv GEMM record {ours[i]}")
row = doc["gpus"][0]
want = max(flops / peak, byts / bw) * 1e3
check(abs(row["instbench"]["kernel_ms"][i] - want) < 1e-12, f"qkv GEMM {row['instbench']['kernel_ms'][i]} ms, want {want}")
for side in ("instbench", "pytorch"):
    ks = doc["sides"][side]["kernels"]
    t = sum(0 if k["kind"] == "h2d" else max(k["flops"] / peak, (k["read"] + k["write"]) / bw)
            if k["kind"] in ("gemm", "attn") else (k["read"] + k["write"]) / bw for k in ks)
    r = row[side]
    check(abs(r["predicted_ms"] - t * 1e3) < 1e-9 * t * 1e3, f"{side}: step {r['predicted_ms']} ms, want {t * 1e3}")
    check(abs(r["samples_per_s"] - 128 / t) < 1e-6 * 128 / t, f"{side}: samples/s {r['samples_per_s']}")
    ess = sum(k["flops"] - k["recompute_flops"] for k in ks)
    check(abs(r["ratio_to_gemm_only"] - t / (ess / peak)) < 1e-9, f"{side}: ratio {r['ratio_to_gemm_only']}")

# ---- (iv) every preset, both precisions, every GPU; usage errors ----
names = [g["name"] for g in json.load(open(CONFIG))["gpus"]]
for model in PRESETS:
    for prec in ("bf16", "fp32"):
        doc = model_json("--model", model, "--precision", prec, "--batch", "8")
        check([r["gpu"] for r in doc["gpus"]] == names, f"{model} {prec}: GPUs {[r['gpu'] for r in doc['gpus']]}")
        for r in doc["gpus"]:
            g = [g for g in json.load(open(CONFIG))["gpus"] if g["name"] == r["gpu"]][0]
            has = g["bf16_tflops"] if prec == "bf16" else g["fp32_tflops"]
            check((r["instbench"] is None) == (not has), f"{model} {prec} {r['gpu']}: roofline {r['instbench']}")
r = run("--gpus", "H100 SXM")
check(r.returncode == 0 and "model, not a measurement" in r.stdout, f"table run: {r.returncode} {r.stderr}")
r = run("--variant", "fused-epilogues", "--kernels")
check(r.returncode == 0 and "GELU_AUX_BIAS" in r.stdout, f"fused-epilogues listing: {r.returncode} {r.stderr}")
for args, what in ((["--no-such-flag"], "bad flag"), (["--gpus", "H900 XL"], "unknown GPU"),
                   (["--precision", "fp8"], "bad precision"), (["--model", "custom", "--dim", "10", "--heads", "3"],
                                                               "dim not divisible by heads")):
    r = run(*args)
    check(r.returncode == 2 and r.stderr.strip(), f"{what}: exit {r.returncode}, stderr {r.stderr!r}")
r = subprocess.run([sys.executable, SCRIPT, "--config", os.path.join(tempfile.gettempdir(), "no-such-dir", "x.json")],
                   capture_output=True, text=True)
check(r.returncode == 2 and "x.json" in r.stderr, f"missing config: exit {r.returncode}, stderr {r.stderr!r}")


# ---- (v) --check-trace on a trace built here from src/cuda/vit.c ----
def vit_trace(img, p, D, L, H, C, B, prec):
    """One training step's launches and GEMMs, op by op as cuda_vit_forward / cuda_vit_backward /
    cuda_vit_optimizer_step issue them (bf16: the fused attention replaces vit.c's unfused one)."""
    N, K, F, hd = (img // p) ** 2, 3 * p * p, 4 * D, D // H
    T = N + 1
    BT, bf = B * T, prec == "bf16"
    act = "bf16" if bf else "fp32"
    # bias offsets in timm's state_dict order (src/model/layout.c); gemm.c gives cuBLASLt's
    # epilogue only 16-byte aligned biases, and adds the others with add_bias_kernel
    sizes = [("cls", D), ("pos", T * D), ("patch_w", D * K), ("patch_b", D)]
    for l in range(L):
        sizes += [(f"n1w{l}", D), (f"n1b{l}", D), (f"qkv_w{l}", 3 * D * D), (f"qkv_b{l}", 3 * D),
                  (f"proj_w{l}", D * D), (f"proj_b{l}", D), (f"n2w{l}", D), (f"n2b{l}", D),
                  (f"fc1_w{l}", F * D), (f"fc1_b{l}", F), (f"fc2_w{l}", D * F), (f"fc2_b{l}", D)]
    sizes += [("nw", D), ("nb", D), ("head_w", C * D), ("head_b", C)]
    off, at = {}, 0
    for name, n in sizes:
        off[name], at = at, at + n
    out = ["# trace of one step", "memcpy h2d bytes=123"]

    def launch(n):
        out.append("launch " + n)

    def gemm(batch, M, N_, K_, ab, c, bias=None):
        ok = bias is not None and off[bias] % 4 == 0
        out.append(f"gemm batch={batch} M={M} N={N_} K={K_} ab={ab} c={c} bias={int(ok)}")
        if bias is not None and not ok:
            launch("add_bias_kernel")

    def lin_bwd(M, o, i, dx_c):
        launch("colsum_kernel"), launch("colsum_finish_kernel")
        gemm(1, o, i, M, act, "fp32")
        if dx_c:
            gemm(1, M, i, o, act, dx_c)

    def ln_bwd():
        launch("ln_backward_dx_kernel"), launch("ln_backward_dwdb_kernel"), launch("chunk_sum_kernel")

    launch("patchify_kernel"), gemm(1, B * N, D, K, act, "fp32", "patch_b"), launch("tokens_forward_kernel")
    for l in range(L):
        launch("ln_forward_kernel")
        gemm(1, BT, 3 * D, D, act, "fp32", f"qkv_b{l}")
        if bf:
            launch("store_act_kernel"), launch("attn_fwd_kernel")
        else:
            launch("qkv_split_kernel"), gemm(B * H, T, T, hd, act, "fp32"), launch("softmax_forward_kernel")
            gemm(B * H, T, hd, T, act, act), launch("heads_permute_kernel")
        gemm(1, BT, D, D, act, "fp32", f"proj_b{l}"), launch("ln_forward_kernel")
        gemm(1, BT, F, D, act, "fp32", f"fc1_b{l}"), launch("gelu_forward_kernel")
        gemm(1, BT, D, F, act, "fp32", f"fc2_b{l}")
    launch("ln_forward_kernel"), gemm(1, B, C, D, act, "fp32", "head_b")
    launch("ce_row_kernel"), launch("ce_mean_kernel")
    out.append("memcpy d2h bytes=4")
    lin_bwd(B, C, D, "fp32")
    out.append("memset bytes=%d" % (BT * D * 4))
    ln_bwd()
    for l in reversed(range(L)):
        lin_bwd(BT, D, F, "fp32")
        launch("colsum_kernel"), launch("colsum_finish_kernel")   # GELU backward + fc1's db, fused
        gemm(1, F, D, BT, act, "fp32"), gemm(1, BT, D, F, act, "fp32"), ln_bwd()
        lin_bwd(BT, D, D, act)
        if bf:
            launch("attn_bwd_prep_kernel"), launch("attn_bwd_dkv_kernel"), launch("attn_bwd_dq_kernel")
        else:
            launch("heads_permute_kernel"), gemm(B * H, T, T, hd, act, "fp32"), gemm(B * H, T, hd, T, act, "fp32")
            launch("softmax_backward_kernel"), gemm(B * H, T, hd, T, act, "fp32"), gemm(B * H, T, hd, T, act, "fp32")
            launch("qkv_merge_kernel")
        lin_bwd(BT, 3 * D, D, "fp32"), ln_bwd()
    launch("tokens_backward_kernel"), lin_bwd(B * N, D, K, None)
    launch("adam_kernel")
    return out


def check_trace(lines, cfg, prec):
    with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as fh:
        fh.write("\n".join(lines) + "\n")
    try:
        img, p, D, L, H, C, B = cfg
        return run("--model", "custom", "--img", str(img), "--patch", str(p), "--dim", str(D), "--depth", str(L),
                   "--heads", str(H), "--classes", str(C), "--batch", str(B), "--precision", prec,
                   "--check-trace", fh.name)
    finally:
        os.unlink(fh.name)


late_bias_seen = False
for cfg in ((32, 16, 8, 2, 2, 10, 2), (32, 16, 6, 2, 2, 7, 3)):   # D = 6: some biases miss 16 bytes
    for prec in ("bf16", "fp32"):
        lines = vit_trace(*cfg, prec)
        late_bias_seen |= "launch add_bias_kernel" in lines
        r = check_trace(lines, cfg, prec)
        check(r.returncode == 0 and "trace matches" in r.stdout, f"{cfg} {prec}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        # one launch fewer
        cut = lines.copy()
        cut.remove("launch ln_backward_dwdb_kernel")
        r = check_trace(cut, cfg, prec)
        check(r.returncode == 1 and "ln_backward_dwdb_kernel" in r.stdout, f"{cfg} {prec}: missing launch: {r.stdout}")
        # one GEMM with another K
        g = [n for n, x in enumerate(lines) if x.startswith("gemm")][3]
        bent = lines.copy()
        bent[g] = bent[g].replace(" K=", " K=1")
        r = check_trace(bent, cfg, prec)
        check(r.returncode == 1 and bent[g] in r.stdout, f"{cfg} {prec}: changed GEMM not reported: {r.stdout}")
        # M and N swapped everywhere (cuBLAS's column-major terms): rejected, with the hint
        sw = []
        for x in lines:
            if x.startswith("gemm"):
                kv = dict(w.split("=") for w in x.split()[1:])
                kv["M"], kv["N"] = kv["N"], kv["M"]
                x = "gemm " + " ".join(f"{k}={kv[k]}" for k in ("batch", "M", "N", "K", "ab", "c", "bias"))
            sw.append(x)
        r = check_trace(sw, cfg, prec)
        check(r.returncode == 1 and "M and N swapped" in r.stdout, f"{cfg} {prec}: swapped M/N: {r.stdout}")
check(late_bias_seen, "no config of the trace test exercised an unaligned bias")
r = run("--check-trace", os.path.join(tempfile.gettempdir(), "no-such-dir", "t.trace"))
check(r.returncode == 2 and r.stderr.strip(), f"missing trace: exit {r.returncode}")

# ---- docs/benchmarks.md's table is the script's current output (a changed model changes the doc) ----
doc_path = os.path.join(os.path.dirname(os.path.abspath(SCRIPT)), "..", "docs", "benchmarks.md")
rows = {l.split("|")[1].strip().split(" (")[0]: [c.strip() for c in l.split("|")[3:6]]
        for l in open(doc_path).read().splitlines() if l.startswith("| ") and " GB, " in l}
check(len(rows) >= 4, f"docs/benchmarks.md: {len(rows)} traffic-model rows")
cur, fused = model_json("--gpus", ",".join(rows)), model_json("--gpus", ",".join(rows), "--variant", "fused-epilogues")
for r, rf in zip(cur["gpus"], fused["gpus"]):
    for cell, v in zip(rows[r["gpu"]], (r["instbench"], r["pytorch"], rf["instbench"])):
        want = f"{v['gb_per_step']:.1f} GB, {v['predicted_ms']:.1f} ms, {v['samples_per_s']:.0f}/s, {v['ratio_to_gemm_only']:.2f}x"
        check(cell == want, f"docs/benchmarks.md {r['gpu']}: '{cell}', the script says '{want}'")

print("gpu_traffic_model_test:", "FAIL" if failures else "ok")
sys.exit(1 if failures else 0)
