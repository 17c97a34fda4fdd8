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
     have the lock file open, or has another file of its name open): nothing signalled, cleanup
     exits 1 saying why
  h  the lock held by a `sweep run` look-alike whose lock file shows no name, or an earlier holder's,
     until the file has been read three times: the cleanup waits for the holder's own name and
     stops it (exit 0); one that never names itself is "holder unknown", not the cleanup its file
     names: a plain cleanup refuses it, --force does not signal it (exit 1); `status` and `cleanup`,
     the commands that wait for a holder's name, name INSTBENCH_SWEEP_HOLDER_WAIT_S in their help
     and, given a value that is no number of seconds, say so once and wait the default
  o  (root only: setpriv) a `sweep run` look-alike of another user holding the lock, the cleanup
     run as a third user: whether it has the lock file open cannot be read, so it is not
     signalled, exit 1
  t  the run cannot let go within --wait (its launch still in flight): cleanup says so, ends by tag
     whatever is there (the launch in flight included; the fake confirms a termination at its first
     look, so that pass ends within --wait however slow the machine) and exits 1; the run, once its
     answer comes, launches nothing more and ends
  a  `cleanup --all --force` with two live runs: both stopped, nothing more launched by either
  f  `cleanup --all --force` held in its first pass by tag while a new `sweep run` starts: a second
     pass stops that run too (signalled, waited for, its instances ended, its state file written),
     nothing more launched, exit 0
  b  `cleanup --all --force` with a new `sweep run` started during each of its passes by tag: those
     of passes 1 and 2 are stopped in passes 2 and 3; the one of pass 3 is not taken up (three
     passes at most): it is named, with its pid and the command that stops it, exit 1, and it is
     still alive
  d  two `cleanup ID --force` at once on one live run: both signal it; once it lets go, one takes
     the lock and holds it through its pass by tag (its DescribeInstances held by the fake, the
     cleanups signing with their own access key): the other, its --wait an hour, stops waiting as
     soon as that cleanup holds the file, says the run stopped and names that cleanup (its pid),
     not "did not let go"; a third, started once the run has ended, names that cleanup too, not
     "not signalled"; all exit 0, the run exits 130 and launches nothing more; a plain cleanup
     meanwhile names the cleanup at work, not a run (exit 1, nothing ended)
  g  `cleanup --all` (no --force) held in its pass by tag while a new `sweep run` starts: at its
     end it names that sweep and its live run (pid) with `instbench sweep cleanup ID --force`, and
     exits 1, the run still alive; that command then stops it
Usage: sweep_cleanup_force.py INSTBENCH [SCENARIO...]"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
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
    specs = ["g5.xlarge:on-demand", "g5.2xlarge:on-demand", "g6.xlarge:on-demand", "g5.12xlarge:on-demand"]
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
kept = [open(f) for f in sys.argv[3:]]
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
        # one with a file of the lock file's name open, elsewhere: the name alone is not the file
        with open(os.path.join(scratch, sid + ".lock"), "w"):
            pass
        namesake = spawn([sys.executable, "sweep", "run", os.path.join(scratch, "sleeper-signalled"),
                          os.path.join(scratch, sid + ".lock")], cwd=scratch)
        procs.append(namesake)
        for case, named, why in (("itself", "", "which is not an `instbench sweep run`"),
                                 ("a `sweep run` look-alike", str(sleeper.pid),
                                  "does not have the sweep's lock file open"),
                                 ("a look-alike with another %s.lock open" % sid, str(namesake.pid),
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
                  not os.path.exists(os.path.join(scratch, "sleeper-signalled")) and sleeper.poll() is None and
                  namesake.poll() is None,
                  "n: a lock holder naming %s: no process got a signal" % case)
            holder.kill()
            holder.wait()
    finally:
        reap(*procs)
        shutil.rmtree(scratch, ignore_errors=True)


# ---- h: a lock holder that names itself late -------------------------------------------------------
# A `sweep run` look-alike (its command line `python3 sweep run ...`, the lock file open) that takes
# the lock and leaves the file as it was (no name, or an earlier holder's), as a taker does
# between its flock and its write: it writes its own name only once it has seen the lock file read
# three separate times (inotify IN_ACCESS), so by then a reader that took the file at its word has
# decided; a reader that waits for the name sees it.  Its last argument: "late", "never" (it never
# writes), "now" (it writes at once).
LATE = r"""
import ctypes, fcntl, os, signal, sys, time
path, first, marker = sys.argv[2], sys.argv[3], sys.argv[4]
signal.signal(signal.SIGINT, lambda *a: (open(marker, "w").close(), os._exit(0)))
f = open(path, "a+")
fcntl.flock(f, fcntl.LOCK_EX)
f.truncate(0)
f.write(first)
f.flush()
libc = ctypes.CDLL(None, use_errno=True)
watch = libc.inotify_init1(os.O_CLOEXEC)
if watch < 0 or libc.inotify_add_watch(watch, path.encode(), 0x1) < 0:   # IN_ACCESS
    sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
print("held", flush=True)
if sys.argv[5] != "never":
    for _ in range(3 if sys.argv[5] == "late" else 0):
        os.read(watch, 4096)   # a read since the last: identical events pending are merged into one
    f.truncate(0)
    f.write("sweep run %d\n" % os.getpid())
    f.flush()
time.sleep(300)
"""


def scenario_h(fake, home, sid):
    lock = os.path.join(M.sweeps_dir(home), sid + ".lock")
    scratch = tempfile.mkdtemp(prefix="sweep-force-h-")
    marker = os.path.join(scratch, "signalled")
    holder = None
    try:
        with open(os.path.join(scratch, "sweep"), "w") as f:
            f.write(LATE)
        # the file without a name (an empty line: a read of nothing at all is no IN_ACCESS), then
        # naming a live process that does not hold the lock (this test): a cleanup that waits for the
        # holder's own name stops the holder, as the run it claims to be
        for case, first in (("without a name", "\n"), ("naming an earlier holder", "sweep cleanup %d\n" % os.getpid())):
            holder = spawn([sys.executable, "sweep", "run", lock, first, marker, "late"], cwd=scratch)
            rc, out, err = M.ib(fake, home, "sweep", "cleanup", sid, "--force",
                                env={"INSTBENCH_SWEEP_HOLDER_WAIT_S": "120"})
            check(rc == 0 and ("stopping its `instbench sweep run` (pid %d)" % holder.pid) in err and
                  os.path.exists(marker) and holder.wait(timeout=60) == 0,
                  "h: a lock file %s until the holder names itself: the holder found and stopped: %d %s" % (
                      case, rc, err[-1200:]))
            reap(holder)
            if os.path.exists(marker):
                os.unlink(marker)
        # a holder that never names itself (a read-only state directory): the earlier name is not
        # taken for it, the holder is said to be unknown
        holder = spawn([sys.executable, "sweep", "run", lock, "sweep cleanup %d\n" % os.getpid(), marker, "never"],
                       cwd=scratch)
        rc, out, err = M.ib(fake, home, "sweep", "cleanup", sid, env={"INSTBENCH_SWEEP_HOLDER_WAIT_S": "0.5"})
        check(rc == 1 and "holder unknown" in err and "another `instbench sweep cleanup`" not in err and
              "nothing ended" in err and holder.poll() is None,
              "h: a holder never named: unknown, not the cleanup its file names: %d %s" % (rc, err[-1200:]))
        rc, out, err = M.ib(fake, home, "sweep", "cleanup", sid, "--force",
                            env={"INSTBENCH_SWEEP_HOLDER_WAIT_S": "0.5"})
        check(rc == 1 and "holder unknown" in err and "not signalled" in err and not os.path.exists(marker) and
              holder.poll() is None,
              "h: --force on a holder never named: not signalled, exit 1: %d %s" % (rc, err[-1200:]))
        # the wait is a test-only timing as INSTBENCH_SWEEP_POLL_S is: each command that waits names
        # it in its help, and a bad value is said (once, however many looks at the holder) and the
        # default of 2 s used, not taken silently
        bad = "INSTBENCH_SWEEP_HOLDER_WAIT_S='2,5' is not a number of seconds"
        for cmd, want_rc in ((["status"], 0), (["cleanup", sid], 1)):
            rc, out, err = M.ib(fake, home, "sweep", *cmd, env={"INSTBENCH_SWEEP_HOLDER_WAIT_S": "2,5"})
            check(rc == want_rc and err.count(bad) == 1 and "holder unknown" in out + err and holder.poll() is None,
                  "h: sweep %s with a bad INSTBENCH_SWEEP_HOLDER_WAIT_S: said once, the default used: %d %s %s" % (
                      cmd[0], rc, out[-400:], err[-1200:]))
            rc, out, err = M.ib(fake, home, "sweep", cmd[0], "--help")
            check(rc == 0 and "INSTBENCH_SWEEP_HOLDER_WAIT_S" in out,
                  "h: `sweep %s --help` names INSTBENCH_SWEEP_HOLDER_WAIT_S: %s" % (cmd[0], out[-600:]))
    finally:
        reap(holder)
        shutil.rmtree(scratch, ignore_errors=True)


# ---- o: another user's run -----------------------------------------------------------------------------
def as_user(uid):
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]


def scenario_o(fake, home, sid):
    """A `sweep run` look-alike of another user holding the lock: its open files cannot be read, so
    the cleanup, run as a third user, cannot tell it has the lock file open: not signalled, exit 1.
    Starting processes as other users takes root (setpriv)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("sweep_cleanup_force: o skipped: starting processes as other users needs root and setpriv")
        return
    for uid, argv in ((65533, [sys.executable, "-c", ""]), (65534, [BIN, "sweep", "cleanup", "--help"])):
        if subprocess.run(as_user(uid) + argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            print("sweep_cleanup_force: o skipped: uid %d cannot run %s (a folder above it closed to others)" % (
                uid, argv[0]))
            return
    lock = os.path.join(M.sweeps_dir(home), sid + ".lock")
    scratch = tempfile.mkdtemp(prefix="sweep-force-o-")
    marker = os.path.join(scratch, "signalled")
    holder = None
    try:
        os.chmod(scratch, 0o777)
        with open(os.path.join(scratch, "sweep"), "w") as f:
            f.write(LATE)
        for d in (home, os.path.join(home, "state"), os.path.join(home, "state", "instbench"), M.sweeps_dir(home)):
            os.chmod(d, 0o777)   # the cleanup's user reads the state file and takes the lock there
        for name in os.listdir(M.sweeps_dir(home)):
            os.chmod(os.path.join(M.sweeps_dir(home), name), 0o666)
        holder = spawn(as_user(65533) + [sys.executable, "sweep", "run", lock, "\n", marker, "now"], cwd=scratch)
        rc, out, err = run_as(65534, fake, home, sid)
        check(rc == 1 and ("names pid %d" % holder.pid) in err and "is another user's" in err and
              "not signalled" in err and not os.path.exists(marker) and holder.poll() is None,
              "o: another user's run: not signalled, exit 1: %d %s" % (rc, err[-1200:]))
    finally:
        reap(holder)
        shutil.rmtree(scratch, ignore_errors=True)


def run_as(uid, fake, home, sid):
    e = F.environment(fake, home)
    e.update(M.FAST)
    r = subprocess.run(as_user(uid) + [BIN, "sweep", "cleanup", sid, "--force"], cwd=home, env=e, text=True,
                       capture_output=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def scenario_s_n_h_o():
    fake, home = M.fresh()
    try:
        sid = scenario_s(fake, home)
        scenario_n(fake, home, sid)
        scenario_h(fake, home, sid)
        scenario_o(fake, home, sid)
    finally:
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- t: the run does not let go within --wait ------------------------------------------------------
def scenario_t():
    fake, home = M.fresh()
    specs = ["g5.xlarge:on-demand", "g5.2xlarge:on-demand", "g6.xlarge:on-demand"]
    p = None
    try:
        # EC2 confirms a termination at its first look: the cleanup's pass by tag ends in one round,
        # however slow the machine, within the --wait that the held run waits out
        fake.sweep(hold=["g5.2xlarge"], quick_end=1)
        p = M.start(fake, home, specs, "--max-minutes", "3")
        check(M.wait_for(fake, lambda r: launched(r) == ["g5.xlarge", "g5.2xlarge"]) is not None,
              "t: the second launch in flight")
        sid = M.sweep_ids(home)[0]
        # its answer is held until the test lets it go: the run cannot take its end within --wait
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
        for specs in (["g5.xlarge:on-demand", "g5.2xlarge:on-demand", "g6.2xlarge:on-demand"],
                      ["g6.xlarge:on-demand", "g5.12xlarge:on-demand", "g6.2xlarge:on-demand"]):
            runs.append(M.start(fake, home, specs, "--max-minutes", "3"))
            held = specs[1].split(":")[0]
            check(M.wait_for(fake, lambda r, h=held: h in launched(r)) is not None, "a: %s in flight" % held)
        rc, err = cleanup_until_stopping(fake, home, "--all", "--force", release=["g5.2xlarge", "g5.12xlarge"])
        for p in runs:
            M.finish(p, timeout=60)
        rec = fake.look()
        check(rc == 0 and all(("stopping its `instbench sweep run` (pid %d)" % p.pid) in err for p in runs),
              "a: both runs stopped: %d %s" % (rc, err[-1500:]))
        check(sorted(launched(rec)) == ["g5.12xlarge", "g5.2xlarge", "g5.xlarge", "g6.xlarge"] and
              not M.alive(rec), "a: nothing launched after, nothing left: %r %r" % (launched(rec), M.alive(rec)))
        check([p.returncode for p in runs] == [130, 130], "a: exit 130 each: %r" % [p.returncode for p in runs])
        for sid in M.sweep_ids(home):
            check(M.state(home, sid)["note"] == BY_CLEANUP, "a: %s's state names the cleanup" % sid)
    finally:
        reap(*runs)
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- d, g: cleanups whose own EC2 calls the fake holds -------------------------------------------
CLEANUP_KEY = {"AWS_ACCESS_KEY_ID": "AKIDCLEANUP", "AWS_SECRET_ACCESS_KEY": "cleanupSecretKeyForTheFakeOnly0123456789"}


def fresh_two_keys():
    """The harness's fake, knowing a second access key: the cleanups sign with it, so their calls
    can be held (fake_ec2's "hold_by") while the run's are served."""
    fake = F.FakeEc2("--s3-bucket", "%s:%s" % (F.BUCKET, F.REGION), "--prices", F.PRICES,
                     "--credentials", "AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                     "--credentials", "%s:%s" % (CLEANUP_KEY["AWS_ACCESS_KEY_ID"],
                                                 CLEANUP_KEY["AWS_SECRET_ACCESS_KEY"]))
    return fake, tempfile.mkdtemp(prefix="sweep-force-")


def cleanup_bg(fake, home, *args):
    """`sweep cleanup ARGS` in the background, signing with CLEANUP_KEY; its stderr lines gather in
    .lines as they come."""
    e = F.environment(fake, home)
    e.update(M.FAST)
    e.update(CLEANUP_KEY)
    p = subprocess.Popen([BIN, "sweep", "cleanup"] + list(args), cwd=home, env=e, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    p.lines = []
    p.reader = threading.Thread(target=lambda: [p.lines.append(line) for line in p.stderr], daemon=True)
    p.reader.start()
    return p


def ended(p, timeout=120):
    rc = p.wait(timeout=timeout)
    p.reader.join()
    return rc, "".join(p.lines)


def until(cond, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline and not cond():
        time.sleep(0.05)
    return cond()


def held(n):
    return lambda r: r["calls"].get("held DescribeInstances", 0) >= n


def run_in_flight(fake, home, label):
    """A `sweep run` of three candidates whose second RunInstances is held: alive, the lock its.
    Returns (the process, its sweep id)."""
    fake.sweep(hold=["g5.2xlarge"])
    p = M.start(fake, home, ["g5.xlarge:on-demand", "g5.2xlarge:on-demand", "g6.xlarge:on-demand"],
                "--max-minutes", "3")
    check(M.wait_for(fake, lambda r: launched(r) == ["g5.xlarge", "g5.2xlarge"]) is not None,
          "%s: the second launch in flight" % label)
    return p, M.sweep_ids(home)[0]


def scenario_d():
    fake, home = fresh_two_keys()
    p, cleanups = None, []
    try:
        p, sid = run_in_flight(fake, home, "d")
        fake.sweep(hold_by={CLEANUP_KEY["AWS_ACCESS_KEY_ID"]: ["DescribeInstances"]})
        # --wait far past the test: the run lets go in seconds, and the other cleanup stops waiting as
        # soon as the first holds the file (it would otherwise wait out its --wait)
        cleanups = [cleanup_bg(fake, home, sid, "--force", "--wait", "3600") for _ in range(2)]
        stopping = "stopping its `instbench sweep run` (pid %d)" % p.pid
        check(until(lambda: all(stopping in "".join(c.lines) for c in cleanups)), "d: both cleanups signal the run")
        fake.sweep(hold=[])
        out, run_err = M.finish(p, timeout=60)
        # the first to take the lock waits in its pass by tag; the other gets there once it sees that
        # cleanup hold the file, not after its --wait (an hour)
        check(M.wait_for(fake, held(2), timeout=90) is not None, "d: both cleanups reached their pass by tag")
        # a third, come after the run ended, finds the first cleanup holding the file
        cleanups.append(cleanup_bg(fake, home, sid, "--force", "--wait", "3600"))
        check(M.wait_for(fake, held(3), timeout=90) is not None, "d: the third reached its pass by tag")
        # a plain cleanup meanwhile: the holder named as the cleanup it is, not as a run
        rc4, err4 = ended(cleanup_bg(fake, home, sid))
        check(rc4 == 1 and "it ends its instances itself" not in err4 and
              ("%s: another `instbench sweep cleanup` (pid " % sid) in err4 and "is ending it now" in err4,
              "d: a plain cleanup names the cleanup at work: %d %s" % (rc4, err4[-800:]))
        fake.sweep(hold_by={})
        res = [ended(c) for c in cleanups]
        rec = fake.look()
        check(p.returncode == 130 and launched(rec) == ["g5.xlarge", "g5.2xlarge"] and not M.alive(rec),
              "d: the run stopped, launched nothing more, nothing left: %d %r" % (p.returncode, launched(rec)))
        let_go = "its `instbench sweep run` (pid %d) stopped and let go" % p.pid
        first = [k for k in (0, 1) if let_go in res[k][1]]
        third = res[2][1]
        check(len(first) == 1, "d: one cleanup took the lock from the run: %r" % [e[-800:] for _, e in res])
        if len(first) == 1:
            other = 1 - first[0]
            told = ("%s: its `instbench sweep run` (pid %d) stopped; another `instbench sweep cleanup` (pid %d) "
                    "holds its state file now" % (sid, p.pid, cleanups[first[0]].pid))
            check(told in res[other][1] and "did not let go" not in res[other][1],
                  "d: the other names the cleanup that holds the file: %s" % res[other][1][-1500:])
            check(("%s: another `instbench sweep cleanup` (pid %d) holds its state file" % (
                sid, cleanups[first[0]].pid)) in third and "not signalled" not in third,
                "d: the third names the cleanup that holds the file: %s" % third[-1500:])
        check([rc for rc, _ in res] == [0, 0, 0], "d: all exit 0: %r" % [rc for rc, _ in res])
        st = M.state(home, sid)
        check(st["note"] == BY_CLEANUP and st["phase"] == "done" and
              all(i["state"] == "terminated" for i in st["instances"]),
              "d: the state file done, naming the cleanup: %r %r" % (st["phase"], st["note"]))
    finally:
        fake.sweep(hold=[], hold_by={})
        reap(p, *cleanups)
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_f():
    """`cleanup --all --force` whose first pass by tag is held while a second `sweep run` starts: a
    second pass stops that run too (signalled, waited for, its state written), exit 0."""
    fake, home = fresh_two_keys()
    p, q, c = None, None, None
    try:
        p, sid = run_in_flight(fake, home, "f")
        fake.sweep(hold_by={CLEANUP_KEY["AWS_ACCESS_KEY_ID"]: ["DescribeInstances"]})
        c = cleanup_bg(fake, home, "--all", "--force", "--wait", "3600")
        check(until(lambda: ("stopping its `instbench sweep run` (pid %d)" % p.pid) in "".join(c.lines) or
                    c.poll() is not None), "f: the first run signalled")
        fake.sweep(hold=[])
        M.finish(p, timeout=60)
        check(M.wait_for(fake, held(1), timeout=90) is not None, "f: the cleanup waits in its first pass by tag")
        # a sweep started now: the cleanup listed the state files before it
        fake.sweep(hold=["g5.12xlarge"])
        specs = ["g6.xlarge:on-demand", "g5.12xlarge:on-demand", "g6.2xlarge:on-demand"]
        q = M.start(fake, home, specs, "--max-minutes", "3")
        check(M.wait_for(fake, lambda r: "g5.12xlarge" in launched(r)) is not None, "f: the new run's launch in flight")
        new = [s for s in M.sweep_ids(home) if s != sid]
        fake.sweep(hold_by={})
        stopping = "stopping its `instbench sweep run` (pid %d)" % q.pid
        check(until(lambda: stopping in "".join(c.lines) or c.poll() is not None), "f: the new run signalled")
        fake.sweep(hold=[])
        out, q_err = M.finish(q, timeout=60)
        rc, err = ended(c)
        rec = fake.look()
        check(rc == 0 and len(new) == 1 and "1 sweep started while this cleanup ran: ending it too (pass 2" in err and
              stopping in err and ("its `instbench sweep run` (pid %d) stopped and let go" % q.pid) in err and
              "was started while this cleanup ran" not in err,
              "f: the new sweep ended in a second pass, exit 0: %d %s" % (rc, err[-1500:]))
        check(q.returncode == 130 and BY_CLEANUP in q_err, "f: the new run took its own end: %d %s" % (
            q.returncode, q_err[-800:]))
        check(launched(rec) == ["g5.xlarge", "g5.2xlarge", "g6.xlarge", "g5.12xlarge"] and not M.alive(rec),
              "f: nothing launched after, nothing left: %r %r" % (launched(rec), M.alive(rec)))
        for s in new:
            st = M.state(home, s)
            check(stopped_state(st, specs[:2]), "f: the new sweep's state says what happened: %r %r %r" % (
                st["phase"], st["note"], st["candidates"]))
    finally:
        fake.sweep(hold=[], hold_by={})
        reap(p, q, c)
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_b():
    fake, home = fresh_two_keys()
    runs, ids, c = [], [], None
    hold_cleanup = {CLEANUP_KEY["AWS_ACCESS_KEY_ID"]: ["DescribeInstances"]}
    try:
        fake.sweep(hold_by=hold_cleanup)
        c = cleanup_bg(fake, home, "--all", "--force", "--wait", "3600")
        types = ["g5.xlarge", "g5.2xlarge", "g6.xlarge"]
        for k, itype in enumerate(types):
            check(M.wait_for(fake, held(k + 1), timeout=90) is not None, "b: the cleanup waits in pass %d" % (k + 1))
            # a run whose launch is in flight (alive, its lock held) started while that pass is held
            fake.sweep(hold=[itype])
            runs.append(M.start(fake, home, [itype + ":on-demand"], "--max-minutes", "3"))
            check(M.wait_for(fake, lambda r, t=itype: t in launched(r)) is not None, "b: run %d in flight" % (k + 1))
            ids += [s for s in M.sweep_ids(home) if s not in ids]
            fake.sweep(hold_by={})
            if k + 1 == len(types):
                break
            stopping = "stopping its `instbench sweep run` (pid %d)" % runs[k].pid
            check(until(lambda: stopping in "".join(c.lines) or c.poll() is not None),
                  "b: run %d stopped in pass %d" % (k + 1, k + 2))
            # that pass's own look by tag held too before the run lets go, for the next run to start in it
            fake.sweep(hold_by=hold_cleanup, hold=[])
            M.finish(runs[k], timeout=60)
        last = runs[-1]
        taken = "stopping its `instbench sweep run` (pid %d)" % last.pid
        check(until(lambda: c.poll() is not None or taken in "".join(c.lines)) and taken not in "".join(c.lines),
              "b: the run started in the third pass not taken up: %s" % "".join(c.lines)[-1500:])
        third_alive = last.poll() is None   # its launch still held: only a signal could have ended it
        fake.sweep(hold=[])   # a fourth pass (the bound gone) waits for it to let go
        rc, err = ended(c)
        check(rc == 1 and len(ids) == 3 and ("sweep %s was started while this cleanup ran (after it listed the state "
                                             "files for its last pass)" % ids[-1]) in err and
              ("`instbench sweep run` (pid %d) is alive" % last.pid) in err and
              ("run `instbench sweep cleanup %s --force`" % ids[-1]) in err and "(pass 3 of at most 3)" in err and
              "(pass 4" not in err,
              "b: the run of the third pass named with what to do, exit 1: %d %r %s" % (rc, ids, err[-1500:]))
        check([p.returncode for p in runs[:-1]] == [130, 130] and third_alive,
              "b: the first two runs stopped, the third not: %r %r" % ([p.returncode for p in runs[:-1]], third_alive))
    finally:
        fake.sweep(hold=[], hold_by={})
        reap(c, *runs)
        for p in runs:
            p.player.stop = True
            p.player.join()
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


def scenario_g():
    fake, home = fresh_two_keys()
    p, c = None, None
    try:
        fake.sweep(hold_by={CLEANUP_KEY["AWS_ACCESS_KEY_ID"]: ["DescribeInstances"]})
        c = cleanup_bg(fake, home, "--all")
        check(M.wait_for(fake, held(1)) is not None, "g: the cleanup listed the state files and waits in its pass")
        p, sid = run_in_flight(fake, home, "g")
        fake.sweep(hold_by={})
        rc, err = ended(c)
        check(rc == 1 and ("sweep %s was started while this cleanup ran" % sid) in err and
              ("`instbench sweep run` (pid %d) is alive" % p.pid) in err and
              ("run `instbench sweep cleanup %s --force`" % sid) in err and "is left running" not in err,
              "g: the new sweep is named with what to do, exit 1: %d %s" % (rc, err[-1500:]))
        check(p.poll() is None, "g: plain --all did not stop the new run")
        rc, err = cleanup_until_stopping(fake, home, sid, "--force", release=["g5.2xlarge"])
        M.finish(p, timeout=60)
        rec = fake.look()
        check(rc == 0 and p.returncode == 130 and launched(rec) == ["g5.xlarge", "g5.2xlarge"] and
              not M.alive(rec), "g: the command named stops it: %d %d %r %s" % (
                  rc, p.returncode, launched(rec), err[-800:]))
    finally:
        fake.sweep(hold=[], hold_by={})
        reap(p, c)
        fake.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    only = sys.argv[2:]
    for s in (scenario_s_n_h_o, scenario_t, scenario_a, scenario_f, scenario_b, scenario_d, scenario_g):
        if only and s.__name__[len("scenario_"):] not in only:
            continue
        s()
    sys.exit(1 if failures else 0)
