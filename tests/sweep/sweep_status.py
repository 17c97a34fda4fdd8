#!/usr/bin/python3
"""`instbench sweep status` and the state file read back as hostile input.  The state files here
are written by Python (the format as docs/usage.md and sweep.h describe it), never by instbench:
  - a valid state is listed (one line per sweep) and shown (ID: every candidate and instance, the
    cost recomputed here from instance-seconds x price), and `--format json` gives back the same
    facts Python wrote;
  - hostile files are refused with a one-line message naming the file and exit 1, never a crash
    or half-used: not JSON, wrong schema, a key given twice, an id that is no instance id, a
    candidate index out of range, control characters in a state, a string too long, too many
    instances, a number out of range, another sweep's id inside the file;
  - terminal escapes in a reason are shown escaped;
  - `sweep status ID` for an unknown id exits 2, for a malformed one exits 2.
Usage: sweep_status.py INSTBENCH"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures   # noqa: E402
from state_schema import valid_state   # noqa: E402

BIN = os.path.abspath(sys.argv[1])
SID = "20261125-213005-9f3a"

GOOD = {
    "schema": "instbench.sweep-state/v1", "id": SID, "region": "us-east-1", "s3_bucket": "bkt",
    "s3_prefix": "p/", "max_minutes": 30, "max_cost_usd": 20, "created": "2026-11-25T21:30:05Z",
    "finished": "2026-11-25T21:50:05Z", "phase": "done", "note": "",
    "candidates": [
        {"spec": "g5.xlarge:spot", "instance_type": "g5.xlarge", "nodes": 1, "market": "spot", "ami": "ami-0abc1234",
         "usd_per_hour_per_node": 0.5, "price_source": "snapshot", "outcome": "result", "reason": "",
         "placement_group": "", "placement_group_deleted": False, "launched": "2026-11-25T21:31:00Z",
         "ended": "2026-11-25T21:45:00Z", "result_path": "instbench-results/sweep-%s/0-g5.xlarge-spot.json" % SID},
        {"spec": "2xg5.xlarge:on-demand", "instance_type": "g5.xlarge", "nodes": 2, "market": "on-demand",
         "ami": "ami-0abc1234", "usd_per_hour_per_node": 1.006, "price_source": "snapshot", "outcome": "failed",
         "reason": "failed on node 0: \x1b[31mred\x1b[0m error", "placement_group": "instbench-%s-1" % SID,
         "placement_group_deleted": True, "launched": "2026-11-25T21:31:10Z", "ended": "2026-11-25T21:40:00Z",
         "result_path": ""}],
    "instances": [
        {"id": "i-0123456789abcdef0", "candidate": 0, "launch_index": 0, "state": "terminated", "az": "us-east-1a",
         "private_ip": "10.0.0.1", "state_reason": "Client.UserInitiatedShutdown",
         "launched": "2026-11-25T21:31:00Z", "ended": "2026-11-25T21:46:00Z"},
        {"id": "i-0123456789abcdef1", "candidate": 1, "launch_index": 0, "state": "terminated", "az": "us-east-1b",
         "private_ip": "10.0.0.2", "state_reason": "", "launched": "2026-11-25T21:31:10Z",
         "ended": "2026-11-25T21:41:10Z"},
        {"id": "i-0123456789abcdef2", "candidate": 1, "launch_index": 1, "state": "terminated", "az": "us-east-1b",
         "private_ip": "10.0.0.3", "state_reason": "", "launched": "2026-11-25T21:31:10Z",
         "ended": "2026-11-25T21:41:10Z"}],
}


def write(home, doc, raw=None, sid=SID):
    d = os.path.join(home, "state", "instbench", "sweeps")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, sid + ".json"), "w") as f:
        f.write(raw if raw is not None else json.dumps(doc))


def status(home, *args):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_STATE_HOME": os.path.join(home, "state"),
           "NO_COLOR": "1", "AWS_EC2_METADATA_DISABLED": "true"}
    r = subprocess.run([BIN, "sweep", "status"] + list(args), env=env, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


home = tempfile.mkdtemp(prefix="sweep-status-")
try:
    rc, out, err = status(home)
    check(rc == 0 and out == "", "no sweeps: exit 0, nothing on stdout: %d %r %s" % (rc, out, err))
    write(home, GOOD)
    rc, out, err = status(home)
    check(rc == 0 and out.count("\n") == 1 and SID in out and "done" in out, "one line per sweep: %r %s" % (out, err))
    rc, out, err = status(home, SID)
    check(rc == 0 and all(i["id"] in out for i in GOOD["instances"]), "status ID lists every instance: %s" % out)
    check("\x1b" not in out and "\\x1b[31mred" in out, "a reason's escape is shown escaped: %r" % out)
    # the cost, recomputed: (end - launch) x price per node-hour, summed over the instances
    cost = 15 * 60 * 0.5 / 3600 + 2 * (10 * 60 * 1.006 / 3600)
    check("$%.3g" % cost in out or "$%.2f" % cost in out, "the cost %.4f: %s" % (cost, out))
    rc, out, err = status(home, SID, "--format", "json")
    back = valid_state(json.loads(out), "status --format json") if rc == 0 else {}
    check(back == GOOD, "--format json gives back what was written: %s" % json.dumps(back)[:600])
    # with what an EFA candidate adds (issue 31): its interfaces, each node's Elastic IP, the group
    efa = copy.deepcopy(GOOD)
    efa["security_group"] = {"name": "instbench-efa-" + SID, "id": "sg-0123456789abcdef0", "deleted": True}
    efa["candidates"][1]["efa"] = {"interfaces": [
        {"network_card": c, "device_index": d, "interface_type": t, "public_ip": False}
        for c, d, t in ((0, 0, "interface"), (0, 1, "efa-only"), (1, 0, "efa-only"))]}
    for k, i in enumerate(efa["instances"][1:]):
        i["elastic_ip"] = {"allocation_id": "eipalloc-0123456789abcdef%d" % k, "public_ip": "198.51.100.%d" % (k + 1),
                           "associated": True, "released": k == 0}
    write(home, efa)
    rc, out, err = status(home, SID, "--format", "json")
    back = valid_state(json.loads(out), "status --format json, EFA") if rc == 0 else {}
    check(back == efa, "--format json gives back the EFA fields written: %s %s" % (json.dumps(back)[:900], err))
    rc, out, err = status(home, SID)
    check(rc == 0 and "2 allocated, 1 released" in out and "releases the others" in out and
          "instbench-efa-%s (sg-0123456789abcdef0): deleted" % SID in out, "status shows the EFA leftovers: %s" % out)
    write(home, GOOD)

    def mutate(f):
        d = copy.deepcopy(GOOD)
        f(d)
        return d

    hostile = {
        "not JSON": (None, "{\"schema\": "),
        "wrong schema": (mutate(lambda d: d.update(schema="instbench.result/v1")), None),
        "duplicate key": (None, json.dumps(GOOD)[:-1] + ', "id": "%s"}' % SID),
        "bad instance id": (mutate(lambda d: d["instances"][0].update(id="i-../../etc")), None),
        "candidate out of range": (mutate(lambda d: d["instances"][0].update(candidate=7)), None),
        "control characters in a state": (mutate(lambda d: d["instances"][0].update(state="run\nning")), None),
        "string too long": (mutate(lambda d: d["candidates"][0].update(spec="g" * 5000)), None),
        "too many instances": (mutate(lambda d: d.update(instances=d["instances"] * 6000)), None),
        "nodes out of range": (mutate(lambda d: d["candidates"][0].update(nodes=100000)), None),
        "another sweep's id": (mutate(lambda d: d.update(id="20261125-213005-0000")), None),
        "not an object": (None, "[1, 2]"),
        "outcome unknown": (mutate(lambda d: d["candidates"][0].update(outcome="exploded")), None),
        "instances not a list": (mutate(lambda d: d.update(instances={"a": 1})), None),
    }
    for what, (doc, raw) in hostile.items():
        write(home, doc, raw)
        rc, out, err = status(home, SID)
        lines = [l for l in err.splitlines() if l.strip()]
        check(rc == 1 and len(lines) == 1 and SID + ".json" in lines[0] and "Traceback" not in err,
              "%s: refused in one line naming the file, exit 1: %d %r" % (what, rc, err[-400:]))
        rc, out, err = status(home)
        check(rc == 1 and SID not in out, "%s: the list leaves it out and exits 1: %d %r" % (what, rc, out))
    write(home, GOOD)
    for argv, code, words in ((["20261125-213005-0000"], 2, "no sweep 20261125-213005-0000"),
                              (["../x"], 2, "not a sweep ID"), (["a", "b"], 2, "at most one")):
        rc, out, err = status(home, *argv)
        check(rc == code and words in err, "%r: exit %d: %d %s" % (argv, code, rc, err))
finally:
    shutil.rmtree(home, ignore_errors=True)
sys.exit(1 if failures else 0)
