#!/usr/bin/python3
"""The instance's script (src/sweep/userdata.sh as rendered by sweep_userdata_render) run for real
in the instance simulator's sandbox (tests/sweep/instance_sim.py: fake IMDSv2, stub shutdown /
poweroff / apt-get) against moto's S3 (signatures checked) through botocore-presigned URLs:
- success, with the built instbench as INSTBENCH_USERDATA_PREBUILT: the timer `shutdown -h +2`
  (max 1.5 min) is the first thing done (before any IMDS request), the archive's sha256 is checked,
  node 0 PUTs a real result that `instbench rank` ranks (its samples/s and type as the result
  JSON fetched from moto states them), the log stays unsent, poweroff is the last call;
- failures: a source archive whose build fails (cmake errors after 100 KB of output) and a
  tampered archive (sha256 mismatch): the log's last 64 KiB exactly (the sandbox's own log is the
  reference) arrive at the node's log URL, no result, poweroff; the tampered one never builds;
- multi-node: two sandboxed nodes (launch index 0 and 1) poll the rendezvous URL until the object
  appears, then run measure with --nnodes 2 --node-rank I --master-addr --master-port (the CPU
  backend has no cross-process data parallelism, so a recording stand-in plays instbench here);
  only node 0 delivers;
- EFA (efa_devices > 0), against a fake / (INSTBENCH_USERDATA_ROOT: sysfs, /opt/amazon/efa,
  the plugin) with a stand-in instbench recording the environment measure gets: 2 EFA devices of 2
  (and an mlx5 device that is not one): measure runs with FI_PROVIDER=efa and the plugin's and
  libfabric's lib dirs first on LD_LIBRARY_PATH (a plugin named libnccl-net-ofi.so elsewhere:
  NCCL_NET_PLUGIN=ofi); 1 device of 2, no plugin, fi_info without the efa provider: no measure, no
  result, the log tail (naming expected/found, the paths looked in) at the log URL, poweroff;
  efa_devices 0 with the same root: no EFA variable set; and an instance without a public address
  for its first 40 s (the simulator refuses all but IMDS, longer than curl's own --retry 5 lasts):
  it logs that it waits, then downloads, checks and measures;
- through EC2: RunInstances on moto with the rendered user data and the sweep's tag; the simulator
  finds the instance, runs the script, and terminates the instance in moto when it powers off;
  an EFA instance launched with two interfaces (the simulator's eip_wait: no public address until
  an Elastic IP is associated with its primary interface) waits for S3, refused, until the test
  associates one, then measures and delivers;
  an endless measure ends when the instance's own timer does (the simulator's minute scaled to
  3 s), and one terminated from outside has its script killed.
Usage: sweep_userdata_run.py INSTBENCH USERDATA_PROBE"""
import hashlib
import json
import os
import platform
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")] + [HERE]
from testlib import check, failures  # noqa: E402
from moto_server import MotoServer  # noqa: E402
from instance_sim import InstanceSim, Sandbox, fake_efa_root  # noqa: E402
from userdata_common import (BIN, BUCKET, S3, SWEEP, TINY, TMP, check_log_tail, meta,  # noqa: E402
                             ranked, render, tar_gz, vars_for)
import botocore.session  # noqa: E402

with MotoServer() as m:
    # moto answers a presigned request with a 500 while it checks signatures (tests/s3/
    # s3_presign_cli.py says so too): checking is turned off once the bucket is made; the URLs are
    # botocore's own presigned ones, so no signature of instbench's is being taken on trust.
    s3 = S3(m)
    s3.c.create_bucket(Bucket=BUCKET)
    m.set_auth(10 ** 9)
    archive = open(os.path.join(os.path.dirname(BIN), "instbench-src.tar.gz"), "rb").read()
    sha = hashlib.sha256(archive).hexdigest()
    s3.put(f"p/sources/{sha}.tar.gz", archive)

    # -- success with the prebuilt binary ------------------------------------------------------------
    sb = Sandbox(render(vars_for(s3, "ok", f"p/sources/{sha}.tar.gz", sha)), meta(),
                 env={"INSTBENCH_USERDATA_PREBUILT": BIN})
    rc = sb.run(timeout=300)
    log = sb.log_text()
    check(rc == 0, f"success case: exit {rc}: {log[-1500:]} {sb.output[-500:]}")
    calls = sb.calls
    check(calls and calls[0][1:] == ("shutdown", "-h +2"), f"the first call is not shutdown -h +2: {calls}")
    check(calls and calls[-1][1] == "poweroff" and len(sb.called("poweroff")) == 1, f"poweroff not last/once: {calls}")
    check(not sb.called("apt-get"), "apt-get ran with a prebuilt binary")
    check(": OK" in log, "the archive's sha256 check is not in the log")
    got = s3.get("p/sweep-%s/results/ok.json" % SWEEP)
    if check(got is not None, f"no result delivered: {log[-1500:]}"):
        doc = json.loads(got)
        check(doc["instance"]["type"] == "g5.xlarge" and doc["instance"]["market"] == "spot"
              and doc["instance"]["source"] == "imds", f"identity not from the fake IMDS: {doc['instance']}")
        # rank adds the on-demand row of the same measurement beside the spot one it was run on
        rows = [r for r in ranked(got) if r["market"] == "spot"]
        if check(len(rows) == 1, f"rank spot rows: {rows}"):
            r = rows[0]
            check(r["configuration"] == "1 x g5.xlarge spot" and r["region"] == "us-east-1", f"rank row: {r}")
            want = doc["measurement"]["samples_per_second"]
            check(abs(r["samples_per_second"] - want) <= 1e-9 * want, f"rank samples/s {r['samples_per_second']} != {want}")
    check(s3.get("p/sweep-%s/logs/ok-node0.log" % SWEEP) is None, "a log was sent on success")
    # the timer came before anything else the script did: its first IMDS request came later
    t_shutdown = calls[0][0] if calls else float("inf")
    check(sb.imds_log and sb.imds_log[0][0] == "PUT", f"IMDS: no token request first: {sb.imds_log[:2]}")
    check(sb.imds_log.times and t_shutdown < sb.imds_log.times[0], "IMDS was asked before the timer was set")
    check(log.startswith(log.split("\n")[0]) and "off in 2 min" in log.split("\n")[0],
          f"the log's first line does not state the timer: {log[:200]!r}")
    sb.close()

    # -- the build fails: the log's tail arrives, no result, poweroff --------------------------------
    bad = tar_gz({"CMakeLists.txt": "cmake_minimum_required(VERSION 3.18)\nproject(broken C)\n"
                  "foreach(i RANGE 1500)\n  message(STATUS \"noise line ${i} " + "x" * 60 + "\")\nendforeach()\n"
                  "message(FATAL_ERROR \"this source tree does not build\")\n"})
    bsha = hashlib.sha256(bad).hexdigest()
    s3.put(f"p/sources/{bsha}.tar.gz", bad)
    sb = Sandbox(render(vars_for(s3, "buildfail", f"p/sources/{bsha}.tar.gz", bsha)), meta(),
                 env={"INSTBENCH_USERDATA_SKIP_PACKAGES": "1"})
    rc = sb.run(timeout=300)
    check(rc != 0, "a failed build exited 0")
    tail = check_log_tail(s3, sb, f"p/sweep-{SWEEP}/logs/buildfail-node0.log", "build failure")
    if tail is not None:
        check(len(tail) == 65536, f"build failure: the log tail is {len(tail)} bytes, not 64 KiB")
        check(b"this source tree does not build" in tail, "build failure: cmake's error is not in the tail")
    check(s3.get(f"p/sweep-{SWEEP}/results/buildfail.json") is None, "build failure: a result was delivered")
    check(sb.calls[0][1] == "shutdown" and sb.calls[-1][1] == "poweroff", f"build failure calls: {sb.calls}")
    sb.close()

    # -- a tampered archive: refused before building ----------------------------------------------
    s3.put(f"p/sources/{sha}-tampered.tar.gz", archive + b"\0")
    sb = Sandbox(render(vars_for(s3, "tampered", f"p/sources/{sha}-tampered.tar.gz", sha)), meta(),
                 env={"INSTBENCH_USERDATA_SKIP_PACKAGES": "1"})
    rc = sb.run(timeout=120)
    tail = check_log_tail(s3, sb, f"p/sweep-{SWEEP}/logs/tampered-node0.log", "tampered archive")
    check(rc != 0 and tail is not None and b"FAILED" in tail, f"tampered archive: exit {rc}")
    check(not os.path.exists(os.path.join(sb.tmp, os.listdir(sb.tmp)[0], "build")), "tampered archive was built")
    check(sb.calls[-1][1] == "poweroff", "tampered archive: no poweroff")
    sb.close()

    # -- multi-node: the rendezvous, two nodes on this loopback -----------------------------------
    result = s3.get("p/sweep-%s/results/ok.json" % SWEEP) or b"{}"
    stand_in = os.path.join(TMP, "instbench-standin")
    with open(os.path.join(TMP, "result.json"), "wb") as f:
        f.write(result)
    # records its arguments; `measure ... --output F` writes the earlier real result to F
    with open(stand_in, "w") as f:
        f.write("#!/bin/bash\nprintf '%s\\n' \"$*\" >>\"$TMPDIR/argv\"\n"
                "if [[ $1 == measure ]]; then out=${@: -1}; cp " + os.path.join(TMP, "result.json") + " \"$out\"; fi\n")
    os.chmod(stand_in, 0o755)
    script = render(vars_for(s3, "mn", f"p/sources/{sha}.tar.gz", sha, nodes=2, args=["--model", "vit tiny's"]))
    nodes = [Sandbox(script, meta(i), env={"INSTBENCH_USERDATA_PREBUILT": stand_in,
                                           "INSTBENCH_USERDATA_MASTER_ADDR": "127.0.0.1",
                                           "INSTBENCH_USERDATA_MASTER_PORT": "29777"}).start() for i in range(2)]
    time.sleep(3)   # both poll before node 0's address is there
    check(all(n.poll() is None for n in nodes), "a node did not wait for the rendezvous")
    s3.put(f"p/sweep-{SWEEP}/rendezvous/mn", b"10.0.0.5\n")
    for i, n in enumerate(nodes):
        rc = n.wait(120)
        check(rc == 0, f"node {i}: exit {rc}: {n.log_text()[-1000:]}")
        argv = open(os.path.join(n.tmp, "argv")).read().splitlines() if os.path.exists(os.path.join(n.tmp, "argv")) else []
        want = f"measure --nnodes 2 --node-rank {i} --master-addr 127.0.0.1 --master-port 29777 --model vit tiny's --output"
        check(any(a.startswith(want) for a in argv), f"node {i}: measure ran as {argv}")
        check("node 0 is at 10.0.0.5" in n.log_text(), f"node {i}: the rendezvous address is not logged")
        check(n.calls[-1][1] == "poweroff", f"node {i}: no poweroff")
    check(s3.get(f"p/sweep-{SWEEP}/results/mn.json") == result, "multi-node: node 0's result not delivered")
    for n in nodes:
        n.close()

    # -- EFA: the checks before measuring, the environment measure gets --------------------------------
    efa_standin = os.path.join(TMP, "instbench-efa-standin")
    with open(efa_standin, "w") as f:
        f.write("#!/bin/bash\nif [[ $1 == measure ]]; then\n"
                "  printf '%s\\n' \"FI_PROVIDER=${FI_PROVIDER-(unset)}\" \"LD_LIBRARY_PATH=${LD_LIBRARY_PATH-(unset)}\" "
                "\"NCCL_NET_PLUGIN=${NCCL_NET_PLUGIN-(unset)}\" >\"$TMPDIR/measure-env\"\n"
                "  cp " + os.path.join(TMP, "result.json") + " \"${@: -1}\"\nfi\n")
    os.chmod(efa_standin, 0o755)

    def efa_run(case, efa_devices, root, **kw):
        v = vars_for(s3, case, f"p/sources/{sha}.tar.gz", sha)
        v["efa_devices"] = efa_devices
        sb = Sandbox(render(v), meta(0, "p4d.24xlarge"),
                     env={"INSTBENCH_USERDATA_PREBUILT": efa_standin, "INSTBENCH_USERDATA_ROOT": root}, **kw)
        sb.run(timeout=180)
        p = os.path.join(sb.tmp, "measure-env")
        env = dict(x.split("=", 1) for x in open(p).read().splitlines()) if os.path.exists(p) else None
        return sb, env

    def efa_ok(case, sb, env, root, plugin_dir):
        log = sb.log_text()
        check(sb.rc == 0, f"{case}: exit {sb.rc}: {log[-1500:]}")
        if check(env is not None, f"{case}: measure did not run: {log[-800:]}"):
            check(env["FI_PROVIDER"] == "efa", f"{case}: FI_PROVIDER={env['FI_PROVIDER']}")
            ld = env["LD_LIBRARY_PATH"].split(":")
            check(ld[:2] == [os.path.join(root, plugin_dir), os.path.join(root, "opt/amazon/efa/lib")],
                  f"{case}: LD_LIBRARY_PATH {ld}")
        check(s3.get(f"p/sweep-{SWEEP}/results/{case}.json") == result, f"{case}: result not delivered")
        check(s3.get(f"p/sweep-{SWEEP}/logs/{case}-node0.log") is None, f"{case}: a log was sent on success")
        check(sb.calls[-1][1] == "poweroff", f"{case}: no poweroff last: {sb.calls}")
        return log

    root = fake_efa_root(os.path.join(TMP, "efa-ok"))
    sb, env = efa_run("efa-ok", 2, root)
    log = efa_ok("efa-ok", sb, env, root, "opt/amazon/ofi-nccl/lib")
    check(env is None or env["NCCL_NET_PLUGIN"] == "(unset)", f"efa-ok: NCCL_NET_PLUGIN set: {env}")
    check("EFA: 2 device(s) rdmap16s27 rdmap17s27" in log and "EFA: fi_info: 2 efa domain(s)" in log,
          f"efa-ok: the devices / fi_info not logged: {log[-1500:]}")
    sb.close()

    root = fake_efa_root(os.path.join(TMP, "efa-named"), plugin_dir="opt/amazon/aws-ofi-nccl/lib",
                         plugin="libnccl-net-ofi.so", fi_info=None)
    sb, env = efa_run("efa-named", 2, root)
    efa_ok("efa-named", sb, env, root, "opt/amazon/aws-ofi-nccl/lib")
    check(env is None or env["NCCL_NET_PLUGIN"] == "ofi", f"efa-named: NCCL_NET_PLUGIN: {env}")
    sb.close()

    # aws-ofi-nccl's .deb up to 1.16 installed into lib/<multiarch> (contrib/debian-template/rules before
    # aws/aws-ofi-nccl commit 6eb0870a8565687b668fb668d70e7f268aa77ce5: dh_auto_configure's libdir,
    # $(DEB_HOST_MULTIARCH)); this machine's triplet, as the instance's would be its own
    multiarch = "opt/amazon/ofi-nccl/lib/%s-linux-gnu" % platform.machine()
    root = fake_efa_root(os.path.join(TMP, "efa-multiarch"), plugin_dir=multiarch)
    sb, env = efa_run("efa-multiarch", 2, root)
    efa_ok("efa-multiarch", sb, env, root, multiarch)
    sb.close()

    # EFA not asked: the same root changes nothing
    sb, env = efa_run("efa-none", 0, os.path.join(TMP, "efa-ok"))
    check(sb.rc == 0 and env == {"FI_PROVIDER": "(unset)", "LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH", "(unset)"),
                                 "NCCL_NET_PLUGIN": "(unset)"}, f"efa_devices 0: exit {sb.rc}, measure env {env}")
    check("EFA" not in sb.log_text(), "efa_devices 0: EFA checks ran")
    sb.close()

    dirs = " ".join(os.path.join("@", d) for d in ("opt/amazon/ofi-nccl/lib", multiarch, "opt/amazon/aws-ofi-nccl/lib",
                                                    "opt/aws-ofi-nccl/lib"))
    for case, root, want in [
            ("efa-short", fake_efa_root(os.path.join(TMP, "efa-short"), efa=1), "EFA: 2 device(s) expected, 1 found"),
            ("efa-noplugin", fake_efa_root(os.path.join(TMP, "efa-noplugin"), plugin=None),
             "EFA: no aws-ofi-nccl (libnccl-net*.so) in " + dirs.replace("@", os.path.join(TMP, "efa-noplugin"))),
            ("efa-nofabric", fake_efa_root(os.path.join(TMP, "efa-nofabric"), fi_info="fail"),
             "fi_info -p efa found no efa provider: fi_getinfo: -61")]:
        sb, env = efa_run(case, 2, root)
        check(sb.rc != 0, f"{case}: exit 0")
        check(env is None, f"{case}: measure ran")
        tail = check_log_tail(s3, sb, f"p/sweep-{SWEEP}/logs/{case}-node0.log", case)
        check(tail is not None and want.encode() in tail, f"{case}: {want!r} not in the log tail: {(tail or b'')[-600:]}")
        check(s3.get(f"p/sweep-{SWEEP}/results/{case}.json") is None, f"{case}: a result was delivered")
        check(sb.calls[-1][1] == "poweroff", f"{case}: no poweroff last: {sb.calls}")
        sb.close()

    # no public address for 40 s: curl --retry 5 alone gives up after ~31 s of refusals
    root = fake_efa_root(os.path.join(TMP, "efa-late"))
    t0 = time.time()
    sb, env = efa_run("efa-late", 2, root, no_address_s=40, upstream=m.url)
    log = efa_ok("efa-late", sb, env, root, "opt/amazon/ofi-nccl/lib")
    refused = sb.offline_log
    check(len(refused) >= 3 and all(u.split("?")[0].endswith(f"p/sources/{sha}.tar.gz") for _, u in refused),
          f"efa-late: the S3 requests refused: {refused}")
    check("no route to S3: waiting up to 60s for the public address (Elastic IP)" in log
          and re.search(r"S3 reachable \(waited [1-9][0-9]s\)", log), f"efa-late: the wait is not logged: {log[-1500:]}")
    check(time.time() - t0 >= 40, "efa-late: finished before the address came")
    sb.close()

    # -- through EC2: the simulator finds the instance, runs it, terminates it -----------------------
    ec2 = botocore.session.get_session().create_client(
        "ec2", endpoint_url=m.url, region_name="us-east-1", aws_access_key_id=m.access_key,
        aws_secret_access_key=m.secret_key)
    ami = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    script = render(vars_for(s3, "ec2", f"p/sources/{sha}.tar.gz", sha))
    with InstanceSim(m.url, m.access_key, m.secret_key, prebuilt=BIN) as sim:
        r = ec2.run_instances(ImageId=ami, InstanceType="g5.xlarge", MinCount=1, MaxCount=1, UserData=script,
                              InstanceInitiatedShutdownBehavior="terminate",
                              TagSpecifications=[{"ResourceType": "instance", "Tags": [
                                  {"Key": "instbench:sweep", "Value": SWEEP},
                                  {"Key": "instbench:candidate", "Value": "g5.xlarge:spot"}]}])
        iid = r["Instances"][0]["InstanceId"]
        check(sim.wait_idle(timeout=300, want=1), f"simulator: the instance did not end: {sim.errors}")
        node = sim.nodes.get(iid)
        if check(node is not None, f"simulator never ran {iid}"):
            check(node.end == "poweroff" and node.sandbox.rc == 0,
                  f"simulated instance: {node.end} exit {node.sandbox.rc}: {node.sandbox.log_text()[-800:]}")
            check(f"instance {iid} g5.xlarge in us-east-1" in node.sandbox.log_text(), "identity not from its IMDS")
        state = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]["State"]["Name"]
        check(state in ("shutting-down", "terminated"), f"instance left {state} after poweroff")
        check(s3.get(f"p/sweep-{SWEEP}/results/ec2.json") is not None, "simulated instance delivered no result")
        check(not sim.errors, f"simulator errors: {sim.errors}")

    # an EFA launch: two interfaces, so no public address until the sweep associates an Elastic IP
    sub = ec2.describe_subnets()["Subnets"][0]["SubnetId"]
    v = vars_for(s3, "ec2-efa", f"p/sources/{sha}.tar.gz", sha, minutes=3)
    v["efa_devices"] = 2
    with InstanceSim(m.url, m.access_key, m.secret_key, prebuilt=efa_standin, eip_wait=True,
                     env={"INSTBENCH_USERDATA_ROOT": os.path.join(TMP, "efa-ok")}) as sim:
        iid = ec2.run_instances(
            ImageId=ami, InstanceType="p4d.24xlarge", MinCount=1, MaxCount=1, UserData=render(v),
            InstanceInitiatedShutdownBehavior="terminate",
            NetworkInterfaces=[{"DeviceIndex": 0, "NetworkCardIndex": 0, "SubnetId": sub, "InterfaceType": "efa"},
                               {"DeviceIndex": 1, "NetworkCardIndex": 1, "SubnetId": sub, "InterfaceType": "efa"}],
            TagSpecifications=[{"ResourceType": "instance", "Tags": [
                {"Key": "instbench:sweep", "Value": SWEEP},
                {"Key": "instbench:candidate", "Value": "p4d.24xlarge"}]}])["Instances"][0]["InstanceId"]
        deadline = time.time() + 60
        while time.time() < deadline and not (iid in sim.nodes and len(sim.nodes[iid].sandbox.offline_log) >= 2):
            time.sleep(0.2)
        node = sim.nodes.get(iid)
        if check(node is not None and len(node.sandbox.offline_log) >= 2, "ec2-efa: no refused S3 request seen"):
            check(node.end is None and s3.get(f"p/sweep-{SWEEP}/results/ec2-efa.json") is None,
                  f"ec2-efa: ended without an address: {node.end} {node.sandbox.log_text()[-800:]}")
            eni = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]["NetworkInterfaces"]
            eni = [n for n in eni if n["Attachment"]["DeviceIndex"] == 0][0]["NetworkInterfaceId"]
            alloc = ec2.allocate_address(Domain="vpc")["AllocationId"]
            t_assoc = time.time()
            ec2.associate_address(AllocationId=alloc, NetworkInterfaceId=eni)
            check(sim.wait_idle(timeout=120, want=1), f"ec2-efa: the instance did not end: {sim.errors}")
            sb = node.sandbox
            check(node.end == "poweroff" and sb.rc == 0, f"ec2-efa: {node.end} exit {sb.rc}: {sb.log_text()[-1200:]}")
            check(sb.address_at is not None and sb.address_at >= t_assoc, "ec2-efa: the address came before the association")
            check(all(t < sb.address_at for t, _ in sb.offline_log), "ec2-efa: a request refused after the address came")
            check(s3.get(f"p/sweep-{SWEEP}/results/ec2-efa.json") == result, "ec2-efa: result not delivered")
            check("no route to S3: waiting up to 90s" in sb.log_text() and "EFA: 2 device(s)" in sb.log_text(),
                  f"ec2-efa: the wait / the devices not logged: {sb.log_text()[-1200:]}")
        check(not sim.errors, f"simulator errors: {sim.errors}")

    # the simulator's two other endings: the instance's own timer (scaled: its minute is 3 s), and
    # a termination from outside (the sweep's) while the script still runs
    at = TINY.index("--steps")
    endless = TINY[:at] + TINY[at + 2:] + ["--duration", "3600"]
    tags = [{"ResourceType": "instance", "Tags": [{"Key": "instbench:sweep", "Value": SWEEP},
                                                  {"Key": "instbench:candidate", "Value": "g5.xlarge"}]}]
    with InstanceSim(m.url, m.access_key, m.secret_key, prebuilt=BIN, timer_scale=0.05) as sim:
        ids = []
        for case in ("timer", "killed"):
            script = render(vars_for(s3, case, f"p/sources/{sha}.tar.gz", sha, args=endless, minutes=0.5))
            ids.append(ec2.run_instances(ImageId=ami, InstanceType="g5.xlarge", MinCount=1, MaxCount=1,
                                         UserData=script, TagSpecifications=tags)["Instances"][0]["InstanceId"])
        deadline = time.time() + 60
        while ids[1] not in sim.nodes and time.time() < deadline:
            time.sleep(0.1)
        ec2.terminate_instances(InstanceIds=[ids[1]])
        check(sim.wait_idle(timeout=120, want=2), f"simulator: timer/terminated nodes did not end: {sim.errors}")
        ends = {i: (sim.nodes[i].end if i in sim.nodes else None) for i in ids}
        check(ends == {ids[0]: "timer", ids[1]: "terminated"}, f"simulator endings: {ends}")
        if ids[0] in sim.nodes:
            n = sim.nodes[ids[0]]
            check(2.5 <= n.ended - n.sandbox.called("shutdown")[0][0] <= 10, "the timer did not end the node after 3 s")
        for i in ids:
            st = ec2.describe_instances(InstanceIds=[i])["Reservations"][0]["Instances"][0]["State"]["Name"]
            check(st in ("shutting-down", "terminated"), f"{i} left {st}")
        check(s3.get(f"p/sweep-{SWEEP}/results/timer.json") is None, "a result from an instance its timer ended")

sys.exit(1 if failures else 0)
