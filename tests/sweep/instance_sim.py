#!/usr/bin/python3
"""The instance simulator: plays every EC2 instance of a sweep, since moto never runs user data.

It watches moto (EC2 through botocore, signed with moto's test user) for running instances tagged
instbench:sweep, fetches each one's user data (DescribeInstanceAttribute userData) and runs it, the
real script as rendered, in a sandbox of its own:
  - a fake IMDSv2 (tests/fakes/imds_standin.py) answering that instance's id, type, region, zone, market
    (instance-life-cycle), launch index and private IP, reached through INSTBENCH_IMDS_ENDPOINT;
  - stubs for shutdown, poweroff and apt-get first on PATH, each recording its call (calls.log:
    "<unix time> <name> <args>"), so nothing on this machine is ever shut down or installed;
  - TMPDIR inside the sandbox (the script works under mktemp -d), and local S3 only through the
    presigned URLs the user data holds.
A sandbox may start without a public address (Sandbox(no_address_s=N, upstream=URL)): until
give_address() (called after N seconds when N is finite) every request but instance metadata's is
refused, as S3 is out of reach of an instance whose Elastic IP is not associated yet (AWS drops
the packets; a refusal is the quicker stand-in, and curl's own --retry-connrefused treats it as
it treats a timeout); see Gate.  InstanceSim(eip_wait=True) starts every instance launched with
more than one network interface that way (AWS gives such an instance no public IPv4 address; moto
does) and gives it its address once DescribeAddresses shows an Elastic IP associated with the
instance or one of its interfaces, as the sweep does for EFA launches.
When the script powers off, the instance is terminated in moto, as InstanceInitiatedShutdownBehavior
=terminate does; the `shutdown -h +M` timer is honoured too (the node is killed and terminated M
minutes, times timer_scale, after the call); an instance terminated by someone else (the sweep)
has its script killed.  Nodes of one multi-node candidate share this machine's loopback: they get
INSTBENCH_USERDATA_MASTER_ADDR=127.0.0.1 and one free port per candidate.

moto answers every presigned request with a 500 while it checks signatures (tests/s3/
s3_presign_cli.py found the same), and the user data has nothing but presigned URLs: a test that
lets the simulator run scripts against moto turns checking off (MotoServer.set_auth(10 ** 9))
once its own signed setup is done.

Library (EXEC's end-to-end tests, tests/sweep/sweep_userdata*.py):
    with InstanceSim(moto.url, moto.access_key, moto.secret_key, region="us-east-1",
                     prebuilt=INSTBENCH) as sim:       # prebuilt=None: build from the archive
        ... launch ...; sim.wait_idle(timeout=120); sim.nodes -> {instance id: Node}
    Sandbox(script_text, meta).run(...)      one script run without EC2 (the user-data tests)
Standalone:  instance_sim.py --endpoint URL [--region R] [--prebuilt BIN] [--workdir DIR]
             (credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY); Ctrl-C stops it."""
import argparse
import base64
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: imds_standin
import imds_standin  # noqa: E402
from testlib import reserved_port  # noqa: E402

SWEEP_TAG = "instbench:sweep"
CANDIDATE_TAG = "instbench:candidate"

# Each stub appends "<unix time> <its name> <args>" to $INSTBENCH_SIM_CALLS and succeeds.
STUB = """#!/bin/sh
printf '%s %s %s\\n' "$(date +%s.%N)" "$(basename "$0")" "$*" >>"$INSTBENCH_SIM_CALLS"
"""
STUBS = ("shutdown", "poweroff", "apt-get")


# curl for a sandbox without a public address: while $INSTBENCH_SIM_OFFLINE_FLAG exists a URL to
# any host but instance metadata is sent to the gate's port (refusing until the address comes,
# then forwarding to the real host), each such URL logged; the real curl does the rest, its
# retries too.
CURL_GATE = """#!/bin/bash
now=$(date +%s.%N) args=()
for a in "$@"; do
    if [[ $a == http*://* && $a != "$INSTBENCH_IMDS_ENDPOINT"* && -e $INSTBENCH_SIM_OFFLINE_FLAG ]]; then
        printf '%s %s\\n' "$now" "${a%%\\?*}" >>"$INSTBENCH_SIM_OFFLINE_LOG"
        a=http://127.0.0.1:@PORT@/${a#*://*/}
    fi
    args+=("$a")
done
exec @CURL@ "${args[@]}"
"""


class Gate:
    """A loopback port that refuses connections (bound, not listening) until open() is called, then
    forwards each connection to UPSTREAM (host:port) byte for byte."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.closed = threading.Event()

    def open(self):
        self.sock.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._pump, args=(conn,), daemon=True).start()

    def _pump(self, conn):
        host, port = self.upstream.rsplit(":", 1)
        try:
            up = socket.create_connection((host, int(port)), timeout=30)
        except OSError:
            conn.close()
            return
        ends = [conn, up]
        try:
            while True:
                ready, _, _ = select.select(ends, [], [], 60)
                if not ready:
                    break
                for a in ready:
                    data = a.recv(65536)
                    if not data:
                        return
                    (up if a is conn else conn).sendall(data)
        except OSError:
            pass
        finally:
            conn.close()
            up.close()

    def close(self):
        self.closed.set()
        self.sock.close()


class TimedLog(list):
    """The IMDS stand-in's request log, with when each request came (.times, Unix seconds)."""

    def __init__(self):
        super().__init__()
        self.times = []

    def append(self, item):
        self.times.append(time.time())
        super().append(item)


class Sandbox:
    """One instance's script in a directory of its own with its own fake IMDS.  META maps IMDS
    meta-data paths to answers.  After run()/wait(): .rc, .calls [(time, name, args)], .log_text()
    (the script's own log, sweep.log under its mktemp dir), .output (stdout+stderr of bash).
    NO_ADDRESS_S: until give_address(), called that many seconds after start() when finite (math.inf:
    only by the caller), only IMDS answers; every other request is refused (.offline_log: [(time,
    URL without its query)]), then UPSTREAM ("http://host:port", the one server the script's other
    URLs name: moto) is reached through the gate.  .address_at: when the address came."""

    def __init__(self, script, meta, root=None, env=None, no_address_s=None, upstream=None):
        self.own_root = root is None
        self.root = root or tempfile.mkdtemp(prefix="instbench-sim-")
        os.makedirs(self.root, exist_ok=True)
        self.script_path = os.path.join(self.root, "user-data")
        with open(self.script_path, "w") as f:
            f.write(script)
        bindir = os.path.join(self.root, "bin")
        os.makedirs(bindir, exist_ok=True)
        for name in STUBS:
            path = os.path.join(bindir, name)
            with open(path, "w") as f:
                f.write(STUB)
            os.chmod(path, 0o755)
        self.tmp = os.path.join(self.root, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        self.calls_path = os.path.join(self.root, "calls.log")
        open(self.calls_path, "a").close()
        self.imds, self.imds_url = imds_standin.start(meta)
        self.imds.RequestHandlerClass.log = TimedLog()
        self.env = dict(os.environ)
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                  "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_EC2_METADATA_DISABLED"):
            self.env.pop(k, None)   # an instance has no credentials but its presigned URLs
        self.env.update({"PATH": bindir + os.pathsep + self.env.get("PATH", "/usr/bin:/bin"),
                         "TMPDIR": self.tmp, "HOME": self.root, "INSTBENCH_SIM_CALLS": self.calls_path,
                         "INSTBENCH_IMDS_ENDPOINT": self.imds_url})
        self.env.update(env or {})
        self.gate = None
        self.no_address_s = no_address_s
        self.address_at = None
        self.offline_path = os.path.join(self.root, "offline.log")
        self.offline_flag = os.path.join(self.root, "no-public-address")
        self.opens = None
        if no_address_s is not None:
            self.gate = Gate(upstream.split("://", 1)[1].split("/", 1)[0])
            with open(os.path.join(bindir, "curl"), "w") as f:
                f.write(CURL_GATE.replace("@PORT@", str(self.gate.port)).replace("@CURL@", shutil.which("curl")))
            os.chmod(os.path.join(bindir, "curl"), 0o755)
            open(self.offline_path, "a").close()
            open(self.offline_flag, "w").close()
            self.env["INSTBENCH_SIM_OFFLINE_LOG"] = self.offline_path
            self.env["INSTBENCH_SIM_OFFLINE_FLAG"] = self.offline_flag
        self.proc = None
        self.rc = None
        self.output = ""

    def start(self):
        self.out_file = open(os.path.join(self.root, "console.log"), "w+")
        if self.gate and self.no_address_s != float("inf"):
            self.opens = threading.Timer(self.no_address_s, self.give_address)
            self.opens.daemon = True
            self.opens.start()
        # its own session: a kill reaches the script's children (cmake, measure) too
        self.proc = subprocess.Popen(["bash", self.script_path], cwd=self.root, env=self.env,
                                     stdout=self.out_file, stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def wait(self, timeout=None):
        try:
            self.rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.rc = self.proc.wait()
        self._read_output()
        return self.rc

    def poll(self):
        if self.proc is None or self.rc is not None:
            return self.rc
        if self.proc.poll() is not None:
            self.rc = self.proc.returncode
            self._read_output()
        return self.rc

    def _read_output(self):
        self.out_file.seek(0)
        self.output = self.out_file.read()
        self.out_file.close()

    def run(self, timeout=300):
        return self.start().wait(timeout)

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    @property
    def calls(self):
        out = []
        with open(self.calls_path) as f:
            for line in f:
                t, name, args = (line.rstrip("\n").split(" ", 2) + [""])[:3]
                out.append((float(t), name, args))
        return out

    def give_address(self):
        """The public address comes: the gate forwards (requests already sent to it get through on
        their next try) and new requests go straight to their host."""
        if self.gate and self.address_at is None:
            self.gate.open()
            self.address_at = time.time()
            os.unlink(self.offline_flag)

    @property
    def waiting_address(self):
        return self.gate is not None and self.address_at is None

    @property
    def offline_log(self):
        if not os.path.exists(self.offline_path):
            return []
        with open(self.offline_path) as f:
            return [(float(t), u) for t, u in (line.rstrip("\n").split(" ", 1) for line in f)]

    def called(self, name):
        return [c for c in self.calls if c[1] == name]

    @property
    def imds_log(self):
        return self.imds.RequestHandlerClass.log

    def log_text(self):
        for d in sorted(os.listdir(self.tmp)):
            p = os.path.join(self.tmp, d, "sweep.log")
            if os.path.isfile(p):
                return open(p, errors="replace").read()
        return ""

    def close(self, keep=False):
        self.kill()
        if self.gate:
            if self.opens:
                self.opens.cancel()
            self.gate.close()
        self.imds.shutdown()
        self.imds.server_close()
        if self.own_root and not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def fake_efa_root(root, efa=2, other=1, plugin_dir="opt/amazon/ofi-nccl/lib", plugin="libnccl-net.so",
                  fi_info="ok"):
    """A fake / for the EFA checks (INSTBENCH_USERDATA_ROOT), shaped as an EFA instance's:
    /sys/class/infiniband/<dev>/device/driver a link to .../drivers/efa for EFA devices (EFA other
    RDMA devices: mlx5_core), /opt/amazon/efa/bin/fi_info (FI_INFO "ok": libfabric's efa provider,
    one RDM domain a device; "fail": fi_getinfo's error; None: absent), /opt/amazon/efa/lib, and
    PLUGIN (None: none) in PLUGIN_DIR."""
    devs = [("rdmap%ds27" % (16 + i), "efa") for i in range(efa)] + [("mlx5_%d" % i, "mlx5_core") for i in range(other)]
    for name, driver in devs:
        d = os.path.join(root, "sys/class/infiniband", name, "device")
        os.makedirs(d)
        os.symlink("../../../../bus/pci/drivers/" + driver, os.path.join(d, "driver"))
    efa_dir = os.path.join(root, "opt/amazon/efa")
    os.makedirs(os.path.join(efa_dir, "lib"))
    os.makedirs(os.path.join(efa_dir, "bin"))
    if fi_info:
        if fi_info == "ok":
            body = "".join("provider: efa\\n    fabric: efa\\n    domain: %s-rdm\\n    version: 122.0\\n"
                           "    type: FI_EP_RDM\\n    protocol: FI_PROTO_EFA\\n" % n for n, drv in devs if drv == "efa")
            text = '#!/bin/sh\n[ "$*" = "-p efa -t FI_EP_RDM" ] || exit 64\nprintf \'%s\'\n' % body
        else:
            text = "#!/bin/sh\necho 'fi_getinfo: -61 (No data available)' >&2\nexit 1\n"
        path = os.path.join(efa_dir, "bin", "fi_info")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    if plugin:
        os.makedirs(os.path.join(root, plugin_dir), exist_ok=True)
        open(os.path.join(root, plugin_dir, plugin), "wb").close()
    return root


def meta_for(inst, region):
    """IMDS answers for one DescribeInstances instance (moto's), as EC2 gives them."""
    zone = inst.get("Placement", {}).get("AvailabilityZone") or region + "a"
    return {"instance-id": inst["InstanceId"], "instance-type": inst["InstanceType"],
            "placement/region": region, "placement/availability-zone": zone,
            "instance-life-cycle": "spot" if inst.get("InstanceLifecycle") == "spot" else "on-demand",
            "ami-launch-index": str(inst.get("AmiLaunchIndex", 0)),
            "local-ipv4": inst.get("PrivateIpAddress") or "10.0.0.1"}


class Node:
    """One simulated instance: its moto description, its sandbox, what became of it."""

    def __init__(self, inst, sandbox):
        self.id = inst["InstanceId"]
        self.inst = inst
        self.tags = {t["Key"]: t["Value"] for t in inst.get("Tags", [])}
        self.sandbox = sandbox
        self.started = time.time()
        self.ended = None
        self.end = None   # "poweroff", "timer", "terminated" (by someone else), "exit" (no poweroff)


class InstanceSim:
    def __init__(self, endpoint, access_key, secret_key, region="us-east-1", prebuilt=None,
                 skip_packages=True, workdir=None, env=None, poll_s=0.2, timer_scale=1.0, keep=False,
                 eip_wait=False):
        import botocore.session
        self.ec2 = botocore.session.get_session().create_client(
            "ec2", endpoint_url=endpoint, region_name=region, aws_access_key_id=access_key,
            aws_secret_access_key=secret_key)
        self.region = region
        self.endpoint = endpoint
        self.eip_wait = eip_wait
        self.prebuilt = prebuilt
        self.skip_packages = skip_packages
        self.own_workdir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="instbench-sim-")
        self.extra_env = env or {}
        self.poll_s = poll_s
        self.timer_scale = timer_scale
        self.keep = keep
        self.nodes = {}
        self.ports = {}   # a multi-node group's rendezvous port: (the socket that reserves it, the port)
        self.errors = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = None

    # -- the watch loop ------------------------------------------------------------------------
    def start(self):
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def _loop(self):
        while not self.stopping.is_set():
            try:
                self.step()
            except Exception as e:   # a moto hiccup must not end the simulation; tests see .errors
                self.errors.append(repr(e))
            self.stopping.wait(self.poll_s)

    def step(self):
        """One pass: start nodes for new running instances, end finished or terminated ones."""
        states = {}
        pages = self.ec2.get_paginator("describe_instances").paginate(
            Filters=[{"Name": "tag-key", "Values": [SWEEP_TAG]}])
        for page in pages:
            for r in page["Reservations"]:
                for inst in r["Instances"]:
                    states[inst["InstanceId"]] = inst["State"]["Name"]
                    if inst["State"]["Name"] == "running" and inst["InstanceId"] not in self.nodes:
                        self._launch(inst)
        waiting = [n for n in self.nodes.values() if n.end is None and n.sandbox.waiting_address]
        if waiting:
            owners = set()
            for a in self.ec2.describe_addresses()["Addresses"]:
                if a.get("AssociationId"):
                    owners.update(x for x in (a.get("InstanceId"), a.get("NetworkInterfaceId")) if x)
            for node in waiting:
                enis = {n.get("NetworkInterfaceId") for n in node.inst.get("NetworkInterfaces", [])}
                if node.id in owners or enis & owners:
                    node.sandbox.give_address()
        for node in list(self.nodes.values()):
            if node.end is None:
                self._watch(node, states.get(node.id))

    def _launch(self, inst):
        attr = self.ec2.describe_instance_attribute(InstanceId=inst["InstanceId"], Attribute="userData")
        data = attr.get("UserData", {}).get("Value")
        script = base64.b64decode(data).decode("utf-8", "replace") if data else ""
        tags = {t["Key"]: t["Value"] for t in inst.get("Tags", [])}
        group = (tags.get(SWEEP_TAG), tags.get(CANDIDATE_TAG), inst.get("ReservationId"))
        env = {"INSTBENCH_USERDATA_MASTER_ADDR": "127.0.0.1"}
        with self.lock:
            if group not in self.ports:
                self.ports[group] = reserved_port()
            env["INSTBENCH_USERDATA_MASTER_PORT"] = str(self.ports[group][1])
        if self.prebuilt:
            env["INSTBENCH_USERDATA_PREBUILT"] = self.prebuilt
        if self.skip_packages:
            env["INSTBENCH_USERDATA_SKIP_PACKAGES"] = "1"
        env.update(self.extra_env)
        # AWS gives an instance with more than one network interface no public IPv4 address
        no_address = self.eip_wait and len(inst.get("NetworkInterfaces", [])) > 1
        sb = Sandbox(script, meta_for(inst, self.region), root=os.path.join(self.workdir, inst["InstanceId"]),
                     env=env, no_address_s=float("inf") if no_address else None, upstream=self.endpoint)
        node = Node(inst, sb)
        self.nodes[node.id] = node
        sb.start()

    def _timer_due(self, node):
        timers = node.sandbox.called("shutdown")
        if not timers:
            return False
        t, _, args = timers[-1]
        minutes = args.split("+", 1)[1] if "+" in args else "0"
        try:
            return time.time() >= t + float(minutes) * 60 * self.timer_scale
        except ValueError:
            return False

    def _watch(self, node, state):
        sb = node.sandbox
        if state is not None and state not in ("pending", "running"):
            sb.kill()
            sb.wait(10)
            return self._ended(node, "terminated")
        done = sb.poll() is not None
        if done and sb.called("poweroff"):
            return self._ended(node, "poweroff", terminate=True)
        if self._timer_due(node):
            sb.kill()
            sb.wait(10)
            return self._ended(node, "timer", terminate=True)
        if done and not sb.called("shutdown"):
            return self._ended(node, "exit")   # no poweroff and no timer: a real one would run on
        # ended without powering off but with its timer: it runs on until the timer ends it

    def _ended(self, node, how, terminate=False):
        # EC2 first, then the record: wait_idle() reads node.end, and a test that then asks EC2
        # must find the instance already ending
        if terminate:
            try:
                self.ec2.terminate_instances(InstanceIds=[node.id])
            except self.ec2.exceptions.ClientError as e:
                # the sweep terminated it first: EC2 takes a second termination as a no-op, moto
                # 5.2.5 answers InvalidNetworkInterfaceID.NotFound (its interface is gone)
                if e.response.get("Error", {}).get("Code") not in ("InvalidNetworkInterfaceID.NotFound",
                                                                      "InvalidInstanceID.NotFound"):
                    raise
        node.end, node.ended = how, time.time()

    # -- for tests -----------------------------------------------------------------------------
    def wait_idle(self, timeout=300, want=None):
        """Waits until every node started so far has ended (and at least WANT nodes were seen)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            nodes = list(self.nodes.values())
            if nodes and all(n.end for n in nodes) and (want is None or len(nodes) >= want):
                return True
            time.sleep(0.1)
        return False

    def stop(self):
        self.stopping.set()
        if self.thread:
            self.thread.join(30)
        for node in self.nodes.values():
            node.sandbox.kill()
            if node.sandbox.rc is None and node.sandbox.proc is not None:
                node.sandbox.wait(10)
            node.sandbox.close(keep=True)
        for sock, _ in self.ports.values():
            sock.close()
        if self.own_workdir and not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoint", required=True, help="moto's URL (EC2)")
    ap.add_argument("--region", default=os.environ.get("AWS_REGION", "us-east-1"))
    ap.add_argument("--prebuilt", help="an instbench to run instead of building from the archive")
    ap.add_argument("--packages", action="store_true", help="let the script run apt-get (stubbed anyway)")
    ap.add_argument("--workdir", help="where the sandboxes go (kept)")
    ap.add_argument("--eip-wait", action="store_true",
                    help="instances with several network interfaces reach S3 only once an Elastic IP is associated")
    a = ap.parse_args()
    sim = InstanceSim(a.endpoint, os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"],
                      region=a.region, prebuilt=a.prebuilt and os.path.abspath(a.prebuilt),
                      skip_packages=not a.packages, workdir=a.workdir, keep=True, eip_wait=a.eip_wait)
    sim.start()
    print("instance simulator watching", a.endpoint, "sandboxes in", sim.workdir, flush=True)
    seen = set()
    try:
        while True:
            for n in list(sim.nodes.values()):
                if n.id not in seen:
                    seen.add(n.id)
                    print("started", n.id, n.tags.get(CANDIDATE_TAG, ""), flush=True)
                if n.end and (n.id, "end") not in seen:
                    seen.add((n.id, "end"))
                    print("ended", n.id, n.end, "exit", n.sandbox.rc, flush=True)
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()


if __name__ == "__main__":
    main()
