#!/usr/bin/env python3
"""The quick start's last step: a ranking made only of real measurements, each row saying where its
throughput and its price come from.

Rows: the instbench runs shipped under docs/gpu-runs/ (real result files of one H100 and one H200,
written by `instbench measure` or the benchmark script, not edited) and, when given, this machine's fresh result.  Different workloads
are never ranked together (rank refuses to), so each workload gets its own ranking.

Prices, only where one is true:
  - a result that recorded its own hourly cost (measure --hourly-cost): the user's price, as such;
  - a result measured on EC2 (its instance type known): rank prices it itself (live, cache, snapshot);
  - a shipped run off EC2: the shipped snapshot's on-demand (and spot, where it has one) price of the
    one EC2 type whose hardware is the run's (same GPU model, count and memory), marked as that
    assumption; no such type, no price: the row stays unpriced and says so.
The figures are rank's (`rank --format json`); this script only chooses prices and labels rows.
Usage: quickstart_rank.py INSTBENCH [YOUR_RESULT.json]"""
import json
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGION = "us-east-1"
# The shipped runs ranked, one list per GPU: vit_base_patch16_224 bf16 batch-128 device-data runs made
# with the cuDNN attention build (measure's and the benchmark script's runs; the traced and
# non-deterministic variants, which measure something else, and the H200's calls before its last
# change, are left out; the H200's are the latest code's: the torch step and the A/B's B runs of
# its second call of 2026-11-30).
SHIPPED = [["docs/gpu-runs/2026-11-27-h100-cudnn/" + f for f in (
    "measure.json", "bench_instbench.json", "bench_instbench_unfused.json",
    "run2/measure.json", "run2/bench_instbench.json", "run2/bench_instbench_unfused.json")],
    ["docs/gpu-runs/2026-11-30-h200/call2/" + f for f in (
        "bench_instbench.json", "ab/b1.json", "ab/b2.json", "bench_instbench_unfused.json")]]

def run_json(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode not in (0, 1):   # 1: nothing priced, the report is still printed
        sys.stderr.write(p.stderr)
        sys.exit(f"quickstart: `{' '.join(argv)}` failed (exit {p.returncode})")
    try:
        return json.loads(p.stdout)
    except ValueError:
        sys.stderr.write(p.stderr)
        sys.exit(f"quickstart: `{' '.join(argv)}` printed no JSON")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def gpu_key(result):
    """(GPU model as AWS's catalogue names it, count, memory GiB) of a result, or None (CPU)."""
    hw = result.get("hardware") or {}
    devs = hw.get("devices") or []
    if hw.get("backend") == "cpu" or not devs:
        return None
    name = devs[0].get("name") or ""
    m = re.search(r"\b([A-Z]+[0-9]+[A-Za-z]*)\b", name.replace("NVIDIA", ""))
    gib = round((devs[0].get("memory_bytes") or 0) / 2**30)
    return (m.group(1) if m else name, hw.get("accelerator_count") or len(devs), gib) if m else None


def same_hardware_type(binary, key):
    """The one EC2 type of the snapshot with KEY's GPUs (model, count, memory within 10%), with its
    prices row; None when none or several match (no true single price)."""
    model, count, gib = key
    # by model only: a count no type has (1 x H200: AWS rents H200s eight at a time) leaves prices
    # with no row, which it refuses as an empty answer
    p = subprocess.run([binary, "prices", "--source", "snapshot", "--region", REGION, "--accelerator", model,
                        "--format", "json"], capture_output=True, text=True)
    try:
        doc = json.loads(p.stdout) if p.returncode == 0 else {}
    except ValueError:
        doc = {}
    every = doc.get("rows") or doc.get("prices") or []
    rows = [r for r in every
            if (r.get("instance") or {}).get("accelerator_count") == count
            and abs(((r.get("instance") or {}).get("accelerator_memory_gib") or 0) - gib) <= 0.1 * gib]
    others = sorted({f"{r['instance_type']} ({(r.get('instance') or {}).get('accelerator_count')} x {model})"
                     for r in every if r.get("instance_type")})
    return (rows[0], doc.get("snapshot") or {}, others) if len(rows) == 1 else (None, None, others)

def fmt(x, money=False, digits=1):
    if x is None:
        return "-"
    return f"${x:,.2f}" if money else f"{x:,.{digits}f}"


def table(title, rows):
    """ROWS: (rank's row, how to say where its throughput comes from, ... its price)."""
    print(f"\n== {title}")
    if not rows:
        print("   (no row)")
        return
    print(f"{'RANK':>4}  {'CONFIGURATION':46}  {'SAMPLES/s':>9}  {'$/h':>7}  {'SAMPLES/$':>11}")
    for r, throughput_from, price_from in rows:
        conf = r["configuration"]
        if r.get("backend") == "cuda" and "(" not in conf:   # rank names the variant where runs differ by it
            conf += f" (cuda, {r.get('attention') or 'unrecorded'} attention)"
        # the GPU for the backend: every shipped run's host is "vm", so the GPU tells the rows apart
        gpu = (r.get("accelerator") or "").replace("NVIDIA ", "").split(" ")[0]
        conf = conf.replace("(cuda,", f"({gpu},", 1) if gpu else conf
        print(f"{r['rank'] if r.get('rank') is not None else '-':>4}  {conf:46}  {fmt(r['samples_per_second']):>9}  "
              f"{fmt(r.get('usd_per_hour'), money=True):>7}  {fmt(r.get('samples_per_dollar'), digits=0):>11}")
        print(f"      throughput: {throughput_from(r)}")
        print(f"      price: {price_from(r)}")


def files_by_config(paths):
    """{(hostname, attention): [path]}: which result files a rank row's median comes from."""
    out = {}
    for p in paths:
        res = load(os.path.join(REPO, p) if not os.path.isabs(p) else p)
        k = ((res.get("instance") or {}).get("hostname"), (res.get("hardware") or {}).get("attention") or "")
        out.setdefault(k, []).append(p)
    return out


def shipped_group(binary, files):
    """rank's rows for one GPU's shipped runs, priced at the one EC2 type with that hardware (or
    unpriced), each with how to say where its throughput and its price come from."""
    first = load(os.path.join(REPO, files[0]))
    host = first["instance"]["hostname"]
    key = gpu_key(first)
    row, snap, others = same_hardware_type(binary, key) if key else (None, None, [])
    argv = [binary, "rank", "--format", "json"]
    if row:
        od, spot = row.get("on_demand") or {}, row.get("spot") or {}
        if od.get("usd_per_hour") is not None:
            argv += ["--price", f"{host}={od['usd_per_hour']}"]
        if spot.get("min_usd_per_hour") is not None:
            argv += ["--price", f"{host}:spot={spot['min_usd_per_hour']}"]
    doc = run_json(argv + [os.path.join(REPO, p) for p in files])
    where = files_by_config(files)
    dev = first["hardware"]["devices"][0]["name"]
    count = first["hardware"]["accelerator_count"]
    when = first["timestamp"][:10]

    def throughput_from(r):
        runs = where.get((r.get("host"), r.get("attention") or ""), [])
        return (f"measured by instbench on {count} x {dev} (not EC2), {when}, "
                f"median of {r.get('runs')} run{'' if r.get('runs') == 1 else 's'}: {', '.join(runs)}")

    def price_from(r):
        if r.get("usd_per_hour") is None:
            return (f"none: no single EC2 type of the shipped snapshot has {count} x {dev}, so no price is true "
                    f"for this row (with its GPU: {', '.join(others) or 'none'})")
        return (f"ASSUMED: the shipped snapshot's {r['market']} price of {row['instance_type']} in {REGION} "
                f"({snap.get('date', '?')}), the one EC2 type with this row's GPUs ({key[1]} x {key[0]}, "
                f"{row['instance']['accelerator_memory_gib']} GiB each); "
                f"the run itself was not on EC2")
    return doc, [(r, throughput_from, price_from) for r in doc.get("rows") or []]


def shipped_ranking(binary):
    """One table of every shipped GPU's rows.  Their runs share a hostname, so each GPU is ranked by a
    call of its own with its own assumed price; the ranks stay rank's as long as one GPU at most is
    priced (the others' rows are unranked)."""
    docs, rows, ranked_groups = [], [], 0
    for files in SHIPPED:
        doc, group = shipped_group(binary, files)
        docs.append(doc)
        rows += group
        ranked_groups += any(r.get("rank") is not None for r, _, _ in group)
    if ranked_groups > 1:
        sys.exit("quickstart: more than one shipped GPU is priced: rank them in one call (distinct hostnames)")
    rows.sort(key=lambda x: (x[0].get("rank") is None, x[0].get("rank") or 0, -x[0]["samples_per_second"]))
    wl = docs[0].get("workload") or {}
    table(f"real measurements shipped with instbench, ranked by samples per dollar ({wl.get('model')} "
          f"{wl.get('precision')}, batch {wl.get('batch_size_per_device')}, {wl.get('data')} data)", rows)

def own_ranking(binary, path):
    res = load(path)
    doc = run_json([binary, "rank", "--format", "json", path])
    wl = doc.get("workload") or {}

    def throughput_from(r):
        return f"measured just now on this machine ({res['hardware'].get('cpu_model')}): {path}"

    def price_from(r):
        if r.get("usd_per_hour") is None:
            return ("none: this machine is no EC2 instance type, so AWS cannot price it; "
                    "rank it at your cost as the command below says")
        if r.get("price_source") == "user":
            return "yours (measure --hourly-cost, recorded in the result)"
        return f"{r.get('price_source')} price of {r.get('instance_type')} in {r.get('region')} (AWS)"
    table(f"this machine, just measured ({wl.get('model')} {wl.get('precision')}, batch "
          f"{wl.get('batch_size_per_device')}, {wl.get('data')} data; a different workload, so its own ranking)",
          [(r, throughput_from, price_from) for r in doc.get("rows") or []])
    return res


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.rsplit("Usage: ", 1)[1])
    binary = sys.argv[1]
    shipped_ranking(binary)
    if len(sys.argv) == 3:
        res = own_ranking(binary, sys.argv[2])
        host = (res.get("instance") or {}).get("hostname") or "HOSTNAME"
        priced = (res.get("instance") or {}).get("type") or (res.get("price") or {}).get("usd_per_hour")
        print("\nto rank your own results (every file measure wrote to ./instbench-results/):")
        if priced:
            print(f"   {binary} rank instbench-results/")
        else:
            safe = re.fullmatch(r"[A-Za-z0-9._-]+", host) is not None
            print(f"   {binary} rank --price {host if safe else 'HOSTNAME'}=USD instbench-results/"
                  f"    (USD: what this machine costs you an hour)")


if __name__ == "__main__":
    main()
