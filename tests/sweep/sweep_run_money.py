#!/usr/bin/python3
"""`instbench sweep run|status|cleanup`: nothing it launches outlives it unnoticed, and --max-cost
bounds what the instances can cost with the process gone (the fourth audit's findings), against
the fault-injecting fake EC2 (tests/sweep/fake_ec2.py, through sweep_run_faults.py's harness).
Every expectation is read from the fake's own record and from the state file with Python's json.
  p  the terminal goes away: stderr a pipe whose reader closed, then SIGINT (exit 130) or SIGHUP
     (129), `2>&1 | less` quit while it watches (it ends by itself), SIGQUIT (131): never killed by
     SIGPIPE, every instance terminated, the state done; `cleanup` with its stderr closed ends all
  n  a node other than node 0 ends (terminated from outside) or stops: its candidate fails soon,
     naming the node and how it ended, and its other nodes are terminated then, not at --max-minutes
  l  every RunInstances answer lost while new instances hide from DescribeInstances: the
     instance is found by its ClientToken and recorded (its cost counted, terminated); when it
     never shows, the state says needs-cleanup and the message names `sweep cleanup ID`
  r  the state file cannot be written once the first launch is on its way: nothing more is
     launched, what was is terminated, exit 1 naming cleanup; killed there (kill -9), the file
     knows no instance: `status ID --refresh` finds it by tag and records it, `cleanup` records
     what it ended (phase done, candidates not run, a cost)
  e  EFA leftovers after kill -9: `sweep status` counts the Elastic IPs, the security group and the
     placement group and names `sweep cleanup ID`
  c  the worst case is the instance's own bound: --max-minutes rounded up (the user data's timer)
     plus the boot allowance, so --max-minutes 0.5 at $0.0085 is refused; a spot launch carries
     MaxPrice (botocore's name for it) equal to the plan's price
  k  the state file's lock: a live run's sweep is not refreshed or cleaned up (by ID or --all)
     without --force; `cleanup --force` stops the run and ends its instances
Usage: sweep_run_money.py INSTBENCH [SCENARIO...]"""
import base64
import decimal
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep_run_faults as F   # noqa: E402  (its harness: the fake, the instances' player, the environment)
from testlib import check, failures   # noqa: E402

BIN = F.BIN
FAST = {"INSTBENCH_SWEEP_POLL_S": "0.2", "INSTBENCH_SWEEP_TERMINATE_WAIT_S": "20"}


def start(fake, home, specs, *extra, env=None, deliver=None, max_cost="100", **popen):
    """`sweep run` in the background; returns the process (its .player plays the instances)."""
    player = F.Instances(fake, specs, deliver or {})
    player.start()
    args = [BIN, "sweep", "run", "--region", F.REGION, "--s3", "s3://%s/%s" % (F.BUCKET, F.PREFIX), "--ami", F.AMI,
            "--candidates", ",".join(specs), "--yes", "--max-cost", max_cost] + list(extra)
    e = F.environment(fake, home)
    e.update(FAST)
    e.update(env or {})
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    p = subprocess.Popen(args, cwd=home, env=e, text=True, **popen)
    p.player = player
    return p


def finish(p, timeout=180):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    p.player.stop = True
    p.player.join()
    return out or "", err or ""


def wait_for(fake, cond, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        rec = fake.look()
        if cond(rec):
            return rec
        time.sleep(0.05)
    return None


def ib(fake, home, *args, env=None, timeout=120, **popen):
    e = F.environment(fake, home)
    e.update(FAST)
    e.update(env or {})
    popen.setdefault("capture_output", True)
    r = subprocess.run([BIN] + list(args), cwd=home, env=e, text=True, timeout=timeout, **popen)
    return r.returncode, r.stdout or "", r.stderr or ""


def sweeps_dir(home):
    return os.path.join(home, "state", "instbench", "sweeps")


def sweep_ids(home):
    return sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(sweeps_dir(home), "*.json")))


def state(home, sid):
    return F.state_file(home, sid)   # validated against schemas/sweep-state-v1.json


def alive(rec, sid=None):
    return [i for i in rec["instances"] if i["state"] != "terminated" and (sid is None or i["tags"].get("instbench:sweep") == sid)]


def fresh():
    fake, home = F.fresh()
    return fake, home


def closed_pipe():
    """A pipe whose read end is already closed: the write end, for a child's stdout or stderr."""
    r, w = os.pipe()
    os.close(r)
    return w


# ---- p: the terminal goes away ------------------------------------------------------------------
def scenario_p():
    for label, sig, code in (("SIGINT", signal.SIGINT, 130), ("SIGHUP", signal.SIGHUP, 129)):
        fake, home = fresh()
        try:
            r, w = os.pipe()
            p = start(fake, home, ["g5.xlarge:on-demand", "g6.xlarge:on-demand"], stderr=w)
            os.close(w)
            rec = wait_for(fake, F.all_running(2))
            os.close(r)   # `| tee log` killed by the same Ctrl-C, an ssh session gone
            p.send_signal(sig)
            finish(p)
            rec = fake.look()
            sid = sweep_ids(home)[0]
            check(p.returncode == code, "p %s with stderr's reader gone: exit %d (not killed by SIGPIPE, -13): %d" % (
                label, code, p.returncode))
            check(len(rec["instances"]) == 2 and not alive(rec), "p %s: every instance terminated: %r" % (label, alive(rec)))
            check(state(home, sid)["phase"] == "done", "p %s: the state says done: %s" % (label, state(home, sid)["phase"]))
        finally:
            fake.stop()
            shutil.rmtree(home, ignore_errors=True)
    # `instbench sweep run ... 2>&1 | less`, and q pressed while it watches: it goes on to its end
    fake, home = fresh()
    try:
        r, w = os.pipe()
        p = start(fake, home, ["g5.xlarge:on-demand", "g6.xlarge:on-demand"], "--max-minutes", "0.1",
                  stdout=w, stderr=w)
        os.close(w)
        wait_for(fake, F.all_running(2))
        os.close(r)
        finish(p, timeout=120)
        rec = fake.look()
        sid = sweep_ids(home)[0]
        check(p.returncode == 1, "p less quit: the sweep ran to its end (timed out: exit 1), not killed (-13): %d"
              % p.returncode)
        check(not alive(rec) and state(home, sid)["phase"] == "done" and
              all(c["outcome"] == "timed out" for c in state(home, sid)["candidates"]),
              "p less quit: timed out, every instance terminated: %r %s" % (alive(rec), state(home, sid)["phase"]))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)
    # Ctrl-\ (SIGQUIT) is a stop like Ctrl-C, not a core dump with instances running
    fake, home = fresh()
    try:
        p = start(fake, home, ["2xg5.xlarge:on-demand"])
        wait_for(fake, F.all_running(2))
        p.send_signal(signal.SIGQUIT)
        out, err = finish(p)
        rec = fake.look()
        check(p.returncode == 131 and not alive(rec) and "stopping" in err,
              "p SIGQUIT: exit 131 after terminating everything: %d %r %s" % (p.returncode, alive(rec), err[-800:]))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)
    # `sweep cleanup` whose stderr nobody reads: it ends everything all the same
    fake, home = fresh()
    try:
        p = start(fake, home, ["g5.xlarge:on-demand", "2xg6.xlarge:on-demand"])
        wait_for(fake, F.all_running(3))
        p.send_signal(signal.SIGKILL)
        finish(p)
        sid = sweep_ids(home)[0]
        w = closed_pipe()
        rc, out, err = ib(fake, home, "sweep", "cleanup", sid, capture_output=False, stdout=w, stderr=w)
        os.close(w)
        rec = fake.look()
        check(rc == 0 and len(rec["instances"]) == 3 and not alive(rec),
              "p cleanup with stderr's reader gone: exit 0, all terminated: %d %r" % (rc, alive(rec)))
        check(state(home, sid)["phase"] == "done", "p cleanup: the state says done")
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- n: a node other than node 0 ends -----------------------------------------------------------
def scenario_n():
    for label, how in (("terminated", "end"), ("stopped", "stop")):
        fake, home = fresh()
        try:
            nodes, gone = (4, 2) if how == "end" else (2, 1)
            spec = "%dxg5.xlarge:on-demand" % nodes
            p = start(fake, home, [spec], "--max-minutes", "10", env={"INSTBENCH_SWEEP_NODE_GRACE_S": "1"})
            rec = wait_for(fake, F.all_running(nodes))
            victim = [i["id"] for i in rec["instances"] if i["index"] == gone][0]
            t0 = time.time()
            if how == "end":
                fake.sweep(end={victim: "Server.InternalError"})   # a hardware failure, a click in the console
            else:
                fake.sweep(stop=[victim])
            # a hang guard (it takes seconds), far inside --max-minutes, when they would end anyway
            rec = wait_for(fake, lambda r: not alive(r), timeout=120)
            took = time.time() - t0
            if not check(rec is not None, "n %s: the other nodes still ran %.1f s after node %d ended (--max-minutes is "
                         "600 s)" % (label, took, gone)):
                p.kill()   # not to wait for it to reach --max-minutes
            out, err = finish(p)
            sid = sweep_ids(home)[0]
            cand = state(home, sid)["candidates"][0]
            check(cand["outcome"] == "failed" and ("node %d of %d" % (gone, nodes)) in cand["reason"] and victim in cand["reason"]
                  and label in cand["reason"], "n %s: the outcome names the node and how it ended: %r" % (label, cand))
            check(p.returncode == 1 and state(home, sid)["phase"] == "done",
                  "n %s: exit 1 (no result), done: %d %s" % (label, p.returncode, err[-800:]))
        finally:
            fake.stop()
            shutil.rmtree(home, ignore_errors=True)


# ---- l: a launch whose answer never came -------------------------------------------------------
def scenario_l():
    fake, home = fresh()
    try:
        # every answer of the first RunInstances lost (EC2 launched), the new instance out of its
        # first 3 DescribeInstances (eventual consistency): found by its ClientToken all the same
        fake.sweep(lose_answers=20, hide_new=3)
        p = start(fake, home, ["g5.xlarge:on-demand", "g6.xlarge:on-demand"], env={"INSTBENCH_SWEEP_LOOKUP_S": "30"})
        out, err = finish(p)
        rec = fake.look()
        sid = sweep_ids(home)[0]
        st = state(home, sid)
        launched = [i["id"] for i in rec["instances"]]
        check(len(launched) == 1 and not alive(rec), "l: the one instance launched is terminated: %r" % rec["instances"])
        check([i["id"] for i in st["instances"]] == launched and st["instances"][0]["state"] == "terminated",
              "l: the state records it: %r" % st["instances"])
        check(st["phase"] == "done" and p.returncode == 1, "l: done, exit 1 (the launch error stopped the sweep): %s %d"
              % (st["phase"], p.returncode))
        # (it lives under a second here: its cost may print as $0.00; what matters is that it is counted)
        check("(none launched)" not in err and launched[0] in err and "cost of the sweep's instances" in err and
              st["instances"][0]["launched"] and st["instances"][0]["ended"],
              "l: the report names it, and its launch and end are on file for its cost: %s" % err[-1500:])
        check("ClientToken" in st["candidates"][0]["reason"], "l: the reason says how it was found: %r" % st["candidates"][0])
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)
    fake, home = fresh()
    try:
        # it never shows within the lookup: nothing says it does not run
        fake.sweep(lose_answers=20, hide_new=10 ** 6)
        p = start(fake, home, ["g5.xlarge:on-demand"], env={"INSTBENCH_SWEEP_LOOKUP_S": "1.5",
                                                              "INSTBENCH_SWEEP_TERMINATE_WAIT_S": "3"})
        out, err = finish(p)
        sid = sweep_ids(home)[0]
        st = state(home, sid)
        check(p.returncode == 1 and st["phase"] == "needs-cleanup", "l unseen: exit 1, needs-cleanup: %d %s" % (
            p.returncode, st["phase"]))
        check(("instbench sweep cleanup %s" % sid) in err, "l unseen: names the cleanup: %s" % err[-1500:])
        rc, out, e2 = ib(fake, home, "sweep", "status")
        check(sid in out and "needs-cleanup" in out, "l unseen: status says so: %s" % out)
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- r: a state file that cannot be written ----------------------------------------------------
def break_state_dir(home):
    """The state directory replaced by a file: every save fails (ENOTDIR), as on a full or read-only
    disk (root ignores permissions, so a mode would not do)."""
    d = sweeps_dir(home)
    os.rename(d, d + ".away")
    with open(d, "w") as f:
        f.write("not a directory\n")


def mend_state_dir(home):
    d = sweeps_dir(home)
    os.remove(d)
    os.rename(d + ".away", d)


def scenario_r():
    specs = ["2xg6.xlarge:on-demand", "g5.xlarge:on-demand", "g5.2xlarge:on-demand"]
    for kill in (False, True):
        label = "killed" if kill else "to its end"
        fake, home = fresh()
        try:
            # the first candidate's placement group (created after the state said "launching", just
            # before its RunInstances; the DryRuns make none) throttled a few times: the state
            # directory breaks while it waits, so the launch's answer cannot be saved
            # killed: its TerminateInstances throttled too, so the kill lands before anything ends, as
            # a kill -9 between RunInstances' answer and the save would
            fake.sweep(throttle_op={"CreatePlacementGroup": 3, "TerminateInstances": 6 if kill else 0})
            p = start(fake, home, specs, env={"INSTBENCH_AWS_BACKOFF_BASE": "0.3"})
            check(wait_for(fake, lambda r: r["calls"].get("CreatePlacementGroup", 0) >= 1) is not None,
                  "r %s: the placement group asked for" % label)
            break_state_dir(home)
            rec = wait_for(fake, lambda r: len(r["instances"]) >= 2)
            if kill:
                wait_for(fake, lambda r: r["calls"].get("TerminateInstances", 0) >= 1, timeout=20)
                p.send_signal(signal.SIGKILL)
            out, err = finish(p)
            rec = fake.look()
            mend_state_dir(home)
            sid = sweep_ids(home)[0]
            check(len(rec["launches"]) == 1, "r %s: nothing launched after the save failed: %d launches" % (
                label, len(rec["launches"])))
            if not kill:
                check(p.returncode == 1 and not alive(rec), "r %s: exit 1, what was launched terminated: %d %r" % (
                    label, p.returncode, alive(rec)))
                check("state file" in err and ("instbench sweep cleanup %s" % sid) in err,
                      "r %s: says why and names the cleanup: %s" % (label, err[-1500:]))
            else:
                check(len(alive(rec)) == 2, "r %s: the instances outlive the killed run: %r" % (label, alive(rec)))
            check(state(home, sid)["instances"] == [], "r %s: the file on disk never got the instances" % label)
            iids = sorted(i["id"] for i in rec["instances"])
            # status --refresh finds them by the sweep's tag and records them
            rc, out, err = ib(fake, home, "sweep", "status", sid, "--refresh")
            st = state(home, sid)
            check(rc == 0 and sorted(i["id"] for i in st["instances"]) == iids and all(i in out for i in iids),
                  "r %s: status --refresh records the instances found by tag: %d %r %s" % (label, rc, st["instances"],
                                                                                          err[-600:]))
            if kill:
                rc, out, err = ib(fake, home, "sweep", "status")
                check("2 instances not known terminated" in out and ("instbench sweep cleanup %s" % sid) in out,
                      "r %s: the list counts them and names the cleanup: %s" % (label, out))
            if kill:
                time.sleep(2)   # they run on, billed, until someone ends them: whole seconds of it
            rc, out, err = ib(fake, home, "sweep", "cleanup", sid)
            st = state(home, sid)
            check(rc == 0 and not alive(fake.look()), "r %s: cleanup: %d %s" % (label, rc, err[-800:]))
            check(st["phase"] == "done" and all(i["state"] == "terminated" and i["ended"] for i in st["instances"])
                  and all(c["outcome"] not in ("pending", "running") for c in st["candidates"]),
                  "r %s: the cleanup's record: %s" % (label, json.dumps(st)[:1500]))
            rc, out, err = ib(fake, home, "sweep", "status", sid)
            cost = re.search(r"cost of the sweep's instances: \$([0-9.]+)", out)
            # (run to its end, they lived under a second: a cost of $0.00 is theirs)
            check(cost and (float(cost.group(1)) > 0 or not kill) and "pending" not in out and all(i in out for i in iids),
                  "r %s: status shows them and their cost: %s" % (label, out))
        finally:
            if os.path.isfile(sweeps_dir(home)):
                mend_state_dir(home)
            fake.stop()
            shutil.rmtree(home, ignore_errors=True)


# ---- e: what EFA leaves besides instances -----------------------------------------------------------
def scenario_e():
    fake, home = fresh()
    try:
        p = start(fake, home, ["2xp4d.24xlarge:on-demand", "g5.xlarge:on-demand"], "--max-minutes", "5", max_cost="1000")

        def recorded(r):
            ids = sweep_ids(home)
            if len(r.get("addresses") or []) < 2 or not ids:
                return False
            try:
                st = state(home, ids[0])
            except Exception:   # noqa: BLE001 (a file being replaced)
                return False
            return sum(1 for i in st["instances"] if i.get("elastic_ip")) == 2 and len(st["instances"]) == 3
        check(wait_for(fake, recorded) is not None, "e: two Elastic IPs recorded")
        p.send_signal(signal.SIGKILL)
        finish(p)
        rec = fake.look()
        # the instances end by their own timers (here: ended from outside), the rest stays
        fake.sweep(end={i["id"]: "Client.InstanceInitiatedShutdown" for i in rec["instances"]})
        sid = sweep_ids(home)[0]
        rc, out, err = ib(fake, home, "sweep", "status")
        line = [ln for ln in out.splitlines() if ln.startswith(sid)]
        check(rc == 0 and line and "2 Elastic IPs" in line[0] and "1 placement group" in line[0] and
              ("instbench sweep cleanup %s" % sid) in line[0], "e: the list counts what is left and names cleanup: %s" % out)
        if rec["security_groups"]:
            check("1 security group" in line[0], "e: ... the security group too: %s" % out)
        rc, out, err = ib(fake, home, "sweep", "cleanup", sid)
        rec = fake.look()
        check(rc == 0 and not rec["addresses"] and not rec["security_groups"], "e: cleanup: %d %s" % (rc, err[-800:]))
        rc, out, err = ib(fake, home, "sweep", "status")
        check("not known removed" not in out and "sweep cleanup" not in out, "e: nothing left to say: %s" % out)
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- c: the worst case and MaxPrice ------------------------------------------------------------------
def plan_json(fake, home, *args):
    rc, out, err = ib(fake, home, "sweep", "plan", "--region", F.REGION, "--ami", F.AMI, "--source", "snapshot",
                      "--format", "json", *args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, {}, err + out


def scenario_c():
    fake, home = fresh()
    try:
        rc, plan, err = plan_json(fake, home, "--candidates", "g5.xlarge:on-demand", "--max-minutes", "0.5",
                                  "--max-cost", "0.0085")
        line = (plan.get("candidates") or [{}])[0]
        price = line.get("usd_per_node_hour") or 0
        check(plan.get("timer_minutes") == 1 and plan.get("billed_minutes_max") == 1 + 5,
              "c: the timer is --max-minutes rounded up, billed at most with 5 minutes of boot: %s" % err[-500:])
        check(math.isclose(line.get("worst_case_usd", -1), price * 6 / 60, rel_tol=1e-12) and plan.get("verdict") == "over"
              and rc == 1, "c: worst case %s = price x 6 min, over $0.0085: %d %s" % (line.get("worst_case_usd"), rc, plan))
        p = start(fake, home, ["g5.xlarge:on-demand"], "--max-minutes", "0.5", max_cost="0.0085")
        out, err = finish(p)
        check(p.returncode == 2 and not fake.look()["launches"], "c: run refuses it, nothing launched: %d %s" % (
            p.returncode, err[-600:]))
        # spot: MaxPrice at the price the worst case used, rounded down to a millionth of a dollar in
        # decimal (m7i.12xlarge's highest zone in the snapshot is $1.041, a double a hair below
        # 1.041: rounded down in binary it became 1.040999, below the zone's price, and EC2 refuses
        # a launch whose MaxPrice is below the spot price); the user data's timer is the plan's
        specs = ["g5.xlarge:spot", "g6.xlarge:on-demand", "m7i.12xlarge:spot"]
        rc, plan, err = plan_json(fake, home, "--candidates", ",".join(specs), "--max-minutes", "0.05")
        lines = {c["spec"]: c for c in plan.get("candidates", [])}
        want = {s: decimal.Decimal(repr(lines[s]["usd_per_node_hour"])).quantize(decimal.Decimal("0.000001"),
                                                                                 rounding=decimal.ROUND_FLOOR)
                for s in specs if s.endswith(":spot") and s in lines}
        check(len(want) == 2 and all(lines[s].get("spot_max_price_usd") == float(w) for s, w in want.items()) and
              want["m7i.12xlarge:spot"] == decimal.Decimal("1.041") and
              lines["g6.xlarge:on-demand"].get("spot_max_price_usd", 0) is None,
              "c: the plan's MaxPrice: %r, want %r" % (plan.get("candidates"), want))
        rc, table, err = ib(fake, home, "sweep", "plan", "--region", F.REGION, "--ami", F.AMI, "--source", "snapshot",
                            "--format", "table", "--candidates", "m7i.12xlarge:spot", "--max-minutes", "0.05")
        check("MaxPrice $1.04/h" in table and "timer 1 min" in table, "c: the table says both: %s" % table)
        p = start(fake, home, specs, "--max-minutes", "0.05", "--source", "snapshot")
        finish(p)
        launches = {l["InstanceType"]: l for l in fake.look()["launches"]}
        sent = {s: launches.get(s.split(":")[0], {}).get("InstanceMarketOptions.SpotOptions.MaxPrice") for s in specs}
        check(all(sent[s] == "%s" % w for s, w in want.items()) and sent["g6.xlarge:on-demand"] is None,
              "c: the spot launches carry MaxPrice %r, the on-demand one none: %r" % (want, sent))
        sent = sent["g5.xlarge:spot"]
        ud = base64.b64decode(launches["g5.xlarge"]["UserData"]).decode()
        check(re.findall(r"MAX_MINUTES=(\S+)", ud) == ["1"], "c: the user data's timer is the plan's: %r"
              % re.findall(r"MAX_MINUTES=\S+", ud))
        # the parameter's name as botocore's RunInstances shape serializes it
        import botocore.session
        from botocore import serialize
        model = botocore.session.get_session().get_service_model("ec2")
        req = serialize.create_serializer("ec2").serialize_to_request(
            {"ImageId": F.AMI, "MinCount": 1, "MaxCount": 1,
             "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": sent or "1"}}},
            model.operation_model("RunInstances"))
        check(req["body"].get("InstanceMarketOptions.SpotOptions.MaxPrice") == (sent or "1"),
              "c: botocore names it InstanceMarketOptions.SpotOptions.MaxPrice: %r" % req["body"])
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- k: the state file's lock ------------------------------------------------------------------------
def scenario_k():
    fake, home = fresh()
    try:
        p = start(fake, home, ["2xg5.xlarge:on-demand", "g5.xlarge:on-demand"], "--max-minutes", "3")
        wait_for(fake, F.all_running(3))
        sid = sweep_ids(home)[0]
        rc, out, err = ib(fake, home, "sweep", "status", sid, "--refresh")
        check(rc == 1 and "sweep run" in err and ("pid %d" % p.pid) in err,
              "k: --refresh of a live run's sweep refused, naming it: %d %s" % (rc, err[-600:]))
        rc, out, err = ib(fake, home, "sweep", "status")
        check(rc == 0 and ("pid %d" % p.pid) in out, "k: the list says it is live: %s" % out)
        for argv in (["cleanup", sid], ["cleanup", "--all"]):
            rc, out, err = ib(fake, home, "sweep", *argv)
            check(rc == 1 and "--force" in err and len(alive(fake.look())) == 3,
                  "k: %r of a live run refused, nothing ended: %d %s" % (argv, rc, err[-600:]))
        rc, out, err = ib(fake, home, "sweep", "cleanup", sid, "--force")
        check(rc == 0 and not alive(fake.look()), "k: cleanup --force ends them: %d %s" % (rc, err[-800:]))
        out, err = finish(p)
        st = state(home, sid)
        check(p.returncode == 130 and st["phase"] == "done" and
              all(c["outcome"] == "not run" for c in st["candidates"]),
              "k: --force stopped the run too (sweep_cleanup_force.py): %d %s %r" % (
                  p.returncode, st["phase"], st["candidates"]))
        rc, out, err = ib(fake, home, "sweep", "status", sid, "--refresh")
        check(rc == 0, "k: once the run is gone, --refresh works: %d %s" % (rc, err[-500:]))
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    only = sys.argv[2:]
    for s in (scenario_c, scenario_p, scenario_n, scenario_l, scenario_r, scenario_e, scenario_k):
        if only and s.__name__[len("scenario_"):] not in only:
            continue
        s()
    sys.exit(1 if failures else 0)
