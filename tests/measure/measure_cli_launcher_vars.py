"""A launcher's variables that say too little, or two launchers' at once, are said as such:
- a rank without the count it is a rank of (RANK=1 and no WORLD_SIZE, LOCAL_RANK=1 and no
  LOCAL_WORLD_SIZE, SLURM_PROCID=1 and no SLURM_NTASKS, SLURM_NODEID=1 and no SLURM_NNODES), and
  WORLD_SIZE=2 without RANK: exit 2 before anything runs, naming the variable that is missing
  (not "rank 1 is outside [0, 1)");
- torchrun's variables and Slurm's both set (`srun torchrun`): torchrun's are followed, as the
  docs say, and one note on stderr names Slurm's as ignored; so are the launcher variables under
  --nnodes/--node-rank flags; with one launcher's alone there is no note."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from measure_common import TINY, check, finish, run  # noqa: E402

# every launcher variable unset unless a case sets it
CLEAN = {k: None for k in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NNODES",
                           "NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
                           "TORCHELASTIC_USE_AGENT_STORE", "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE",
                           "PET_MASTER_ADDR", "PET_MASTER_PORT", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NNODES",
                           "SLURM_NODEID", "SLURM_LOCALID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_NUM_NODES",
                           "SLURM_NTASKS_PER_NODE", "SLURM_JOB_NODELIST", "SLURM_STEP_NODELIST", "SLURM_NODELIST")}


def dry(extra=(), **envs):
    return run(TINY + ["--dry-run", *extra], **dict(CLEAN, **envs))


# (what is set, the variable missing)
for given, missing in (({"RANK": "1"}, "WORLD_SIZE"),
                       ({"WORLD_SIZE": "2"}, "RANK"),
                       ({"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "1"}, "LOCAL_WORLD_SIZE"),
                       ({"SLURM_PROCID": "1"}, "SLURM_NTASKS"),
                       ({"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_NODEID": "1"}, "SLURM_NNODES")):
    p = dry(**given)
    msg = p.stderr.strip()
    check(p.returncode == 2 and missing in msg and len(msg.splitlines()) == 1,
          f"{given}: exit {p.returncode}, want 2 naming {missing}: {msg[-300:]!r}")
# a rank 0 alone is one process, as before
p = dry(RANK="0")
check(p.returncode == 0, f"RANK=0 alone: exit {p.returncode}: {p.stderr[-300:]!r}")


def notes(p):
    return [line for line in p.stderr.splitlines() if "note" in line]


TORCHRUN = {"WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29511", "TORCHELASTIC_RUN_ID": "t1"}
SLURM = {"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_NNODES": "1", "SLURM_NODEID": "0", "SLURM_LOCALID": "0",
         "SLURM_JOB_NODELIST": "localhost"}
p = dry(**TORCHRUN, **SLURM)
n = notes(p)
check(p.returncode == 0 and "torchrun rendezvous" in p.stdout and len(n) == 1 and "SLURM" in n[0]
      and "WORLD_SIZE" in n[0], f"torchrun and Slurm: exit {p.returncode}, notes {n}, {p.stdout[-300:]!r}")
p = dry(["--nnodes", "1", "--node-rank", "0"], **TORCHRUN)
n = notes(p)
check(p.returncode == 0 and "flags rendezvous" in p.stdout and len(n) == 1 and "WORLD_SIZE" in n[0],
      f"flags under torchrun: exit {p.returncode}, notes {n}")
for name, envs in (("torchrun", TORCHRUN), ("Slurm", SLURM)):
    p = dry(**envs)
    check(p.returncode == 0 and not notes(p), f"{name} alone: exit {p.returncode}, notes {notes(p)}")
finish("measure_cli_launcher_vars")
