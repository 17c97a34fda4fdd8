#!/usr/bin/python3
"""`instbench sweep run|cleanup` against moto's server (EC2, S3; every signature checked), with the
placement-group calls moto lacks served by the fake AWS behind a router (tests/sweep/moto_sweep.py).
boto3 (moto's venv) is the independent side: it reads back what the sweep created and left.
  1  --max-cost below the worst case: exit 2, zero instances in moto, no state file;
  2  launch and --max-minutes expiry: one RunInstances per candidate, every node tagged
     instbench:sweep / instbench:candidate (instances and volumes), shutdown behaviour terminate,
     spot only where asked, a cluster placement group for the 2-node candidate (created tagged,
     deleted at the end), the user data holding no secret; "timed out", every instance terminated;
  3  SIGINT and SIGTERM mid-sweep: every instance terminated, exit 130 / 143;
  4  SIGKILL mid-sweep, state file deleted: `sweep cleanup ID` finds the instances by tag and ends
     them; again with `sweep cleanup --all`: zero instances and zero placement groups left;
  5  SIGKILL with the state file kept, `sweep cleanup ID --region us-west-2`: the sweep's own region
     searched too, everything ended, the state file's ends the StateTransitionReason times moto gave.
moto never runs user data, so no result arrives here (tests/sweep/sweep_run_faults.py and the
end-to-end test deliver them).
Usage: sweep_run_moto.py INSTBENCH"""
import base64
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from moto_sweep import MotoSweep, sweep_ids   # noqa: E402
from moto_sweep import start_sweep as start   # noqa: E402
from testlib import check, failures   # noqa: E402
from state_schema import load_state   # noqa: E402

BIN = os.path.abspath(sys.argv[1])
BUCKET, REGION = "sweep-moto", "us-east-1"


def ec2(m, code):
    return m.ec2(code)


INSTANCES = """
out = []
for r in client.describe_instances()['Reservations']:
    for i in r['Instances']:
        tags = {t['Key']: t['Value'] for t in i.get('Tags', [])}
        vols = [m['Ebs']['VolumeId'] for m in i.get('BlockDeviceMappings', []) if 'Ebs' in m]
        out.append({'id': i['InstanceId'], 'state': i['State']['Name'], 'tags': tags, 'type': i['InstanceType'],
                    'spot': i.get('InstanceLifecycle') == 'spot', 'placement': i.get('Placement', {}).get('GroupName', ''),
                    'volumes': vols})
"""


def instances(m, sweep_id=None):
    return [i for i in ec2(m, INSTANCES) if sweep_id is None or i["tags"].get("instbench:sweep") == sweep_id]


def sweep_args(ami, specs, *extra, max_cost="100"):
    return [BIN, "sweep", "run", "--region", REGION, "--s3", "s3://%s/p/" % BUCKET, "--ami", ami,
            "--candidates", ",".join(specs), "--yes", "--max-cost", max_cost] + list(extra)


def wait_running(m, n, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        live = [i for i in instances(m) if i["state"] == "running"]
        if len(live) >= n:
            return live
        time.sleep(0.3)
    return []


def alive(m):
    return [i for i in instances(m) if i["state"] not in ("terminated", "shutting-down")]


with MotoSweep() as m:
    m.moto.create_bucket(BUCKET)
    ami = ec2(m, "out = [i['ImageId'] for i in client.describe_images(Owners=['amazon'])['Images']"
                 " if i.get('Architecture') == 'x86_64'][:1]")[0]
    secret = m.moto.secret_key

    # 1: --max-cost refusal
    home = tempfile.mkdtemp(prefix="sweep-moto-")
    env, p = start(m, home, sweep_args(ami, ["4xg5.12xlarge:on-demand"], max_cost="1"))
    out, err = p.communicate(timeout=120)
    check(p.returncode == 2 and "exceeds --max-cost" in err, "1: refused: %d %s" % (p.returncode, err))
    check(instances(m) == [] and not sweep_ids(home), "1: zero instances, no state file")

    # 2: launch, tags, placement group, --max-minutes, terminate
    specs = ["g5.xlarge:spot", "2xg5.xlarge:on-demand"]
    env, p = start(m, home, sweep_args(ami, specs, "--max-minutes", "0.15"))
    out, err = p.communicate(timeout=300)
    sid = (sweep_ids(home) or [None])[0]
    got = instances(m, sid)
    check(p.returncode == 1 and err.count("timed out") >= 2, "2: timed out: %d %s" % (p.returncode, err[-3000:]))
    check(len(got) == 3 and all(i["state"] == "terminated" for i in got), "2: three instances, all terminated: %r" % got)
    for i in got:
        spec = i["tags"].get("instbench:candidate")
        check(spec in specs and i["spot"] == spec.endswith(":spot"), "2: tags and market: %r" % i)
    if got:
        attr = ec2(m, "out = [client.describe_instance_attribute(InstanceId=i, Attribute=a)"
                      "[a[0].upper() + a[1:]]['Value'] for i in %r for a in ('userData', 'instanceInitiatedShutdownBehavior')]"
                   % [i["id"] for i in got])
        datas, behaviours = attr[0::2], attr[1::2]
        check(set(behaviours) == {"terminate"}, "2: InstanceInitiatedShutdownBehavior: %r" % behaviours)
        texts = [base64.b64decode(d).decode("utf-8", "replace") for d in datas]
        check(all(t.startswith("#!") and secret not in t for t in texts), "2: user data present, no secret in it")
    st = load_state(home, sid) if sid else {}
    pgs = [c["placement_group"] for c in st.get("candidates", []) if c["placement_group"]]
    asked = [(l.get("MinCount"), l.get("Placement.GroupName")) for l in m.launches]
    check(len(pgs) == 1 and sorted(asked, key=str) == sorted([("1", None), ("2", pgs[0])], key=str),
          "2: one RunInstances per candidate, the 2 nodes in the state's placement group: %r %r" % (asked, pgs))
    dry = sorted(l.get("MinCount") for l in m.dry_runs)
    check(dry == ["1", "2"], "2: one RunInstances DryRun per candidate before the launches: %r" % dry)
    check(m.groups() == {}, "2: no placement group left: %r" % m.groups())
    check(m.fake.stats()["by_operation"].get("CreatePlacementGroup") == 1, "2: one group created")
    check(st.get("phase") == "done", "2: state done: %r" % st.get("phase"))
    shutil.rmtree(home, ignore_errors=True)

    # 3: SIGINT / SIGTERM mid-sweep
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        home = tempfile.mkdtemp(prefix="sweep-moto-")
        env, p = start(m, home, sweep_args(ami, specs))
        check(len(wait_running(m, 3)) == 3, "the sweep's three instances run")
        p.send_signal(sig)
        out, err = p.communicate(timeout=300)
        sid = (sweep_ids(home) or [None])[0]
        check(p.returncode == code, "3: %s: exit %d: %d %s" % (sig.name, code, p.returncode, err[-2000:]))
        check(len(instances(m, sid)) == 3 and not alive(m), "3: %s: everything terminated: %r" % (sig.name, alive(m)))
        check(m.groups() == {}, "3: %s: no placement group left: %r" % (sig.name, m.groups()))
        shutil.rmtree(home, ignore_errors=True)

    # 4: SIGKILL, the state file gone, cleanup by tag (ID, then --all)
    for how in ("id", "all"):
        home = tempfile.mkdtemp(prefix="sweep-moto-")
        env, p = start(m, home, sweep_args(ami, specs))
        check(len(wait_running(m, 3)) == 3, "the sweep's three instances run")
        p.kill()
        p.communicate()
        sid = (sweep_ids(home) or [None])[0]
        check(len(alive(m)) == 3 and len(m.groups()) == 1, "4: left behind by SIGKILL: %r %r" % (alive(m), m.groups()))
        for f in glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json")):
            os.remove(f)
        argv = [BIN, "sweep", "cleanup"] + ([sid] if how == "id" else ["--all", "--region", REGION])
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "4: cleanup %s: %d %s" % (how, r.returncode, r.stderr[-2000:]))
        check(not alive(m) and m.groups() == {}, "4: cleanup %s: zero instances and placement groups: %r %r" % (
            how, alive(m), m.groups()))
        shutil.rmtree(home, ignore_errors=True)

    # 5: SIGKILL with the state file kept, then `sweep cleanup ID --region us-west-2` (issue 33):
    # the sweep ran in us-east-1, so it is looked for there too; every instance ends, and the state
    # file records the end moto names in StateTransitionReason, not the time cleanup looked
    home = tempfile.mkdtemp(prefix="sweep-moto-")
    env, p = start(m, home, sweep_args(ami, specs))
    check(len(wait_running(m, 3)) == 3, "the sweep's three instances run")
    p.kill()
    p.communicate()
    sid = (sweep_ids(home) or [None])[0]
    r = subprocess.run([BIN, "sweep", "cleanup", sid, "--region", "us-west-2"], env=env, capture_output=True, text=True,
                       timeout=300)
    check(r.returncode == 0 and not alive(m), "5: cleanup --region us-west-2 ends the us-east-1 sweep: %d %r %s" % (
        r.returncode, alive(m), r.stderr[-1500:]))
    ended = ec2(m, "out = {i['InstanceId']: i.get('StateTransitionReason', '') "
                   "for r in client.describe_instances()['Reservations'] for i in r['Instances']}")
    st = load_state(home, sid)
    for rec in st["instances"]:
        reason = ended.get(rec["id"], "")
        mt = re.search(r"\((\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) (?:UTC|GMT)\)", reason)
        want = "%sT%sZ" % mt.groups() if mt else None
        check(rec["state"] == "terminated" and want and rec["ended"] == want,
              "5: %s recorded terminated at moto's end %s: %r" % (rec["id"], want, rec))
    check(st["phase"] == "done", "5: the sweep done: %r" % st["phase"])
    shutil.rmtree(home, ignore_errors=True)

sys.exit(1 if failures else 0)
