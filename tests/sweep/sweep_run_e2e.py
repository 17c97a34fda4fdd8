#!/usr/bin/python3
"""The issue's bar, end to end against local endpoints: `sweep run --candidates
g5.xlarge:spot,4xg5.xlarge:spot,g5.12xlarge:on-demand,2xp4d.24xlarge:on-demand` on moto (EC2; signatures checked;
placement groups and S3, which moto cannot serve presigned, through tests/sweep/moto_sweep.py) with INST's instance simulator
(tests/sweep/instance_sim.py) playing every instance: it runs the real user data each instance was
given, in a sandbox with its own fake IMDS, against moto's S3 through the presigned URLs (the
built binary stands in for the build from the archive, which is still downloaded and checked;
tests/sweep/sweep_userdata_archive.py builds from it), and terminates the instance in moto when
the script powers off.
Checked, with boto3 and Python's json as the references: eight instances launched, four results
delivered and downloaded (each one's type and node count as the candidate asked; the 4-node one
its nodes ranks 0..3 of 4 after reading node 0's address from the rendezvous key; the p4d nodes,
launched with EFA interfaces, reached S3 only once the sweep associated their Elastic IPs and found
their EFA devices and aws-ofi-nccl in a fake /), the ranking holding exactly those four with their
measured samples/s, and zero instances, placement groups and Elastic IPs left.
Usage: sweep_run_e2e.py INSTBENCH"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from instance_sim import InstanceSim, fake_efa_root   # noqa: E402
from moto_sweep import MotoSweep   # noqa: E402
from testlib import check, failures   # noqa: E402

BIN = os.path.abspath(sys.argv[1])
BUCKET, REGION = "sweep-e2e", "us-east-1"
SPECS = ["g5.xlarge:spot", "4xg5.xlarge:spot", "g5.12xlarge:on-demand", "2xp4d.24xlarge:on-demand"]
WANT = {"g5.xlarge:spot": ("g5.xlarge", 1), "4xg5.xlarge:spot": ("g5.xlarge", 4), "g5.12xlarge:on-demand": ("g5.12xlarge", 1),
        "2xp4d.24xlarge:on-demand": ("p4d.24xlarge", 2)}
# A measurement that takes seconds on a CPU: the instances here are sandboxes, not GPUs.
TINY = ["--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "32",
        "--patch-size", "8", "--embed-dim", "64", "--heads", "2", "--classes", "10", "--batch-size", "4",
        "--steps", "2", "--warmup", "0"]

# The nodes run the built binary (INSTBENCH_USERDATA_PREBUILT; the archive is still downloaded and
# checked).  A multi-node measurement cannot run here: the CPU backend averages gradients only
# between ranks of one process, and the GPU backends need GPUs.  So for `measure --nnodes N` this
# wrapper records each node's topology flags, has node 0 run the real single-process measurement
# and writes it with the topology the rendezvous gave (N nodes, N ranks); the other nodes succeed
# without a result, as their real measure does (node 0 delivers).  Everything else is the real binary.
WRAPPER = r"""#!/bin/bash
real=%(bin)s
if [[ $1 == measure && " $* " == *" --nnodes "* ]]; then
    args=() nnodes=1 rank=0 out=
    shift
    while (($#)); do
        case $1 in
        --nnodes) nnodes=$2; shift 2 ;;
        --node-rank) rank=$2; shift 2 ;;
        --master-addr|--master-port) shift 2 ;;
        --output) out=$2; args+=("$1" "$2"); shift 2 ;;
        *) args+=("$1"); shift ;;
        esac
    done
    echo "node-rank $rank of $nnodes" >>"%(log)s"
    ((rank == 0)) || exit 0
    "$real" measure "${args[@]}" || exit
    python3 - "$out" "$nnodes" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
doc = json.load(open(path))
doc["topology"].update(nodes=n, world_size=n * doc["topology"]["local_world_size"])
doc["instance"]["count"] = n
doc["workload"]["global_batch_size"] = doc["workload"]["batch_size_per_device"] * doc["topology"]["world_size"]
json.dump(doc, open(path, "w"))
PY
    exit
fi
exec "$real" "$@"
"""

home = tempfile.mkdtemp(prefix="sweep-e2e-")
try:
    wrapper, ranks_log = os.path.join(home, "instbench-node"), os.path.join(home, "ranks.log")
    with open(wrapper, "w") as f:
        f.write(WRAPPER % {"bin": BIN, "log": ranks_log})
    os.chmod(wrapper, 0o755)
    # S3 on the fake AWS (signatures checked, presigned URLs served): moto answers those with a 500
    with MotoSweep(s3_buckets=[BUCKET]) as m:
        ami = m.ec2("out = [i['ImageId'] for i in client.describe_images(Owners=['amazon'])['Images']"
                    " if i.get('Architecture') == 'x86_64'][0]")
        env = m.env({"PATH": os.environ.get("PATH", ""), "HOME": home})
        env.update({"XDG_STATE_HOME": os.path.join(home, "state"), "XDG_CACHE_HOME": os.path.join(home, "cache"),
                    "INSTBENCH_SWEEP_POLL_S": "0.5", "INSTBENCH_AWS_BACKOFF_BASE": "0.01", "NO_COLOR": "1"})
        # the p4d nodes: EFA's devices, libfabric and aws-ofi-nccl as an EFA instance has them (a fake /
        # their user data checks; the others' have no EFA to check), and no way out to S3 until the
        # sweep associates their Elastic IPs (eip_wait: AWS gives a multi-interface instance no public IPv4)
        root = fake_efa_root(os.path.join(home, "efa-root"), efa=4)
        with InstanceSim(m.moto.url, m.moto.access_key, m.moto.secret_key, region=REGION, prebuilt=wrapper,
                         workdir=os.environ.get("SIMDIR"), keep=bool(os.environ.get("SIMDIR")), eip_wait=True,
                         env={"INSTBENCH_USERDATA_ROOT": root}) as sim:
            r = subprocess.run([BIN, "sweep", "run", "--region", REGION, "--s3", "s3://%s/sweeps/" % BUCKET,
                                "--ami", ami, "--candidates", ",".join(SPECS), "--max-minutes", "10",
                                "--max-cost", "100", "--yes", "--format", "json", "--"] + TINY,
                               cwd=home, env=env, capture_output=True, text=True, timeout=540)
            sim_errors = list(sim.errors)
            logs = {iid: n.sandbox.log_text() for iid, n in sim.nodes.items()}
        check(r.returncode == 0, "exit 0: %d\n%s" % (r.returncode, r.stderr[-4000:]))
        check(not sim_errors, "the simulator ran every instance: %r" % sim_errors)
        ids = [os.path.basename(p)[:-5] for p in glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json"))]
        sid = ids[0] if len(ids) == 1 else None
        check(sid is not None, "one state file: %r" % ids)
        insts = m.ec2("out = [(i['InstanceId'], i['State']['Name'], {t['Key']: t['Value'] for t in i.get('Tags', [])})"
                      " for r in client.describe_instances()['Reservations'] for i in r['Instances']]")
        mine = [i for i in insts if i[2].get("instbench:sweep") == sid]
        check(len(mine) == 8, "eight instances launched: %d" % len(mine))
        # EFA: node 0 of the p4d candidate waited for its Elastic IP, then found its 4 EFA devices and
        # the plugin (node 1 may be terminated mid-way: the candidate ends once node 0 delivers)
        p4d = m.ec2("out = [(i['InstanceId'], i['AmiLaunchIndex']) for r in client.describe_instances()['Reservations']"
                    " for i in r['Instances'] if i['InstanceType'] == 'p4d.24xlarge']")
        for iid, idx in p4d:
            log = logs.get(iid, "")
            # ("no route to S3: waiting" only when the script asked before the sweep associated the address)
            check(idx != 0 or ("S3 reachable (waited" in log and "EFA: 4 device(s)" in log and "EFA: aws-ofi-nccl" in log),
                  "p4d node 0 %s: waited for its address, then checked EFA: %s" % (iid, log[-1500:]))
        check(len(p4d) == 2 and m.ec2("out = client.describe_addresses()['Addresses']") == [],
              "the two p4d nodes' Elastic IPs released: %r" % p4d)
        check(all(state == "terminated" for _, state, _ in insts), "zero instances left: %r" % insts)
        check(m.groups() == {}, "zero placement groups left: %r" % m.groups())
        check(m.fake.stats()["by_operation"].get("CreatePlacementGroup") == 2, "the multi-node candidates' groups were created")

        # the results, read independently
        results = {}
        for path in glob.glob(os.path.join(home, "instbench-results", "sweep-%s" % sid, "*.json")):
            with open(path) as f:
                doc = json.load(f)
            results[(doc["instance"]["type"], doc["topology"]["nodes"])] = doc["measurement"]["samples_per_second"]
        check(set(results) == set(WANT.values()), "four results, one per candidate: %r" % sorted(results))
        # the rendezvous: each of the 4 nodes read node 0's private address from the key the sweep PUT
        four = m.ec2("out = [(i['InstanceId'], i['AmiLaunchIndex'], i['PrivateIpAddress']) for r in "
                     "client.describe_instances()['Reservations'] for i in r['Instances'] if {'Key': "
                     "'instbench:candidate', 'Value': '4xg5.xlarge:spot'} in i.get('Tags', [])]")
        ip0 = [ip for _, idx, ip in four if idx == 0]
        check(len(four) == 4 and len(ip0) == 1 and all("node 0 is at %s" % ip0[0] in logs.get(iid, "") for iid, _, _ in four),
              "every node of 4xg5.xlarge found node 0 at its private address: %r" % four)
        ranks = sorted(open(ranks_log).read().splitlines()) if os.path.exists(ranks_log) else []
        # the p4d candidate's node 1 may still be waiting for its address when node 0 delivers and the
        # candidate's instances are terminated: its rank is not required
        check(sorted(set(ranks) - {"node-rank 1 of 2"}) == sorted(["node-rank %d of 4" % k for k in range(4)] +
                                                                   ["node-rank 0 of 2"]),
              "measure ran as ranks 0..3 of 4 and 0 of 2: %r" % ranks)
        try:
            rank = json.loads(r.stdout)
        except ValueError:
            rank = None
        check(isinstance(rank, dict), "the ranking is JSON: %r" % r.stdout[:300])
        rows = (rank or {}).get("rows", []) + (rank or {}).get("unpriced", [])
        seen = {(row.get("instance_type"), row.get("nodes")): row.get("samples_per_second") for row in rows}
        for key, sps in results.items():
            check(key in seen and abs(seen[key] - sps) <= 1e-9 * sps, "ranked %r at its measured %r: %r" % (key, sps, seen.get(key)))
        check(set(seen) == set(results), "the ranking holds exactly the sweep's four configurations: %r" % sorted(seen))
finally:
    shutil.rmtree(home, ignore_errors=True)
sys.exit(1 if failures else 0)
