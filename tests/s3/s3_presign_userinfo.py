#!/usr/bin/python3
"""An S3 endpoint URL with a user name and password (AWS_ENDPOINT_URL=http://user:pw@host:port),
compared with botocore (the moto venv's).  botocore signs the Host without the userinfo and keeps
the userinfo in the URL, so its presigned URL hands the password to whoever gets it.  instbench:
`presign` refuses such an endpoint (exit 2), naming the variable that set it and showing the URL
as http://***@host; a signed request (`rank s3://`) goes out with the Host botocore signs (the fake
AWS recomputes every signature with botocore); the password is never printed, with -v either.
Usage: s3_presign_userinfo.py INSTBENCH"""
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from botocore_ref import VENV_PY   # noqa: E402
from testlib import FakeAws, check, failures, offline_env, scratch_dir   # noqa: E402

BIN = sys.argv[1]
PASSWORD = "pw-s3cr3t-7f1c"
KEYS = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "AWS_REGION": "us-east-1"}

# the reference's behaviour, which the refusal's reason states
BOTO = r"""
import sys, boto3
from botocore.config import Config
c = boto3.client("s3", region_name="us-east-1", endpoint_url=sys.argv[1], aws_access_key_id="AKIDEXAMPLE",
                 aws_secret_access_key="x", config=Config(signature_version="s3v4"))
print(c.generate_presigned_url("get_object", Params={"Bucket": "bkt", "Key": "k"}, ExpiresIn=60))
"""
if os.path.exists(VENV_PY):
    url = subprocess.run([VENV_PY, "-c", BOTO, "http://user:%s@127.0.0.1:9000" % PASSWORD], capture_output=True,
                         text=True, timeout=60).stdout
    check(url.startswith("http://user:%s@127.0.0.1:9000/bkt/k?" % PASSWORD),
          "botocore keeps the userinfo in a presigned URL: %r" % url)

fake = FakeAws("--s3-bucket", "bkt:us-east-1")
try:
    fake.control(s3_objects={"bkt/runs/a.json": "{}"})
    host = fake.url.split("://", 1)[1]
    for var in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        env = offline_env(scratch_dir("instbench-userinfo-"),
                          dict(KEYS, **{var: "http://user:%s@%s" % (PASSWORD, host)}))
        for args in (["presign", "s3://bkt/runs/a.json", "--method", "GET", "--expires", "1h"],
                     ["rank", "s3://bkt/runs/", "--source", "snapshot"]):
            fake.control(reset_stats=True)
            p = subprocess.run([BIN, "-v"] + args, env=env, capture_output=True, text=True, timeout=120)
            out, st = p.stdout + p.stderr, fake.stats()
            what = "%s=http://user:...@ %s" % (var, args[0])
            check(PASSWORD not in out and "user:" not in out, "%s: the userinfo printed: %s" % (what, out[-800:]))
            if args[0] == "presign":
                check(p.returncode == 2 and not p.stdout and "instbench presign: %s 'http://***@%s' has a user name or "
                      "password before the host" % (var, host) in p.stderr,
                      "%s: refused naming the variable: rc %d %s" % (what, p.returncode, out[-800:]))
                check(st["requests"] == 0, "%s: requests sent: %r" % (what, st))
            else:   # the object is not a result: skipped, after a listing and a GET that verified
                check(st["by_operation"].get("ListObjectsV2") == 1 and st["by_operation"].get("GetObject") == 1
                      and st["signature_failures"] == 0, "%s: signed as botocore signs: %r %s" % (what, st, out[-600:]))
finally:
    fake.stop()
sys.exit(1 if failures else 0)
