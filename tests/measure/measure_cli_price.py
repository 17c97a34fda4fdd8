"""measure --hourly-cost: the user's price per node-hour is recorded in the result as
{"usd_per_hour", "market", "source": "user"} (the run's market, on-demand when unknown), the file
still validates against schemas/result-v1.json, a run without the flag has no "price" at all (so
older results stay what they were), and every value that is not a positive finite price is a
usage error (exit 2, a message naming the flag, no file)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from testlib import usd  # noqa: E402
from measure_common import BIN, TINY, VALIDATOR, check, env, finish, run, scratch, validate  # noqa: E402

# fp32: bf16 needs AVX512_BF16 on the oneDNN this is built against, and the price is not about precision.
BASE = TINY + ["--precision", "fp32", "--steps", "1", "--warmup", "0"]

d = scratch()
for value, extra, market in [("0.45", [], "on-demand"), ("1e-3", [], "on-demand"),
                             ("2.5", ["--instance-type", "g5.xlarge", "--region", "us-east-1", "--market", "spot",
                                      "--identity-mismatch", "ok"],
                              "spot"),
                             ("100000", ["--market", "on-demand"], "on-demand")]:
    out = os.path.join(d, f"r-{value}.json")
    p = run(BASE + ["--hourly-cost", value, "--output", out] + extra)
    what = f"--hourly-cost {value} {' '.join(extra)}"
    if not check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-300:]}"):
        continue
    doc = json.load(open(out))
    validate(doc, what)
    want = {"usd_per_hour": float(value), "market": market, "source": "user"}
    check(doc.get("price") == want, f"{what}: price {doc.get('price')} != {want}")

# End to end: rank prices the real result (no instance type: named by its hostname) at its recorded
# cost, source "user", samples per dollar = samples/s x 3600 / price, from the file itself.
out = os.path.join(d, "r-0.45.json")
if os.path.exists(out):
    doc = json.load(open(out))
    p = subprocess.run([BIN, "rank", "--format", "json", out], capture_output=True, text=True, env=env())
    rows = [r for r in json.loads(p.stdout)["rows"] if r["rank"] is not None] if p.returncode == 0 else []
    sps = doc["measurement"]["samples_per_second"]
    if check(len(rows) == 1, f"rank of a --hourly-cost result: exit {p.returncode}, rows {rows}: {p.stderr[-300:]}"):
        r = rows[0]
        check(r["configuration"] == f"1 x {doc['instance']['hostname']} on-demand" and r["price_source"] == "user"
              and r["usd_per_hour"] == 0.45 and abs(r["samples_per_dollar"] - sps * 3600 / 0.45) <= 1e-9 * r["samples_per_dollar"],
              f"rank of a --hourly-cost result: {r}")

# No flag: no "price" key (not even null), and the document is what older builds wrote.
out = os.path.join(d, "plain.json")
p = run(BASE + ["--output", out])
if check(p.returncode == 0, f"no --hourly-cost: exit {p.returncode}: {p.stderr[-300:]}"):
    doc = json.load(open(out))
    validate(doc, "no --hourly-cost")
    check("price" not in doc, f"no --hourly-cost: result has price {doc.get('price')}")

# The table summary says what was recorded.
p = run(BASE + ["--hourly-cost", "0.75", "--output", os.path.join(d, "t.json"), "--format", "table"])
# money is shown as every table shows it (testlib.usd: "$0.75")
check(p.returncode == 0 and f"{usd(0.75)} per node-hour" in p.stdout, f"summary lacks the price: {p.stdout[-400:]}")

# The schema itself: an old result (no price) and a hand-written one with a price both validate;
# a price of 0, a negative or a missing market do not.
doc = json.load(open(os.path.join(d, "plain.json")))
for price, ok in [({"usd_per_hour": 3.2, "market": "spot", "source": "user"}, True),
                  ({"usd_per_hour": 0, "market": "on-demand", "source": "user"}, False),
                  ({"usd_per_hour": -1, "market": "on-demand", "source": "user"}, False),
                  ({"usd_per_hour": 1, "source": "user"}, False),
                  ({"usd_per_hour": 1, "market": "on-demand", "source": "snapshot"}, False)]:
    errs = list(VALIDATOR.iter_errors(dict(doc, price=price)))
    check((not errs) == ok, f"schema on price {price}: {'valid' if not errs else errs[0].message}, want "
                            f"{'valid' if ok else 'invalid'}")

# Bad values: exit 2, the flag named, nothing written.
for bad in ["nan", "NaN", "inf", "-inf", "0", "-1", "abc", "", "1e9", "1e-9", "0x", "1,5", "3 "]:
    cwd = scratch()
    p = run(BASE + ["--hourly-cost", bad], cwd=cwd)
    check(p.returncode == 2, f"--hourly-cost {bad!r}: exit {p.returncode}, want 2")
    # (a value with whitespace around it is refused by the one trimming rule, which says so: cli_flag_rules)
    check("--hourly-cost" in p.stderr and ("price" in p.stderr or "whitespace" in p.stderr),
          f"--hourly-cost {bad!r}: message {p.stderr[-200:]!r}")
    check(p.stdout == "" and os.listdir(cwd) == [], f"--hourly-cost {bad!r}: wrote something")
p = run(BASE + ["--hourly-cost"])
check(p.returncode == 2 and "needs a value" in p.stderr, f"--hourly-cost without a value: {p.returncode}")

p = run(["--help"])
check(p.returncode == 0 and "--hourly-cost" in p.stdout, "--help does not document --hourly-cost")
finish("measure_cli_price")
