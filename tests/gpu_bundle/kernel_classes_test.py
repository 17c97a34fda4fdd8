#!/usr/bin/env python3
"""scripts/gpu/kernel_classes.py, the per-kernel-class side-by-side every GPU run writes, on traces made
here whose answer is known by construction: an instbench trace (CUPTI's form) of a warm-up and 7
steps, each ending with the Adam kernel, with kernels of every class at known durations and an
overlap; a torch.profiler trace of 3 steps with PyTorch's own kernel names.  The expected ms per
step per class, busy time and launch gaps are computed here from the construction, not by the
script's rules; a mis-cut step, a kernel in the wrong class, overlapping time counted twice in the
gaps or a wrong divisor fails.
Usage: kernel_classes_test.py SCRIPT"""
import json
import os
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), d)
                for d in ("lib", "fakes")]
from testlib import check, failures   # noqa: E402

SCRIPT = sys.argv[1]
US = 1000   # ns

# (class, name, microseconds): one instbench step; the last is the optimizer, which ends a step
IB_STEP = [("layernorm", "_Z17ln_forward_kernelPKfS0_PfS0_S0_PviS1_S1_iil", 30),
           ("gemm", "nvjet_sm90_tss_192x192_64x4_2x1_v_bz_coopB_bias_TNN", 100),
           ("elementwise", "_Z16store_act_kernelPviPKfm", 20),
           ("attention", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_kernel0_0", 50),
           ("attention", "_ZN5cudnn6fusion9matmul_dqILb1ELi64EEEvPKvS3_Pv", 7),
           ("layernorm", "_Z21ln_backward_dx_kernelPKfS0_S0_S0_S0_Pfliil", 40),
           ("elementwise", "_Z13colsum_kernelPKviPKfPviiiiPf", 25),
           ("optimizer", "_Z11adam_kernelPfPKfS_S_Ptm16cuk_adam_scalars", 9)]
PT_STEP = [("layernorm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", 35),
           ("layernorm", "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float>", 15),
           ("gemm", "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", 110),
           ("attention", "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_kernel0_0", 60),
           ("elementwise", "void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda>", 12),
           ("optimizer", "void at::native::multi_tensor_apply_kernel<TensorListMetadata<4>, FusedAdamMathFunctor>", 40)]
IB_GAP, PT_GAP = 3, 11   # us of idle GPU between kernels
IB_STEPS_KEPT, PT_STEPS = 5, 3


def trace(step, steps, gap, t0, overlap_us=0, extra_first=()):
    rows, t = [], t0
    for cls, name, us in extra_first:   # before the first step (a self-check, an eager step)
        rows.append(("kernel", t, t + us * US, name))
        t += (us + gap) * US
    for _ in range(steps):
        for i, (cls, name, us) in enumerate(step):
            rows.append(("kernel", t, t + us * US, name))
            if i == 1 and overlap_us:   # a memset that overlaps the GEMM (another stream)
                rows.append(("memset", t + 10 * US, t + (10 + overlap_us) * US, "memset 4096 bytes"))
            t += (us + gap) * US
    return rows


def expected(step, steps_counted, gap, wall_us, overlap_us=0):
    per = {}
    for cls, _, us in step:
        per[cls] = per.get(cls, 0) + us / 1000.0
    if overlap_us:
        per["copies"] = per.get("copies", 0) + overlap_us / 1000.0
    busy = sum(us for _, _, us in step) / 1000.0   # the memset lies inside the GEMM: no extra busy time
    return per, busy, max(0.0, wall_us / 1000.0 - busy)


with tempfile.TemporaryDirectory() as tmp:
    ib = os.path.join(tmp, "ib.tsv")
    pt = os.path.join(tmp, "pt.tsv")
    warm = [("gemm", "nvjet_sm90_tss_64x64_warmup", 500), ("optimizer", "_Z11adam_kernelPf", 9)]
    rows = trace(IB_STEP, 7, IB_GAP, 10**9, overlap_us=4, extra_first=warm)
    with open(ib, "w") as f:
        f.write("".join("%s\t%d\t%d\t%s\n" % r for r in rows))
    with open(pt, "w") as f:
        f.write("# torch.profiler, 3 steps, eager\n")
        pt_rows = trace(PT_STEP, PT_STEPS, PT_GAP, 5 * 10**9)
        # torch.profiler's GPU track also holds annotations spanning kernels: never a kernel's time
        pt_rows.append(("annotation", pt_rows[0][1], pt_rows[-1][2], "Optimizer.step#Adam.step"))
        f.write("".join("%s\t%d\t%d\t%s\n" % r for r in sorted(pt_rows, key=lambda r: r[1])))
    ib_wall_us, pt_wall_us = 400.0, 380.0
    out = os.path.join(tmp, "k.json")
    p = subprocess.run([sys.executable, SCRIPT, "--instbench", ib, "--instbench-wall", str(ib_wall_us / 1e6),
                        "--steps", str(IB_STEPS_KEPT), "--torch", pt, "--torch-wall", str(pt_wall_us / 1e6),
                        "--torch-steps", str(PT_STEPS), "--json", out], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and os.path.exists(out), "kernel_classes.py exit %d: %s" % (p.returncode, p.stderr[-500:]))
    doc = json.load(open(out)) if os.path.exists(out) else {}
    for side, step, wall, ov in (("instbench", IB_STEP, ib_wall_us, 4), ("pytorch", PT_STEP, pt_wall_us, 0)):
        per, busy, gaps = expected(step, 0, 0, wall, ov)
        got = doc.get(side, {}).get("ms_per_step", {})
        for cls, ms in per.items():
            check(abs(got.get(cls, -1) - ms) < 1e-6, "%s %s: %r ms per step, want %r" % (side, cls, got.get(cls), ms))
        for cls, ms in got.items():
            if cls not in per and cls != "launch_gaps":
                check(ms == 0, "%s: %s has %r ms per step, want 0" % (side, cls, ms))
        check(abs(doc.get(side, {}).get("busy_ms_per_step", -1) - busy) < 1e-6,
              "%s busy %r, want %r" % (side, doc.get(side, {}).get("busy_ms_per_step"), busy))
        check(abs(got.get("launch_gaps", -1) - gaps) < 1e-6, "%s gaps %r, want %r" % (side, got.get("launch_gaps"), gaps))
    # the table names every class and the step ratio (instbench over PyTorch)
    check("attention" in p.stdout and "%.2fx" % (ib_wall_us / pt_wall_us) in p.stdout, "table:\n" + p.stdout)
    # too few optimizer kernels for the steps asked: refused, not a silent average over less
    p = subprocess.run([sys.executable, SCRIPT, "--instbench", ib, "--instbench-wall", "0.0004", "--steps", "9",
                        "--torch", pt, "--torch-wall", "0.00038"], capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and "optimizer kernels" in p.stderr, "9 steps of 8 cut: exit %d %s" % (p.returncode, p.stderr))
print("kernel_classes_test: " + ("all checks passed" if not failures else "%d failed" % len(failures)))
sys.exit(1 if failures else 0)
