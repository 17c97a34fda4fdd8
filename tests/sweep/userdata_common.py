"""Shared by tests/sweep/sweep_userdata_run.py and sweep_userdata_archive.py: moto's S3 through
botocore (path style, presigned URLs), rendering through userdata_probe, the variables of one
candidate, a fake instance's IMDS answers, `instbench rank` of one result, the log-tail check.
Reads INSTBENCH and USERDATA_PROBE from sys.argv[1:3], as the tests take them."""
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")] + [HERE]
from testlib import check, require, scratch_dir  # noqa: E402
import botocore.config  # noqa: E402
import botocore.session  # noqa: E402

BIN, PROBE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
BUCKET = "sweep-bkt"
TMP = scratch_dir("ud-")
TINY = ["--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "32",
        "--patch-size", "8", "--embed-dim", "64", "--heads", "2", "--classes", "10", "--batch-size", "4",
        "--steps", "2", "--warmup", "0"]
SWEEP = "20261125-213005-9f3a"


def tar_gz(files):
    """A .tar.gz of {name: text} in memory."""
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return b.getvalue()


class S3:
    def __init__(self, m):
        self.c = botocore.session.get_session().create_client(
            "s3", endpoint_url=m.url, region_name="us-east-1", aws_access_key_id=m.access_key,
            aws_secret_access_key=m.secret_key,
            config=botocore.config.Config(signature_version="s3v4", s3={"addressing_style": "path"}))

    def put(self, key, body):
        self.c.put_object(Bucket=BUCKET, Key=key, Body=body)

    def get(self, key):
        try:
            return self.c.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        except self.c.exceptions.NoSuchKey:
            return None

    def url(self, method, key):
        return self.c.generate_presigned_url(method, Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=3600)


def render(v):
    path = os.path.join(TMP, "vars-%d.json" % time.monotonic_ns())
    with open(path, "w") as f:
        json.dump(v, f)
    p = subprocess.run([PROBE, "render", path], capture_output=True, text=True, timeout=60)
    require(p.returncode == 0, "render: " + p.stderr)
    return p.stdout


def vars_for(s3, case, archive_key, sha, nodes=1, args=TINY, minutes=1.5):
    pre = f"p/sweep-{SWEEP}/"
    v = {"sweep_id": SWEEP, "candidate_spec": f"{nodes}xg5.xlarge:spot", "nodes": nodes, "max_minutes": minutes,
         "region": "us-east-1", "market": "spot", "source_url": s3.url("get_object", archive_key),
         "source_sha256": sha, "result_url": s3.url("put_object", f"{pre}results/{case}.json"),
         "log_urls": [s3.url("put_object", f"{pre}logs/{case}-node{k}.log") for k in range(nodes)],
         "measure_args": args}
    if nodes > 1:
        v["rendezvous_url"] = s3.url("get_object", f"{pre}rendezvous/{case}")
    return v


def meta(index=0, itype="g5.xlarge"):
    return {"instance-id": "i-0123456789abcdef%d" % index, "instance-type": itype, "placement/region": "us-east-1",
            "placement/availability-zone": "us-east-1a", "instance-life-cycle": "spot",
            "ami-launch-index": str(index), "local-ipv4": "10.0.0.%d" % (5 + index)}


def ranked(result_bytes):
    """`instbench rank` over a directory holding only this result: its rows."""
    d = tempfile.mkdtemp(dir=TMP)
    with open(os.path.join(d, "r.json"), "wb") as f:
        f.write(result_bytes)
    p = subprocess.run([BIN, "rank", d, "--source", "snapshot", "--format", "json"], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, HOME=TMP, AWS_EC2_METADATA_DISABLED="true"))
    check(p.returncode == 0, f"rank: {p.stderr[-400:]}")
    return json.loads(p.stdout)["rows"] if p.returncode == 0 else []


def check_log_tail(s3, sb, key, what):
    """The log URL got exactly the last 64 KiB (or all) of the log as it was when the script failed."""
    tail = s3.get(key)
    if not check(tail is not None, f"{what}: no log at {key}"):
        return None
    log = sb.log_text().encode()
    at = log.find(tail)
    check(at >= 0 and len(tail) == min(65536, at + len(tail)), f"{what}: the log object is not the log's tail")
    check(b"failed (exit" in log[at + len(tail) - 200:at + len(tail)], f"{what}: the tail does not end at the failure")
    check(b"log tail delivered" in log[at + len(tail):], f"{what}: delivery not logged after the tail")
    return tail


