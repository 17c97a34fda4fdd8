#!/usr/bin/env python3
"""One piece of advice per failure, and it works when followed: `rank` on results nothing can price
says on stderr (its last line) what to do, naming only flags rank has, and the report on stdout
(the row's unpriced_reason, JSON) says the same flag; running rank again with that advice applied
(USD and R filled in) ranks a row.  Cases: a machine off EC2 (hostname, no instance type), an
instance type without a region.  Offline: the shipped snapshot prices.
Usage: rank_advice.py INSTBENCH"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")] + [HERE]
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures, offline_env  # noqa: E402

BIN = sys.argv[1]
FLAGS = set(re.findall(r"^  (?:-\w, )?(--[a-z-]+)", subprocess.run([BIN, "rank", "--help"], capture_output=True,
                                                                     text=True).stdout, re.M))
check("--price" in FLAGS and "--region" in FLAGS, f"rank --help lists {sorted(FLAGS)}")


def rank(d, *args):
    return subprocess.run([BIN, "rank", "--format", "json", *args], cwd=d, env=offline_env(d), capture_output=True,
                          text=True, timeout=120)


def follow(advice):
    """The flags of the advice's `rank ...` suggestion, placeholders filled in."""
    m = re.search(r"rank (--price \S+=USD|--region R)", advice) or re.search(r"with (--region R)\b", advice)
    if not m:
        return None
    return m.group(1).replace("=USD", "=0.75").replace("--region R", "--region us-east-1").split()


# (name, result, rank's flags, the advice); spot rows of a machine off EC2 are priced by NAME:spot=USD
# (rank --help's --price), whether or not it has an on-demand price (measure --hourly-cost records one)
cases = (("off EC2", fx.result(None, None, 1, 1, "NVIDIA A10G", 300.0, host="labbox"), [], "--price labbox=USD"),
         ("no region", fx.result("g5.xlarge", None, 1, 1, "NVIDIA A10G", 300.0), [], "--region"),
         ("off EC2, spot", fx.result(None, None, 1, 1, "NVIDIA A10G", 300.0, host="labbox"),
          ["--source", "snapshot", "--market", "spot"], "--price labbox:spot=USD"),
         ("off EC2 with an on-demand price, spot", fx.result(None, None, 1, 1, "NVIDIA A10G", 300.0, host="vm",
                                                             hourly_cost=(1.5, "on-demand")),
          ["--source", "snapshot", "--market", "spot"], "--price vm:spot=USD"))
for name, res, extra, want in cases:
    d = tempfile.mkdtemp(prefix="rank-advice-")
    try:
        fx.write_json(os.path.join(d, "r.json"), res)
        p = rank(d, *extra, "r.json")
        last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
        check(p.returncode == 1, f"{name}: exit {p.returncode}, want 1 (nothing priced)")
        used = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", last)) - {"--hourly-cost"}   # measure's flag, said as such
        check(used and used <= FLAGS, f"{name}: the advice names flags rank lacks ({used - FLAGS}): {last}")
        check(want in last, f"{name}: stderr's advice does not say {want}: {last}")
        try:
            reasons = [r.get("unpriced_reason") or "" for r in json.loads(p.stdout)["rows"]]
        except (ValueError, KeyError):
            reasons = []
        check(reasons and all(want in r for r in reasons), f"{name}: stdout's reasons disagree with stderr ({want}): {reasons}")
        flags = follow(last)
        check(flags is not None, f"{name}: no rank flags to follow in: {last}")
        if flags:
            q = rank(d, *extra, *flags, "r.json")
            try:
                rows = [r for r in json.loads(q.stdout)["rows"] if r.get("rank") == 1 and r.get("usd_per_hour")]
            except (ValueError, KeyError):
                rows = []
            check(q.returncode == 0 and rows, f"{name}: rank {' '.join(flags)} (the advice followed): exit {q.returncode}, "
                  f"no ranked row: {q.stderr.strip()[-300:]}")
        print(f"{name}: {last}")
    finally:
        shutil.rmtree(d, ignore_errors=True)

# Only the markets bought ahead, for a machine off EC2: neither is sold for it, so there is no row
# (not an unpriced one) and no "live only" warning about rows that do not exist; the advice names the
# markets it can be ranked on and its price, and following it ranks a row.
for market in ("savings-plan", "capacity-block"):
    d = tempfile.mkdtemp(prefix="rank-advice-")
    try:
        fx.write_json(os.path.join(d, "r.json"), fx.result(None, None, 1, 1, "NVIDIA A10G", 300.0, host="labbox"))
        p = rank(d, "--source", "snapshot", "--market", market, "r.json")
        last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
        check(p.returncode == 1, f"{market}, off EC2: exit {p.returncode}, want 1")
        check("sold for EC2 instance types" in last and "--market on-demand" in last and "--price labbox=USD" in last,
              f"{market}, off EC2: the advice does not say why and what to do: {last}")
        check("rows are unpriced" not in p.stderr, f"{market}, off EC2: warns of rows that do not exist: {p.stderr}")
        q = rank(d, "--source", "snapshot", "--market", "on-demand", *follow(last) or [], "r.json")
        rows = [r for r in json.loads(q.stdout or "{}").get("rows", []) if r.get("rank") == 1] if q.returncode == 0 else []
        check(rows, f"{market}, off EC2: the advice followed ranks nothing: exit {q.returncode} {q.stderr[-200:]}")
        print(f"{market}, off EC2: {last}")
    finally:
        shutil.rmtree(d, ignore_errors=True)

# Mixed kinds (one machine off EC2, one SageMaker type): the advice names the first, and never says
# the others are like it.
d = tempfile.mkdtemp(prefix="rank-advice-")
try:
    fx.write_json(os.path.join(d, "a.json"), fx.result(None, None, 1, 1, "NVIDIA A10G", 300.0, host="labbox"))
    fx.write_json(os.path.join(d, "b.json"), fx.result("ml.g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 300.0,
                                                       timestamp="2026-11-21T11:00:00Z"))
    p = rank(d, "--source", "snapshot", "--market", "savings-plan", "a.json", "b.json")
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    check(p.returncode == 1 and "sold for EC2 instance types" in last and "like every configuration" not in last
          and "every other configuration here is SageMaker's or off EC2" in last,
          f"savings-plan, off EC2 and SageMaker: the advice misstates the others: {p.returncode} {last}")
finally:
    shutil.rmtree(d, ignore_errors=True)
print(f"rank_advice: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
