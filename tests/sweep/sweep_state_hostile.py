#!/usr/bin/python3
"""The sweep's money and state as hostile ground (issue 33), against the fake EC2 (tests/sweep/fake_ec2.py,
whose instances live in the region that launched them and whose StateTransitionReason names when each
ended, as EC2's does).  State files are written here by Python, never by instbench; every expected
figure is computed here.
  1  `sweep cleanup ID --region us-west-2` for a sweep whose state file says us-east-1, its instance
     running there: the instance is found and terminated in us-east-1, and the state file records
     the end EC2 gave.  An instance the state records that EC2 shows nowhere: exit 1, left as
     recorded, never written "terminated", the sweep not "done";
  2  the cost: an instance whose end is unknown counts at most launch + what its own timer allows,
     max_minutes rounded up + 5 minutes of boot and halt (a 2-day-old state of a $0.50/h 30-minute
     candidate: 35 minutes; a killed `--max-minutes 0.2` run of a $55.04/h type: 6 minutes);
     `--refresh` records the end EC2 names, not the refresh's time;
  3  "candidates": [] with an instance of candidate 0: refused, no crash;
  4  every hostile state file (the sweep_status.py ones plus a FIFO, a symbolic link to /dev/zero,
     a 300 MB file, a link to a good file, empty candidates, C1 controls) given to `sweep status`,
     `sweep status ID`, `--format json`, `sweep cleanup ID` and `sweep cleanup --all`, each under a
     10-second timeout and a 1 GiB address-space limit: an answer, never a hang, crash or
     unescaped control, and the file left as it was;
  5  a region --region would refuse ("x") and a time before 2020 (the epoch) refused by status and
     cleanup, the message naming the field and why, EC2 never asked;
  6  `sweep status --format json` with an unreadable state file among good ones: json.load reads it;
 10  a C1 control (U+009B, CSI) in a state's phase or note never reaches the terminal raw;
 11  `sweep cleanup --all` whose state files cannot be listed ends nothing without --force, and
     says what that costs it with --force.
Usage: sweep_state_hostile.py INSTBENCH [--sanitized]"""
import copy
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import FakeAws, absent_path, check, failures, refused_url   # noqa: E402
ABSENT = absent_path()

BIN = os.path.abspath(sys.argv[1])
SID, SID2 = "20261125-213005-9f3a", "20261126-101010-beef"
SANITIZED = "--sanitized" in sys.argv[2:]   # ASan reserves terabytes of address space: no limit, no RSS bound
LIMIT_AS = resource.RLIM_INFINITY if SANITIZED else 1 << 30   # the address-space limit every hostile run gets
TIMEOUT = 10


class FakeEc2(FakeAws):
    SERVER = os.path.join(HERE, "fake_ec2.py")

    def sweep(self, **script):
        req = urllib.request.Request(self.url + "/__sweep", data=json.dumps(script).encode())
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def instance(self, iid):
        return next((i for i in self.sweep()["instances"] if i["id"] == iid), None)


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def state(sid=SID, region="us-east-1", price=0.5, max_minutes=30, launched=None, instances=None, phase="watching"):
    launched = launched if launched is not None else time.time() - 60
    return {
        "schema": "instbench.sweep-state/v1", "id": sid, "region": region, "s3_bucket": "bkt", "s3_prefix": "p/",
        "max_minutes": max_minutes, "max_cost_usd": 100, "created": iso(launched - 5), "finished": None,
        "phase": phase, "note": "",
        "candidates": [{"spec": "g5.xlarge:on-demand", "instance_type": "g5.xlarge", "nodes": 1, "market": "on-demand",
                        "ami": "ami-0abc1234", "usd_per_hour_per_node": price, "price_source": "snapshot",
                        "outcome": "running", "reason": "", "placement_group": "", "placement_group_deleted": False,
                        "launched": iso(launched), "ended": None, "result_path": ""}],
        "instances": instances if instances is not None else [
            {"id": "i-0123456789abcdef0", "candidate": 0, "launch_index": 0, "state": "running", "az": region + "a",
             "private_ip": "10.0.0.1", "state_reason": "", "launched": iso(launched), "ended": None}],
    }


def sweeps_dir(home):
    d = os.path.join(home, "state", "instbench", "sweeps")
    os.makedirs(d, exist_ok=True)
    return d


def write(home, doc, sid=SID, raw=None):
    path = os.path.join(sweeps_dir(home), sid + ".json")
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "w") as f:
        f.write(raw if raw is not None else json.dumps(doc))
    return path


def read(home, sid=SID):
    with open(os.path.join(sweeps_dir(home), sid + ".json")) as f:
        return json.load(f)


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def run(home, fake, *args, bounded=False):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_STATE_HOME": os.path.join(home, "state"),
           "XDG_CACHE_HOME": os.path.join(home, "cache"), "NO_COLOR": "1", "AWS_EC2_METADATA_DISABLED": "true",
           "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
           "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": fake.url if fake else refused_url(),
           "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT,
           "INSTBENCH_AWS_BACKOFF_BASE": "0.01", "INSTBENCH_SWEEP_POLL_S": "0.2"}
    try:
        r = subprocess.run([BIN, "sweep"] + list(args), env=env, capture_output=True, timeout=TIMEOUT if bounded else 120,
                           preexec_fn=limit if bounded else None)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %ds" % TIMEOUT
    err = r.stderr.decode("utf-8", "replace")
    # under the ASan/UBSan build a memory error is a failure whatever the exit status
    check(not any(m in err for m in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")),
          "sweep %s: sanitizer report: %s" % (" ".join(args), err[-2000:]))
    return r.returncode, r.stdout.decode("utf-8", "replace"), err


def peak_rss_mib(home, *args):
    """The peak resident memory of one bounded `instbench sweep ARGS` (os.wait4's rusage), in MiB."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_STATE_HOME": os.path.join(home, "state"),
           "NO_COLOR": "1", "AWS_EC2_METADATA_DISABLED": "true"}
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([BIN, "sweep"] + list(args), env=env, stdout=out, stderr=out, preexec_fn=limit)
        timer = threading.Timer(TIMEOUT, p.kill)
        timer.start()
        _, _, usage = os.wait4(p.pid, 0)
        timer.cancel()
        p.returncode = 0   # reaped here; keeps Popen from waiting again
    return usage.ru_maxrss / 1024


def cost_shown(out, usd):
    return "$%.3g" % usd in out or "$%.2f" % usd in out


def test_cleanup_region(fake, home):
    """Defect 1."""
    now = time.time()
    iid = "i-0123456789abcdef0"
    fake.sweep(plant=[{"id": iid, "region": "us-east-1", "state": "running", "launched": now - 60,
                       "tags": {"instbench:sweep": SID, "instbench:candidate": "g5.xlarge:on-demand"}}])
    write(home, state(launched=now - 60))
    rc, out, err = run(home, fake, "cleanup", SID, "--region", "us-west-2", "--wait", "10")
    inst = fake.instance(iid)
    check(inst and inst["state"] in ("shutting-down", "terminated"),
          "cleanup --region us-west-2 terminates the instance the state file places in us-east-1: %s %s" % (inst, err))
    check(rc == 0, "... and exits 0 once EC2 confirmed it: %s %s" % (rc, err[-600:]))
    doc = read(home)
    rec = doc["instances"][0]
    check(rec["state"] == "terminated" and rec["ended"] == iso(inst["ended_at"]),
          "the state records the end EC2 named (%s): %s" % (iso(inst["ended_at"]) if inst else None, rec))

    # An instance the state file records that EC2 shows in no region searched: never "terminated".
    gone = "i-0fedcba987654321f"
    write(home, state(instances=[{"id": gone, "candidate": 0, "launch_index": 0, "state": "running", "az": "us-east-1a",
                                  "private_ip": "10.0.0.1", "state_reason": "", "launched": iso(now - 60), "ended": None}]))
    rc, out, err = run(home, fake, "cleanup", SID, "--region", "us-west-2", "--wait", "5")
    doc = read(home)
    check(rc == 1 and gone in err, "an instance seen nowhere: exit 1 naming it: %s %s" % (rc, err[-600:]))
    check(doc["instances"][0]["state"] == "running" and doc["instances"][0]["ended"] is None and doc["phase"] != "done",
          "... left as recorded, the sweep not done: %s" % json.dumps(doc)[:500])
    rc, out, err = run(home, fake, "status", SID)
    check(rc == 0 and "1 instance not known terminated" in out, "status still counts it alive: %s" % out)


def test_cost(fake, home):
    """Defect 2."""
    now = time.time()
    # two days old, $0.50/h, 30 minutes, nothing known of its end: at most its timer's 30 minutes and
    # the 5 of boot and halt billed
    write(home, state(price=0.5, max_minutes=30, launched=now - 2 * 86400))
    rc, out, err = run(home, fake, "status", SID)
    usd = 0.5 * 35 / 60
    check(rc == 0 and cost_shown(out, usd) and "end is not known" in out,
          "a 2-day-old state, end unknown: cost %.4f (launch + 30 + 5 min), said so: %s" % (usd, out))
    # `run --max-minutes 0.2` of a $55.04/h type killed; the instance's own timer ended it: `shutdown
    # -h +1` (0.2 rounded up) once it had booted, so at most 1 + 5 minutes.  (Sweep SID2: the fake still
    # holds SID's instance of test_cleanup_region, which --refresh would find by its tag and record.)
    launched = int(now) - 2 * 86400
    iid = "i-0123456789abcdef1"
    doc = state(sid=SID2, price=55.04, max_minutes=0.2, launched=launched)
    doc["instances"][0]["id"] = iid
    write(home, doc, sid=SID2)
    rc, out, err = run(home, fake, "status", SID2)
    usd = 55.04 * 6 / 60
    check(rc == 0 and cost_shown(out, usd), "a killed 0.2-minute run two days later: %.4f, not more: %s" % (usd, out))
    # --refresh: EC2 says it ended 12 s after launch; that end is recorded, not the refresh's time
    fake.sweep(plant=[{"id": iid, "region": "us-east-1", "state": "terminated", "launched": launched,
                       "ended_at": launched + 12, "reason": "Client.InstanceInitiatedShutdown",
                       "tags": {"instbench:sweep": SID2}}])
    rc, out, err = run(home, fake, "status", SID2, "--refresh")
    rec = read(home, SID2)["instances"][0]
    check(rc == 0 and rec["state"] == "terminated" and rec["ended"] == iso(launched + 12),
          "--refresh records EC2's end %s: %s %s" % (iso(launched + 12), rec, err))
    usd = 55.04 * 12 / 3600
    check(cost_shown(out, usd) and "end is not known" not in out, "... and the cost from it: %s" % out)
    os.unlink(os.path.join(sweeps_dir(home), SID2 + ".json"))


def hostile_files(home):
    """name -> a function that plants it as SID's state file (returns its path)."""
    d = sweeps_dir(home)
    path = os.path.join(d, SID + ".json")
    good = state()

    def mutate(f):
        x = copy.deepcopy(good)
        f(x)
        return lambda: write(home, x)

    def raw(text):
        return lambda: write(home, None, raw=text)

    def fifo():
        sweeps_dir(home)
        os.mkfifo(path)
        return path

    def zero():
        sweeps_dir(home)
        os.symlink("/dev/zero", path)
        return path

    def big():
        sweeps_dir(home)
        with open(path, "wb") as f:
            f.write(b'{"schema": "instbench.sweep-state/v1", "pad": "')
            f.truncate(300 << 20)
        return path

    def link_to_good():
        sweeps_dir(home)
        target = os.path.join(home, "elsewhere.json")
        with open(target, "w") as f:
            json.dump(good, f)
        os.symlink(target, path)
        return path

    return {
        "not JSON": raw("{\"schema\": "),
        "wrong schema": mutate(lambda d: d.update(schema="instbench.result/v1")),
        "duplicate key": raw(json.dumps(good)[:-1] + ', "id": "%s"}' % SID),
        "bad instance id": mutate(lambda d: d["instances"][0].update(id="i-../../etc")),
        "candidate out of range": mutate(lambda d: d["instances"][0].update(candidate=7)),
        "control characters in a state": mutate(lambda d: d["instances"][0].update(state="run\nning")),
        "string too long": mutate(lambda d: d["candidates"][0].update(spec="g" * 5000)),
        "too many instances": mutate(lambda d: d.update(instances=d["instances"] * 20000)),
        "nodes out of range": mutate(lambda d: d["candidates"][0].update(nodes=100000)),
        "another sweep's id": mutate(lambda d: d.update(id="20261125-213005-0000")),
        "not an object": raw("[1, 2]"),
        "outcome unknown": mutate(lambda d: d["candidates"][0].update(outcome="exploded")),
        "instances not a list": mutate(lambda d: d.update(instances={"a": 1})),
        "empty candidates, an instance of candidate 0": mutate(lambda d: d.update(candidates=[])),
        "C1 control in the phase": mutate(lambda d: d.update(phase="wat\u009b2Jching")),
        "a NUL in a string": raw(json.dumps(good).replace('"watching"', '"watch\\u0000ing"')),
        # the EFA fields (issue 31): what a launch would send and cleanup would delete is checked too
        "an EFA interface type EC2 does not take": mutate(lambda d: d["candidates"][0].update(efa={"interfaces": [
            {"network_card": 0, "device_index": 0, "interface_type": "trunk; rm -rf /", "public_ip": False}]})),
        "an EFA network card out of range": mutate(lambda d: d["candidates"][0].update(efa={"interfaces": [
            {"network_card": 99, "device_index": 0, "interface_type": "efa", "public_ip": False}]})),
        "65 EFA interfaces": mutate(lambda d: d["candidates"][0].update(efa={"interfaces": [
            {"network_card": 0, "device_index": 0, "interface_type": "efa", "public_ip": False}] * 65})),
        "an Elastic IP that is not an allocation": mutate(lambda d: d["instances"][0].update(elastic_ip={
            "allocation_id": "sg-0123", "public_ip": "198.51.100.1", "associated": True, "released": False})),
        "an Elastic IP flag that is not a boolean": mutate(lambda d: d["instances"][0].update(elastic_ip={
            "allocation_id": "eipalloc-0123", "public_ip": "198.51.100.1", "associated": "yes", "released": False})),
        "a security group that is not an object": mutate(lambda d: d.update(security_group="sg-0123")),
        "a security group id that is not one": mutate(lambda d: d.update(security_group={
            "name": "instbench-efa-x", "id": "vpc-0123", "deleted": False})),
        "a region AWS does not have": mutate(lambda d: d.update(region="x")),
        "a launch at the epoch": mutate(lambda d: d["instances"][0].update(launched="1970-01-01T00:00:00Z")),
        "a FIFO": fifo,
        "a symbolic link to /dev/zero": zero,
        "a 300 MB file": big,
        "a symbolic link to a good file": link_to_good,
    }


def test_hostile(fake, home):
    """Defects 3, 4, 10 and the bar: every hostile state file through status and cleanup, bounded."""
    for what, plant in hostile_files(home).items():
        shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
        path = plant()
        before = os.lstat(path)
        runs = [("status",), ("status", SID), ("status", "--format", "json"), ("status", SID, "--format", "json"),
                ("cleanup", SID, "--wait", "2"), ("cleanup", "--all", "--wait", "2")]
        for args in runs:
            rc, out, err = run(home, fake, *args, bounded=True)
            name = "%s: sweep %s" % (what, " ".join(args))
            if not check(rc is not None, "%s: answers within %ds under a %s address space" % (
                name, TIMEOUT, "unlimited" if SANITIZED else "%d MiB" % (LIMIT_AS >> 20))):
                continue
            check(rc in (0, 1, 2), "%s: an exit status, not a crash: %d %s" % (name, rc, err[-300:]))
            check("\x1b" not in out + err and "\u009b" not in out + err, "%s: no raw control reaches the terminal" % name)
            if args == ("status", SID):
                lines = [x for x in err.splitlines() if x.strip()]
                check(rc == 1 and len(lines) == 1 and SID + ".json" in lines[0],
                      "%s: refused in one line naming the file, exit 1: %d %r" % (name, rc, err[-300:]))
            if args == ("status",):
                check(rc == 1 and SID not in out, "%s: left out of the list, exit 1: %d %r" % (name, rc, out))
            if args[:2] == ("status", "--format"):
                try:
                    check(json.loads(out) == [], "%s: an empty JSON list: %r" % (name, out[:200]))
                except ValueError:
                    check(False, "%s: stdout is not JSON: %r" % (name, out[:200]))
            if args[0] == "cleanup":
                check(rc != 0, "%s: never says all clean over a state it could not read: %d %s" % (name, rc, err[-300:]))
        if what in ("a 300 MB file", "a symbolic link to /dev/zero"):
            rss = peak_rss_mib(home, "status", SID)
            check(SANITIZED or rss < 64, "%s: read no further than the 4 MiB cap (peak %.0f MiB)" % (what, rss))
        after = os.lstat(path)
        check((before.st_mode, before.st_size, before.st_mtime_ns) == (after.st_mode, after.st_size, after.st_mtime_ns),
              "%s: the file is left as it was" % what)

    # A C1 control in a note (free text) is shown escaped.
    shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
    doc = state()
    doc["note"] = "stopped \u009b2J here"
    write(home, doc)
    rc, out, err = run(home, fake, "status", SID)
    check(rc == 0 and "\u009b" not in out and "\\u009b2J" in out, "a C1 control in the note shown escaped: %r" % out)


def test_refused_values(fake, home):
    """A state file's region checked as --region is (cleanup searched a region "x"), and a time at
    the epoch refused saying why (it is a UTC time, but none instbench wrote): the messages name the
    field and the value's fault; cleanup, as for any state it cannot read, looks by tag in the
    configured region (us-east-1 here), never in the state's."""
    cases = (("region x", lambda d: d.update(region="x"), ["state.region", "'x'", "not an AWS region"]),
             ("region us-fake-1", lambda d: d.update(region="us-fake-1"), ["state.region", "'us-fake-1'"]),
             ("created at the epoch", lambda d: d.update(created="1970-01-01T00:00:00Z"),
              ["state.created", "before 2020"]),
             ("launched at the epoch", lambda d: d["candidates"][0].update(launched="1970-01-01T00:00:00Z"),
              ["launched", "before 2020"]),
             ("ended at the epoch", lambda d: d["instances"][0].update(ended="1970-01-01T00:00:00Z"),
              ["ended", "before 2020"]),
             ("not a time", lambda d: d["instances"][0].update(launched="yesterday"),
              ["launched", "is not a UTC time like"]))
    for what, change, words in cases:
        shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
        doc = state()
        change(doc)
        write(home, doc)
        rc, out, err = run(home, fake, "status", SID)
        check(rc == 1 and all(w in err for w in words) and (what == "not a time" or "is not a UTC time" not in err),
              "%s: sweep status refuses it saying %s: %d %r" % (what, words, rc, err[-400:]))
        rc, out, err = run(home, fake, "cleanup", SID, "--wait", "2")
        searched_its_region = doc["region"] != "us-east-1" and "instances in %s\n" % doc["region"] in err
        check(rc == 1 and all(w in err for w in words) and "instances in us-east-1" in err and not searched_its_region,
              "%s: sweep cleanup refuses the state, looks by tag in us-east-1: %d %r" % (what, rc, err[-400:]))
    # the bounds: 2020-01-01T00:00:00Z read, a second earlier refused
    for t, ok in (("2020-01-01T00:00:00Z", True), ("2019-12-31T23:59:59Z", False)):
        shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
        doc = state()
        doc["created"] = t
        write(home, doc)
        rc, out, err = run(home, fake, "status", SID)
        check((rc == 0) == ok, "created %s: %s: %d %r" % (t, "read" if ok else "refused", rc, err[-300:]))


def test_json_list(fake, home):
    """Defect 6: an unreadable state file first, a good one after: still one JSON list."""
    shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
    write(home, None, sid=SID, raw="{not json")
    write(home, state(sid=SID2), sid=SID2)
    rc, out, err = run(home, fake, "status", "--format", "json")
    try:
        back = json.loads(out)
    except ValueError:
        back = None
    check(rc == 1 and isinstance(back, list) and [x["id"] for x in back] == [SID2],
          "status --format json with an unreadable file first: valid JSON with the readable one: %d %r" % (rc, out[:120]))


def test_unlisted(fake, home):
    """Defect 11: `cleanup --all` that cannot list the state files (their folder a file) cannot tell
    whether a `sweep run` is alive here.  Without --force it ends nothing (a live run's instances are
    --force's to end), exit 1, and says how to go on; with --force it ends what is tagged in --region,
    says at once what the failed listing costs (none read, only --region searched), not what a failed
    listing at its end costs (a sweep started meanwhile unseen), and exits 1: a sweep that ran
    elsewhere is unknown, so "nothing left" is never said."""
    shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
    folder = sweeps_dir(home)
    os.rmdir(folder)
    with open(folder, "w") as f:
        f.write("not a folder\n")
    iid = "i-0aaaaaaaaaaaaaaa1"
    fake.sweep(plant=[{"id": iid, "region": "us-east-1", "state": "running", "launched": time.time() - 60,
                       "tags": {"instbench:sweep": SID, "instbench:candidate": "g5.xlarge:on-demand"}}])
    rc, out, err = run(home, fake, "cleanup", "--all", "--region", "us-east-1", "--wait", "2")
    inst = fake.instance(iid)
    check(rc == 1 and inst and inst["state"] == "running" and "--all --force" in err,
          "cleanup --all, the state files' folder a file: nothing ended, exit 1, --force named: %d %s %r" % (
              rc, inst and inst["state"], err[-800:]))
    rc, out, err = run(home, fake, "cleanup", "--all", "--force", "--region", "us-east-1", "--wait", "10")
    inst = fake.instance(iid)
    first = [line for line in err.splitlines() if folder in line]
    check(len(first) >= 2 and "no state file is read" in first[0] and "only --region" in first[0] and
          "started while this cleanup ran" not in first[0] and "started while this cleanup ran" in first[1],
          "cleanup --all --force, the state files' folder a file: the first listing's warning says what it costs: "
          "%d %r" % (rc, err[-800:]))
    check(inst and inst["state"] in ("shutting-down", "terminated") and rc == 1 and "nothing of any sweep" not in err,
          "... --force ends what is tagged in --region, exit 1, never 'nothing left': %d %s %r" % (
              rc, inst and inst["state"], err[-800:]))
    os.unlink(folder)

home = tempfile.mkdtemp(prefix="sweep-hostile-")
fake = FakeEc2()
try:
    test_cleanup_region(fake, home)
    test_cost(fake, home)
    test_hostile(fake, home)
    test_refused_values(fake, home)
    test_json_list(fake, home)
    test_unlisted(fake, home)
finally:
    fake.stop()
    shutil.rmtree(home, ignore_errors=True)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
