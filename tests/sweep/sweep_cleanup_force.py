#!/usr/bin/python3
"""`instbench sweep cleanup --force` on a sweep whose `sweep run` is alive stops the run itself, not
only its instances, against the fault-injecting fake EC2 (tests/sweep/fake_ec2.py, through
sweep_run_money.py's harness).  Every expectation is read from the fake's own record of the calls
and from the state file with Python's json; a launch in flight is the fake holding its
RunInstances answer ("hold") until the test lets it go.
  s  four candidates: the first launched and measuring, the second's RunInstances in flight when
     `cleanup ID --force` runs: the run is stopped (exit 130), no third or fourth RunInstances ever,
     the launch in flight recorded by the run and terminated, nothing left running, the state file
     done and naming the cleanup; the cleanup exits 0 saying it stopped the run
  n  the lock held by a process that is not that sweep's `sweep run` (a python holding it and naming
     itself "sweep run", or naming a process whose command line is `sweep run` but which does not
     have the lock file open): nothing signalled, cleanup exits 1 saying why
  t  the run cannot let go within --wait (its launch still in flight): cleanup says so, ends by tag
     whatever is there (the launch in flight included) and exits 1; the run, once its answer comes,
     launches nothing more and ends
  a  `cleanup --all --force` with two live runs: both stopped, nothing more launched by either
Usage: sweep_cleanup_force.py INSTBENCH [SCENARIO...]"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep_run_money as M   # noqa: E402  (start, finish, wait_for, ib, state, ...)
import sweep_run_faults as F   # noqa: E402
from testlib import check, failures   # noqa: E402

BIN = F.BIN
BY_CLEANUP = "stopped by `instbench sweep cleanup --force`"


def launched(rec):
    return [l["InstanceType"] for l in rec["launches"]]


def reap(*procs):
    """What the test started and is still running, killed: a failed check must not leave a run."""
    for p in procs:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()


def cleanup_until_stopping(fake, home, *args, release=()):
    """`sweep cleanup ARGS` with its stderr read as it comes: once it says it is stopping a run (or
    ends), the held launches of RELEASE are let go.  Returns (exit status, stderr)."""
    e = F.environment(fake, home)
    e.update(M.FAST)
    p = subprocess.Popen([BIN, "sweep", "cleanup"] + list(args), cwd=home, env=e, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    err, stopping = "", 0
    for line in p.stderr:
        err += line
        stopping += "stopping its `instbench sweep run`" in line
        if release and stopping == len(release):
            fake.sweep(hold=[])
            release = ()
    fake.sweep(hold=[])
    return p.wait(timeout=120), err


def stopped_state(st, launched_specs):
    """The state of a run stopped by the cleanup: done, its note naming the cleanup, every candidate
    not run (launched ones stopped before a result, the others not launched), every instance it
    recorded terminated."""
    cands = {c["spec"]: c for c in st["candidates"]}
    return (st["phase"] == "done" and st["note"] == BY_CLEANUP and
            all(c["outcome"] == "not run" for c in cands.values()) and
            all(BY_CLEANUP in c["reason"] and
                c["reason"].startswith("stopped before a result" if s in launched_specs else "not launched")
                for s, c in cands.items()) and
            all(i["state"] == "terminated" for i in st["instances"]))


# ---- s: a run stopped while its second launch is in flight ---------------------------------------
def scenario_s(fake, home):
    specs = ["g5.xlarge:on-demand", "g5.2xlarge:on-demand", "g4dn.xlarge:on-demand", "g5.12xlarge:on-demand"]
    fake.sweep(hold=["g5.2xlarge"])
    p = M.start(fake, home, specs, "--max-minutes", "3")
    try:
        rec = M.wait_for(fake, lambda r: launched(r) == ["g5.xlarge", "g5.2xlarge"])
        check(rec is not None, "s: the first launched, the second in flight: %r" % (rec and launched(rec)))
        sid = M.sweep_ids(home)[0]
        rc, err = cleanup_until_stopping(fake, home, sid, "--force", release=["g5.2xlarge"])
        out, run_err = M.finish(p, timeout=60)
    finally:
        reap(p)
    rec = fake.look()
    check(launched(rec) == ["g5.xlarge", "g5.2xlarge"], "s: nothing launched after the cleanup: %r" % launched(rec))
    check(not M.alive(rec), "s: nothing left running: %r" % M.alive(rec))
    check(rc == 0 and ("stopping its `instbench sweep run` (pid %d)" % p.pid) in err and
          ("its `instbench sweep run` (pid %d) stopped and let go" % p.pid) in err,
          "s: cleanup stopped the run and says so: %d %s" % (rc, err[-1500:]))
    check(p.returncode == 130 and BY_CLEANUP in run_err,
          "s: the run took its own end, as after Ctrl-C: %d %s" % (p.returncode, run_err[-1500:]))
    st = M.state(home, sid)
    ids = sorted(i["id"] for i in rec["instances"])
    check(sorted(i["id"] for i in st["instances"]) == ids and len(ids) == 2,
          "s: the run recorded both instances, the one in flight included: %r %r" % (st["instances"], ids))
    check(stopped_state(st, specs[:2]), "s: the state says what happened: %r %r" % (st["phase"], st["candidates"]))
    return sid


# ---- n: a lock not held by the sweep's run --------------------------------------------------------
HOLDER = r"""
import fcntl, os, signal, sys, time
path, named, marker = sys.argv[1], sys.argv[2], sys.argv[3]
signal.signal(signal.SIGINT, lambda *a: open(marker, "w").close())
f = open(path, "a+")
fcntl.flock(f, fcntl.LOCK_EX)
f.truncate(0)
f.write("sweep run %s\n" % (named or os.getpid()))
f.flush()
print("held", flush=True)
time.sleep(300)
"""
SLEEPER = r"""
import signal, sys, time
signal.signal(signal.SIGINT, lambda *a: open(sys.argv[2], "w").close())
print("up", flush=True)
time.sleep(300)
"""


def spawn(argv, cwd=None):
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, text=True)
    p.stdout.readline()   # it is ready (the lock held, the handler installed)
    return p


def scenario_n(fake, home, sid):
    lock = os.path.join(M.sweeps_dir(home), sid + ".lock")
    scratch = tempfile.mkdtemp(prefix="sweep-force-n-")
    procs = []
    try:
        # a command line reading `python3 sweep run`, as a `sweep run`'s does, but not holding the lock
        with open(os.path.join(scratch, "sweep"), "w") as f:
            f.write(SLEEPER)
        sleeper = spawn([sys.executable, "sweep", "run", os.path.join(scratch, "sleeper-signalled")], cwd=scratch)
        procs.append(sleeper)
        for case, named, why in (("itself", "", "which is not an `instbench sweep run`"),
                                 ("a `sweep run` look-alike", str(sleeper.pid),
                                  "does not have the sweep's lock file open")):
            marker = os.path.join(scratch, "holder-signalled")
            holder = spawn([sys.executable, "-c", HOLDER, lock, named, marker])
            procs.append(holder)
            rc, out, err = M.ib(fake, home, "sweep", "cleanup", sid, "--force")
            named_pid = int(named or holder.pid)
            check(rc == 1 and ("names pid %d" % named_pid) in err and why in err and "not signalled" in err and
                  "still held by a live process not stopped" in err,
                  "n: a lock holder naming %s: not signalled, exit 1: %d %s" % (case, rc, err[-1200:]))
            check(not os.path.exists(marker) and holder.poll() is None and
                  not os.path.exists(os.path.join(scratch, "sleeper-signalled")) and sleeper.poll() is None,
                  "n: a lock holder naming %s: no process got a signal" % case)
            holder.kill()
            holder.wait()
    finally:
        reap(*procs)
        shutil.rmtree(scratch, ignore_errors=True)


def scenario_s_n():
    fake, home = M.fresh()
    try:
        sid = scenario_s(fake, home)
        scenario_n(fake, home, sid)
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- t: the run does not let go within --wait ------------------------------------------------------
def scenario_t():
    fake, home = M.fresh()
    specs = ["g5.xlarge:on-demand", "g5.2xlarge:on-demand", "g4dn.xlarge:on-demand"]
    p = None
    try:
        fake.sweep(hold=["g5.2xlarge"])
        p = M.start(fake, home, specs, "--max-minutes", "3")
        check(M.wait_for(fake, lambda r: launched(r) == ["g5.xlarge", "g5.2xlarge"]) is not None,
              "t: the second launch in flight")
        sid = M.sweep_ids(home)[0]
        # its answer is held past the cleanup's --wait: the run cannot take its end in time
        rc, out, err = M.ib(fake, home, "sweep", "cleanup", sid, "--force", "--wait", "3")
        rec = fake.look()
        check(rc == 1 and ("pid %d) was asked to stop but did not let go" % p.pid) in err and
              "still held by a live process not stopped" in err,
              "t: cleanup says the run did not stop in time, exit 1: %d %s" % (rc, err[-1500:]))
        check(len(rec["instances"]) == 2 and not M.alive(rec),
              "t: the launch in flight found by tag and ended: %r" % rec["instances"])
        fake.sweep(hold=[])
        out, run_err = M.finish(p, timeout=60)
        rec = fake.look()
        check(p.returncode == 130 and launched(rec) == ["g5.xlarge", "g5.2xlarge"] and not M.alive(rec),
              "t: once answered, the run launched nothing more and ended: %d %r %s" % (
                  p.returncode, launched(rec), run_err[-800:]))
        check(M.state(home, sid)["note"] == BY_CLEANUP, "t: its state names the cleanup")
    finally:
        reap(p)
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- a: --all --force, two live runs -----------------------------------------------------------------
def scenario_a():
    fake, home = M.fresh()
    runs = []
    try:
        fake.sweep(hold=["g5.2xlarge", "g5.12xlarge"])
        for specs in (["g5.xlarge:on-demand", "g5.2xlarge:on-demand", "g4dn.2xlarge:on-demand"],
                      ["g4dn.xlarge:on-demand", "g5.12xlarge:on-demand", "g4dn.2xlarge:on-demand"]):
            runs.append(M.start(fake, home, specs, "--max-minutes", "3"))
            held = specs[1].split(":")[0]
            check(M.wait_for(fake, lambda r, h=held: h in launched(r)) is not None, "a: %s in flight" % held)
        rc, err = cleanup_until_stopping(fake, home, "--all", "--force", release=["g5.2xlarge", "g5.12xlarge"])
        for p in runs:
            M.finish(p, timeout=60)
        rec = fake.look()
        check(rc == 0 and all(("stopping its `instbench sweep run` (pid %d)" % p.pid) in err for p in runs),
              "a: both runs stopped: %d %s" % (rc, err[-1500:]))
        check(sorted(launched(rec)) == ["g4dn.xlarge", "g5.12xlarge", "g5.2xlarge", "g5.xlarge"] and
              not M.alive(rec), "a: nothing launched after, nothing left: %r %r" % (launched(rec), M.alive(rec)))
        check([p.returncode for p in runs] == [130, 130], "a: exit 130 each: %r" % [p.returncode for p in runs])
        for sid in M.sweep_ids(home):
            check(M.state(home, sid)["note"] == BY_CLEANUP, "a: %s's state names the cleanup" % sid)
    finally:
        reap(*runs)
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    only = sys.argv[2:]
    for s in (scenario_s_n, scenario_t, scenario_a):
        if only and s.__name__[len("scenario_"):] not in only:
            continue
        s()
    sys.exit(1 if failures else 0)
