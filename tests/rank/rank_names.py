#!/usr/bin/python3
"""Names in `instbench rank` (issue 13): the --instance-types filter keeps exactly what fnmatch
says and refuses a name that matches nothing, naming the nearest; configurations are listed in the
natural order of their types (g5.2xlarge before g5.12xlarge: unpriced rows in configuration order,
ties between ranked rows); --az as a zone name is mapped to the ID price files use through the
results' own (name, ID) pairs, and not at all when results from two accounts disagree; a --region
nobody knows is exit 2 with the nearest; two non-ASCII hostnames ("büro", "béro") stay two machines
named by their bytes, each suggested a --price name that --price takes (issue 33).  Expectations are written out here, not taken from
instbench.  Usage: rank_names.py INSTBENCH"""
import fnmatch
import json
import os
import sys
import tempfile

sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib/testlib.py
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures

BIN = sys.argv[1]
# shuffled on purpose: the order a person expects is written out in NATURAL
TYPES = ["g5.12xlarge", "g4dn.xlarge", "g5.2xlarge", "p4d.24xlarge", "g4dn.12xlarge", "g5.xlarge", "g4dn.2xlarge"]
NATURAL = ["g4dn.xlarge", "g4dn.2xlarge", "g4dn.12xlarge", "g5.xlarge", "g5.2xlarge", "g5.12xlarge", "p4d.24xlarge"]


def rank(d, *args):
    return fx.run(BIN, [os.path.join(d, "res"), *args])


def one_line(err, what):
    lines = [l for l in err.splitlines() if l.startswith("instbench rank:")]
    check(len(lines) == 1, "%s: want one 'instbench rank:' line: %r" % (what, err[-400:]))
    return lines[0] if lines else ""


with tempfile.TemporaryDirectory() as d:
    for i, t in enumerate(TYPES):
        fx.write_json(os.path.join(d, "res", "%d.json" % i), fx.result(t, "us-east-1", 1, 1, "GPU", 100.0,
                                                                       host="h%d" % i))
    # the same on-demand price for every type: samples per dollar tie everywhere
    fx.write_json(os.path.join(d, "p.json"), fx.prices_doc([fx.price_record(t, "us-east-1", 1.0, None)
                                                            for t in TYPES]))
    fx.write_json(os.path.join(d, "none.json"), fx.prices_doc([]))
    prices = ["--source", os.path.join(d, "p.json"), "--format", "json", "--market", "on-demand"]

    # ties in ranked rows and the unpriced rows, in natural order
    rc, out, err = rank(d, *prices)
    if check(rc == 0, "ranked: exit %d: %s" % (rc, err)):
        got = [r["instance_type"] for r in fx.ranked(json.loads(out))]
        check(got == NATURAL, "tied rows in %s, want %s" % (got, NATURAL))
    rc, out, err = rank(d, "--source", os.path.join(d, "none.json"), "--format", "json", "--market", "on-demand")
    check(rc == 1, "nothing priced: exit %d" % rc)
    if out:
        got = [r["instance_type"] for r in fx.unpriced(json.loads(out))]
        check(got == NATURAL, "unpriced rows in %s, want %s" % (got, NATURAL))

    # --instance-types: names and patterns keep what fnmatch matches; repeated flags add up
    for args, pats in ((["--instance-types", "g5.*"], ["g5.*"]),
                       (["--instance-types", "g4dn.xlarge,p4d.*"], ["g4dn.xlarge", "p4d.*"]),
                       (["--instance-types", "*.12xlarge", "--instance-types", "g5.xlarge"], ["*.12xlarge", "g5.xlarge"])):
        rc, out, err = rank(d, *prices, *args)
        if check(rc == 0, "%s: exit %d: %s" % (args, rc, err)):
            got = [r["instance_type"] for r in fx.ranked(json.loads(out))]
            want = [t for t in NATURAL if any(fnmatch.fnmatchcase(t, p) for p in pats)]
            check(got == want, "%s kept %s, want %s" % (args, got, want))
    for name, near in (("g5.xlarg", "g5.xlarge"), ("p4d.24xlareg", "p4d.24xlarge"), ("trn1.*", None)):
        rc, out, err = rank(d, *prices, "--instance-types", name)
        line = one_line(err, name)
        check(rc == 2 and name in line and "matches no configuration" in line and out == "",
              "--instance-types %s: exit %d, %r" % (name, rc, line))
        check(("did you mean %s?" % near in line) if near else "did you mean" not in line,
              "--instance-types %s: suggestion in %r, want %s" % (name, line, near))

    # --region nobody knows: exit 2 with the nearest; a real one without prices: exit 1
    rc, out, err = rank(d, *prices, "--region", "us-esat-1")
    line = one_line(err, "us-esat-1")
    check(rc == 2 and "did you mean us-east-1?" in line, "--region us-esat-1: exit %d, %r" % (rc, line))
    rc, out, err = rank(d, *prices, "--region", "eu-west-3")
    check(rc == 1, "--region eu-west-3 (real, unpriced): exit %d: %s" % (rc, err[-300:]))

with tempfile.TemporaryDirectory() as d:
    # a price file naming spot zones by ID, as the snapshot does
    zones = {"use1-az1": 0.50, "use1-az2": 0.40, "use1-az4": 0.45}
    fx.write_json(os.path.join(d, "p.json"), fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.0, zones)]))
    spot = ["--source", os.path.join(d, "p.json"), "--format", "json", "--market", "spot"]

    def with_pair(name, az, az_id, host):
        doc = fx.result("g5.xlarge", "us-east-1", 1, 1, "A10G", 100.0, host=host)
        doc["instance"]["availability_zone"] = az
        doc["instance"]["availability_zone_id"] = az_id
        fx.write_json(os.path.join(d, "res", name), doc)

    with_pair("a.json", "us-east-1c", "use1-az4", "a")
    rc, out, err = rank(d, *spot, "--az", "us-east-1c")
    if check(rc == 0, "name through the result's pair: exit %d: %s" % (rc, err)):
        rows = fx.ranked(json.loads(out))
        check(len(rows) == 1 and rows[0]["spot_az"] == "use1-az4" and fx.close(rows[0]["usd_per_hour"], 0.45),
              "us-east-1c priced as %r, want use1-az4 at 0.45" % rows)
    rc, out, err = rank(d, *spot, "--az", "use1-az2")
    if check(rc == 0, "an ID: exit %d: %s" % (rc, err)):
        rows = fx.ranked(json.loads(out))
        check(len(rows) == 1 and fx.close(rows[0]["usd_per_hour"], 0.40), "use1-az2 priced as %r" % rows)
    # a name no result pairs: one line saying it cannot be mapped offline, and how to fix it
    rc, out, err = rank(d, *spot, "--az", "us-east-1a")
    line = one_line(err, "unmapped name")
    check(rc == 2 and "cannot be mapped offline" in line and "use1-az2" in line and "--source live" in line,
          "us-east-1a: exit %d, %r" % (rc, line))
    # a second account's result pairs us-east-1c with another ID: the pairs disagree, none is used
    with_pair("b.json", "us-east-1c", "use1-az1", "b")
    rc, out, err = rank(d, *spot, "--az", "us-east-1c")
    check(rc == 2 and "cannot be mapped offline" in err, "conflicting pairs were used: exit %d, %s" % (rc, err[-300:]))
    # an ID the prices do not know, a zone of another region, a misspelt region in a zone name
    for az, word in (("use1-az9", "did you mean use1-az"), ("us-west-2a", "--region us-west-2"),
                     ("us-esat-1a", "did you mean us-east-1a?")):
        rc, out, err = rank(d, *spot, "--az", az)
        line = one_line(err, az)
        check(rc == 2 and word in line, "--az %s: exit %d, %r" % (az, rc, line))
    # a malformed pair (an ID with a control character, an "ID" shaped like a name) is ignored,
    # never trusted, and does not cost the result itself
    os.remove(os.path.join(d, "res", "b.json"))
    for az_id in ("use1-az4\x1b[2J", "us-east-1d"):
        with_pair("a.json", "us-east-1c", az_id, "a")
        rc, out, err = rank(d, *spot, "--az", "us-east-1c")
        check(rc == 2 and "cannot be mapped offline" in err and "1 result" in err,
              "pair with ID %r: exit %d, %s" % (az_id, rc, err[-300:]))

# Non-ASCII hostnames (issue 33): "büro" and "béro" are two machines, never one "b??ro" at their
# median; each row is named by its own bytes, and the --price name suggested is taken by --price.
with tempfile.TemporaryDirectory() as d:
    os.makedirs(os.path.join(d, "res"))
    fx.write_json(os.path.join(d, "p.json"), fx.prices_doc([]))
    for i, (host, sps) in enumerate((("büro", 100.0), ("béro", 300.0), ("bad\u009bhost", 50.0))):
        fx.write_json(os.path.join(d, "res", "%d.json" % i),
                      fx.result(None, None, 1, 1, "NVIDIA RTX A6000", sps, host=host, hourly_cost=None))
    rc, out, err = rank(d, "--source", os.path.join(d, "p.json"), "--format", "json", "--market", "on-demand")
    doc = json.loads(out) if rc in (0, 1) and out.strip().startswith("{") else {"rows": []}
    rows = {r["configuration"]: r for r in doc["rows"]}
    names = sorted(rows)
    check(any("büro" in n for n in names) and any("béro" in n for n in names) and not any("??" in n for n in names),
          "two non-ASCII hostnames, two rows named by their bytes: %s (exit %d %s)" % (names, rc, err[-300:]))
    by = {h: [r for n, r in rows.items() if h in n] for h in ("büro", "béro")}
    check(all(len(v) == 1 for v in by.values()) and by["büro"][0]["samples_per_second"] == 100.0 and
          by["béro"][0]["samples_per_second"] == 300.0,
          "each keeps its own samples/s (100 and 300, not a shared median of 200): %s" % by)
    check(not any("\u009b" in n for n in names),
          "a hostname with a C1 control is not a name: %s" % names)
    for host, sps in (("büro", 100.0), ("béro", 300.0)):
        r = by[host][0] if by[host] else {"unpriced_reason": ""}
        want = "--price %s=USD" % host
        check(want in (r.get("unpriced_reason") or ""), "%s: the reason suggests %r: %r" % (host, want, r.get("unpriced_reason")))
    # the suggestion is taken: priced by it, and each at its own price
    rc, out, err = rank(d, "--source", os.path.join(d, "p.json"), "--format", "json", "--market", "on-demand",
                        "--price", "büro=1.0", "--price", "béro=2.0")
    priced = {r["configuration"]: r for r in fx.ranked(json.loads(out))} if rc == 0 else {}
    got = {h: [r["usd_per_hour"] for n, r in priced.items() if h in n] for h in ("büro", "béro")}
    check(rc == 0 and got == {"büro": [1.0], "béro": [2.0]},
          "--price büro=1.0 --price béro=2.0 prices each: exit %d %s %s" % (rc, got, err[-300:]))
    rc, out, err = rank(d, "--source", os.path.join(d, "p.json"), "--instance-types", "büro", "--format", "json",
                        "--price", "büro=1.0", "--market", "on-demand")
    check(rc == 0 and [r["configuration"] for r in json.loads(out)["rows"]] == [n for n in names if "büro" in n],
          "--instance-types büro keeps exactly that machine: exit %d %s" % (rc, err[-300:]))
    rc, out, err = rank(d, "--source", os.path.join(d, "p.json"), "--format", "table", "--market", "on-demand")
    check("\u009b" not in out + err, "no raw C1 control in the table")

print("rank_names: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
