#!/usr/bin/env python3
"""Every launcher teams start `measure` with, each to a finished two-process run on the CUDA
module simulated on the CPU (libinstbench-cuda-sim.so: the real src/cuda code, NCCL's stand-in
joining the processes), the NCCL unique id handed out on the port that launcher leaves free:

- real torchrun (Debian's /usr/bin/torchrun), static rendezvous: its agent's TCPStore listens on
  MASTER_PORT, so the id must go elsewhere (MASTER_PORT+1);
- real torchrun --standalone (c10d rendezvous): whether its agent's store holds MASTER_PORT depends
  on the torch version, so a probe worker under the same torchrun says (it connects to
  MASTER_ADDR:MASTER_PORT and reports TORCHELASTIC_USE_AGENT_STORE), and the id must be on
  MASTER_PORT exactly when nothing listens there;
- a Kubeflow PyTorchJob / Volcano pod started directly (WORLD_SIZE = pods, RANK = pod index,
  MASTER_ADDR/PORT, no torchrun): MASTER_PORT is the one port such a job declares, so the test
  holds MASTER_PORT+1 with a listener of its own: an id sent there would fail the run;
- Kubeflow Trainer v2 (only PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR,
  PET_MASTER_PORT), the same way.

Each result is rank 0's; its topology (rendezvous kind, world size, nodes, master, nccl_id_port)
is compared with what the launcher set, and the result validated against the schema.

Usage: measure_launchers.py INSTBENCH SIM_MODULE SCHEMA"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import jsonschema

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures, on_free_port, wait_job  # noqa: E402

BIN, MODULE, SCHEMA = sys.argv[1:4]
SCHEMA_DOC = json.load(open(SCHEMA))
LAUNCHER_VARS = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK",
                 "NNODES", "NODE_RANK")
BASE = {k: v for k, v in os.environ.items()
        if k not in LAUNCHER_VARS and not k.startswith(("SLURM_", "PET_", "TORCHELASTIC_"))}
BASE.update(INSTBENCH_CUDA_MODULE=os.path.abspath(MODULE), AWS_EC2_METADATA_DISABLED="true", NO_COLOR="1",
            CUDASIM_SEED="1")
TINY = ["--backend", "cuda", "--model", "vit_tiny_patch16_224", "--image-size", "32", "--patch-size", "16",
        "--embed-dim", "32", "--depth", "1", "--heads", "2", "--classes", "10", "--batch-size", "8",
        "--data", "device", "--steps", "2", "--warmup", "1", "--checkpoint", "off", "--ranks", "1",
        "--format", "json"]
TORCHRUN = shutil.which("torchrun") or "/usr/bin/torchrun"
# Debian's torch 1.13 under Python 3.11 cannot parse torchrun's default "-r 0 -t 0" (Std.from_str
# finds no Flag member for 0 and passes None on): stderr redirected to --log_dir and teed back
# parses, and changes nothing the workers see.
TORCHRUN_IO = ["-r", "2", "-t", "2"]


def text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def result_of(name, out, procs_rc, errs):
    ok = check(all(rc == 0 for rc in procs_rc), "%s: exits %s: %s" % (name, procs_rc, " | ".join(
        text(e)[-600:] for e in errs)))
    if not ok:
        return None
    if not check(os.path.exists(out), "%s: rank 0 wrote no result" % name):
        return None
    doc = json.load(open(out))
    try:
        jsonschema.validate(doc, SCHEMA_DOC)
    except jsonschema.ValidationError as e:
        check(False, "%s: result does not match the schema: %s" % (name, e.message))
    return doc


def run_direct(name, envs, tmp, timeout=300):
    """Starts one process per entry of envs (each its own variables), waits; rank 0's result and
    what the processes wrote on stderr."""
    out = fresh(os.path.join(tmp, name + ".json"))
    procs, errs = [], []
    for i, e in enumerate(envs):
        err = os.path.join(tmp, "%s.%d.err" % (name, i))
        errs.append(err)
        procs.append(subprocess.Popen([BIN, "measure", *TINY, "--output", out], env=dict(BASE, **e),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(err, "w")))
    return result_of(name, out, wait_job(list(zip(procs, errs)), timeout), errs), [text(e) for e in errs]


def torchrun_probe(args, tmp, name):
    """What torchrun gives its workers under `args`: a Python worker per rank reports
    TORCHELASTIC_USE_AGENT_STORE and whether something accepts connections on MASTER_PORT; and
    what torchrun wrote on stderr."""
    probe = os.path.join(tmp, "probe.py")
    with open(probe, "w") as f:
        f.write("import json, os, socket, sys\n"
                "s = socket.socket(); s.settimeout(5)\n"
                "try:\n    s.connect((os.environ['MASTER_ADDR'], int(os.environ['MASTER_PORT']))); up = True\n"
                "except OSError:\n    up = False\n"
                "json.dump({'listening': up, 'port': int(os.environ['MASTER_PORT']),\n"
                "           'agent_store': os.environ.get('TORCHELASTIC_USE_AGENT_STORE'),\n"
                "           'run_id': os.environ.get('TORCHELASTIC_RUN_ID')},\n"
                "          open(sys.argv[1] + os.environ['RANK'], 'w'))\n")
    dst = os.path.join(tmp, name + ".probe")
    p = subprocess.run([TORCHRUN, *TORCHRUN_IO, "--log_dir", os.path.join(tmp, name + ".plogs"), *args, probe, dst], env=BASE, capture_output=True, text=True, timeout=120)
    if not check(p.returncode == 0, "%s: torchrun probe: exit %s: %s" % (name, p.returncode, p.stderr[-600:])):
        return None, [p.stderr]
    return json.load(open(dst + "0")), [p.stderr]


def run_torchrun(name, args, tmp, timeout=300):
    """Rank 0's result of measure under torchrun ARGS, and what torchrun (its workers' teed) wrote
    on stderr."""
    out = fresh(os.path.join(tmp, name + ".json"))
    err = os.path.join(tmp, name + ".err")
    p = subprocess.Popen([TORCHRUN, *TORCHRUN_IO, "--log_dir", os.path.join(tmp, name + ".logs"), *args, "--no_python", BIN, "measure", *TINY, "--output", out], env=BASE,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "timeout"
    return result_of(name, out, [rc], [err]), [text(err)]


def fresh(path):
    """PATH, no file there: a case run again on another port must not find the last try's result."""
    if os.path.exists(path):
        os.remove(path)
    return path


def held_next(name, port):
    """A listener on PORT+1, which a pod's job does not declare: an id sent there fails the run; and
    why not, when it cannot be had (a failure recorded, which on_free_port drops for a taken port)."""
    s = socket.socket()
    try:
        if port == 65535:
            raise OSError("no port after it: address already in use, as good as")
        s.bind(("127.0.0.1", port + 1))
        s.listen(4)
        return s, ""
    except OSError as e:
        s.close()
        check(False, "%s: cannot listen on MASTER_PORT+1 (%d): %s" % (name, port + 1, e))
        return None, str(e)


def check_topology(name, doc, kind, world, nodes, addr, id_port):
    t = doc["topology"]
    check(t["rendezvous"] == kind, "%s: rendezvous %s, want %s" % (name, t["rendezvous"], kind))
    check(t["world_size"] == world and t["nodes"] == nodes,
          "%s: world %s over %s node(s), want %d over %d" % (name, t["world_size"], t["nodes"], world, nodes))
    check(t.get("master_addr") == addr, "%s: master_addr %s, want %s" % (name, t.get("master_addr"), addr))
    check(t.get("nccl_id_port") == id_port, "%s: nccl_id_port %s, want %s" % (name, t.get("nccl_id_port"), id_port))
    # multi-node: the network NCCL chose, from its own log; the NCCL stand-in logs nothing
    if nodes > 1:
        check(t.get("network") == {"transport": "unknown", "nccl_net": None},
              "%s: network %s, want unknown from the stand-in" % (name, t.get("network")))
    else:
        check("network" not in t, "%s: a network on one node: %s" % (name, t.get("network")))
    check(doc["workload"]["global_batch_size"] == 8 * world,
          "%s: global batch %s, want %d" % (name, doc["workload"]["global_batch_size"], 8 * world))


with tempfile.TemporaryDirectory() as tmp:
    have_torchrun = os.path.exists(TORCHRUN)
    check(have_torchrun, "torchrun not found (scripts/bootstrap.sh --test-deps installs python3-torch)")

    # ---- real torchrun, static rendezvous (its default): the agent's store holds MASTER_PORT ----
    def torchrun_static(port):
        args = ["--nnodes", "1", "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port", str(port)]
        probe, said = torchrun_probe(args, tmp, "torchrun-static")
        if probe:
            check(probe["run_id"] is not None, "torchrun-static: torchrun set no TORCHELASTIC_RUN_ID: %s" % probe)
            check(probe["port"] == port, "torchrun-static: MASTER_PORT %s, want %d" % (probe["port"], port))
            doc, more = run_torchrun("torchrun-static", args, tmp)
            said += more
            if doc:
                check_topology("torchrun-static", doc, "torchrun", 2, 1, "127.0.0.1",
                               port + 1 if probe["listening"] else port)
        return said

    # ---- real torchrun --standalone: c10d; whether its store holds MASTER_PORT is torch's choice ----
    def torchrun_standalone(_):   # torchrun picks the port, the same way free_port() does
        args = ["--standalone", "--nproc_per_node", "2"]
        probe, said = torchrun_probe(args, tmp, "torchrun-standalone")
        doc, more = run_torchrun("torchrun-standalone", args, tmp) if probe else (None, [])
        if doc:
            t = doc["topology"]
            # torchrun picks MASTER_PORT itself here: the id is on it when the probe found it free
            # (then nothing of torchrun's listens there), on the next one when its store holds it
            mp = t.get("master_port")
            check(isinstance(mp, int), "torchrun-standalone: no master_port: %s" % t)
            if isinstance(mp, int):
                check_topology("torchrun-standalone", doc, "torchrun", 2, 1, t.get("master_addr"),
                               mp + 1 if probe["listening"] else mp)
        return said + more

    if have_torchrun:
        on_free_port(torchrun_static)
        on_free_port(torchrun_standalone)

    def pod_per_process(name, kind, envs_of):
        """One process per pod, started directly with ENVS_OF(port): MASTER_PORT is the one port such
        a job declares, so MASTER_PORT+1 is held by a listener of this test's."""
        def case(port):
            squat, why = held_next(name, port)
            if not squat:
                return [why]
            with squat:
                doc, said = run_direct(name, envs_of(port), tmp)
            if doc:
                check_topology(name, doc, kind, 2, 2, "127.0.0.1", port)
            return said
        on_free_port(case)

    # ---- a PyTorchJob / Volcano pod per process: WORLD_SIZE, RANK, MASTER_ADDR/PORT ----
    pod_per_process("pytorchjob", "env", lambda port: [
        dict(WORLD_SIZE="2", RANK=str(r), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), PYTHONUNBUFFERED="0")
        for r in range(2)])
    # ---- Kubeflow Trainer v2, the container's command started directly: PET_* only ----
    pod_per_process("trainer-v2", "kubeflow-trainer", lambda port: [
        dict(PET_NNODES="2", PET_NODE_RANK=str(r), PET_NPROC_PER_NODE="1", PET_MASTER_ADDR="127.0.0.1",
             PET_MASTER_PORT=str(port)) for r in range(2)])

print("measure_launchers: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
