"""Real CPU runs (fp32/bf16 x host/device data x ranks 1/2) validate against schemas/result-v1.json;
--append adds exactly one valid line per run, equal to the file written; --output - is the JSON."""
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import TINY, check, finish, run, scratch, validate  # noqa: E402

AVX512 = " avx512f " in " " + open("/proc/cpuinfo").read().replace("\n", " ") + " "
d = scratch()
jsonl = os.path.join(d, "all.jsonl")
docs = []
for prec, data, ranks in itertools.product(["fp32", "bf16"], ["host", "device"], [1, 2]):
    out = os.path.join(d, f"r-{prec}-{data}-{ranks}.json")
    p = run(TINY + ["--precision", prec, "--data", data, "--ranks", str(ranks), "--steps", "3", "--warmup", "1",
                    "--output", out, "--append", jsonl, "--format", "json"])
    what = f"{prec}/{data}/ranks {ranks}"
    if not check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-500:]}"):
        continue
    doc = json.load(open(out))
    validate(doc, what)
    check(json.loads(p.stdout) == doc, f"{what}: --format json stdout differs from the file")
    w, m, t = doc["workload"], doc["measurement"], doc["topology"]
    check(w["precision"] == prec and w["data"] == data, f"{what}: workload {w['precision']} {w['data']}")
    check(t["world_size"] == ranks and w["global_batch_size"] == 4 * ranks, f"{what}: topology {t}")
    check(m["steps"] == 3 and m["warmup_steps"] == 1, f"{what}: steps {m['steps']} warmup {m['warmup_steps']}")
    # Internal consistency against the definitions in the schema.
    check(abs(m["samples_per_second"] * m["duration_s"] - 3 * 4 * ranks) < 1e-6 * 3 * 4 * ranks,
          f"{what}: samples/s x duration != steps x global batch")
    check(abs(m["samples_per_second_per_device"] * ranks - m["samples_per_second"]) < 1e-9 * m["samples_per_second"],
          f"{what}: per-device samples/s")
    check(abs(m["model_tflops"] - m["samples_per_second"] * w["train_flops_per_sample"] / 1e12) < 1e-9,
          f"{what}: model_tflops")
    if m["mfu"] is not None:
        check(abs(m["mfu"] - m["model_tflops"] / m["peak_tflops"]) < 1e-9, f"{what}: mfu")
        check(m["peak_source"].startswith("measured"), f"{what}: CPU peak must be labelled measured")
    check((m["data_pipeline_samples_per_second"] is None) == (data == "device"), f"{what}: pipeline figure")
    check(doc["hardware"]["backend"] == "cpu" and doc["hardware"]["accelerator_count"] == 0, f"{what}: hardware")
    # How bf16 ran: oneDNN has no bf16 matmul below AVX-512, so a capped run or a CPU without
    # AVX-512 must say emulated (and print it); fp32 runs record nothing.
    bf = doc["hardware"].get("cpu_bf16")
    if prec == "fp32":
        check(bf is None, f"{what}: cpu_bf16 {bf!r} in an fp32 run")
    else:
        check(bf in ("native", "emulated"), f"{what}: cpu_bf16 {bf!r}")
        if os.environ.get("DNNL_MAX_CPU_ISA", "").upper() == "AVX2" or not AVX512:
            check(bf == "emulated", f"{what}: cpu_bf16 {bf!r} without AVX-512")
            check("bf16 on this CPU: emulated" in p.stderr, f"{what}: no 'emulated' line on stderr")
            check("emulated" in (m["peak_source"] or ""), f"{what}: peak not labelled with the emulated path")
    check(doc["instance"]["source"] == "unknown" and doc["instance"]["type"] is None, f"{what}: identity")
    docs.append(doc)

lines = open(jsonl).read().splitlines()
check(len(lines) == len(docs) == 8, f"--append: {len(lines)} lines for {len(docs)} runs (want 8)")
for i, (line, doc) in enumerate(zip(lines, docs)):
    parsed = json.loads(line)
    validate(parsed, f"jsonl line {i}")
    check(parsed == doc, f"jsonl line {i} differs from its result file")

# ONEDNN_MAX_CPU_ISA caps the ISA and is recorded as such (fp32: oneDNN 2.6 has no bf16 matmul below AVX-512).
out = os.path.join(d, "isa.json")
p = run(TINY + ["--precision", "fp32", "--steps", "1", "--warmup", "0", "--output", out], ONEDNN_MAX_CPU_ISA="AVX2")
if check(p.returncode == 0, f"ONEDNN_MAX_CPU_ISA: exit {p.returncode}: {p.stderr[-300:]}"):
    dn = json.load(open(out))["hardware"]["onednn"]
    check(dn["isa_source"] == "env" and dn["max_cpu_isa"] == "AVX2" and dn["isa"] in ("avx2", "avx", "sse41"),
          f"ISA capped by env: {dn}")

# --output -: the JSON on stdout and no file anywhere in the working directory.
cwd = scratch()
p = run(TINY + ["--steps", "2", "--warmup", "0", "--output", "-"], cwd=cwd)
check(p.returncode == 0, f"--output -: exit {p.returncode}: {p.stderr[-300:]}")
if p.returncode == 0:
    validate(json.loads(p.stdout), "--output -")
check(os.listdir(cwd) == [], f"--output - left files: {os.listdir(cwd)}")

# Default path: ./instbench-results/<hostname>-<UTC time>.json; table format prints a summary.
p = run(TINY + ["--steps", "2", "--warmup", "0", "--format", "table"], cwd=cwd)
check(p.returncode == 0, f"default output: exit {p.returncode}: {p.stderr[-300:]}")
files = os.listdir(os.path.join(cwd, "instbench-results")) if os.path.isdir(os.path.join(cwd, "instbench-results")) else []
check(len(files) == 1 and files[0].startswith(os.uname().nodename + "-") and files[0].endswith("Z.json"),
      f"default output file: {files}")
if files:
    validate(json.load(open(os.path.join(cwd, "instbench-results", files[0]))), "default output")
check("samples/s" in p.stdout and not p.stdout.lstrip().startswith("{"), "--format table prints a summary")
finish("measure_cli_schema")
