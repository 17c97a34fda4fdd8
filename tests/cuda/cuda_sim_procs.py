#!/usr/bin/env python3
"""Multi-process data parallelism of the real executable, with the CUDA module simulated on the
CPU (libinstbench-cuda-sim.so, INSTBENCH_CUDA_MODULE): processes launched as torchrun launches
them (WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), the NCCL unique id handed out over
the real TCP rendezvous, ncclCommInitRank joining the processes (the NCCL stand-in's shared-memory
group).

- two processes, one rank each, run `measure --backend cuda` to the end; the result says world
  size 2;
- a rank that dies (SIGKILL, mid-run: once both processes say, under -v, that their timed window
  has started, so NCCL is set up and the steps are under way) makes the other exit non-zero with a
  message that says a rank's process died, with INSTBENCH_NCCL_TIMEOUT_S at its default of 300 s,
  so it is the job's liveness channel that tells, not the deadline.  Both ways round: the killed
  process is rank 0's (which served the rendezvous) or the other one;
- a signal during the rendezvous (rank 0 alone, waiting for its peer; rank 1 alone, fetching from
  an address where nothing listens): SIGTERM ends it with 143, SIGINT with 130, saying
  "interrupted; nothing written", no result, and no false "peers connected" timeout (an exit at
  all, within the hang guard, is not the wait's own end: its limit is 600 s);
- rank 0's process interrupted (SIGINT) while a peer that has joined waits for a third process
  (world 3; the peer says under -v when it has joined): the peer exits non-zero, saying that rank
  0's process was interrupted, not at its own limit (minutes away, past the hang guard) nor as
  if rank 0 had crashed;
- a duplicate RANK (world 3: rank 0 and two processes given RANK 1): every process stops at once,
  rank 0 and the refused one with 2, naming rank 1 and the addresses; the same in a world of 2,
  where the job forms and the duplicate comes after it (the refused one 2, the others non-zero); an HTTP server on
  MASTER_PORT: rank 1 stops at once with 2, naming the address and port;
- --rendezvous-timeout 4 ends a rank 1 whose rank 0 never comes at that limit (exit 1, the limit
  and the refused connections named; no sooner than 4 s after its launch), not the default 600 s,
  and while it waits it says so, at most once a second, naming the refused connections; a lone
  rank 0 says how many peers have come;
- a rank 0 whose MASTER_ADDR is not this machine (192.0.2.1, RFC 5737's TEST-NET-1) warns that the
  others look for it there; with 127.0.0.1 it does not;
- the two processes given different workloads (rank 1 with another --batch-size, --precision,
  --seed or --steps): both exit 2, each naming the field that differs, no result; the same for
  different world sizes (rank 0 WORLD_SIZE=2, rank 1 WORLD_SIZE=3).

No bound on how fast anything happens: what each process printed, its exit status and the order of
events are checked, and every wait for a process to end has a hang guard (GUARD_S) that only a
process stuck at one of its own limits (NCCL's set-up, 300 s; the rendezvous, 600 s) runs into.

Ports: where rank 0's process listens, the port is one the kernel just gave free_port(), released
before rank 0 binds it; another program may take it in between, and then (only then: rank 0 says
"Address already in use") the case runs again on another port (on_free_port), the job's other
processes killed at once rather than left to wait for that rank 0 to their limit (wait_job, or a
case's own wait, which ends when any process does).  Where nothing may listen (a rank 1 alone),
the port stays bound by this test, not listening, so every connection to it is refused and no one
else can take it (refused_port).

Usage: cuda_sim_procs.py INSTBENCH SIM_MODULE"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testlib import check, failures, on_free_port, refused_port, wait_job  # noqa: E402

BIN, MODULE = sys.argv[1:3]
BASE = {k: v for k, v in os.environ.items()
        if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                     "INSTBENCH_NCCL_TIMEOUT_S") and not k.startswith("SLURM_")}
BASE.update(INSTBENCH_CUDA_MODULE=os.path.abspath(MODULE), AWS_EC2_METADATA_DISABLED="true", NO_COLOR="1")
TINY = ["--model", "vit_tiny_patch16_224", "--image-size", "32", "--patch-size", "16", "--embed-dim", "32",
        "--depth", "1", "--heads", "2", "--classes", "10", "--batch-size", "8", "--data", "device"]


def launch(tmp, extra, port):
    """Both processes of a 2-process job, as torchrun starts them; [(proc, stderr path)]."""
    procs = []
    for r in range(2):
        # each rank under its own cudasim seed: both seeds in every run
        env = dict(BASE, WORLD_SIZE="2", RANK=str(r), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), CUDASIM_SEED=str(r + 1))
        err = os.path.join(tmp, "rank%d.err" % r)
        p = subprocess.Popen([BIN, "measure", "--backend", "cuda", *TINY, *extra, "--format", "json",
                              "--output", os.path.join(tmp, "r%d.json" % r)],
                             env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(err, "w"))
        procs.append((p, err))
    return procs


def text(path):
    with open(path, errors="replace") as f:
        return f.read()


def launch_one(tmp, rank, port, extra=(), name=None, **env_extra):
    env = dict(BASE, WORLD_SIZE="2", RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
               CUDASIM_SEED="1")
    env.update(env_extra)
    err = os.path.join(tmp, "%s.err" % (name or "alone%d" % rank))
    p = subprocess.Popen([BIN, "measure", "--backend", "cuda", *TINY, "--steps", "2", "--warmup", "1",
                          "--checkpoint", "off", "--ranks", "1", "--format", "json", *extra,
                          "--output", os.path.join(tmp, "%s.json" % (name or "alone"))],
                         env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    return p, err


def at_rendezvous(p, err, limit=60):
    """waits until P says it is at the rendezvous (or ends); the time it did"""
    t0 = time.time()
    while time.time() - t0 < limit and "rendezvous:" not in text(err) and p.poll() is None:
        time.sleep(0.05)
    return time.time()


# How long a process may take to end (after a signal, a peer's end, or its own short limit) before
# the test calls it hung: a hang guard, not a speed bound (it takes a second or a few); the waits it
# would otherwise end at last 300 s (NCCL's set-up) or 600 s (the rendezvous), past it, so whatever
# ends within it did not end there.
GUARD_S = 120


def ended(p, limit):
    """P's exit status within LIMIT seconds, else a word saying it ran on (and it is killed)"""
    try:
        return p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return "still running after %g s" % limit


# ---- two processes to the end ---------------------------------------------------------------------
def two_to_the_end(port):
    with tempfile.TemporaryDirectory() as tmp:
        procs = launch(tmp, ["--steps", "5", "--warmup", "2"], port)
        for r, rc in enumerate(wait_job(procs, 600)):
            check(rc == 0, "2 processes: rank %d: exit %s: %s" % (r, rc, text(procs[r][1])[-800:]))
        out = os.path.join(tmp, "r0.json")
        if os.path.exists(out):
            doc = json.load(open(out))
            check(doc["topology"]["world_size"] == 2 and doc["workload"]["global_batch_size"] == 16,
                  "2 processes: topology %s, global batch %s" % (doc["topology"], doc["workload"]["global_batch_size"]))
        else:
            check(False, "2 processes: rank 0 wrote no result")
        return [text(procs[0][1])]


on_free_port(two_to_the_end)


# ---- a signal while waiting at the rendezvous ------------------------------------------------------
def signal_alone(rank, sig, want, port):
    name = "rank %d alone, %s at the rendezvous" % (rank, sig.name)
    with tempfile.TemporaryDirectory() as tmp:
        p, err = launch_one(tmp, rank, port)
        at_rendezvous(p, err)
        time.sleep(1)   # well inside the wait (a signal before it is seen as soon as the wait begins)
        if not check(p.poll() is None, "%s: ended before the signal: %s" % (name, text(err)[-400:])):
            return [text(err)]
        p.send_signal(sig)
        sent = time.time()
        rc = ended(p, GUARD_S)
        took = time.time() - sent
        msg = text(err)
        check(rc == want, "%s: exit %s after %.1f s (want %d): %s" % (name, rc, took, want, msg[-400:]))
        check("nothing written" in msg and "peers connected" not in msg and "no answer" not in msg,
              "%s: message: %s" % (name, msg[-400:]))
        check(not os.path.exists(os.path.join(tmp, "alone.json")), "%s: a result was written" % name)
        return [msg]


for rank, sig, want in ((0, signal.SIGTERM, 143), (0, signal.SIGINT, 130), (1, signal.SIGTERM, 143),
                        (1, signal.SIGINT, 130)):
    if rank == 0:
        on_free_port(lambda port: signal_alone(rank, sig, want, port))
    else:
        signal_alone(rank, sig, want, refused_port())   # nothing listens there, and nothing can


# ---- rank 0's process interrupted while a joined peer waits ------------------------------------------
# world 3: rank 0 and rank 1, rank 2 never comes; rank 1 has joined (-v says so) and waits in NCCL's
# set-up, rank 0 for rank 2
def root_interrupted(port):
    name = "rank 0 interrupted while rank 1 waits"
    with tempfile.TemporaryDirectory() as tmp:
        procs = [launch_one(tmp, r, port, ["-v"], name="p%d" % r, WORLD_SIZE="3", CUDASIM_SEED=str(r + 1))
                 for r in (0, 1)]
        (p0, e0), (p1, e1) = procs
        t0 = time.time()
        while time.time() - t0 < GUARD_S and "rendezvous: joined" not in text(e1) and p0.poll() is None \
                and p1.poll() is None:
            time.sleep(0.05)
        if not check(p0.poll() is None and p1.poll() is None and "rendezvous: joined" in text(e1),
                     "%s: rank 1 never joined, or a process ended: %s / %s" % (name, text(e0)[-400:], text(e1)[-400:])):
            for p, _ in procs:
                ended(p, 0.1)
            return [text(e0)]
        p0.send_signal(signal.SIGINT)
        sent = time.time()
        rc0, rc1 = ended(p0, GUARD_S), ended(p1, GUARD_S)
        took, m0, m1 = time.time() - sent, text(e0), text(e1)
        print("%s: rank 1 exited %s after %.1f s: %s" % (name, rc1, took, (m1.strip().splitlines() or [""])[-1]))
        check(rc0 == 130, "%s: rank 0 exited %s, want 130: %s" % (name, rc0, m0[-400:]))
        check(rc1 not in (0, "still running after %g s" % GUARD_S),
              "%s: rank 1 exited %s %.1f s after the signal (want non-zero): %s"
              % (name, rc1, took, m1[-600:]))
        check("rank 0's process was interrupted (SIGINT)" in m1,
              "%s: rank 1 does not say that rank 0's process was interrupted: %s" % (name, m1[-600:]))
        return [m0]


on_free_port(root_interrupted)


# ---- --rendezvous-timeout: the limit of the wait, not a hard-coded 600 s; said while it lasts -----------
# A limit of 4 s: "still waiting" once a second at most (a quarter of the limit), so 1 to 3 lines
# before the end (how many depends on how promptly the machine runs the process: not checked), each
# within the wait by the process's own clock, in order.
def progress(msg, start, pattern):
    """the seconds each line of MSG that begins with START says, where the line matches PATTERN
    (a regular expression whose first group is the seconds); None for a line that does not"""
    lines = [ln for ln in msg.splitlines() if ln.startswith(start)]
    return [int(m.group(1)) if m else None for m in (re.fullmatch(pattern, ln) for ln in lines)]


def said_in_order(seconds, limit):
    """1 to LIMIT - 1 lines (one a second at most in a wait of LIMIT s), each within it, in order"""
    return 1 <= len(seconds) < limit and None not in seconds and seconds == sorted(seconds) and \
        1 <= seconds[0] and seconds[-1] <= limit


with tempfile.TemporaryDirectory() as tmp:
    port = refused_port()   # nothing listens on the port, nor can
    launched = time.monotonic()   # CLOCK_MONOTONIC, the clock the process's deadline is on
    p, err = launch_one(tmp, 1, port, ["--rendezvous-timeout", "4"])
    rc = ended(p, GUARD_S)
    took, msg = time.monotonic() - launched, text(err)
    # The wait ended at its own limit, not before: its deadline is 4 s after a moment later than the
    # launch, so on any machine the process ends no sooner than 4 s after it (a slower one only adds
    # to that; nothing here bounds how much); the default limit, 600 s, would meet the hang guard.
    check(rc == 1 and took >= 4, "--rendezvous-timeout 4, rank 0 absent: exit %s %.1f s after its launch (want 1, "
          "at 4 s or later): %s" % (rc, took, msg[-400:]))
    check("within 4 s" in msg, "--rendezvous-timeout 4: the message does not say the limit: %s" % msg[-400:])
    check("127.0.0.1:%d" % port in msg and "connection refused" in msg and "is rank 0's process running" in msg,
          "--rendezvous-timeout 4: the message does not say the connections were refused: %s" % msg[-400:])
    said = progress(msg, "rendezvous: still waiting for rank 0 at ",
                    r"rendezvous: still waiting for rank 0 at 127\.0\.0\.1:%d after (\d+) s of 4 \(connection "
                    r"refused for \d+ s: nothing listens there yet\)" % port)
    check(said_in_order(said, 4),
          "a rank 1 waiting 4 s for rank 0 did not say, once a second at most, that it waits, and why: %s"
          % msg[-800:])


def root_waits(port):
    with tempfile.TemporaryDirectory() as tmp:
        p, err = launch_one(tmp, 0, port, ["--rendezvous-timeout", "4"])
        rc = ended(p, GUARD_S)
        msg = text(err)
        said = progress(msg, "rendezvous: still waiting on port ",
                        r"rendezvous: still waiting on port %d after (\d+) s of 4: 0 of 1 peer process "
                        r"connected" % port)
        check(rc == 1 and said_in_order(said, 4),
              "a rank 0 waiting 4 s for its peer: exit %s (want 1), and it did not say, once a second at most, how "
              "many peers have come: %s" % (rc, msg[-800:]))
        return [msg]


on_free_port(root_waits)


# ---- rank 0 on a machine MASTER_ADDR does not name: said at once -----------------------------------------
# 192.0.2.1 is TEST-NET-1 (RFC 5737), documentation only, never an address of this machine; 127.0.0.1
# always is.  Rank 0 alone, its limit 2 s: the warning comes before it waits, and only for the first.
def master_elsewhere(port):
    said = []
    with tempfile.TemporaryDirectory() as tmp:
        for addr, want in (("192.0.2.1", True), ("127.0.0.1", False)):
            p, err = launch_one(tmp, 0, port, ["--rendezvous-timeout", "2"], name="m%s" % addr, MASTER_ADDR=addr)
            rc = ended(p, GUARD_S)
            msg = text(err)
            said.append(msg)
            warned = "MASTER_ADDR %s (%s) is not an address of this machine" % (addr, addr) in msg
            check(rc == 1 and warned == want, "rank 0 with MASTER_ADDR %s: exit %s (want 1 at its limit), warned %s "
                  "(want %s): %s" % (addr, rc, warned, want, msg[-400:]))
    return said


on_free_port(master_elsewhere)


# ---- two processes given one RANK, a stranger on the port: at once, not at the limit -------------------
# world 3: rank 0 and two processes given RANK 1, so rank 2 never comes and nobody may wait for it;
# world 2: the job forms with one of them, and the other, a process too many, comes after it
def duplicate_rank(world, steps, port):
    name = "a duplicate RANK 1 in a world of %s" % world
    with tempfile.TemporaryDirectory() as tmp:
        procs = [launch_one(tmp, r, port, ["--steps", steps], name="p%d" % i, WORLD_SIZE=world,
                            CUDASIM_SEED=str(i % 2 + 1)) for i, r in enumerate((0, 1, 1))]
        # at once, not at the limit: a process left waiting for rank 2, or for the refused one, would
        # wait 600 s, past the hang guard (wait_job's "timeout")
        rcs = wait_job(procs, GUARD_S)
        msgs = [text(err) for _, err in procs]
        refused = [i for i in (1, 2) if "refused" in msgs[i]]
        check(rcs[0] not in (0, "timeout") and len(refused) == 1 and rcs[refused[0]] == 2 and
              rcs[3 - refused[0]] not in (0, "timeout"),
              "%s: exits %s (want 2 for the refused one, non-zero for the others, none left waiting): %s"
              % (name, rcs, [m[-300:] for m in msgs]))
        check(world != "3" or rcs[0] == 2, "%s: rank 0 exited %s, want 2" % (name, rcs[0]))
        check(all("rank 1" in m and "127.0.0.1" in m for m in msgs),
              "%s: not every process names rank 1 and the addresses: %s" % (name, [m[-300:] for m in msgs]))
        check(not os.path.exists(os.path.join(tmp, "p0.json")), "%s: rank 0 wrote a result" % name)
        return msgs[:1]


for world, steps in (("3", "2"), ("2", "1000000")):
    on_free_port(lambda port: duplicate_rank(world, steps, port))

with tempfile.TemporaryDirectory() as tmp:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    p, err = launch_one(tmp, 1, port)
    waiting = at_rendezvous(p, err)
    # served until the process ends, within the hang guard (its own limit, 600 s, is past it)
    while p.poll() is None and time.time() - waiting < GUARD_S:  # an HTTP server's answer to whatever comes
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        with conn:
            conn.settimeout(2)
            try:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
    rc = ended(p, 5)
    msg = text(err)
    listener.close()
    # 2, a usage error: what it was told to connect to is no rendezvous (its own limit would end it with 1)
    check(rc == 2 and "127.0.0.1:%d" % port in msg,
          "an HTTP server on MASTER_PORT: exit %s (want 2, naming 127.0.0.1:%d): %s" % (rc, port, msg[-400:]))


# ---- ranks given different workloads ---------------------------------------------------------------
def different_workloads(flag, val, field, port):
    name = "rank 1 with %s %s" % (flag, val)
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for r in range(2):
            env = dict(BASE, WORLD_SIZE="2", RANK=str(r), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       CUDASIM_SEED=str(r + 1))
            args = ["--steps", "2", "--warmup", "1", "--checkpoint", "off", "--ranks", "1"]
            args = [a if not (r == 1 and i > 0 and args[i - 1] == flag) else val for i, a in enumerate(args)]
            if r == 1 and flag not in args:
                args += [flag, val]
            tiny = [a if not (r == 1 and i > 0 and TINY[i - 1] == flag) else val for i, a in enumerate(TINY)]
            err = os.path.join(tmp, "rank%d.err" % r)
            procs.append((subprocess.Popen([BIN, "measure", "--backend", "cuda", *tiny, *args, "--format", "json",
                                            "--output", os.path.join(tmp, "r%d.json" % r)],
                                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=open(err, "w")), err))
        for r, rc in enumerate(wait_job(procs, GUARD_S)):
            msg = text(procs[r][1])
            check(rc == 2, "%s: rank %d exited %s (want 2): %s" % (name, r, rc, msg[-500:]))
            check("different workloads" in msg and field + "=" in msg,
                  "%s: rank %d does not name %s: %s" % (name, r, field, msg[-500:]))
        check(not os.path.exists(os.path.join(tmp, "r0.json")), "%s: rank 0 wrote a result" % name)
        return [text(procs[0][1])]


for flag, val, field in (("--batch-size", "4", "batch_size_per_device"), ("--precision", "fp32", "precision"),
                         ("--seed", "3", "seed"), ("--steps", "5", "steps")):
    on_free_port(lambda port: different_workloads(flag, val, field, port))


# ---- ranks given different world sizes ------------------------------------------------------------
def different_world_sizes(port):
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for r, world in ((0, "2"), (1, "3")):
            env = dict(BASE, WORLD_SIZE=world, RANK=str(r), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       CUDASIM_SEED="1")
            err = os.path.join(tmp, "rank%d.err" % r)
            procs.append((subprocess.Popen([BIN, "measure", "--backend", "cuda", *TINY, "--steps", "2", "--warmup", "1",
                                            "--checkpoint", "off", "--ranks", "1", "--format", "json",
                                            "--output", os.path.join(tmp, "r%d.json" % r)],
                                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=open(err, "w")), err))
        for r, rc in enumerate(wait_job(procs, GUARD_S)):
            msg = text(procs[r][1])
            check(rc == 2 and "different world sizes" in msg,
                  "world sizes 2 and 3: rank %d exited %s (want 2, naming the world sizes): %s" % (r, rc, msg[-500:]))
        check(not os.path.exists(os.path.join(tmp, "r0.json")), "world sizes 2 and 3: rank 0 wrote a result")
        return [text(procs[0][1])]


on_free_port(different_world_sizes)


# ---- a rank dies mid-run --------------------------------------------------------------------------
TIMED = "instbench: timed window start"   # -v: NCCL set up, the warm-up step's allreduce done


def rank_dies(victim, port):
    survivor = 1 - victim
    with tempfile.TemporaryDirectory() as tmp:
        procs = launch(tmp, ["--steps", "1000000", "--warmup", "1", "-v"], port)
        (pv, ev), (ps, es) = procs[victim], procs[survivor]
        t0 = time.time()
        while time.time() - t0 < 300 and not (TIMED in text(ev) and TIMED in text(es)) and pv.poll() is None \
                and ps.poll() is None:
            time.sleep(0.1)
        alive = pv.poll() is None and ps.poll() is None
        check(alive and TIMED in text(ev) and TIMED in text(es),
              "kill rank %d: a process ended, or did not start its timed steps, before the kill: %s / %s"
              % (victim, text(ev)[-400:], text(es)[-400:]))
        if not alive:
            for p, _ in procs:
                ended(p, 0.1)
            return [text(procs[0][1])]
        pv.send_signal(signal.SIGKILL)
        pv.wait()
        killed_at = time.time()
        # NCCL's own deadline (300 s) is past the hang guard: an end within it, saying the peer died,
        # is the liveness channel's
        rc = ended(ps, GUARD_S)
        took = time.time() - killed_at
        msg = text(es)
        print("kill rank %d: rank %d exited %s after %.1f s: %s" % (victim, survivor, rc, took,
                                                                   (msg.strip().splitlines() or [""])[-1]))
        check(rc not in (0, "still running after %g s" % GUARD_S),
              "kill rank %d: rank %d exited %s %.1f s after the kill (want non-zero): %s"
              % (victim, survivor, rc, took, msg[-600:]))
        check("died" in msg and "rank %d" % victim in msg,
              "kill rank %d: rank %d's message does not say rank %d's process died: %s"
              % (victim, survivor, victim, msg[-600:]))
        return [text(procs[0][1])]


for victim in (1, 0):
    on_free_port(lambda port: rank_dies(victim, port))

print("cuda_sim_procs: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
