#!/usr/bin/python3
"""Names in `instbench prices` (issue 13: checked, never silently empty), offline (--source
snapshot), against expectations computed here from the vendored CSV (data/), not from instbench:

- a misspelt instance type or region is exit 2, one line, naming the nearest name of the CSV
  (the nearest by edit distance, worked out here with an independent implementation);
- patterns ('g5.*') expand to exactly the CSV types fnmatch matches, in natural order (family,
  then size: g5.2xlarge before g5.12xlarge), and one that matches nothing is exit 2;
- every listing of types (the default: all of them) is in that natural order;
- --region all is every region of the CSV; repeated --region / --instance-types add up.

usage: prices_names.py INSTBENCH PRICE_DATA_DIR
"""
import csv
import fnmatch
import json
import os
import re
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import absent_path, check, failures, natural_key

ABSENT = absent_path()
INSTBENCH, DATA = sys.argv[1:3]
ROWS = [row for name in ("aws-accelerated-prices.csv", "aws-cpu-prices.csv", "aws-accelerated-prices-2026.csv")   # what the snapshot is made of
        for row in csv.DictReader(open(os.path.join(DATA, name), newline=""))]
TYPES = sorted({r["instance_type"] for r in ROWS})
REGIONS = sorted({r["region"] for r in ROWS})
ENV = dict(os.environ, AWS_EC2_METADATA_DISABLED="true", HOME=ABSENT, XDG_CACHE_HOME=ABSENT,
           AWS_ACCESS_KEY_ID="", AWS_SECRET_ACCESS_KEY="", AWS_PROFILE="", AWS_CONFIG_FILE=ABSENT,
           AWS_SHARED_CREDENTIALS_FILE=ABSENT)


def run(*args):
    return subprocess.run([INSTBENCH, "prices", *args], capture_output=True, text=True, env=ENV, timeout=60,
                          stdin=subprocess.DEVNULL)


def snapshot(*args):
    return run("--source", "snapshot", *args)


# ---- the expectations, computed independently ----------------------------------------------------

def osa(a, b, cap=None):
    """Optimal-string-alignment distance, case-insensitive (the rule docs/usage.md states). With
    cap, any distance above it comes back as cap + 1 as soon as a whole row exceeds it (rows never
    go down), which keeps the ~500 typos x ~250 types of the catalogue to seconds."""
    a, b = a.lower(), b.lower()
    if cap is not None and abs(len(a) - len(b)) > cap:
        return cap + 1
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
        if cap is not None and i > 1 and min(d[i]) > cap and min(d[i - 1]) > cap:
            return cap + 1
    return d[len(a)][len(b)] if cap is None else min(d[len(a)][len(b)], cap + 1)


NATURAL = sorted(TYPES, key=natural_key)


def nearest(word, names):
    """The names at the smallest distance, if that is within the typo threshold (1 edit for 4 to 7
    characters, 2 from 8), in natural order."""
    limit = 0 if len(word) < 4 else 1 if len(word) < 8 else 2
    dist = {n: osa(word, n, limit) for n in names}
    best = min(dist.values())
    return [n for n in names if dist[n] == best] if best <= limit else []


def one_usage_line(p, what):
    lines = [l for l in p.stderr.splitlines() if l.startswith("instbench prices:")]
    check(p.returncode == 2, "%s: exit %d, want 2: %s" % (what, p.returncode, p.stderr[-300:]))
    check(len(lines) == 1 and p.stdout == "", "%s: want one 'instbench prices:' line and no stdout: %r"
          % (what, p.stderr[-300:]))
    return lines[0] if lines else ""


def suggestion(line):
    m = re.search(r"did you mean '?([^'?]+)'?\?", line)
    return m.group(1) if m else None


# ---- misspelt instance types: each CSV type with its size cut short, and each family with its last
# letter doubled (once a family, on its first type: the size after it is what the first kind of
# typo already varies): exit 2 and the nearest CSV type (the first of equals in natural order) -----
checked = 0
families_done = set()
for t in TYPES:
    family, size = t.rsplit(".", 1)
    typos = [t[:-1]]
    if family not in families_done:
        families_done.add(family)
        typos.append(family + family[-1] + "." + size)
    for typo in typos:
        if typo in TYPES:
            continue
        line = one_usage_line(snapshot("--instance-types", typo, "--region", "us-east-1"), typo)
        check(typo in line and "--instance-types" in line, "%s: the line does not name it: %r" % (typo, line))
        close = nearest(typo, TYPES)
        want = [n for n in NATURAL if n in close]
        got = suggestion(line)
        if want:
            check(got == want[0], "%s: suggested %r, the nearest CSV types are %s" % (typo, got, want))
        else:
            check(got is None, "%s: suggested %r though no CSV type is that close" % (typo, got))
        checked += 1
print("%d misspelt types checked" % checked)

# a family nobody has, well formed: still exit 2 from the snapshot alone, no suggestion
line = one_usage_line(snapshot("--instance-types", "zz9.large", "--region", "us-east-1"), "zz9.large")
check(suggestion(line) is None and "zz9.large" in line, "zz9.large: %r" % line)

# ---- misspelt regions: two neighbouring letters swapped; the nearest known region suggested ------
for r in REGIONS:
    i = r.index("-") + 2            # inside the second word: "us-esat-1"
    typo = r[:i] + r[i + 1] + r[i] + r[i + 2:]
    if typo == r:
        continue
    line = one_usage_line(snapshot("--instance-types", "g5.xlarge", "--region", typo), typo)
    want = nearest(typo, REGIONS)
    if want == [r]:   # only where the CSV's own region is the one nearest (no tie with another)
        check(suggestion(line) == r, "%s: suggested %r, want %s" % (typo, suggestion(line), r))
# an upper-case region: the syntax check names it and suggests the lower-case one
line = one_usage_line(snapshot("--region", "US-WEST-2"), "US-WEST-2")
check(suggestion(line) == "us-west-2", "US-WEST-2: %r" % line)

# ---- patterns and the natural order --------------------------------------------------------------


def listed_types(p, what):
    check(p.returncode == 0, "%s: exit %d: %s" % (what, p.returncode, p.stderr[-300:]))
    if p.returncode:
        return []
    return [row["instance_type"] for row in csv.DictReader(p.stdout.splitlines())]


for pattern in ("g5.*", "p4*", "*.48xlarge", "g[46]*.xlarge", "trn1?.*"):
    got = listed_types(snapshot("--instance-types", pattern, "--region", "us-east-1", "--format", "csv"), pattern)
    want = [t for t in NATURAL if fnmatch.fnmatchcase(t, pattern)]
    check(got == want, "%s: listed %s, want %s" % (pattern, got, want))
# a pattern and a name that overlap list each type once
got = listed_types(snapshot("--instance-types", "g5.*,g5.xlarge", "--region", "us-east-1", "--format", "csv"), "g5")
check(got == [t for t in NATURAL if t.startswith("g5.")], "g5.*,g5.xlarge: %s" % got)
# the default: every type of the snapshot, in natural order
got = listed_types(snapshot("--region", "us-east-1", "--format", "csv"), "default list")
check(got == NATURAL, "default listing is not the CSV's types in natural order:\n%s\n%s" % (got, NATURAL))
check(NATURAL.index("g4dn.2xlarge") < NATURAL.index("g4dn.12xlarge"), "the test's own order")
# a pattern matching nothing: exit 2, and a near pattern that does match
line = one_usage_line(snapshot("--instance-types", "g5x.*"), "g5x.*")
check(suggestion(line) == "g5.*", "g5x.*: %r" % line)
line = one_usage_line(snapshot("--instance-types", "zz*"), "zz*")
check("matches no instance type" in line and suggestion(line) is None, "zz*: %r" % line)

# ---- --region all, and repeated flags -----------------------------------------------------------
p = snapshot("--instance-types", "g5.xlarge", "--region", "all", "--format", "json")
check(p.returncode == 0, "--region all: exit %d: %s" % (p.returncode, p.stderr[-300:]))
if p.returncode == 0:
    got = [r["region"] for r in json.loads(p.stdout)["prices"]]
    check(got == REGIONS, "--region all listed %s, want the CSV's %s" % (got, REGIONS))
one_usage_line(snapshot("--region", "all,us-east-1"), "all in a list")


def body(p):
    check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-300:]))
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    doc.pop("generated_at", None)
    return doc


joined = body(snapshot("--instance-types", "g5.xlarge,p4d.24xlarge", "--region", "us-east-1,us-west-2",
                       "--format", "json"))
repeated = body(snapshot("--instance-types", "g5.xlarge", "--region", "us-east-1", "--instance-types",
                         "p4d.24xlarge", "--region=us-west-2", "--format", "json"))
check(joined and joined == repeated, "repeated --region/--instance-types differ from the comma lists")
check(len(joined.get("prices", [])) == 4, "want 2 x 2 records: %s" % joined.get("prices"))
line = one_usage_line(snapshot("--region", "us-east-1", "--region", "us-east-1"), "twice over two flags")
check("listed twice" in line, "a region given in two flags: %r" % line)

print("prices_names: %d failure(s)" % len(failures))
# p6e-gb200.36xlarge is sold only inside UltraServers (AWS's EKS UltraServer guide: u-p6e-gb200x36
# and u-p6e-gb200x72 through Capacity Blocks): no source can price it by the hour, so the refusal says
# why and where its price is, instead of listing the snapshot's families
check("p6e-gb200.36xlarge" not in TYPES, "the test's premise: the CSVs have no p6e-gb200 row")
line = one_usage_line(snapshot("--instance-types", "p6e-gb200.36xlarge", "--region", "us-east-1"), "p6e-gb200")
check("u-p6e-gb200x36" in line and "u-p6e-gb200x72" in line and "--market capacity-block" in line,
      "p6e-gb200: %r" % line)

sys.exit(1 if failures else 0)
