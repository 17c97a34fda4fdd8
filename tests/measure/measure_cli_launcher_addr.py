"""Issue 39: rank 0's address as launchers give it (MASTER_ADDR, PET_MASTER_ADDR, the first host of
SLURM_JOB_NODELIST, --master-addr) is a host name (RFC 1123) or an IP literal, or the run is refused
with exit 2 before anything is recorded; the refusal shows the value escaped (an OSC 52 clipboard
write and a clear-screen never reach the terminal).  Valid names and addresses (Python's ipaddress
and RFC 1123's label rule say which) are recorded in topology.master_addr as given."""
import ipaddress
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from measure_common import TINY, check, finish, run  # noqa: E402

OSC = "a b\x1b]52;c;aGk=\x07\x1b[2J"
ENV = {"WORLD_SIZE": "1", "RANK": "0", "MASTER_PORT": "29555"}
SLURM = {"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_NNODES": "1", "SLURM_NODEID": "0", "SLURM_LOCALID": "0"}


def refused(p, what):
    check(p.returncode == 2 and p.stdout == "" and "\x1b" not in p.stderr and "\x07" not in p.stderr and
          "\u009b" not in p.stderr and "host name" in p.stderr,
          f"{what}: exit 2, refused, shown escaped: {p.returncode} {p.stdout[-200:]!r} {p.stderr[-300:]!r}")


for value in (OSC, "a b", "999.999.999.999", "-lead", "x\u009b2J", "host_name", "a..b"):
    refused(run(TINY + ["--dry-run"], MASTER_ADDR=value, **ENV), f"MASTER_ADDR={value!r}")
    refused(run(TINY + ["--dry-run"], PET_NNODES="1", PET_NODE_RANK="0", PET_MASTER_ADDR=value,
                PET_MASTER_PORT="29400"), f"PET_MASTER_ADDR={value!r}")
    refused(run(TINY + ["--dry-run", "--nnodes", "1", "--master-addr", value]), f"--master-addr {value!r}")
for nodelist in (OSC + "[01-02]", "x\u009b2J,b", "a b"):
    refused(run(TINY + ["--dry-run"], SLURM_JOB_NODELIST=nodelist, **SLURM), f"SLURM_JOB_NODELIST={nodelist!r}")

# Names and literals a launcher really gives: accepted and shown as given.
for value in ("10.1.2.3", "head-0.cluster.local", "ip-10-0-0-7", "::1", "fe80::1"):
    if ":" in value or value[0].isdigit():
        ipaddress.ip_address(value)   # the reference agrees it is an address
    p = run(TINY + ["--dry-run"], MASTER_ADDR=value, **ENV)
    check(p.returncode == 0 and value in p.stdout + p.stderr, f"MASTER_ADDR={value}: {p.returncode} {p.stderr[-300:]}")
p = run(TINY + ["--dry-run"], SLURM_JOB_NODELIST="gpu[03-05],cpu1", **SLURM)
check(p.returncode == 0 and "gpu03" in p.stdout + p.stderr, f"Slurm gpu[03-05]: {p.returncode} {p.stderr[-300:]}")
finish("measure_cli_launcher_addr")
