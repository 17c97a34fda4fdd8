#!/usr/bin/env python3
"""measure under a real Slurm: Debian's munge, slurmctld and slurmd, started here on loopback with a
generated slurm.conf (one node named after this host, 2 CPUs, its own ports, state, spool and
logs in a temporary directory) and stopped at the end; `srun --ntasks=2` then starts measure on
the multi-process path of the CUDA module simulated on the CPU (libinstbench-cuda-sim.so), the
NCCL id handed out on MASTER_PORT.

- `--dry-run` in both tasks: each process's global rank, world size and rendezvous kind are
  compared with the SLURM_PROCID and SLURM_NTASKS that Slurm gave that very task (each task
  writes its own environment before exec'ing measure);
- a real run: both tasks exit 0 (srun's status is the worst task's), and rank 0's result says
  rendezvous slurm, world size SLURM_NTASKS, nodes SLURM_NNODES, the node rank SLURM_NODEID, the
  master the first host of the step's SLURM_STEP_NODELIST (which srun sets), validated against the
  schema;
- the sbatch script docs/usage.md shows, taken from the page as it stands and submitted with
  `sbatch --wait` (its node and task counts overridden on the command line to fit this one-node
  cluster), writes its result where the page says, a 2-rank slurm run.

Needs root (slurmd starts job steps as the submitting user) and the Debian packages slurmctld,
slurmd, slurm-client and munge (scripts/bootstrap.sh --test-deps installs them); without root it is skipped
(exit 77).

Usage: measure_slurm.py INSTBENCH SIM_MODULE SCHEMA USAGE_MD"""
import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import jsonschema

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures, require, reserved_port  # noqa: E402

BIN, MODULE, SCHEMA, USAGE_MD = (os.path.abspath(a) for a in sys.argv[1:5])
TINY = ["--backend", "cuda", "--model", "vit_tiny_patch16_224", "--image-size", "32", "--patch-size", "16",
        "--embed-dim", "32", "--depth", "1", "--heads", "2", "--classes", "10", "--batch-size", "8",
        "--data", "device", "--steps", "2", "--warmup", "1", "--checkpoint", "off", "--ranks", "1",
        "--format", "json"]

if os.geteuid() != 0:
    print("measure_slurm: skipped: slurmd must run as root to start job steps")
    sys.exit(77)
NEEDED = {"munged": "munge", "mungekey": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd",
          "srun": "slurm-client", "sinfo": "slurm-client"}
missing = sorted({pkg for exe, pkg in NEEDED.items()
                  if not shutil.which(exe) and not os.path.exists("/usr/sbin/" + exe)})
require(not missing, "Debian packages missing: %s (scripts/bootstrap.sh --test-deps installs them)" % " ".join(missing))


def exe(name):
    return shutil.which(name) or "/usr/sbin/" + name


DAEMONS = []   # Popen of every daemon started here, stopped in reverse order at exit


def stop_daemons():
    for p in reversed(DAEMONS):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


atexit.register(stop_daemons)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))   # ctest's timeout: still stop the daemons

tmp = tempfile.mkdtemp(prefix="instbench-slurm-")
atexit.register(shutil.rmtree, tmp, True)
os.chmod(tmp, 0o755)   # munged refuses a socket directory others cannot traverse
host = socket.gethostname().split(".")[0]
# the daemons and measure bind these long after this point, and their start is not worth a retry
(_, ctld_port), (_, slurmd_port), (_, master_port) = RESERVED = [reserved_port() for _ in range(3)]

# ---- munge: a key of our own, its socket in tmp ---------------------------------------------------
mdir = os.path.join(tmp, "munge")
os.mkdir(mdir, 0o700)
os.chmod(mdir, 0o755)
key, sock = os.path.join(mdir, "munge.key"), os.path.join(mdir, "munge.sock")
subprocess.run([exe("mungekey"), "--create", "--keyfile", key], check=True, capture_output=True)
os.chmod(key, 0o600)
DAEMONS.append(subprocess.Popen([exe("munged"), "-F", "--force", "--key-file", key, "--socket", sock,
                                 "--pid-file", os.path.join(mdir, "pid"), "--log-file", os.path.join(mdir, "log"),
                                 "--seed-file", os.path.join(mdir, "seed")],
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "munged.err"), "w")))
deadline = time.time() + 20
while not os.path.exists(sock) and time.time() < deadline and DAEMONS[-1].poll() is None:
    time.sleep(0.1)
require(os.path.exists(sock), "munged did not start: " + open(os.path.join(tmp, "munged.err")).read()[-500:])

# ---- slurm.conf: one node (this host, on loopback), one partition ---------------------------------
for d in ("state", "spool"):
    os.mkdir(os.path.join(tmp, d))
conf = os.path.join(tmp, "slurm.conf")
with open(conf, "w") as f:
    f.write("\n".join([
        "ClusterName=instbench",
        "SlurmctldHost=%s(127.0.0.1)" % host,
        "SlurmctldPort=%d" % ctld_port,
        "SlurmdPort=%d" % slurmd_port,
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CredType=cred/munge", "AuthInfo=socket=%s" % sock,
        "StateSaveLocation=%s/state" % tmp, "SlurmdSpoolDir=%s/spool" % tmp,
        "SlurmctldPidFile=%s/slurmctld.pid" % tmp, "SlurmdPidFile=%s/slurmd.pid" % tmp,
        "SlurmctldLogFile=%s/slurmctld.log" % tmp, "SlurmdLogFile=%s/slurmd.log" % tmp,
        # no cgroups: a container's are not ours to configure
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none", "MpiDefault=none",
        "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        "ReturnToService=2",
        # the node as configured, whatever this machine's core count (2 tasks need 2 CPUs)
        "SlurmdParameters=config_overrides",
        "NodeName=%s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN" % host,
        "PartitionName=bench Nodes=%s Default=YES MaxTime=INFINITE State=UP" % host, ""]))
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PET_", "TORCHELASTIC_")) and k not in (
    "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
ENV.update(SLURM_CONF=conf, INSTBENCH_CUDA_MODULE=os.path.abspath(MODULE), AWS_EC2_METADATA_DISABLED="true",
           NO_COLOR="1", CUDASIM_SEED="1", MASTER_PORT=str(master_port))
DAEMONS.append(subprocess.Popen([exe("slurmctld"), "-D", "-i", "-f", conf], env=ENV, stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(tmp, "slurmctld.err"), "w")))
DAEMONS.append(subprocess.Popen([exe("slurmd"), "-D", "-f", conf, "-N", host], env=ENV, stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(tmp, "slurmd.err"), "w")))


def logs():
    out = []
    for name in ("slurmctld.log", "slurmd.log", "slurmctld.err", "slurmd.err"):
        try:
            out.append("%s: %s" % (name, open(os.path.join(tmp, name)).read()[-800:]))
        except OSError:
            pass
    return "\n".join(out)


state = ""
deadline = time.time() + 60
while time.time() < deadline:
    p = subprocess.run([exe("sinfo"), "-h", "-N", "-o", "%t"], env=ENV, capture_output=True, text=True)
    state = p.stdout.strip()
    if state in ("idle", "mix", "alloc"):
        break
    require(all(d.poll() is None for d in DAEMONS), "a Slurm daemon exited:\n" + logs())
    time.sleep(0.5)
require(state == "idle", "the node never became idle (sinfo: %r):\n%s" % (state, logs()))

# The master is the first host of the node list; where this host's name does not resolve (a
# container), MASTER_ADDR says where it is, as instbench documents for such clusters.
try:
    socket.getaddrinfo(host, None)
except OSError:
    ENV["MASTER_ADDR"] = "127.0.0.1"


def srun(tag, args, timeout=600):
    """srun --ntasks=2 over a wrapper that saves each task's environment as Slurm set it."""
    wrapper = 'env > "%s/%s.env.$SLURM_PROCID" && exec "$@"' % (tmp, tag)
    cmd = [exe("srun"), "--ntasks=2", "--kill-on-bad-exit=1", "--output=%s/%s.out.%%t" % (tmp, tag),
           "--error=%s/%s.err.%%t" % (tmp, tag), "bash", "-c", wrapper, "bash", BIN, "measure", *TINY, *args]
    p = subprocess.run(cmd, env=ENV, cwd=tmp, capture_output=True, text=True, timeout=timeout)
    tasks = []
    for t in range(2):
        env = {}
        try:
            for line in open("%s/%s.env.%d" % (tmp, tag, t)):
                k, _, v = line.rstrip("\n").partition("=")
                env[k] = v
        except OSError:
            pass
        out = open("%s/%s.out.%d" % (tmp, tag, t)).read() if os.path.exists("%s/%s.out.%d" % (tmp, tag, t)) else ""
        err = open("%s/%s.err.%d" % (tmp, tag, t)).read() if os.path.exists("%s/%s.err.%d" % (tmp, tag, t)) else ""
        tasks.append((env, out, err))
    return p, tasks


# ---- both tasks' own view, against the variables Slurm gave each ---------------------------------
p, tasks = srun("dry", ["--dry-run"])
check(p.returncode == 0, "srun --dry-run: exit %s: %s %s" % (p.returncode, p.stderr[-500:],
                                                             " | ".join(t[2][-400:] for t in tasks)))
seen = set()
for env, out, err in tasks:
    if not check("SLURM_PROCID" in env, "a task saved no Slurm environment: %s" % err[-300:]):
        continue
    want = "global rank %s of %s" % (env["SLURM_PROCID"], env["SLURM_NTASKS"])
    check(want in out, "task %s: want %r in: %s" % (env["SLURM_PROCID"], want, out[-500:]))
    check("(slurm rendezvous)" in out, "task %s: not the slurm rendezvous: %s" % (env["SLURM_PROCID"], out[-500:]))
    check(":%d" % master_port in out, "task %s: the id is not on MASTER_PORT %d: %s" % (env["SLURM_PROCID"],
                                                                                       master_port, out[-500:]))
    seen.add(env["SLURM_PROCID"])
check(seen == {"0", "1"}, "Slurm's task ids: %s" % sorted(seen))

# ---- the real run -----------------------------------------------------------------------------------
out_path = os.path.join(tmp, "result.json")
p, tasks = srun("run", ["--output", out_path])
check(p.returncode == 0, "srun measure: exit %s: %s %s" % (p.returncode, p.stderr[-500:],
                                                           " | ".join(t[2][-600:] for t in tasks)))
if check(os.path.exists(out_path), "rank 0 wrote no result"):
    doc = json.load(open(out_path))
    try:
        jsonschema.validate(doc, json.load(open(SCHEMA)))
    except jsonschema.ValidationError as e:
        check(False, "result does not match the schema: %s" % e.message)
    t = doc["topology"]
    env0 = next((e for e, _, _ in tasks if e.get("SLURM_PROCID") == "0"), {})
    if check(env0, "task 0 saved no environment"):
        # srun sets the step's own list (src/common/env.c, env_array_for_step), which instbench reads
        # before the allocation's SLURM_JOB_NODELIST (a step on part of the allocation); on this
        # one-node cluster both name this host
        check(env0.get("SLURM_STEP_NODELIST"), "srun set no SLURM_STEP_NODELIST: %s" % sorted(env0))
        nodelist_first = (env0.get("SLURM_STEP_NODELIST") or env0["SLURM_JOB_NODELIST"]).split(",")[0].split("[")[0]
        check(t["rendezvous"] == "slurm", "rendezvous %s" % t["rendezvous"])
        check(t["world_size"] == int(env0["SLURM_NTASKS"]), "world %s, SLURM_NTASKS %s" % (t["world_size"],
                                                                                            env0["SLURM_NTASKS"]))
        check(t["nodes"] == int(env0["SLURM_NNODES"]), "nodes %s, SLURM_NNODES %s" % (t["nodes"], env0["SLURM_NNODES"]))
        check(t["node_rank"] == int(env0["SLURM_NODEID"]), "node rank %s, SLURM_NODEID %s" % (t["node_rank"],
                                                                                              env0["SLURM_NODEID"]))
        check(t.get("master_addr") == (ENV.get("MASTER_ADDR") or nodelist_first),
              "master %s, node list %s" % (t.get("master_addr"), env0["SLURM_JOB_NODELIST"]))
        check(nodelist_first == host, "node list %s, this host %s" % (env0["SLURM_JOB_NODELIST"], host))
        check(t.get("nccl_id_port") == master_port, "id port %s, MASTER_PORT %d" % (t.get("nccl_id_port"), master_port))
        check(doc["workload"]["global_batch_size"] == 8 * int(env0["SLURM_NTASKS"]),
              "global batch %s" % doc["workload"]["global_batch_size"])

# ---- the sbatch script of docs/usage.md, as a user would submit it ---------------------------------
blocks = [b for b in re.findall(r"```bash\n(.*?)```", open(USAGE_MD).read(), re.S) if "#SBATCH" in b]
if check(len(blocks) == 1, "docs/usage.md: %d bash blocks with #SBATCH, want 1" % len(blocks)):
    job_dir = os.path.join(tmp, "job")
    bin_dir = os.path.join(tmp, "bin")
    os.mkdir(job_dir)
    os.mkdir(bin_dir)
    os.symlink(BIN, os.path.join(bin_dir, "instbench"))
    script = os.path.join(job_dir, "measure.sbatch")
    with open(script, "w") as f:
        f.write(blocks[0])
    env = dict(ENV, PATH=bin_dir + os.pathsep + ENV.get("PATH", "/usr/bin:/bin"))
    p = subprocess.run([exe("sbatch"), "--wait", "--parsable", "--nodes=1", "--ntasks-per-node=2", script, *TINY],
                       env=env, cwd=job_dir, capture_output=True, text=True, timeout=600)
    job = p.stdout.strip().split(";")[0]
    log = os.path.join(job_dir, "instbench-%s.log" % job)
    check(p.returncode == 0, "sbatch --wait: exit %s: %s %s" % (p.returncode, p.stderr[-400:],
                                                                open(log).read()[-800:] if os.path.exists(log) else ""))
    res = os.path.join(job_dir, "results", "1n-%s.json" % job)
    if check(os.path.exists(res), "the sbatch script's result %s is missing: %s" % (res, os.listdir(job_dir))):
        t = json.load(open(res))["topology"]
        check(t["rendezvous"] == "slurm" and t["world_size"] == 2 and t.get("nccl_id_port") == master_port,
              "sbatch script: topology %s" % t)

stop_daemons()
check(all(d.poll() is not None for d in DAEMONS), "a daemon outlived the test")
print("measure_slurm: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
