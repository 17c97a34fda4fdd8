"""A result names the code that measured it: tool.revision is the source tree's git HEAD, with
"-dirty" when `git diff HEAD` finds a tracked file changed (the references: git itself, run here),
the schema validates it, and the table's header line names it short (12 hex digits).  Where the
source tree is no git checkout the value is not checked, and the test says so.
Usage: measure_cli_revision.py INSTBENCH RESULT_SCHEMA SOURCE_DIR"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib: testlib
from measure_common import TINY, check, finish, run, scratch, validate  # noqa: E402
from testlib import git_revision, short_revision  # noqa: E402

SRC = sys.argv[3]
out = os.path.join(scratch(), "r.json")
p = run(TINY + ["--steps", "1", "--warmup", "0", "--output", out, "--format", "table"])
if check(p.returncode == 0, f"measure: exit {p.returncode}: {p.stderr[-500:]}"):
    doc = json.load(open(out))
    validate(doc, "tiny run")
    got = doc["tool"].get("revision", "absent")
    header = p.stdout.splitlines()[0] if p.stdout else ""
    rev, why = git_revision(SRC)
    if rev:
        check(got == rev, f"tool.revision {got!r}, git says {rev} (a stale build? rebuild it)")
        check(header.endswith(f"  rev {short_revision(rev)}"), f"header line {header!r}, want rev {short_revision(rev)}")
    else:
        print(f"measure_cli_revision: the revision is not checked: {why}")
        check(got is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", got), f"tool.revision {got!r}")
        check(re.search(r"  rev ([0-9a-f]{12}(-dirty)?|unknown)$", header), f"header line {header!r}")
    check(len(header) <= 80, f"header line over 80 columns: {header!r}")
finish("measure_cli_revision")
