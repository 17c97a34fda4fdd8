#!/usr/bin/python3
"""`instbench sweep run|status|cleanup` against the fault-injecting fake EC2 (tests/sweep/fake_ec2.py:
tests/fakes/aws_fake_server.py's signature checks and S3, plus the sweep's EC2 calls and the faults moto
never makes).  The instances' side is played here: a thread watches the fake's instances and, for
the candidates a scenario says deliver, PUTs a result (tests/rank/rank_fixtures.result, built
independently of instbench) or a log tail to the keys the sweep's S3 layout names.

Every expectation is read from the fake's own record of the calls and from the state file with
Python's json, never from instbench's output alone:
  A  three candidates with a capacity error in one zone, throttling, instances missing from
     DescribeInstances right after launch and a TerminateInstances that fails once: six instances,
     tags on instances and volumes, a placement group for the 4-node candidate (deleted at the end),
     node 0's address in the rendezvous key, three results downloaded and ranked, everything
     terminated;
  B  no capacity in any zone, a spot interruption, a build failure: each reported with its reason;
  C  a quota stops the sweep naming the quota and the vCPUs; what was launched is terminated;
  K  every RunInstances answer lost after EC2 launched: found by its ClientToken, recorded and
     terminated;
  D  --max-cost below the worst case: exit 2, no RunInstances at all, no state file; a refused
     RunInstances DryRun: exit 1, nothing launched; a bucket in another region (exit 2) or a missing
     one (exit 1): nothing launched; `plan --format csv` refused;
  E  SIGTERM and SIGINT mid-sweep: everything terminated, exit 143 / 130;
  F  --max-minutes passes: "timed out", everything terminated;
  G  SIGKILL mid-sweep, the state file deleted: `sweep cleanup --all` finds and ends everything by tag;
  H  bad input: no --max-cost, measure flags after -- that measure refuses (one line naming the
     flag as measure's), a sweep id that does not exist, a malformed one;
  J  the confirmation: refused without --yes off a terminal, "n" refuses and "y" launches on one;
     temporary credentials fetched once for the plan and the launch together (one client);
  I  EC2 never confirms an instance terminated: exit 1 naming `sweep cleanup ID`, which then ends it.
  L  EFA: the region's Elastic IPs run out (the candidate that cannot have them fails with the
     code, its instances terminated, the others go on), interfaces attached late (the association
     is tried again until it takes), the group's deletion refused while EC2 still counts the
     interfaces (tried again): at the end no instance, address or security group is left.
  M  a launch EC2 refuses (InvalidParameterValue) fails that candidate alone, once, its placement
     group deleted, and the others go on; a type whose card 0 takes ENA only (P6-B300's rule, here
     on p4d.24xlarge's name) is launched with its primary alone on card 0 and EFA on cards 1-4.
Usage: sweep_run_faults.py INSTBENCH [SCENARIO...]"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "rank"))
from testlib import FakeAws, absent_path, check, failures   # noqa: E402
from rank_fixtures import result   # noqa: E402
from fake_ec2 import tag_specs   # noqa: E402
from state_schema import load_state   # noqa: E402
ABSENT = absent_path()

BIN = os.path.abspath(sys.argv[1])
BUCKET, PREFIX, REGION = "sweep-bkt", "bench/", "us-east-1"
AMI = "ami-0123456789abcdef0"
PRICES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "data", "aws-accelerated-prices.csv")


class FakeEc2(FakeAws):
    SERVER = os.path.join(HERE, "fake_ec2.py")

    def sweep(self, **script):
        req = urllib.request.Request(self.url + "/__sweep", data=json.dumps(script).encode())
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def look(self):
        with urllib.request.urlopen(self.url + "/__sweep", timeout=10) as r:
            return json.loads(r.read())


def environment(fake, home):
    return {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_STATE_HOME": os.path.join(home, "state"),
            "XDG_CACHE_HOME": os.path.join(home, "cache"),
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "AWS_REGION": REGION, "AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT,
            "INSTBENCH_AWS_BACKOFF_BASE": "0.01", "INSTBENCH_SWEEP_POLL_S": "0.2",
            "INSTBENCH_SWEEP_TERMINATE_WAIT_S": "5", "NO_COLOR": "1"}


def key_name(i, spec):
    return "%d-%s" % (i, spec.replace(":", "-"))


ACCEL = {"g5.xlarge": (1, "NVIDIA A10G"), "g5.12xlarge": (4, "NVIDIA A10G"), "g5.2xlarge": (1, "NVIDIA A10G"),
         "g6.xlarge": (1, "NVIDIA L4")}


class Instances(threading.Thread):
    """Plays the instances: DELIVER maps a candidate spec to ("result", samples/s) or ("log", text);
    node 0 of a running candidate delivers it once, as the user data would."""

    def __init__(self, fake, specs, deliver):
        super().__init__(daemon=True)
        self.fake, self.specs, self.deliver, self.done, self.stop = fake, specs, deliver, set(), False
        self.sweep_id = None

    def run(self):
        while not self.stop:
            for inst in self.fake.look()["instances"]:
                spec = inst["tags"].get("instbench:candidate")
                self.sweep_id = inst["tags"].get("instbench:sweep")
                if inst["state"] != "running" or inst["index"] != 0 or spec in self.done or spec not in self.deliver:
                    continue
                i = self.specs.index(spec)
                kind, what = self.deliver[spec]
                base = "%s/%ssweep-%s/" % (BUCKET, PREFIX, self.sweep_id)
                if kind == "result":
                    nodes = int(spec.split("x", 1)[0]) if "x" in spec.split(".")[0] else 1
                    itype = spec.split(":")[0].split("x", 1)[-1] if nodes > 1 else spec.split(":")[0]
                    acc, name = ACCEL[itype]
                    doc = result(itype, REGION, nodes, acc, name, what, count=nodes, market=spec.split(":")[1])
                    obj = {base + "results/%s.json" % key_name(i, spec): json.dumps(doc)}
                else:
                    obj = {base + "logs/%s-node0.log" % key_name(i, spec): what}
                self.fake.control(s3_objects=obj)
                self.done.add(spec)
            time.sleep(0.1)


def sweep(fake, home, specs, *extra, deliver=None, max_cost="100", signal_after=None, kill_after=None, timeout=120):
    """Runs `sweep run`; returns (rc, stdout, stderr, sweep id, the fake's record)."""
    player = Instances(fake, specs, deliver or {})
    player.start()
    args = [BIN, "sweep", "run", "--region", REGION, "--s3", "s3://%s/%s" % (BUCKET, PREFIX), "--ami", AMI,
            "--candidates", ",".join(specs), "--yes"] + (["--max-cost", max_cost] if max_cost else []) + list(extra)
    p = subprocess.Popen(args, cwd=home, env=environment(fake, home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    if signal_after or kill_after:
        sig, cond = signal_after or (signal.SIGKILL, kill_after)
        deadline = time.time() + 60
        while time.time() < deadline and not cond(fake.look()):
            time.sleep(0.1)
        p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    player.stop = True
    player.join()
    return p.returncode, out, err, player.sweep_id, fake.look()


def alive(rec):
    return [i for i in rec["instances"] if i["state"] != "terminated"]


def groups_left(rec):
    return [g for g in rec["placement_groups"] if g["state"] != "deleted"]


def state_file(home, sweep_id):
    return load_state(home, sweep_id)   # valid against schemas/sweep-state-v1.json


def all_running(n):
    return lambda rec: len(rec["instances"]) >= n and all(i["state"] == "running" for i in rec["instances"])


def fresh():
    # the fake's Pricing answers from the repository's price data, so rank prices the results live;
    # its container credentials last 10 minutes (scenario J)
    fake = FakeEc2("--s3-bucket", "%s:%s" % (BUCKET, REGION), "--prices", PRICES, "--container-cred-ttl", "600")
    home = tempfile.mkdtemp(prefix="sweep-faults-")
    return fake, home


def scenario_a():
    fake, home = fresh()
    try:
        specs = ["g5.xlarge:spot", "4xg5.xlarge:spot", "g5.12xlarge:on-demand"]
        fake.sweep(capacity={"g5.12xlarge@us-east-1a": "InsufficientInstanceCapacity"}, hide_new=2,
                   # more throttled answers in a row than a one-shot command's 3 attempts: the sweep backs off longer
                   throttle_op={"RunInstances": 4, "DescribeInstances": 4, "TerminateInstances": 4},
                   terminate_fail=1)
        sps = {"g5.xlarge:spot": 310.0, "4xg5.xlarge:spot": 1180.0, "g5.12xlarge:on-demand": 1100.0}
        rc, out, err, sid, rec = sweep(fake, home, specs, "--format", "json",
                                       deliver={s: ("result", v) for s, v in sps.items()})
        check(rc == 0, "A: exit 0: rc %d\n%s" % (rc, err[-3000:]))
        check(len(rec["instances"]) == 6, "A: six instances launched: %d" % len(rec["instances"]))
        check(not alive(rec), "A: every instance terminated: %r" % alive(rec))
        check(not groups_left(rec), "A: no placement group left: %r" % groups_left(rec))
        check(rec["calls"].get("throttled", 0) == 12, "A: throttled calls retried: %r" % rec["calls"])
        for inst in rec["instances"]:
            tags = inst["tags"]
            check(tags.get("instbench:sweep") == sid and tags.get("instbench:candidate") in specs,
                  "A: instance tags: %r" % tags)
            check(inst["volume_tags"] == tags, "A: volume tags equal the instance's: %r" % inst["volume_tags"])
            check(inst["image"] == AMI, "A: the AMI asked: %r" % inst["image"])
        launches = rec["launches"]
        big = [l for l in launches if l["InstanceType"] == "g5.12xlarge"]
        check(len(big) == 1 and big[0]["SubnetId"] == "subnet-us-east-1b",
              "A: g5.12xlarge launched in the next zone after the capacity error: %r" % [l.get("SubnetId") for l in big])
        tokens = [l.get("ClientToken") for l in launches]
        check(all(tokens) and len(set(tokens)) == len(tokens), "A: a ClientToken per launch: %r" % tokens)
        four = [l for l in launches if l["MinCount"] == "4"]
        check(len(four) == 1 and four[0]["MaxCount"] == "4" and four[0].get("Placement.GroupName"),
              "A: 4 nodes in one RunInstances with a placement group: %r" % four)
        markets = [(tag_specs(l, "instance").get("instbench:candidate", "").endswith(":spot"),
                    l.get("InstanceMarketOptions.MarketType")) for l in launches]
        check(all((m == "spot") == spot for spot, m in markets), "A: spot only where asked: %r" % markets)
        pgs = rec["placement_groups"]
        check(len(pgs) == 1 and pgs[0]["tags"].get("instbench:sweep") == sid and pgs[0]["strategy"] == "cluster",
              "A: one cluster placement group, tagged: %r" % pgs)
        st = state_file(home, sid)
        check(st["phase"] == "done" and all(i["state"] == "terminated" for i in st["instances"]),
              "A: the state file says done, all terminated: %r" % st["phase"])
        check(sorted(c["outcome"] for c in st["candidates"]) == ["result"] * 3, "A: three results: %r" % st["candidates"])
        files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(home, "instbench-results", "sweep-" + sid, "*.json")))
        check(files == sorted("%s.json" % key_name(i, s) for i, s in enumerate(specs)), "A: results downloaded: %r" % files)
        try:
            ranked = json.loads(out)
            rows = ranked["rows"] if isinstance(ranked, dict) and "rows" in ranked else ranked
            seen = {(r.get("instance_type"), r.get("nodes"), r.get("samples_per_second")) for r in rows}
            want = {("g5.xlarge", 1, 310.0), ("g5.xlarge", 4, 1180.0), ("g5.12xlarge", 1, 1100.0)}
            check(want <= seen, "A: the ranking has the three delivered results: %r" % seen)
        except ValueError:
            check(False, "A: the ranking is JSON: %r" % out[:500])
        check("cost of the sweep's instances" in err, "A: the sweep's cost is printed")
        # rendezvous: node 0's private address, read back with botocore through the fake's S3
        node0 = [i for i in rec["instances"] if i["tags"]["instbench:candidate"] == "4xg5.xlarge:spot" and i["index"] == 0]
        body = s3_get(fake, "%ssweep-%s/rendezvous/1" % (PREFIX, sid))
        check(node0 and body.strip() == node0[0]["ip"], "A: rendezvous holds node 0's address: %r" % body)
        # status reads the state file back
        r = subprocess.run([BIN, "sweep", "status", sid], env=environment(fake, home), capture_output=True, text=True)
        check(r.returncode == 0 and sid in r.stdout and r.stdout.count("terminated") >= 6, "A: status: %s %s" % (r.stdout, r.stderr))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def s3_get(fake, key):
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method="GET", url="%s/%s/%s" % (fake.url, BUCKET, key))
    S3SigV4Auth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), "s3", REGION).add_auth(req)
    try:
        with urllib.request.urlopen(urllib.request.Request(req.url, headers=dict(req.headers)), timeout=10) as r:
            return r.read().decode()
    except OSError as e:
        return "(%s)" % e


def scenario_b():
    fake, home = fresh()
    try:
        specs = ["g5.xlarge:spot", "g5.2xlarge:on-demand", "g6.xlarge:on-demand"]
        fake.sweep(capacity={"g5.2xlarge@us-east-1a": "InsufficientInstanceCapacity",
                             "g5.2xlarge@us-east-1b": "Unsupported", "g5.2xlarge@us-east-1c": "InsufficientInstanceCapacity"},
                   interrupt={"g5.xlarge": 0.5})
        log = "".join("cmake line %d\n" % i for i in range(200)) + "error: the compiler failed on vit.c\n"
        rc, out, err, sid, rec = sweep(fake, home, specs, deliver={"g6.xlarge:on-demand": ("log", log)})
        check(rc == 1, "B: nothing ranked: exit 1: %d\n%s" % (rc, err[-3000:]))
        check(not alive(rec), "B: every instance terminated: %r" % alive(rec))
        st = state_file(home, sid)
        out_of = {c["spec"]: c for c in st["candidates"]}
        nc = out_of["g5.2xlarge:on-demand"]
        check(nc["outcome"] == "no capacity" and all(z in nc["reason"] for z in ("us-east-1a", "us-east-1b", "us-east-1c")),
              "B: no capacity after every zone: %r" % nc)
        check(out_of["g5.xlarge:spot"]["outcome"] == "interrupted", "B: the spot reclaim is an interruption: %r" % out_of["g5.xlarge:spot"])
        fl = out_of["g6.xlarge:on-demand"]
        check(fl["outcome"] == "failed" and "the compiler failed on vit.c" in fl["reason"], "B: the log's last line: %r" % fl)
        for spec, word in (("g5.2xlarge:on-demand", "no capacity"), ("g5.xlarge:spot", "interrupted"),
                           ("g6.xlarge:on-demand", "failed")):
            check(any(spec in line and word in line for line in err.splitlines()), "B: stderr lists %s as %s" % (spec, word))
        check(len([l for l in rec["launches"] if l["InstanceType"] == "g5.2xlarge"]) == 0 and
              rec["calls"].get("RunInstances", 0) >= 5, "B: three zones tried for g5.2xlarge: %r" % rec["calls"])
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_c():
    fake, home = fresh()
    try:
        specs = ["g5.xlarge:on-demand", "g5.12xlarge:on-demand", "g6.xlarge:on-demand"]
        fake.sweep(quota={"g5.12xlarge": "VcpuLimitExceeded"})
        rc, out, err, sid, rec = sweep(fake, home, specs)
        check(rc == 1, "C: the quota stops the sweep: exit 1: %d\n%s" % (rc, err[-2000:]))
        check("VcpuLimitExceeded" in err and "48 vCPUs" in err, "C: names the quota and the vCPUs: %s" % err[-2000:])
        check(len(rec["instances"]) == 1 and not alive(rec), "C: the one launched is terminated: %r" % rec["instances"])
        st = state_file(home, sid)
        check([c["outcome"] for c in st["candidates"]] == ["not run", "not run", "not run"],
              "C: outcomes: %r" % [c["outcome"] for c in st["candidates"]])
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_d_h():
    fake, home = fresh()
    try:
        rc, out, err, sid, rec = sweep(fake, home, ["4xg5.12xlarge:on-demand"], max_cost="1")
        check(rc == 2 and "exceeds --max-cost" in err, "D: refused: %d %s" % (rc, err))
        check(rec["calls"].get("RunInstances", 0) == 0 and not rec["instances"], "D: nothing launched: %r" % rec["calls"])
        check(not glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json")), "D: no state file")
        # the permission check before money is spent: a refused DryRun launches nothing
        fake.sweep(dry_run_denied=1)
        rc, out, err, sid, rec = sweep(fake, home, ["g5.xlarge:on-demand", "2xg5.xlarge:spot"])
        check(rc == 1 and "UnauthorizedOperation" in err and "nothing launched" in err,
              "D: a refused DryRun stops run: %d %s" % (rc, err[-1500:]))
        check(not rec["instances"] and not rec["placement_groups"] and not rec["launches"],
              "D: nothing launched after the refused DryRun: %r" % rec)
        check(not glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json")), "D: no state file")
        fake.sweep(dry_run_denied=0)
        # the bucket, before anything is created: one in another region is bad input, a missing one an error
        fake.control(s3_buckets={"far-bkt": "eu-west-1"})
        for bucket, code, words in (("far-bkt", 2, "is in eu-west-1, the sweep runs in us-east-1"),
                                    ("no-such-bkt", 1, "no-such-bkt")):
            args = [BIN, "sweep", "run", "--region", REGION, "--s3", "s3://%s/x/" % bucket, "--ami", AMI,
                    "--candidates", "g5.xlarge", "--yes", "--max-cost", "100"]
            r = subprocess.run(args, cwd=home, env=environment(fake, home), capture_output=True, text=True, timeout=60)
            rec = fake.look()
            check(r.returncode == code and words in r.stderr and "nothing launched" in r.stderr,
                  "D: --s3 %s: exit %d %s" % (bucket, r.returncode, r.stderr[-800:]))
            check(not rec["instances"] and not rec["launches"], "D: --s3 %s: nothing launched" % bucket)
        check(not glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json")), "D: no state file (buckets)")
        r = subprocess.run([BIN, "sweep", "plan", "--region", REGION, "--ami", AMI, "--candidates", "g5.xlarge",
                            "--format", "csv"], env=environment(fake, home), capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and "csv" in r.stderr, "D: plan --format csv refused: %d %s" % (r.returncode, r.stderr))
        rc, out, err, sid, rec = sweep(fake, home, ["g5.xlarge:on-demand"], max_cost=None)
        check(rc == 2 and "--max-cost" in err and not rec["instances"], "H: --max-cost is required: %d %s" % (rc, err))
        # flags after -- that measure refuses: one line, the sweep's, naming the flag as measure's
        for flags, named in ((["--batch-size", "x"], "--batch-size: 'x'"), (["--bogus"], "'--bogus'"),
                             (["--steps", "3", "--duration", "9"], "--steps and --duration"),
                             (["--model", "nosuch"], "--model: unknown model 'nosuch'")):
            rc, out, err, sid, rec = sweep(fake, home, ["g5.xlarge:on-demand"], "--", *flags)
            check(rc == 2 and err.count("\n") == 1 and err.startswith("instbench sweep run: measure flags after --: ")
                  and named in err and err.endswith(" (try: instbench measure --help)\n") and not rec["launches"],
                  "H: -- %s: one line saying measure refuses it: %d %r" % (" ".join(flags), rc, err))
        rc, out, err, sid, rec = sweep(fake, home, ["g5.xlarge:on-demand"], "--", "--help")
        check(rc == 2 and "usage: instbench measure" in out and err.count("\n") == 1 and
              err.startswith("instbench sweep run: measure flags after --: -h/--help printed measure's help") and
              not rec["launches"], "H: -- --help: measure's help, then one line saying so: %d %r" % (rc, err))
        for argv, code, words in ((["status", "20261125-213005-9f3a"], 2, "no sweep"),
                                  (["status", "nope"], 2, "not a sweep ID"),
                                  (["cleanup", "../etc"], 2, "not a sweep ID"),
                                  (["cleanup", "20261125-213005-9f3a"], 2, "no sweep 20261125-213005-9f3a")):
            r = subprocess.run([BIN, "sweep"] + argv, env=environment(fake, home), capture_output=True, text=True, timeout=60)
            check(r.returncode == code and words in r.stderr, "H: %r: exit %d %s" % (argv, r.returncode, r.stderr))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_e_f():
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        fake, home = fresh()
        try:
            specs = ["g5.xlarge:spot", "2xg5.xlarge:on-demand"]
            rc, out, err, sid, rec = sweep(fake, home, specs, signal_after=(sig, all_running(3)))
            check(rc == code, "E: %s: exit %d: %d\n%s" % (sig.name, code, rc, err[-2000:]))
            check(len(rec["instances"]) == 3 and not alive(rec) and not groups_left(rec),
                  "E: %s: everything terminated: %r %r" % (sig.name, alive(rec), groups_left(rec)))
            st = state_file(home, sid)
            check(st["phase"] == "done" and "signal" in st["note"], "E: the state says why: %r" % st["note"])
        finally:
            fake.stop()
            shutil.rmtree(home, ignore_errors=True)
    fake, home = fresh()
    try:
        t0 = time.time()
        rc, out, err, sid, rec = sweep(fake, home, ["g5.xlarge:on-demand"], "--max-minutes", "0.05")
        check(rc == 1 and "timed out" in err and not alive(rec), "F: --max-minutes: %d %s" % (rc, err[-2000:]))
        check(time.time() - t0 < 60, "F: ended soon after 3 s")
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_i():
    """EC2 never confirms an instance terminated: exit 1 naming the cleanup command, the state says
    needs-cleanup; once EC2 confirms, `sweep cleanup ID` ends it and the state says done."""
    fake, home = fresh()
    try:
        fake.sweep(stuck=["g6.xlarge"])
        env = environment(fake, home)
        rc, out, err, sid, rec = sweep(fake, home, ["g6.xlarge:on-demand"], "--max-minutes", "0.03")
        check(rc == 1 and ("instbench sweep cleanup %s" % sid) in err, "I: names the cleanup: %d %s" % (rc, err[-1500:]))
        check(state_file(home, sid)["phase"] == "needs-cleanup", "I: the state says needs-cleanup")
        # status --refresh asks EC2 now: the one instance is still shutting-down, and says so in the file
        r = subprocess.run([BIN, "sweep", "status", sid, "--refresh"], env=env, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and "shutting-down" in r.stdout and
              [i["state"] for i in state_file(home, sid)["instances"]] == ["shutting-down"],
              "I: status --refresh: %d %s %s" % (r.returncode, r.stdout, r.stderr[-500:]))
        fake.sweep(stuck=[])
        r = subprocess.run([BIN, "sweep", "cleanup", sid], env=env, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and not alive(fake.look()), "I: cleanup ID: %d %s" % (r.returncode, r.stderr[-1500:]))
        check(state_file(home, sid)["phase"] == "done", "I: the state says done after the cleanup")
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def on_terminal(argv, env, cwd, answer):
    """Runs argv with stdin and stderr on a pseudo-terminal, typing ANSWER once "[y/N]" shows;
    returns (exit code, what the terminal showed)."""
    import pty
    import select
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=slave, stdout=subprocess.DEVNULL, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    shown, typed, deadline = b"", False, time.time() + 120
    while time.time() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            try:
                b = os.read(master, 65536)
            except OSError:
                break
            if not b:
                break
            shown += b
        if not typed and b"[y/N]" in shown:
            os.write(master, answer.encode())
            typed = True
        if p.poll() is not None and not select.select([master], [], [], 0.2)[0]:
            break
    rc = p.wait(timeout=120)
    os.close(master)
    return rc, shown.decode("utf-8", "replace")


def scenario_j():
    """The confirmation: no --yes and no terminal refuses; on a terminal "n" refuses and "y" launches."""
    fake, home = fresh()
    try:
        env = environment(fake, home)
        argv = [BIN, "sweep", "run", "--region", REGION, "--s3", "s3://%s/%s" % (BUCKET, PREFIX), "--ami", AMI,
                "--candidates", "g5.xlarge:on-demand", "--max-cost", "10", "--max-minutes", "0.03"]
        r = subprocess.run(argv, env=env, cwd=home, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        check(r.returncode == 2 and "--yes" in r.stderr and not fake.look()["instances"],
              "J: no terminal, no --yes: refused: %d %s" % (r.returncode, r.stderr[-500:]))
        rc, shown = on_terminal(argv, env, home, "n\n")
        check(rc == 2 and "[y/N]" in shown and not fake.look()["instances"], "J: answered n: refused: %d %r" % (rc, shown[-500:]))
        rc, shown = on_terminal(argv, env, home, "y\n")
        rec = fake.look()
        check(len(rec["instances"]) == 1 and not alive(rec), "J: answered y: launched and ended: %d %r" % (rc, shown[-800:]))
        # temporary credentials (the fake's container endpoint: 10 minutes) shorter than the
        # instances' life: their presigned URLs die first, and the sweep says so
        cenv = dict(env, AWS_CONTAINER_CREDENTIALS_FULL_URI=fake.url + "/v2/credentials/x")
        del cenv["AWS_ACCESS_KEY_ID"], cenv["AWS_SECRET_ACCESS_KEY"]
        r = subprocess.run(argv + ["--yes"], env=cenv, cwd=home, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        check("sooner than the 60 min the instances' presigned URLs are made for" in r.stderr,
              "J: credentials expiring before the URLs: warned: %d %s" % (r.returncode, r.stderr[-1500:]))
        # the plan's requests and the launch share the sweep's one client (sweep/prepare.c's, handed
        # to the executor): the container endpoint is asked once for them (the prices' own client,
        # src/prices/prices_get.c, once more), never again when the launch starts
        fetched = len(fake.stats()["minted_secrets"]) // 2
        check(fetched == 2, "J: credentials fetched once for the sweep's client, once for the prices': %d" % fetched)
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_g():
    fake, home = fresh()
    try:
        specs = ["g5.xlarge:spot", "4xg5.xlarge:spot"]
        rc, out, err, sid, rec = sweep(fake, home, specs, kill_after=all_running(5))
        check(rc == -signal.SIGKILL, "G: killed: %d" % rc)
        check(len(alive(rec)) == 5 and len(groups_left(rec)) == 1, "G: left behind before cleanup: %d" % len(alive(rec)))
        for f in glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json")):
            os.remove(f)
        env = environment(fake, home)
        r = subprocess.run([BIN, "sweep", "cleanup", "--all", "--region", REGION], env=env, capture_output=True,
                           text=True, timeout=120)
        rec = fake.look()
        check(r.returncode == 0, "G: cleanup --all: %d %s" % (r.returncode, r.stderr[-2000:]))
        check(not alive(rec) and not groups_left(rec), "G: zero instances and placement groups left: %r %r" % (
            alive(rec), groups_left(rec)))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_k():
    """K: EC2 launched, but every RunInstances answer was lost (retries with the same ClientToken
    too): the sweep stops on the launch error, and still finds the instance by that ClientToken,
    records it and ends it."""
    fake, home = fresh()
    try:
        fake.sweep(lose_answers=100)
        rc, out, err, sid, rec = sweep(fake, home, ["g5.xlarge:on-demand"])
        check(rc == 1, "K: the lost launch answer stops the sweep: exit %d %s" % (rc, err[-1500:]))
        check(len(rec["instances"]) == 1 and not alive(rec),
              "K: the instance no answer named is terminated: %r" % [(i["id"], i["state"]) for i in rec["instances"]])
        st = state_file(home, sid)
        check("found 1 instance launched by the unanswered RunInstances" in err and
              [i["id"] for i in st["instances"]] == [rec["instances"][0]["id"]] and st["phase"] == "done",
              "K: says so and records it: %s %r" % (err[-1500:], st["instances"]))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_l():
    fake, home = fresh()
    try:
        specs = ["2xp4d.24xlarge:on-demand", "2xp5.48xlarge:on-demand", "g5.xlarge:on-demand"]
        fake.sweep(eip_limit=3, eni_late=2, sg_in_use=2)
        rc, out, err, sid, rec = sweep(fake, home, specs, "--max-minutes", "0.15", "--max-cost", "1000",
                                       deliver={specs[2]: ("result", 300.0)})
        st = state_file(home, sid) if sid else {}
        cand = {c["spec"]: c for c in st.get("candidates", [])}
        p5 = cand.get(specs[1], {})
        check(p5.get("outcome") == "failed" and "AddressLimitExceeded" in p5.get("reason", ""),
              "L: the candidate without Elastic IPs fails with the code: %r" % p5)
        check(cand.get(specs[2], {}).get("outcome") == "result", "L: the others go on: %r" % cand.get(specs[2]))
        p4d = [i for i in st.get("instances", []) if st["candidates"][i["candidate"]]["spec"] == specs[0]]
        check(len(p4d) == 2 and all((i.get("elastic_ip") or {}).get("associated") and i["elastic_ip"]["released"]
                                    for i in p4d), "L: interfaces attached late still get their address: %r" % p4d)
        check(rec["calls"].get("DescribeNetworkInterfaces", 0) >= 4, "L: the association tried again: %r" % rec["calls"])
        check(rec["calls"].get("DeleteSecurityGroup", 0) >= 3 and (st.get("security_group") or {}).get("deleted"),
              "L: the group deleted after DependencyViolation: %r %r" % (rec["calls"], st.get("security_group")))
        check(not alive(rec) and not rec["addresses"] and not rec["security_groups"] and not groups_left(rec),
              "L: nothing left: %r %r %r" % (alive(rec), rec["addresses"], rec["security_groups"]))
        check(st.get("phase") == "done", "L: done: %r %s" % (st.get("phase"), err[-1500:]))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_m():
    fake, home = fresh()
    try:
        # p4d.24xlarge served with P6-B300's card rules (card 0 ENA only, EFA on the four cards after
        # it; the fake refuses an interface a card does not take, as EC2 does); g5.12xlarge's launch
        # refused outright: first in line, so a refusal that stopped the sweep would leave the others unrun
        specs = ["2xg5.12xlarge:on-demand", "2xp4d.24xlarge:on-demand", "g5.xlarge:on-demand"]
        fake.sweep(networks={"p4d.24xlarge": [True, 4, [4] * 5, [["interface"]] + [["interface", "efa", "efa-only"]] * 4]},
                   refuse={"g5.12xlarge": "InvalidParameterValue"})
        rc, out, err, sid, rec = sweep(fake, home, specs, "--max-minutes", "0.15", "--max-cost", "1000",
                                       deliver={specs[2]: ("result", 300.0)})
        st = state_file(home, sid) if sid else {}
        cand = {c["spec"]: c for c in st.get("candidates", [])}
        bad = cand.get(specs[0], {})
        check(bad.get("outcome") == "failed" and "InvalidParameterValue" in bad.get("reason", ""),
              "M: the refused candidate fails with EC2's code: %r" % bad)
        check(len([r for r in rec["refused"] if r.get("InstanceType") == "g5.12xlarge"]) == 1,
              "M: a refusal is not tried in another zone: %r" % [r.get("SubnetId") for r in rec["refused"]])
        check(bad.get("placement_group") and bad.get("placement_group_deleted") is True,
              "M: the refused candidate's placement group deleted: %r" % bad)
        check(cand.get(specs[2], {}).get("outcome") == "result", "M: the others go on: %r" % cand.get(specs[2]))
        p4d = [l for l in rec["launches"] if l.get("InstanceType") == "p4d.24xlarge"]
        nics = sorted((int(l["NetworkInterface.%d.NetworkCardIndex" % k]), int(l["NetworkInterface.%d.DeviceIndex" % k]),
                       l["NetworkInterface.%d.InterfaceType" % k])
                      for l in p4d for k in range(1, 20) if "NetworkInterface.%d.DeviceIndex" % k in l)
        check(len(p4d) == 1 and nics == [(0, 0, "interface"), (1, 0, "efa-only"), (2, 0, "efa-only"), (3, 0, "efa-only"),
                                         (4, 0, "efa-only")],
              "M: card 0 ENA only: the primary alone there, EFA on cards 1-4: %r (refused: %r)" % (nics, rec["refused"]))
        check(cand.get(specs[1], {}).get("outcome") == "timed out", "M: the EFA candidate ran: %r" % cand.get(specs[1]))
        check(rc == 0, "M: a result ranked: exit 0: %d %s" % (rc, err[-2000:]))
        check(not alive(rec) and not rec["addresses"] and not rec["security_groups"] and not groups_left(rec),
              "M: nothing left: %r %r %r" % (alive(rec), rec["addresses"], groups_left(rec)))
        check(st.get("phase") == "done", "M: done: %r" % st.get("phase"))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":   # tests/sweep/sweep_run_block.py imports the harness above
    only = sys.argv[2:]   # scenario letters (a, d_h, m, ...): those alone; none: every one
    for s in (scenario_d_h, scenario_a, scenario_b, scenario_c, scenario_e_f, scenario_g, scenario_i, scenario_j,
              scenario_k, scenario_l, scenario_m):
        if only and s.__name__[len("scenario_"):] not in only:
            continue
        s()
    sys.exit(1 if failures else 0)
