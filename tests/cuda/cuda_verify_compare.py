"""instbench verify --compare-backend, runnable without a GPU.

The same backend twice (cpu vs cpu) must give bit-identical outputs (the CPU backend is
deterministic at a fixed thread count), both runs must match the timm reference within the usual
tolerances, backend vs backend is held to the tighter pair tolerance in bf16, and the JSON/table reports must carry all three comparisons (the JSON valid against schemas/verify-v1.json).  On a machine without a
usable GPU, --compare-backend cuda fails with a clear message (exit 1); bad values exit 2.
usage: cuda_verify_compare.py INSTBENCH REFERENCE
"""
import json
import os
import subprocess
import sys

import jsonschema

exe, ref = sys.argv[1], sys.argv[2]
fails = []
SCHEMA = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas",
                                     "verify-v1.json")))


def run(*args):
    return subprocess.run([exe, "verify", "--reference", ref, *args], capture_output=True, text=True, timeout=600)


r = run("--backend", "cpu", "--compare-backend", "cpu", "--threads", "2", "--format", "json")
if r.returncode != 0:
    fails.append(f"cpu vs cpu exit {r.returncode}: {r.stderr[-500:]}")
else:
    doc = json.loads(r.stdout)
    for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc):   # with "compare": schemas/verify-v1.json
        fails.append(f"not valid against schemas/verify-v1.json: {list(e.absolute_path)}: {e.message}")
        break
    cmp = doc.get("compare") or {}
    if cmp.get("backend") != "cpu":
        fails.append(f"compare.backend = {cmp.get('backend')!r}")
    vb, vr = cmp.get("vs_backend", {}), cmp.get("vs_reference", {})
    names = [c["name"] for c in doc["checks"]]
    if [c["name"] for c in vb.get("checks", [])] != names or [c["name"] for c in vr.get("checks", [])] != names:
        fails.append("the three comparisons do not cover the same tensors")
    if not any(n.startswith("grad.") for n in names) or "logits" not in names:
        fails.append(f"checks miss logits or gradients: {names[:5]}")
    for c in vb.get("checks", []):
        if c["max_abs"] != 0:
            fails.append(f"cpu vs cpu differs on {c['name']}: max_abs {c['max_abs']}")
            break
    for a, b in zip(doc["checks"], vr.get("checks", [])):
        if a["max_abs"] != b["max_abs"]:
            fails.append(f"{a['name']}: the two runs' errors against timm differ ({a['max_abs']} vs {b['max_abs']})")
            break
    # bf16 backend vs backend: the pair tolerance (docs/usage.md: autocast's rounding points, fused
    # attention rounding P before normalising), not timm's cosine
    if doc["precision"] == "bf16":
        for c in vb.get("checks", []):
            want = {"logits": ("rel_l2", 1e-2)}.get(c["name"], ("rel_l2", 2e-2) if c["name"].startswith("grad.")
                                                   else None)
            if want and (c["metric"], c["limit"]) != want:
                fails.append(f"backend vs backend {c['name']}: {c['metric']} <= {c['limit']}, want {want[0]} <= {want[1]}")
                break
    if not (doc["pass"] and vb.get("pass") and vr.get("pass")):
        fails.append("a comparison failed")
    if any("compare_backend" not in l for l in doc["losses"]):
        fails.append("losses lack the second backend's values")

r = run("--backend", "cpu", "--compare-backend", "cpu", "--threads", "2", "--format", "table")
out = r.stdout
if r.returncode != 0 or out.count("== ") != 3 or "cpu vs cpu" not in out or "\nPASS: " not in out:
    fails.append(f"table output (exit {r.returncode}):\n{out[-800:]}")

r = run("--compare-backend", "gpu")
if r.returncode != 2 or "--compare-backend: 'gpu' is not cpu or cuda" not in r.stderr:   # the one wording (cmd/args.c)
    fails.append(f"--compare-backend gpu: exit {r.returncode}, {r.stderr.strip()}")

probe = subprocess.run([exe, "verify", "--reference", ref, "--backend", "cuda"], capture_output=True, text=True,
                       timeout=600)
if "not available" in probe.stderr:   # no GPU here: the comparison must fail cleanly
    r = run("--compare-backend", "cuda")
    if r.returncode != 2 or "not available" not in r.stderr:   # a usage error, as in measure
        fails.append(f"--compare-backend cuda without a GPU: exit {r.returncode}, {r.stderr.strip()}")

for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
