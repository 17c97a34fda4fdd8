#!/usr/bin/env python3
"""Issue 39's rules that hold for every command's flags (src/cmd/args.c and the parsers it calls):
  - one trimming rule: a value (or a list's item) with whitespace around it is refused, exit 2,
    whatever the flag's kind, and so is a number or duration written with a '+'; the bare value is
    the control (accepted);
  - numbers are plain decimals (docs/usage.md: numbers are strict): every numeric flag of every
    command (the table below; `help --markdown` lists them, and a numeric flag missing from the
    table fails) refuses what strtod alone would take, hex (0x10), hex floats (0x1p4), a leading
    '+' or space, inf and nan, in the number before a unit too (0x10h, +90), exit 2 naming the
    flag (a sweep candidate: the value); the plain value, and the suffixes the docs allow (500h, 20d, 7d, 1e9), are accepted;
  - values from argv are escaped in every message (no ESC, BEL or C1 byte on stderr);
  - impossible dates are refused, never rolled over (Python's calendar says which are impossible);
  - flags of a market not chosen are refused with the reason (rank --plan/--term/--payment without
    the savings-plan market, as --block-duration already is);
  - valid JSON nested 10,000 levels deep is named so by rank, not "invalid JSON";
  - an error about what was typed, found by the parser or by a check below it (a flag's own parser,
    a rule between flags, a value the machine or the model refuses), is in the one usage form,
    "instbench CMD: message (try: instbench CMD --help)"; an exit 2 about a launcher's variables
    is not, since --help cannot fix it.
Usage: cli_flag_rules.py INSTBENCH"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures, offline_env  # noqa: E402

TMP = tempfile.mkdtemp(prefix="instbench-flag-rules-")
# no CUDA module, so `--backend cuda` is refused alike on a GPU machine and here
ENV = offline_env(TMP, {"INSTBENCH_CUDA_MODULE": os.path.join(TMP, "absent", "libinstbench_cuda.so")})


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, timeout=60, stdin=subprocess.DEVNULL, env=ENV, cwd=TMP)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), p.stderr


def refused(args, word, what):
    rc, out, err, raw = run(*args)
    check(rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and word in err and b"\x1b" not in raw,
          "%s: exit 2, one line with %r: %d %r %r" % (what, word, rc, out[-200:], err[-400:]))


try:
    # One trimming rule.  Controls first: the bare values pass the parser (their own later checks
    # may still refuse the command; the word checked is the whitespace message's, absent then).
    CB = ["prices", "--market", "capacity-block", "--instance-types", "p5.48xlarge"]
    for args, bad_values, good in (
            (CB + ["--block-duration"], [" 3d", "3d ", "+3d", "\t3d"], "3d"),
            (["prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--nodes"], [" 2", "2 ", "+2"], "2"),
            (["prices", "--source", "snapshot", "--region"], [" us-east-1", "us-east-1 ", "us-east-1, us-west-2"],
             "us-east-1,us-west-2"),
            (["prices", "--source", "snapshot", "--format"], [" json", "json "], "json"),
            (["rank", "--top"], [" 3", "+3"], "3"),
            (["rank", "--samples"], [" 1e6", "+1e6"], "1e6")):
        for v in bad_values:
            rc, out, err, raw = run(*args, v)
            check(rc == 2 and ("whitespace" in err or "+" in v), "%s %r: refused by the one rule: %d %r" %
                  (args[-1], v, rc, err[-300:]))
        rc, out, err, raw = run(*args, good)
        check("whitespace" not in err and "is not a duration" not in err and "is not a number" not in err,
              "%s %r: the bare value passes the parser: %d %r" % (args[-1], good, rc, err[-300:]))

    # Numbers are plain decimals.  Each value is parsed and nothing run: `CMD FLAG VALUE --help`
    # prints the help (exit 0) once every value before --help is taken, and is exit 2 otherwise.
    HEX = ["0x10", "0X10", "0x1p4", "-0x10", "inf", "nan", "1e", "1_0"]
    N, R = (lambda g: HEX + ["+" + g, " " + g]), ["rank"]
    NUMERIC = [  # (command, flag, accepted values, refused values)
        *[(c, f, ["3"], N("3")) for c in (["measure"], ["models"])
          for f in ("--image-size", "--patch-size", "--embed-dim", "--depth", "--heads", "--classes")],
        *[(c, "--mlp-ratio", ["4", "2.5", "4e0"], N("4")) for c in (["measure"], ["models"])],
        (["measure"], "--batch-size", ["16", "auto"], N("16")),
        (["measure"], "--lr", ["1e-3", "0.001", "1E-3"], N("1e-3")),
        *[(["measure"], f, ["2"], N("2")) for f in ("--workers", "--steps", "--warmup", "--ranks", "--nnodes",
                                                    "--node-rank", "--master-port", "--count")],
        (["measure"], "--seed", ["5", "0"], N("5") + ["-5"]),
        (["measure"], "--duration", ["16", "0.5", "1e1"], N("16")),
        (["measure"], "--rendezvous-timeout", ["30", "2.5", "1e2"], N("30")),
        (["measure"], "--hourly-cost", ["1", "0.25"], N("1") + ["0x1"]),
        (["prices"], "--nodes", ["2", "4,1"], N("2") + ["2,0x2", "2,+2"]),
        *[(["prices"], f, ["24", "0.5", "1e1"], N("24")) for f in ("--cache-ttl", "--timeout")],
        (["prices"], "--page-size", ["100"], N("100")),
        (["prices"], "--accelerator", ["A10G", "A10G:4"], ["A10G:" + v for v in N("4")]),
        (["prices"], "--min-vcpus", ["4"], N("4")),
        *[(["prices"], f, ["16", "22.35", "1e1"], N("16")) for f in ("--min-memory", "--min-accelerator-memory")],
        *[(["prices"], f, ["1", "0.5", "3e0"], N("1") + ["0x1"]) for f in ("--max-price", "--max-spot-price")],
        (["prices", "--market", "capacity-block"], "--block-duration", ["3d", "72h", "72"],
         ["+3d", "0x3d", "0x48", "0x1p6h", "3e0d"]),
        (["rank", "--market", "capacity-block"], "--block-duration", ["3d", "72h"], ["+3d", "0x3d", "0x48"]),
        (["rank", "--market", "savings-plan"], "--plan-utilisation", ["0.5", "1", "5e-1"], N("0.5")),
        (R, "--price", ["vm=1", "vm:spot=0.5", "g5.xlarge=1e0"], ["vm=" + v for v in N("1")]),
        (R, "--samples", ["1e6", "1000000", "1.5e6"], N("1e6") + ["0x1p4"]),
        (R, "--epochs", ["300", "1.5"], N("300")),
        (R, "--dataset-size", ["1281167", "1e6"], N("1e6")),
        (R, "--interruption-rate", ["0.002", "500h", "20d", "2e-3", "1e3h"],
         N("0.002") + ["0x10h", "+500h", "0x1p-9", "0x14d", " 500h", "infh", "5eh", "h"]),
        (R, "--checkpoint-cost", ["60", "1.5"], N("60")),
        *[(R, f, ["10", "2.5"], N("10")) for f in ("--restart-minutes", "--checkpoint-every")],
        (R, "--deadline", ["48", "0.5"], N("48")),
        (R, "--budget", ["5000", "1e4"], N("5000") + ["0x1p40"]),
        (R, "--max-hourly", ["10", "2.5"], N("10")),
        (R, "--top", ["10"], N("10")),
        (["verify"], "--threads", ["4", "0"], N("4")),
        (["presign"], "--expires", ["90", "90s", "30m", "1.5m", "6h", "7d", "9e1"],
         ["+90", "0x5A", "0x5As", "0x1p4m", " 90", "+1h", "inf", "nan", "1e", "h"]),
        *[(["sweep", c], "--candidates", ["g5.xlarge", "4xg5.xlarge", "2 x g5.xlarge:spot"],
           ["0x2xg5.xlarge", "+2xg5.xlarge", "0x2 x g5.xlarge", "g5.xlarge, 4xg5.xlarge", "g5.xlarge ,4xg5.xlarge"])
          for c in ("plan", "run")],
        *[(["sweep", c], f, ["30", "2.5", "1e2"], N("30")) for c in ("plan", "run") for f in ("--max-minutes", "--max-cost")],
        (["sweep", "cleanup"], "--wait", ["600", "1.5"], N("600")),
    ]
    for cmd, flag, good, bad in NUMERIC:
        for v in good:
            rc, out, err, raw = run(*cmd, flag, v, "--help")
            check(rc == 0 and "usage:" in out, "%s %s %r: a number the docs allow is refused: %d %r" %
                  (" ".join(cmd), flag, v, rc, err[-300:]))
        for v in bad:
            rc, out, err, raw = run(*cmd, flag, v, "--help")
            check(rc == 2 and out == "" and (flag in err or v in err) and len(err.strip().splitlines()) == 1,
                  "%s %s %r: exit 2, one line naming the flag or the value: %d %r" %
                  (" ".join(cmd), flag, v, rc, err[-300:]))
    # every numeric flag `help --markdown` lists is in the table (a new one cannot be missed)
    rc, md, err, raw = run("help", "--markdown")
    numeric_meta = {"N", "N\\|auto", "N[,N...]", "NAME[:N]", "NAME=USD", "X", "S", "E", "F", "M", "USD", "GIB",
                    "SECONDS", "MINUTES", "HOURS", "DAYS", "RATE", "DURATION", "SPEC[,SPEC...]"}
    listed, section = set(), None
    for line in md.splitlines():
        if line.startswith("## instbench "):
            section = line[len("## instbench "):]
        elif line.startswith("| `--") and section:
            name, _, meta = line[3:].split("`")[0].partition(" ")
            if meta in numeric_meta:
                listed.add((section, name))
    tabled = {(" ".join(c for c in cmd if not c.startswith("-") and c not in ("capacity-block", "savings-plan")), flag)
              for cmd, flag, _, _ in NUMERIC}
    check(len(listed) > 50 and not listed - tabled, "numeric flags missing from the table: %s" % sorted(listed - tabled))

    # Values from argv are escaped in every message.
    for args in (["prices", "--source", "snapshot", "--instance-types", "g5.xl\x1b[2J"],
                 ["prices", "--source", "snapshot", "--market", "savings-plan", "--term", "\x1b[2J1y"],
                 ["prices", "--source", "snapshot", "--region", "us-east-1\x1b]52;c;aGk=\x07"],
                 ["rank", "--sort", "x\u009b2J"]):
        rc, out, err, raw = run(*args)
        check(rc == 2 and b"\x1b" not in raw and b"\x07" not in raw and b"\xc2\x9b" not in raw and
              ("\\x1b" in err or "\\u009b" in err), "%r: exit 2, echoed escaped: %d %r" % (args, rc, err[-300:]))

    # Impossible dates: refused (Python's calendar agrees they do not exist), a real one the control.
    for d in ("2026-11-31", "2026-02-30", "2026-02-29", "2026-13-01", "2026-11-31T11:30:00Z"):
        try:
            datetime.date.fromisoformat(d[:10])
            check(False, "the reference calendar takes %s" % d)
        except ValueError:
            pass
        for flag in ("--start-after", "--end-before"):
            refused(CB + ["--block-duration", "3d", flag, d], "is not a date", "%s %s" % (flag, d))
    rc, out, err, raw = run(*(CB + ["--block-duration", "3d", "--start-after", "2099-12-31"]))
    check("is not a date" not in err, "--start-after 2099-12-31 is a date: %r" % err[-300:])

    # Flags of a market not chosen: refused with the reason, the default's own value too.
    for flag, value in (("--plan", "compute"), ("--term", "1y"), ("--payment", "none"), ("--plan", "ec2-instance")):
        refused(["rank", "--market", "on-demand", flag, value, "x.json"], "prices a Savings Plan",
                "rank --market on-demand %s %s" % (flag, value))
    refused(["rank", "--market", "on-demand", "--block-duration", "1d", "x.json"], "prices a Capacity Block",
            "rank --block-duration (the rule it already had)")

    # The usage form for every error about the command line, wherever it is found.
    gone = os.path.join(TMP, "gone", "x.json")
    M = ["measure", "--dry-run"]
    for args in (["measure", "--seed", "x"], ["measure", "--depth", "0"], ["measure", "--model", "vit_nope"],
                 M + ["--heads", "7"], M + ["--image-size", "8"], M + ["--node-rank", "3", "--nnodes", "2"],
                 M + ["-o", gone], M + ["--append", gone], M + ["--instance-type", "trn1.2xlarge"],
                 # what the machine refuses, asked of it so that every machine refuses: one rank more
                 # than its vCPUs (sysconf's count, as os.cpu_count's), a backend it cannot load, a
                 # batch of ViT-L no memory holds (~20 TB), and a rendezvous with more ranks than the
                 # CPU backend's one process can average over
                 M + ["--backend", "cpu", "--ranks", str(os.cpu_count() + 1)], M + ["--backend", "cuda"],
                 M + ["--backend", "cpu", "--model", "vit_large_patch16_224", "--batch-size", "100000"],
                 M + ["--backend", "cpu", "--nnodes", "2", "--node-rank", "0", "--master-addr", "127.0.0.1"],
                 ["models", "--heads", "7"], ["models", "--layout", "--image-size", "8"],
                 ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--nodes", "0"],
                 CB + ["--block-duration", "zz"], CB + ["--block-duration", "3d", "--end-before", "2026-02-30"],
                 ["prices", "--source", "snapshot", "--region", "us-east-1", "-o", gone],
                 ["rank", "--interruption-rate", "5x", "x.json"], ["rank", "--price", "vm=zz", "x.json"],
                 ["presign", "s3://bucket/key", "--expires", "30d"],
                 ["sweep", "plan", "--candidates", "x"], ["sweep", "run", "--candidates", "0xg5.xlarge"],
                 ["sweep", "cleanup", "--all"], ["-q", "-v", "models"]):
        rc, out, err, raw = run(*args)
        cmd = ("instbench sweep " + args[1] if args[0] == "sweep" else "instbench" if args[0].startswith("-")
               else "instbench " + args[0])
        lines = err.strip().splitlines()
        check(rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith(cmd + ": ") and
              lines[0].endswith(" (try: %s --help)" % cmd), "%s: exit 2, one line in the usage form: %d %r %r" %
              (" ".join(args), rc, out[-200:], err[-400:]))
    # not about the command line: a launcher's variables, which --help cannot fix
    for extra in ({"WORLD_SIZE": "x", "RANK": "0"}, {"WORLD_SIZE": "2", "RANK": "5"}):
        p = subprocess.run([BIN, "measure", "--dry-run"], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL, env=dict(ENV, **extra), cwd=TMP)
        check(p.returncode == 2 and p.stderr.startswith("instbench measure: ") and "(try:" not in p.stderr,
              "measure with %r: exit 2 without the usage form: %d %r" % (extra, p.returncode, p.stderr[-300:]))

    # Deep JSON: valid (Python reads it with a raised recursion limit), named as too deep.
    deep = os.path.join(TMP, "deep.json")
    with open(deep, "w") as f:
        f.write("{\"a\":" * 10000 + "1" + "}" * 10000)
    sys.setrecursionlimit(100000)
    json.load(open(deep))
    rc, out, err, raw = run("rank", "--source", "snapshot", deep)
    check("nested deeper than 1000 levels" in err and "invalid JSON" not in err and "not a JSON object" not in err,
          "rank on 10,000 levels: its own message: %d %r" % (rc, err[-400:]))
    rc, out, err, raw = run("rank", "--source", deep, deep)   # a prices file that deep: named so too
    check(rc != 0 and "nested deeper than 1000 levels" in err and "not valid JSON" not in err,
          "rank --source on 10,000 levels: its own message: %d %r" % (rc, err[-400:]))
finally:
    shutil.rmtree(TMP, ignore_errors=True)
sys.exit(1 if failures else 0)
