"""Instance identity through a local IMDSv2 endpoint (AWS_EC2_METADATA_SERVICE_ENDPOINT): the
stand-in of imds_standin.py that, like EC2's, hands out a session token on PUT /latest/api/token
and answers GETs only when they carry it.  On-demand and spot lifecycles, flag overrides, no lookup when all three
identity flags are given, and the cost of a missing IMDS (closed port, or a server that never
answers): one attempt, and a timeout that holds, judged against a control run with a longer one."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from imds_standin import TOKEN, Imds, Silent, start  # noqa: E402
from testlib import refused_url  # noqa: E402
from measure_common import BIN, TINY, check, env, finish, scratch, validate  # noqa: E402

srv, ENDPOINT = start()


def measure(extra, endpoint=ENDPOINT):
    d = scratch()
    out = os.path.join(d, "r.json")
    p = subprocess.run([BIN, "measure"] + TINY + ["--steps", "1", "--warmup", "0", "--output", out] + extra,
                       capture_output=True, text=True, timeout=120,
                       env=env(AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=endpoint))
    if not check(p.returncode == 0, f"{extra}: exit {p.returncode}: {p.stderr[-400:]}"):
        return None
    doc = json.load(open(out))
    validate(doc, f"imds {extra}")
    return doc["instance"]


def base_meta(lifecycle):
    return {"instance-type": "g5.xlarge", "placement/availability-zone": "us-west-2b",
            "placement/availability-zone-id": "usw2-az1", "placement/region": "us-west-2",
            "instance-id": "i-0123456789abcdef0", "instance-life-cycle": lifecycle}


for lc in ["on-demand", "spot"]:
    Imds.meta = base_meta(lc)
    Imds.log = []
    inst = measure([])
    if inst:
        want = {"type": "g5.xlarge", "region": "us-west-2", "availability_zone": "us-west-2b",
                "availability_zone_id": "usw2-az1", "market": lc, "source": "imds", "count": 1}
        got = {k: inst[k] for k in want}
        check(got == want, f"lifecycle {lc}: {got} != {want}")
    check(any(m == "PUT" for m, _, _ in Imds.log), f"{lc}: no IMDSv2 token request")
    check(all(t == TOKEN for m, _, t in Imds.log if m == "GET"), f"{lc}: a GET without the session token")

# One flag: the type comes from the flag (source flag), the rest from IMDS.
Imds.meta = base_meta("spot")
inst = measure(["--instance-type", "p4d.24xlarge", "--count", "4", "--identity-mismatch", "ok"])   # a CPU run
if inst:
    check(inst["type"] == "p4d.24xlarge" and inst["source"] == "flag" and inst["region"] == "us-west-2"
          and inst["market"] == "spot" and inst["count"] == 4, f"override: {inst}")

# Another region than IMDS's: IMDS's zone (name and ID) belongs to its own region, so neither is kept.
inst = measure(["--region", "eu-west-1"])
if inst:
    check(inst["region"] == "eu-west-1" and inst["availability_zone"] is None and inst["availability_zone_id"] is None,
          f"--region override kept IMDS's zone: {inst}")

# All three flags: IMDS is not asked at all.
Imds.log = []
inst = measure(["--instance-type", "c7i.large", "--region", "eu-west-1", "--market", "on-demand",
                "--identity-mismatch", "ok"])   # c7i.large's 2 vCPUs need not be this machine's
if inst:
    check(inst["type"] == "c7i.large" and inst["region"] == "eu-west-1" and inst["market"] == "on-demand"
          and inst["source"] == "flag" and inst["availability_zone"] is None
          and inst["availability_zone_id"] is None, f"all flags: {inst}")
check(Imds.log == [], f"all identity flags given, yet IMDS was asked: {Imds.log}")


def identity_cost(endpoint, what, timeout=None):
    """Seconds between the tool's 'reading EC2 instance metadata' and its next line, on our clock;
    TIMEOUT sets AWS_METADATA_SERVICE_TIMEOUT.  The run must end with no identity (the fallback)."""
    d = scratch()
    p = subprocess.Popen([BIN, "-v", "measure"] + TINY + ["--steps", "1", "--warmup", "0",
                                                          "--output", os.path.join(d, "r.json")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env(AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=endpoint,
                                 AWS_METADATA_SERVICE_TIMEOUT=timeout))
    t0 = t1 = None
    for line in p.stderr:
        now = time.monotonic()
        if line.startswith("identity: reading"):
            t0 = now
        elif t0 is not None and t1 is None:
            t1 = now
    p.wait(timeout=120)   # a hang guard only
    p.stdout.close()
    check(p.returncode == 0, f"{what}: exit {p.returncode}")
    if not check(t0 is not None and t1 is not None, f"{what}: identity lines not seen"):
        return None
    print(f"{what}: identity lookup took {t1 - t0:.2f} s")
    doc = json.load(open(os.path.join(d, "r.json")))
    check(doc["instance"]["source"] == "unknown" and doc["instance"]["type"] is None, f"{what}: {doc['instance']}")
    return t1 - t0


# What a missing IMDS costs, judged without a clock bound (machines differ): against a control run
# in this test whose AWS_METADATA_SERVICE_TIMEOUT is CONTROL_S.  The default (1 s) gives up sooner
# than the control; a closed port gives up without waiting out even the control's timeout; and a
# server that never answers is asked once (one connection, the token request), not again per path.
CONTROL_S = 3


def asked_once(silent, what):
    check(silent.connections == 1 and silent.request_lines == ["PUT /latest/api/token HTTP/1.1"],
          f"{what}: {silent.connections} connections, requests {silent.request_lines}: want one token request")
    silent.reset()


silent = Silent()   # accepts connections and never answers (a black-holed metadata address behaves so)
default = identity_cost(silent.url, "silent server")
asked_once(silent, "silent server")
control = identity_cost(silent.url, f"silent server, {CONTROL_S} s timeout", timeout=str(CONTROL_S))
asked_once(silent, f"silent server, {CONTROL_S} s timeout")
closed = identity_cost(refused_url(), f"closed port, {CONTROL_S} s timeout", timeout=str(CONTROL_S))
if None not in (default, control, closed):
    check(default < control, f"the default timeout: {default:.2f} s, not less than the "
          f"AWS_METADATA_SERVICE_TIMEOUT={CONTROL_S} run's {control:.2f} s")
    check(closed < control, f"a closed port: {closed:.2f} s, as long as a server that never answers "
          f"({control:.2f} s): the refused connection was waited out or retried")
silent.close()
srv.shutdown()
finish("measure_cli_imds")
