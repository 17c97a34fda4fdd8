#!/usr/bin/env python3
"""Issue 39's rules that hold for every command's flags (src/cmd/args.c and the parsers it calls):
  - one trimming rule: a value (or a list's item) with whitespace around it is refused, exit 2,
    whatever the flag's kind, and so is a number or duration written with a '+'; the bare value is
    the control (accepted);
  - values from argv are escaped in every message (no ESC, BEL or C1 byte on stderr);
  - impossible dates are refused, never rolled over (Python's calendar says which are impossible);
  - flags of a market not chosen are refused with the reason (rank --plan/--term/--payment without
    the savings-plan market, as --block-duration already is);
  - valid JSON nested 10,000 levels deep is named so by rank, not "invalid JSON".
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
ENV = offline_env(TMP)


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
