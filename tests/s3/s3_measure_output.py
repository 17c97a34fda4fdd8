#!/usr/bin/python3
"""`measure --output` to S3: s3://BUCKET/PREFIX/ (the generated name under it) and
s3://BUCKET/KEY against moto (signatures checked; boto3 reads the objects and jsonschema checks
them), no write-check marker left behind, a missing bucket or a denied PutObject refused before the
run (the message naming what the user gave, S3's code and the status, not the marker), and so is an
endpoint that gives no answer at all (the message naming the endpoint and its variable); a presigned PUT
URL (made by `instbench presign`, checked by the fake AWS's S3 with botocore) consumed with no
credentials at all; an expired URL or one that is not presigned refused before the run (exit 2);
an upload that fails at the end (a tampered signature) saves the result locally, prints the path,
S3's error code on one line, exit 1, under the name the upload would have given the object (a
late AccessDenied to s3://BUCKET/PREFIX/); the signature never printed.
Usage: s3_measure_output.py INSTBENCH RESULT_SCHEMA"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")] + [HERE]
from testlib import FakeAws, absent_path, check, failures, refused_url   # noqa: E402
from moto_server import MotoServer             # noqa: E402
ABSENT = absent_path()

BIN, SCHEMA = sys.argv[1], json.load(open(sys.argv[2]))
TINY = ["--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "32",
        "--patch-size", "8", "--embed-dim", "64", "--heads", "2", "--classes", "10", "--batch-size", "4",
        "--steps", "3", "--warmup", "1", "--instance-type", "g5.xlarge", "--identity-mismatch", "ok",
        "--format", "json"]


def measure(env, cwd, *args):
    return subprocess.run([BIN, "measure"] + TINY + list(args), env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def valid(text, what):
    try:
        jsonschema.validate(json.loads(text), SCHEMA)
        return True
    except (ValueError, jsonschema.ValidationError) as e:
        check(False, "%s: not a valid result: %s" % (what, str(e)[:300]))
        return False


with MotoServer() as m, tempfile.TemporaryDirectory() as cwd:
    m.create_bucket("results-bkt")
    env = m.env()
    env["HOME"] = cwd
    p = measure(env, cwd, "--output", "s3://results-bkt/sweep 1/")
    check(p.returncode == 0, "measure --output s3://.../: rc %d %s" % (p.returncode, p.stderr[-500:]))
    keys = json.loads(m.s3("print(json.dumps([o['Key'] for o in s3.list_objects_v2(Bucket='results-bkt').get('Contents', [])]))"))
    check(len(keys) == 1 and re.fullmatch(r"sweep 1/g5\.xlarge-[0-9a-f]{6}-\d{8}T\d{6}\.\d{3}Z\.json", keys[0]),
          "one object with the generated name under the prefix, no marker left: %r" % keys)
    if keys:
        valid(m.s3("print(s3.get_object(Bucket='results-bkt', Key=args[0])['Body'].read().decode())", keys[0]), keys[0])
    check(not os.path.exists(os.path.join(cwd, "instbench-results")), "nothing written locally")
    p = measure(env, cwd, "--output", "s3://results-bkt/exact/r.json")
    check(p.returncode == 0, "--output s3://results-bkt/exact/r.json: %s" % p.stderr[-300:])
    if p.returncode == 0:
        valid(m.s3("print(s3.get_object(Bucket='results-bkt', Key='exact/r.json')['Body'].read().decode())"), "exact/r.json")
    t0 = time.time()
    p = measure(env, cwd, "--output", "s3://no-such-bkt/r.json", "--steps", "200")
    check(p.returncode == 1 and "no such bucket" in p.stderr and time.time() - t0 < 30,
          "a missing bucket, refused before the run: rc %d %s" % (p.returncode, p.stderr[-300:]))
    # the write check's failure speaks of what the user gave, with S3's code and the status, not
    # of the marker object it used
    check("s3://no-such-bkt/r.json:" in p.stderr and "NoSuchBucket" in p.stderr and "HTTP 404" in p.stderr
          and "write-check" not in p.stderr, "the write check's message: %s" % p.stderr[-300:])
    for bad, word in (("s3://", "names no bucket"), ("s3://Bad_Bkt/r.json", "not a valid bucket name")):
        p = measure(env, cwd, "--output", bad)
        check(p.returncode == 2 and word in p.stderr, "--output %s: rc %d %s" % (bad, p.returncode, p.stderr[-200:]))

fake = FakeAws("--s3-bucket", "sweep-bkt:us-east-1")
try:
    with tempfile.TemporaryDirectory() as cwd:
        signer = {"PATH": os.environ.get("PATH", ""), "HOME": cwd, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
                  "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_REGION": "us-east-1",
                  "AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_DISABLED": "true",
                  "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT}
        url = subprocess.run([BIN, "presign", "s3://sweep-bkt/inst/g5.json", "--method", "PUT", "--expires", "2h"],
                             env=signer, capture_output=True, text=True).stdout.strip()
        sig = re.search(r"X-Amz-Signature=([0-9a-f]+)", url).group(1)
        # the instance: no credentials, no endpoint settings, only the URL
        bare = {"PATH": os.environ.get("PATH", ""), "HOME": cwd, "AWS_EC2_METADATA_DISABLED": "true",
                "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT}
        p = measure(bare, cwd, "--output", url, "-v")
        check(p.returncode == 0 and fake.stats()["by_operation"].get("presigned") == 1,
              "measure --output PRESIGNED: rc %d %s" % (p.returncode, p.stderr[-500:]))
        check(sig not in p.stdout + p.stderr, "the signature was printed")
        fake_obj = fake.call("/__stats")   # noqa: F841 (the object's content is checked through a GET URL)
        get = subprocess.run([BIN, "presign", "s3://sweep-bkt/inst/g5.json"], env=signer, capture_output=True,
                             text=True).stdout.strip()
        import urllib.request
        with urllib.request.urlopen(get, timeout=30) as r:
            valid(r.read().decode(), "the presigned upload")
        p = measure(bare, cwd, "--output", url, "--dry-run")
        check(p.returncode == 0 and sig not in p.stdout + p.stderr, "--dry-run shows the signature: %s" % p.stdout)
        # refused before the run
        expired = subprocess.run([BIN, "presign", "s3://sweep-bkt/inst/x.json", "--method", "PUT", "--expires", "1"],
                                 env=signer, capture_output=True, text=True).stdout.strip()
        time.sleep(2.2)
        for bad, word in ((expired, "expired"), (fake.url + "/sweep-bkt/x.json", "not a presigned S3 URL")):
            p = measure(bare, cwd, "--output", bad)
            check(p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1,
                  "--output %s: rc %d %r" % (bad[:60], p.returncode, p.stderr[-300:]))
        # fails at the end: saved locally, path printed, S3's code on one line, exit 1
        tampered = url.replace("X-Amz-Signature=" + sig, "X-Amz-Signature=" + "0" * len(sig))
        p = measure(bare, cwd, "--output", tampered)
        m2 = re.search(r"saved to (\S+) instead", p.stderr)
        check(p.returncode == 1 and "SignatureDoesNotMatch" in p.stderr and m2, "a failing upload: rc %d %s"
              % (p.returncode, p.stderr[-500:]))
        if m2:
            path = os.path.join(cwd, m2.group(1))
            check(os.path.exists(path) and valid(open(path).read(), "the local fallback"), "no local file %s" % path)
        # denied at the write check: refused before the run, naming the prefix the user gave, S3's
        # code and the status, not the marker
        fake.control(faults=[{"kind": "denied", "count": 1, "service": "s3"}])
        t0 = time.time()
        p = measure(signer, cwd, "--output", "s3://sweep-bkt/denied/", "--steps", "200")
        fake.control(clear_faults=True)
        check(p.returncode == 1 and "s3://sweep-bkt/denied/:" in p.stderr and "AccessDenied" in p.stderr and
              "HTTP 403" in p.stderr and "write-check" not in p.stderr and time.time() - t0 < 30,
              "denied at the write check: rc %d %s" % (p.returncode, p.stderr[-400:]))
        # fails late with credentials (denied once the write check has passed): the local copy
        # has the basename of the key it was meant for, so uploading it again gives that key
        fake.control(reset_stats=True)
        run = subprocess.Popen([BIN, "measure"] + TINY + ["--steps", "400", "--output", "s3://sweep-bkt/late/"],
                               env=signer, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while run.poll() is None and time.time() < deadline and \
                not fake.stats()["by_operation"].get("DeleteObject"):   # the write check's marker removed
            time.sleep(0.01)
        fake.control(faults=[{"kind": "denied", "count": 100, "service": "s3"}])
        out, err = run.communicate(timeout=300)
        fake.control(clear_faults=True)
        meant = re.search(r"s3://sweep-bkt/late/(g5\.xlarge-[0-9a-f]{6}-\d{8}T\d{6}\.\d{3}Z\.json)", err)
        m2 = re.search(r"saved to (\S+) instead", err)
        check(run.returncode == 1 and meant and m2 and os.path.basename(m2.group(1)) == meant.group(1),
              "a late upload failure: the local copy's name is not the key's: rc %d %s" % (run.returncode, err[-600:]))
        if m2:
            path = os.path.join(cwd, m2.group(1))
            check(os.path.exists(path) and valid(open(path).read(), "the late fallback"), "no local file %s" % path)
finally:
    fake.stop()

# no HTTP answer at all (nothing listens there; a name that does not resolve): the message names
# the s3:// URL the user gave and the endpoint with its variable, never the marker object
with tempfile.TemporaryDirectory() as cwd:
    for ep in (refused_url(), "http://no-such-host.invalid"):
        env = {"PATH": os.environ.get("PATH", ""), "HOME": cwd, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
               "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_REGION": "us-east-1",
               "AWS_ENDPOINT_URL_S3": ep, "AWS_MAX_ATTEMPTS": "1", "AWS_EC2_METADATA_DISABLED": "true",
               "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
        t0 = time.time()
        p = measure(env, cwd, "--output", "s3://any-bkt/dir/r.json", "--steps", "200")
        check(p.returncode == 1 and "S3 write check (PutObject) s3://any-bkt/dir/r.json: S3 endpoint %s "
              "(AWS_ENDPOINT_URL_S3): " % ep in p.stderr and "write-check" not in p.stderr and "(1 attempt)" in p.stderr
              and time.time() - t0 < 30, "no answer at the write check (%s): rc %d %s" % (ep, p.returncode, p.stderr[-400:]))
sys.exit(1 if failures else 0)
