"""A result names the code that measured it: tool.revision is the revision the build recorded
(cmake/revision.cmake's text file; naming a commit git has in the source tree, and known where git
answers there: testlib.build_revision), null where unknown; the schema validates it, and the
table's header line names it short (12 hex digits).
Usage: measure_cli_revision.py INSTBENCH RESULT_SCHEMA SOURCE_DIR REVISION_TEXT"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib: testlib
from measure_common import TINY, check, finish, run, scratch, validate  # noqa: E402
from testlib import build_revision, short_revision  # noqa: E402

SRC, REVISION = sys.argv[3:5]
out = os.path.join(scratch(), "r.json")
p = run(TINY + ["--steps", "1", "--warmup", "0", "--output", out, "--format", "table"])
if check(p.returncode == 0, f"measure: exit {p.returncode}: {p.stderr[-500:]}"):
    doc = json.load(open(out))
    validate(doc, "tiny run")
    got = doc["tool"].get("revision", "absent")
    header = p.stdout.splitlines()[0] if p.stdout else ""
    rev, wrong = build_revision(REVISION, SRC)
    check(not wrong, wrong)
    check(got == rev, f"tool.revision {got!r}, the build recorded {rev or 'unknown'}")
    check(header.endswith(f"  rev {short_revision(rev)}"), f"header line {header!r}, want rev {short_revision(rev)}")
    check(len(header) <= 80, f"header line over 80 columns: {header!r}")
finish("measure_cli_revision")
