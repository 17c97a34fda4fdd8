#!/usr/bin/python3
"""Issue 39: a sweep's state file held to the shapes AWS issues, and what sweep prints escaped.
The state files are written here by Python, never by instbench; the shapes are AWS's (a prefix and
8 or 17 lowercase hex digits, a dotted-quad IPv4, one interface per network card and device index),
the calendar Python's (datetime), the JSON escapes RFC 8259's read back by json.loads.
  - every hostile value of the issue is refused with exit 1, one line, naming the field it refused:
    capacity_reservation "cr-;rm -rf / $(id)" and "", security groups "sg-", "sg-ZZZZ:..__" and one
    too long (named state.security_group.id, not state.id), Elastic IP allocations "eipalloc-",
    public IP 999.999.999.999, an instance id of 12 hex digits, two interfaces on card 0 device 0,
    network_card 1.7, five copies of one instance id, created 2026-02-30, JSON nested 10,000 deep;
  - the valid state they were made from is read, and its cost is one instance's, not five;
  - `sweep status ID --format json` writes U+009B, DEL and U+202E as \\u escapes (no raw byte);
  - `sweep status <id with escapes>` and `sweep plan --capacity-reservation <escapes>` never put
    ESC on stderr.
Usage: sweep_state_shapes.py INSTBENCH"""
import copy
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import absent_path, check, failures   # noqa: E402
ABSENT = absent_path()

BIN = os.path.abspath(sys.argv[1])
SID = "20261125-213005-9f3a"
GOOD = {
    "schema": "instbench.sweep-state/v1", "id": SID, "region": "us-east-1", "s3_bucket": "bkt", "s3_prefix": "p/",
    "max_minutes": 30, "max_cost_usd": 20, "created": "2026-11-25T21:30:05Z", "finished": "2026-11-25T22:30:05Z",
    "phase": "done", "note": "",
    "security_group": {"name": "instbench-efa-" + SID, "id": "sg-0123456789abcdef0", "deleted": True},
    "candidates": [
        {"spec": "2xp4d.24xlarge:on-demand", "instance_type": "p4d.24xlarge", "nodes": 2, "market": "on-demand",
         "ami": "ami-0123456789abcdef0", "usd_per_hour_per_node": 10.92, "price_source": "snapshot",
         "outcome": "result", "reason": "", "placement_group": "instbench-%s-0" % SID,
         "placement_group_deleted": True, "launched": "2026-11-25T21:31:00Z", "ended": "2026-11-25T22:31:00Z",
         "result_path": "", "efa": {"interfaces": [
             {"network_card": 0, "device_index": 0, "interface_type": "efa", "public_ip": False},
             {"network_card": 1, "device_index": 0, "interface_type": "efa-only", "public_ip": False}]}},
        {"spec": "p5.48xlarge:capacity-block", "instance_type": "p5.48xlarge", "nodes": 1, "market": "capacity-block",
         "capacity_reservation": "cr-0123456789abcdef0", "capacity_reservation_az": "us-east-1a",
         "ami": "ami-0123456789abcdef0", "usd_per_hour_per_node": None, "price_source": "", "outcome": "not run",
         "reason": "", "placement_group": "", "placement_group_deleted": False, "launched": None, "ended": None,
         "result_path": ""}],
    "instances": [
        {"id": "i-0123456789abcdef0", "candidate": 0, "launch_index": 0, "state": "terminated", "az": "us-east-1a",
         "private_ip": "10.0.0.1", "state_reason": "", "launched": "2026-11-25T21:31:00Z",
         "ended": "2026-11-25T22:31:00Z",
         "elastic_ip": {"allocation_id": "eipalloc-0123456789abcdef0", "public_ip": "198.51.100.1",
                        "associated": True, "released": True}}],
}


def write(home, doc=None, raw=None):
    d = os.path.join(home, "state", "instbench", "sweeps")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, SID + ".json"), "w") as f:
        f.write(raw if raw is not None else json.dumps(doc))


def run(home, *args):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_STATE_HOME": os.path.join(home, "state"),
           "NO_COLOR": "1", "AWS_EC2_METADATA_DISABLED": "true", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
           "AWS_SECRET_ACCESS_KEY": "x", "AWS_CONFIG_FILE": ABSENT, "LC_ALL": "C.UTF-8"}
    r = subprocess.run([BIN] + list(args), env=env, capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace"), r.stdout, r.stderr


def mutate(f):
    d = copy.deepcopy(GOOD)
    f(d)
    return d


def five(d):
    d["instances"] = [dict(copy.deepcopy(GOOD["instances"][0]), launch_index=k % 2) for k in range(5)]
    for i in d["instances"]:
        del i["elastic_ip"]


# The calendar's verdict, not ours: Python refuses the date the file gives.
try:
    datetime.date(2026, 2, 30)
    sys.exit("the reference calendar takes 2026-02-30")
except ValueError:
    pass

HOSTILE = [   # (what, document or raw text, the field the message must name)
    ("a reservation with shell in it", mutate(lambda d: d["candidates"][1].update(
        capacity_reservation="cr-;rm -rf / $(id)")), "candidates[1].capacity_reservation"),
    ("an empty reservation", mutate(lambda d: d["candidates"][1].update(capacity_reservation="")),
     "candidates[1].capacity_reservation"),
    ("a bare sg-", mutate(lambda d: d["security_group"].update(id="sg-")), "state.security_group.id"),
    ("sg-ZZZZ:..__", mutate(lambda d: d["security_group"].update(id="sg-ZZZZ:..__")), "state.security_group.id"),
    ("a security group id too long", mutate(lambda d: d["security_group"].update(id="sg-" + "0" * 40)),
     "state.security_group.id"),
    ("a bare eipalloc-", mutate(lambda d: d["instances"][0]["elastic_ip"].update(allocation_id="eipalloc-")),
     "instances[0].elastic_ip.allocation_id"),
    ("public IP 999.999.999.999", mutate(lambda d: d["instances"][0]["elastic_ip"].update(public_ip="999.999.999.999")),
     "instances[0].elastic_ip.public_ip"),
    ("a private IP that is no address", mutate(lambda d: d["instances"][0].update(private_ip="10.0.0.256")),
     "instances[0].private_ip"),
    ("an instance id of 12 hex digits", mutate(lambda d: d["instances"][0].update(id="i-0123456789ab")),
     "instances[0].id"),
    ("an AMI id AWS never issues", mutate(lambda d: d["candidates"][0].update(ami="ami-0abc")), "candidates[0].ami"),
    ("two interfaces on card 0 device 0", mutate(lambda d: d["candidates"][0]["efa"]["interfaces"][1].update(
        network_card=0)), "candidates[0].efa"),
    ("network_card 1.7", mutate(lambda d: d["candidates"][0]["efa"]["interfaces"][1].update(network_card=1.7)),
     "network_card"),
    ("five copies of one instance", mutate(five), "instances[1].id"),
    ("created 2026-02-30", mutate(lambda d: d.update(created="2026-02-30T00:00:00Z")), "state.created"),
    ("an instance launched 2026-11-31", mutate(lambda d: d["instances"][0].update(launched="2026-11-31T00:00:00Z")),
     "instances[0].launched"),
    ("valid JSON nested 10,000 levels deep", "[" * 10000 + "]" * 10000, "nested deeper than"),
]

home = tempfile.mkdtemp(prefix="sweep-shapes-")
try:
    write(home, GOOD)
    rc, out, err, _, _ = run(home, "sweep", "status", SID, "--format", "json")
    check(rc == 0 and json.loads(out)["instances"][0]["id"] == GOOD["instances"][0]["id"],
          "the valid state reads: %d %s" % (rc, err))
    for what, doc, field in HOSTILE:
        if isinstance(doc, str):
            write(home, raw=doc)
        else:
            write(home, doc)
        rc, out, err, _, _ = run(home, "sweep", "status", SID)
        lines = [l for l in err.splitlines() if l.strip()]
        check(rc == 1 and len(lines) == 1 and field in err and "Traceback" not in err,
              "%s: refused in one line naming %s, exit 1: %d %r" % (what, field, rc, err[-300:]))
    # Python's own reader takes 10,000 levels (json.loads, recursion aside): the text is valid JSON,
    # so "invalid JSON" or "not a JSON object" would be wrong.
    rc, out, err, _, _ = run(home, "sweep", "status", SID)
    check("not a JSON object" not in err and "invalid" not in err, "deep JSON has its own message: %r" % err)

    # Every escape a terminal or a bidi-aware viewer obeys, in a value that came from a file.
    hostile_note = "a\u009b2J b\x7f c\u202eevil\u2066 d\u2028e"
    write(home, mutate(lambda d: d.update(note=hostile_note)))
    rc, out, err, raw, _ = run(home, "sweep", "status", SID, "--format", "json")
    check(rc == 0 and json.loads(out)["note"] == hostile_note, "the note reads back whole: %d %s" % (rc, err))
    for ch in ("\u009b", "\x7f", "\u202e", "\u2066", "\u2028"):
        check(ch.encode() not in raw, "--format json writes U+%04X escaped, not raw" % ord(ch))
    check(all(e in out for e in ("\\u009b", "\\u007f", "\\u202e", "\\u2066", "\\u2028")),
          "the JSON writes them as \\u escapes: %r" % out[:2000])
    rc, out, err, raw, _ = run(home, "sweep", "status", "--format", "json")
    check(rc == 0 and b"\xc2\x9b" not in raw and json.loads(out)[0]["note"] == hostile_note,
          "the list's JSON too: %d %r" % (rc, out[:300]))

    # Values from argv echoed in messages: escaped.
    for argv in (["sweep", "status", "2026\x1b[2J"], ["sweep", "status", "x\u009b2J"],
                 ["sweep", "plan", "--candidates", "p5.48xlarge:capacity-block", "--region", "us-east-1",
                  "--capacity-reservation", "cr-\x1b]52;c;aGk=\x07\x1b[2J"]):
        rc, out, err, _, eraw = run(home, *argv)
        check(rc == 2 and b"\x1b" not in eraw and b"\xc2\x9b" not in eraw and b"\x07" not in eraw and
              ("\\x1b" in err or "\\u009b" in err), "%r: exit 2, the value shown escaped: %d %r" % (argv, rc, err))
finally:
    shutil.rmtree(home, ignore_errors=True)
sys.exit(1 if failures else 0)
