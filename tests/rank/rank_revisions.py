#!/usr/bin/python3
"""Results measured by different builds of instbench (tool.revision: the commit, "-dirty" when the
tree had edits; absent or null in results of older builds, "unknown") rank as before, but the
ranking says so: one warning on stderr naming how many builds and which (12 hex digits, -dirty),
and the configurations whose own runs came from more than one; JSON's inputs.revisions is the
sorted distinct list of the ranked runs' revisions with null for unknown, validated against
schemas/rank-v2.json.  One revision, or results that all predate the field: no warning.  A
revision that is not one (wrong length, upper case, control characters) is unknown, never a
skipped result.  Expectations are computed here from the fixtures written.
Usage: rank_revisions.py INSTBENCH RANK_SCHEMA RESULT_SCHEMA"""
import json
import os
import statistics
import sys
import tempfile

import jsonschema

sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib/testlib.py
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures, short_revision as short  # noqa: E402

BIN, RANK_SCHEMA, RESULT_SCHEMA = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
WARNING = "builds of instbench"
A, B = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"
PRICES = [fx.price_record(t, "us-east-1", p, None) for t, p in (("g5.xlarge", 1.0), ("g6.xlarge", 0.8),
                                                                ("g4dn.xlarge", 0.5))]
ABSENT = object()


def res(t, accel, sps, revision, i):
    doc = fx.result(t, "us-east-1", 1, 1, accel, sps, host="h%d" % i, timestamp="2026-11-21T10:%02d:00Z" % i)
    if revision is not ABSENT:
        doc["tool"]["revision"] = revision
    return doc


def is_revision(r):
    return isinstance(r, str) and len(r) in (40, 46) and all(c in "0123456789abcdef" for c in r[:40]) \
        and r[40:] in ("", "-dirty")


def expected(runs):
    """The sorted distinct revisions of RUNS (null last), and the types whose runs differ."""
    valid = [r if is_revision(r) else None for r in (x[3] for x in runs)]
    distinct = sorted({v for v in valid if v is not None}) + ([None] if None in valid else [])
    by_type = {}
    for (t, _, _, _), v in zip(runs, valid):
        by_type.setdefault(t, set()).add(v)
    return distinct, sorted(t for t, s in by_type.items() if len(s) > 1)


with tempfile.TemporaryDirectory() as d:
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, fx.prices_doc(PRICES))

    def rank(folder, fmt, *extra):
        return fx.run(BIN, [folder, "--source", prices, "--market", "on-demand", "--format", fmt, *extra])

    def case(name, runs, *extra):
        """Writes RUNS (type, device, samples/s, revision) as results, ranks them as JSON, and checks
        the warning, inputs.revisions and that the rows are the medians they always were."""
        folder = os.path.join(d, name)
        for i, (t, a, s, rev) in enumerate(runs):
            doc = res(t, a, s, rev, i)
            # the result schema takes a revision, null or none (older results), nothing else
            ok = rev is ABSENT or rev is None or is_revision(rev)
            try:
                jsonschema.validate(doc, RESULT_SCHEMA)
                check(ok, "%s: the result schema takes tool.revision %r" % (name, rev))
            except jsonschema.ValidationError as e:
                check(not ok, "%s: the result schema refuses tool.revision %r: %s" % (name, rev, e.message))
            fx.write_json(os.path.join(folder, "r%d.json" % i), doc)
        rc, out, err = rank(folder, "json", *extra)
        check(rc == 0, "%s: exit %d: %s" % (name, rc, err[-400:]))
        doc = json.loads(out) if rc == 0 else {"rows": [], "inputs": {}}
        try:
            jsonschema.validate(doc, RANK_SCHEMA)
        except jsonschema.ValidationError as e:
            check(False, "%s: rank-v2 schema: %s at %s" % (name, e.message, list(e.absolute_path)))
        kept = [x for x in runs if not extra or x[0] in extra[-1].split(",")]
        distinct, mixed = expected(kept)
        check(doc["inputs"].get("revisions", "absent") == distinct,
              "%s: inputs.revisions %r, want %r" % (name, doc["inputs"].get("revisions", "absent"), distinct))
        check(doc["inputs"].get("results") == len(runs), "%s: %s results read, want %d (none skipped)" % (
            name, doc["inputs"].get("results"), len(runs)))
        # grouping and medians are what they were without revisions: one row per type
        want = {}
        for t, _, s, _ in kept:
            want.setdefault(t, []).append(s)
        got = {r["instance_type"]: r["samples_per_second"] for r in doc["rows"]}
        check(got == {t: statistics.median(v) for t, v in want.items()}, "%s: rows %s, want the medians of %s" % (
            name, got, want))
        warned = [ln for ln in err.splitlines() if WARNING in ln]
        if len(distinct) > 1:
            check(len(warned) == 1, "%s: want one warning, got %r" % (name, err[-800:]))
            line = warned[0] if warned else ""
            listed = ", ".join(short(r) for r in distinct)
            check(("measured by %d %s (tool.revision: %s)" % (len(distinct), WARNING, listed)) in line,
                  "%s: the warning names %d builds, %s: %r" % (name, len(distinct), listed, line))
            check("measure every candidate with one build" in line, "%s: no advice: %r" % (name, line))
            for t in mixed:
                check(("1 x %s" % t) in line, "%s: the warning does not name %s, whose runs differ: %r" % (
                    name, t, line))
            if not mixed:
                check("share a median" not in line, "%s: no configuration's runs differ: %r" % (name, line))
            for t in set(want) - set(mixed):
                check(("1 x %s" % t) not in line, "%s: %s named, its runs share one build: %r" % (name, t, line))
        else:
            check(not warned, "%s: one build, no warning wanted: %r" % (name, err[-600:]))
        return err

    # two builds in one configuration, a third (a dirty tree) and an unknown one elsewhere
    err = case("mixed", [("g5.xlarge", "NVIDIA A10G", 100.0, A), ("g5.xlarge", "NVIDIA A10G", 104.0, A),
                         ("g5.xlarge", "NVIDIA A10G", 112.0, B), ("g6.xlarge", "NVIDIA L4", 80.0, B + "-dirty"),
                         ("g4dn.xlarge", "NVIDIA T4", 40.0, ABSENT)])
    # the table's run says the same on stderr, and under the table (what a table saved with -o keeps)
    LEGEND = "builds: these rows were measured by more than one build of instbench"
    rc, out, terr = rank(os.path.join(d, "mixed"), "table")
    check(rc == 0 and sum(WARNING in ln for ln in terr.splitlines()) == 1, "table: exit %d, %r" % (rc, terr[-600:]))
    check(LEGEND in " ".join(out.split()), "table: no legend line for the builds:\n%s" % out)
    # each configuration on one build, but not the same one: rows compare builds, no median mixes them
    case("per_row", [("g5.xlarge", "NVIDIA A10G", 100.0, A), ("g5.xlarge", "NVIDIA A10G", 101.0, A),
                     ("g6.xlarge", "NVIDIA L4", 80.0, B)])
    # one build everywhere, and older results only: nothing to say
    case("one", [("g5.xlarge", "NVIDIA A10G", 100.0, A), ("g6.xlarge", "NVIDIA L4", 80.0, A)])
    case("old", [("g5.xlarge", "NVIDIA A10G", 100.0, ABSENT), ("g6.xlarge", "NVIDIA L4", 80.0, None)])
    for name in ("one", "old"):
        rc, out, _ = rank(os.path.join(d, name), "table")
        check(rc == 0 and LEGEND not in " ".join(out.split()), "%s: a builds line with one build:\n%s" % (name, out))
    # the rows ranked count, not the results read: --instance-types leaves the other build out
    case("filtered", [("g5.xlarge", "NVIDIA A10G", 100.0, A), ("g6.xlarge", "NVIDIA L4", 80.0, B)],
         "--instance-types", "g5.xlarge")
    # not revisions: unknown (the result still ranks), and nothing of them reaches the terminal
    err = case("odd", [("g5.xlarge", "NVIDIA A10G", 100.0, A), ("g5.xlarge", "NVIDIA A10G", 90.0, A.upper()),
                       ("g6.xlarge", "NVIDIA L4", 80.0, A[:39] + "\x1b"), ("g6.xlarge", "NVIDIA L4", 82.0, 7),
                       ("g4dn.xlarge", "NVIDIA T4", 40.0, A + "-clean")])
    check("\x1b" not in err and A.upper()[:12] not in err, "odd revisions echoed: %r" % err[-600:])

print("rank_revisions: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
