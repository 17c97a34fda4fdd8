"""configs/gpu-peak-flops.json carries dense figures only.  NVIDIA's sheets print tensor rates
"with sparsity" (2:4 structured sparsity) at twice the dense rate, so every sparse figure kept
beside a dense one must be twice it (within the sheets' own rounding, 2%: L40S prints
362.05 | 733); a sparse number entered as dense shows here.  Every entry names its datasheet,
and TF32 (dense) is half of BF16 where a part has both (Ampere, Ada, Hopper sheets)."""
import json
import sys

t = json.load(open(sys.argv[1]))
bad = []
names = set()
for g in t["gpus"]:
    n = g["name"]
    if n in names:
        bad.append(f"{n}: duplicate")
    names.add(n)
    if not g.get("source") or "datasheet" not in g["source"]:
        bad.append(f"{n}: no datasheet source")
    if not g.get("match"):
        bad.append(f"{n}: nothing to match")
    b, s, tf = g.get("bf16_tflops"), g.get("sparse_bf16_tflops"), g.get("tf32_tflops")
    if (b is None) != (s is None):
        bad.append(f"{n}: dense and sparse bf16 must both be given or both null")
    if b is not None and abs(s - 2 * b) > 0.02 * s:
        bad.append(f"{n}: sparse {s} is not twice dense {b}: is a sparse figure listed as dense?")
    if b is not None and tf is not None and abs(tf - b / 2) > 0.02 * b:
        bad.append(f"{n}: tf32 {tf} is not half of bf16 {b}")
    if not (g.get("fp32_tflops") or 0) > 0:
        bad.append(f"{n}: no fp32 figure")
for b in bad:
    print("FAIL:", b)
print("measure_peak_table:", "FAIL" if bad else "ok", len(t["gpus"]), "GPUs")
sys.exit(1 if bad else 0)
