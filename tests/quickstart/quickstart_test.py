#!/usr/bin/env python3
"""scripts/quickstart.sh as a newcomer runs it (offline, no AWS credentials, off EC2, a fresh clone:
scripts/, docs/ and build/instbench only) ends with a ranking of real measurements, each row saying
where its throughput and its price come from, and prints a command that ranks the newcomer's own
results; that command, followed, ranks them.

Every figure is checked against references that are not instbench: the samples/s of each shipped
row against the median of the result files the row names (read here), its price against the
vendored AWS price CSV (data/aws-accelerated-prices.csv, the snapshot's source) for the one type
with the run's GPU, samples/$ from the formula in README.md.
Usage: quickstart_test.py INSTBENCH REPO"""
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import check, failures, offline_env  # noqa: E402

BIN, REPO = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

d = tempfile.mkdtemp(prefix="quickstart-")
clone = os.path.join(d, "clone")
os.makedirs(os.path.join(clone, "build"))
for sub in ("scripts", "docs"):
    os.symlink(os.path.join(REPO, sub), os.path.join(clone, sub))
os.symlink(BIN, os.path.join(clone, "build", "instbench"))

# A short window and no checkpoint: the script passes its arguments on to measure (the last
# --duration given counts).
p = subprocess.run([os.path.join(clone, "scripts", "quickstart.sh"), "--duration", "3", "--warmup", "1",
                    "--checkpoint", "off"], cwd=d, env=offline_env(d), capture_output=True, text=True, timeout=900)
out = p.stdout
print(out)
check(p.returncode == 0, f"quickstart.sh exit {p.returncode}: {p.stderr[-1500:]}")
check(os.path.exists(os.path.join(clone, "instbench-results", "quickstart.json")), "no instbench-results/quickstart.json")

# --- the prices step compares four g5.xlarge with one g5.12xlarge, as its heading says
# (one region for every row: said above the table, not in a column)
m = re.search(r"^region: us-east-1\n(?:.*\n){2}(?:.*\n)*?g5\.xlarge +4 ", out, re.M)
check(m is not None, "the prices table shows no 4-node g5.xlarge row in us-east-1 (--nodes 4,1)")

# --- the shipped ranking
sec = out.split("== real measurements shipped with instbench", 1)
check(len(sec) == 2, "no ranking of the shipped real measurements")
shipped = sec[1].split("\n== ", 1)[0] if len(sec) == 2 else ""
rows = re.findall(r"^ +(\d+)  (.+?)  +([\d,.]+)  +\$([\d,.]+)  +([\d,]+)\n +throughput: (.*)\n +price: (.*)$",
                  shipped, re.M)
check(len(rows) >= 2, f"want 2 or more ranked rows, got {len(rows)}:\n{shipped}")

# The one EC2 type of the vendored CSV with one 80 GB H100, and its us-east-1 on-demand price.
types = {}
with open(os.path.join(REPO, "data", "aws-accelerated-prices.csv")) as f:
    for r in csv.DictReader(f):
        if r["accelerator"] == "H100" and float(r["accelerator_count"]) == 1 and r["region"] == "us-east-1":
            types.setdefault(r["instance_type"], set()).add(float(r["on_demand_usd_per_hour"]))
check(len(types) == 1 and len(next(iter(types.values()))) == 1, f"not one 1 x H100 type in us-east-1: {types}")
(h100_type, (price,)), = types.items() if len(types) == 1 else ((None, (None,)),)

last = None
for rank, conf, sps, usd, spd, tfrom, pfrom in rows:
    files = re.findall(r"docs/gpu-runs/\S+?\.json", tfrom)
    check(files, f"row {rank} names no result file: {tfrom}")
    runs = []
    for fpath in files:
        with open(os.path.join(REPO, fpath)) as f:
            res = json.load(f)
        check(res.get("schema") == "instbench.result/v1", f"{fpath} is no instbench result")
        runs.append(res["measurement"]["samples_per_second"])
        att = res["hardware"].get("attention")
        check(f"{att} attention" in conf, f"row {rank} ({conf}) names {fpath}, whose attention is {att}")
    want = statistics.median(runs)
    check(abs(float(sps.replace(",", "")) - want) <= 0.06, f"row {rank}: samples/s {sps}, the files' median {want:.2f}")
    check(f"median of {len(runs)} run{'' if len(runs) == 1 else 's'}:" in tfrom, f"row {rank}: run count not said: {tfrom}")
    check(abs(float(usd.replace(",", "")) - price) < 0.005, f"row {rank}: ${usd}/h, {h100_type} costs ${price}")
    check("ASSUMED" in pfrom and h100_type in pfrom and "not on EC2" in pfrom,
          f"row {rank}: the price does not say it is an assumption, and of which type: {pfrom}")
    spd_v = float(spd.replace(",", ""))
    check(abs(spd_v - want * 3600 / price) <= 1, f"row {rank}: samples/$ {spd}, want {want * 3600 / price:,.0f}")
    check(last is None or spd_v <= last, f"row {rank} ranks below a row with fewer samples/$")
    last = spd_v

# --- every shipped GPU is shown: a row the vendored CSV has no single type for stays unpriced,
# saying so and naming the types that have its GPU; its samples/s is still its files' median
unpriced = re.findall(r"^ +-  (.+?)  +([\d,.]+)  +-  +-\n +throughput: (.*)\n +price: (.*)$", shipped, re.M)
gpus = {}
for conf, sps, tfrom, pfrom in unpriced:
    files = re.findall(r"docs/gpu-runs/\S+?\.json", tfrom)
    res = [json.load(open(os.path.join(REPO, f))) for f in files]
    check(files and all(r.get("schema") == "instbench.result/v1" for r in res), f"unpriced row {conf}: files {files}")
    if not res:
        continue
    dev = res[0]["hardware"]["devices"][0]["name"]
    model = dev.replace("NVIDIA ", "").split(" ")[0]
    gpus[model] = conf
    want = statistics.median(r["measurement"]["samples_per_second"] for r in res)
    check(abs(float(sps.replace(",", "")) - want) <= 0.06, f"unpriced row {conf}: samples/s {sps}, median {want:.2f}")
    check(f"({model}, " in conf, f"unpriced row {conf} does not name its GPU {dev}")
    with open(os.path.join(REPO, "data", "aws-accelerated-prices.csv")) as f:
        have = {(r["instance_type"], int(float(r["accelerator_count"]))) for r in csv.DictReader(f)
                if r["accelerator"] == model and r["region"] == "us-east-1"}
    check(have and not any(n == len(res[0]["hardware"]["devices"]) for _, n in have),
          f"row {conf} unpriced, but the CSV has {have}")
    check(pfrom.startswith("none:") and all(t in pfrom for t, _ in have), f"unpriced row {conf}: price {pfrom}")
check("H200" in gpus, f"the shipped H200 runs (docs/gpu-runs/2026-11-30-h200/call2) are not shown: {gpus}\n{shipped}")
for rank, conf, *_ in rows:
    check("(H100, " in conf, f"row {rank} ({conf}) does not name its GPU")

# --- this machine's row and the command that ranks the newcomer's own results
mine = out.split("== this machine, just measured", 1)
check(len(mine) == 2 and "instbench-results/quickstart.json" in mine[-1], "this machine's run is not shown")
check(re.search(r"price: none: this machine is no EC2 instance type", out) is not None,
      "offline, the fresh run was priced although nothing can price it")
cmd = re.search(r"to rank your own results.*\n +(build/instbench rank .*?)(?:    \(|$)", out, re.M)
check(cmd is not None, "no command to rank your own results")
if cmd:
    argv = cmd.group(1).split()
    argv = [a.replace("=USD", "=0.40") for a in argv]
    r = subprocess.run(argv, cwd=clone, env=offline_env(d), capture_output=True, text=True, timeout=120)
    try:
        ranked = [x for x in json.loads(r.stdout)["rows"] if x.get("rank") == 1 and x.get("usd_per_hour") == 0.4]
    except (ValueError, KeyError):
        ranked = []
    check(r.returncode == 0 and ranked, f"`{' '.join(argv)}` (the advice followed) exit {r.returncode}, no row ranked "
          f"at $0.40/h: {r.stdout[-500:]} {r.stderr[-500:]}")

shutil.rmtree(d, ignore_errors=True)
print(f"quickstart_test: {len(rows)} shipped rows, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
