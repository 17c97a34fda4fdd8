"""docs/usage.md's "AWS against machines AWS cannot price" example is true: its `instbench rank`
commands are run as written (on result files standing for its two `measure` lines, with the
samples/s its rows show) and every row it shows must be in the table they print, in that order,
with those figures; and those figures must equal an independent computation from the shipped
price snapshot (configs/prices-snapshot.json), the recorded --hourly-cost and the --price flags.
No AWS credentials and an empty cache, so `auto` prices come from the snapshot as the page says.
Usage: rank_doc_example.py INSTBENCH docs/usage.md SNAPSHOT.json"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN, PAGE, SNAPSHOT = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
from testlib import check, failures, usd as fmt_usd


def fail_now(msg):
    print(f"docs/usage.md example: {msg}")
    sys.exit(1)


text = open(PAGE, encoding="utf-8").read()
m = re.search(r"<!-- tests/rank/rank_doc_example\.py.*?-->\s*```sh\n(.*?)```", text, re.S)
if not m:
    fail_now("no example block marked for tests/rank/rank_doc_example.py")
lines = m.group(1).splitlines()

ROW = re.compile(r"^#\s+(\d+)(\*?)\s+(\d+ x \S+ (?:on-demand|spot))\s+(\$[\d,.]+)\s+([\d,.]+)\s+([\d,]+)\s+(\w+)\s*$")
measures, commands = [], []   # commands: [argv, [rows shown]]
for ln in lines:
    if ln.startswith("instbench measure "):
        measures.append(shlex.split(ln)[2:])
    elif ln.startswith("instbench rank"):
        commands.append([shlex.split(ln)[2:], []])
    elif ROW.match(ln):
        if not commands:
            fail_now(f"a row before any rank command: {ln}")
        commands[-1][1].append(ROW.match(ln).groups())
if len(measures) != 2 or not commands or not all(rows for _, rows in commands):
    fail_now(f"expected two measure lines and rank commands each followed by rows; got {len(measures)} measures, "
             f"{[len(r) for _, r in commands]} rows")


def flag(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


# Which machine is which: the measure line with --hourly-cost is the one AWS cannot price; the
# names and throughputs come from the rows shown.
is_type = re.compile(r"^(ml\.)?[a-z0-9-]+\.[a-z0-9-]+$")
shown = {}
for _, rows in commands:
    for r in rows:
        name = r[2].split(" ")[2]
        shown[name] = float(r[4].replace(",", ""))
types = [n for n in shown if is_type.match(n)]
hosts = [n for n in shown if not is_type.match(n)]
if len(types) != 1 or len(hosts) != 1:
    fail_now(f"expected one instance type and one host in the rows, got {sorted(shown)}")
itype, host = types[0], hosts[0]
user_m = [a for a in measures if flag(a, "--hourly-cost")]
aws_m = [a for a in measures if not flag(a, "--hourly-cost")]
if len(user_m) != 1 or len(aws_m) != 1:
    fail_now("expected exactly one measure line with --hourly-cost")
recorded = float(flag(user_m[0], "--hourly-cost"))
check(flag(aws_m[0], "--model") == flag(user_m[0], "--model") and
      flag(aws_m[0], "--batch-size") == flag(user_m[0], "--batch-size"),
      "the two measure lines measure different workloads: rank would never compare them")

# The snapshot's prices for the type, in the region the g5.xlarge result records.
REGION = "us-east-1"
snap = json.load(open(SNAPSHOT))
rec = [p for p in snap["prices"] if p["instance_type"] == itype and p["region"] == REGION]
if len(rec) != 1:
    fail_now(f"{itype} {REGION} not in the snapshot")
snap_price = {"on-demand": rec[0]["on_demand"]["usd_per_hour"],
              "spot": min(z["usd_per_hour"] for z in rec[0]["spot"]["zones"])}

env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
with tempfile.TemporaryDirectory() as d:
    env.update(HOME=d, XDG_CACHE_HOME=os.path.join(d, "cache"), AWS_EC2_METADATA_DISABLED="true",
               AWS_SHARED_CREDENTIALS_FILE=os.path.join(d, "none"), AWS_CONFIG_FILE=os.path.join(d, "none"))
    batch = int(flag(aws_m[0], "--batch-size"))
    files = {flag(aws_m[0], "--output"): fx.result(itype, REGION, 1, 1, "NVIDIA A10G", shown[itype], batch=batch,
                                                    host="ip-172-31-5-20"),
             flag(user_m[0], "--output"): fx.result(None, None, 1, 1, "NVIDIA GeForce RTX 4090", shown[host],
                                                     batch=batch, host=host, hourly_cost=(recorded, "on-demand"))}
    for path, doc in files.items():
        fx.write_json(os.path.join(d, path), doc)
    for argv, rows in commands:
        p = subprocess.run([BIN, "rank"] + argv + ["--format", "table"], capture_output=True, text=True, cwd=d,
                           env=env)
        what = "instbench rank " + " ".join(argv)
        if not check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-400:]}"):
            continue
        out = [ln for ln in p.stdout.splitlines() if re.match(r"^\s*\d+\*?\s+\d+ x ", ln)]
        check(len(out) == len(rows), f"{what}: {len(out)} ranked rows, the page shows {len(rows)}")
        prices = {}
        for spec in [argv[i + 1] for i, a in enumerate(argv) if a == "--price"]:
            name, usd = spec.split("=")
            name, _, market = name.partition(":")
            prices[(name, market or "on-demand")] = float(usd)
        for got, (rank, star, label, usd, sps, spd, source) in zip(out, rows):
            # In the printed row, in order: rank, configuration, $/h, samples/s, samples/$, source.
            pat = (rf"^\s*{re.escape(rank + star)}\s+{re.escape(label)}\s.*\s{re.escape(usd)}\s+{re.escape(sps)}\s+"
                   rf"{re.escape(spd)}\s.*\s{source}\b")
            check(re.search(pat, got) is not None, f"{what}: page row\n    {rank}{star} {label} {usd} {sps} {spd} "
                                                   f"{source}\n  but instbench printed\n    {got.strip()}")
            # The same figures from first principles.
            name, market = label.split(" ")[2], label.split(" ")[3]
            if (name, market) in prices:
                price, src = prices[(name, market)], "user"
            elif name == host:
                price, src = recorded, "user"
            else:
                price, src = snap_price[market], "snapshot"
            want_spd = shown[name] * 3600 / price
            check(usd == fmt_usd(price) and spd == f"{want_spd:,.0f}" and source == src,
                  f"{what}: page row {label}: {usd} $/h, {spd} samples/$, {source}; computed {fmt_usd(price)}, "
                  f"{want_spd:,.0f}, {src}")

if failures:
    sys.exit(1)
print("docs/usage.md example: all checks passed")
