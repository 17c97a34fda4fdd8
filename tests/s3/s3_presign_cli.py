#!/usr/bin/python3
"""`instbench presign`: its URLs work for a client holding no credentials (a plain HTTP PUT then
GET, checked by the fake AWS's S3 with botocore's S3SigV4QueryAuth), a tampered, moved or expired
URL is refused, the temporary-credentials warning (with the expiry time when the source
names one: container credentials from the fake AWS), bad input exits 2 with one line (a region
instbench does not know as well from AWS_REGION, AWS_DEFAULT_REGION or the config file as from
--region, the source named), and the examples of --help run as written.
Usage: s3_presign_cli.py INSTBENCH"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")] + [HERE]
from testlib import FakeAws, absent_path, check, failures   # noqa: E402
ABSENT = absent_path()

BIN = sys.argv[1]


def presign(env, *args):
    return subprocess.run([BIN, "presign"] + list(args), env=env, capture_output=True, text=True, timeout=60)


def http(method, url, data=None):
    """(status, body) of a plain request: no credentials, no signing."""
    req = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


# The URLs work for a client without credentials: the fake AWS's S3 checks presigned URLs with
# botocore's S3SigV4QueryAuth (moto answers presigned requests with an error once its signature
# checking is on, so it cannot be the judge here).
fake = FakeAws("--s3-bucket", "sweep-bkt:eu-west-1")
try:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": ABSENT, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
           "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_REGION": "eu-west-1",
           "AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_DISABLED": "true",
           "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT}
    key = "sweep 1/g5.xlarge ü.json"
    body = b'{"schema": "instbench.result/v1"}'
    p = presign(env, "s3://sweep-bkt/" + key, "--method", "PUT", "--expires", "30m")
    put_url = p.stdout.strip()
    check(p.returncode == 0 and put_url.startswith(fake.url + "/sweep-bkt/sweep%201/") and "X-Amz-Expires=1800" in put_url,
          "presign PUT: rc %d %r %s" % (p.returncode, put_url, p.stderr))
    status, _ = http("PUT", put_url, body)
    check(status == 200, "PUT through the presigned URL: HTTP %d" % status)
    p = presign(env, "s3://sweep-bkt/" + key)
    status, data = http("GET", p.stdout.strip())
    check(p.returncode == 0 and status == 200 and data == body, "GET through the presigned URL: %d %r" % (status, data))
    check(fake.stats()["by_operation"].get("presigned") == 2, "presigned requests: %r" % fake.stats())
    # a tampered signature, another key under the same signature, GET's URL used to PUT, an expired URL
    bad = re.sub(r"X-Amz-Signature=([0-9a-f])", lambda mm: "X-Amz-Signature=" + ("0" if mm.group(1) != "0" else "1"),
                 put_url)
    check(http("PUT", bad, b"x")[0] == 403, "a tampered signature was accepted")
    check(http("PUT", put_url.replace("g5.xlarge", "p5.48xlarge"), b"x")[0] == 403, "a URL moved to another key was accepted")
    check(http("PUT", p.stdout.strip(), b"x")[0] == 403, "a GET URL was accepted for a PUT")
    p = presign(env, "s3://sweep-bkt/" + key, "--expires", "1")
    time.sleep(2.5)
    status, data = http("GET", p.stdout.strip())
    check(status == 403 and b"expired" in data, "an expired URL was accepted: %d %r" % (status, data))
    check(not p.stderr, "long-lived credentials: no warning expected: %s" % p.stderr)
finally:
    fake.stop()

# temporary credentials: a warning, with the expiry time when the source names it
env = {"PATH": os.environ.get("PATH", ""), "HOME": ABSENT, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
       "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "tok", "AWS_REGION": "us-west-2",
       "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": ABSENT,
       "AWS_SHARED_CREDENTIALS_FILE": ABSENT}
p = presign(env, "s3://bkt-1/k", "--expires", "6h")
check(p.returncode == 0 and "X-Amz-Security-Token=tok" in p.stdout and "temporary" in p.stderr
      and "whatever --expires says" in p.stderr, "session token: %s" % p.stderr)
fake = FakeAws("--container-cred-ttl", "600")
try:
    cenv = {k: v for k, v in env.items() if not k.startswith("AWS_ACCESS") and k not in
            ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}
    cenv["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = fake.url + "/v2/credentials/x"
    p = presign(cenv, "s3://bkt-1/k", "--expires", "6h")
    check(p.returncode == 0 and "X-Amz-Security-Token=" in p.stdout and re.search(r"expire at .* UTC, in [0-9]+ min", p.stderr)
          and "not after --expires" in p.stderr, "container credentials for 10 min, --expires 6h: %s" % p.stderr)
    p = presign(cenv, "s3://bkt-1/k", "--expires", "5m")
    check(p.returncode == 0 and not p.stderr, "credentials outlive the URL: no warning: %s" % p.stderr)
finally:
    fake.stop()

# bad input: exit 2, one line, nothing on stdout
env["AWS_SESSION_TOKEN"] = ""
for args, word in ((["s3://"], "names no bucket"), (["s3:///key"], "names no bucket"),
                   (["s3://Bad_Bucket/k"], "not a valid bucket name"), (["s3://ab/k"], "not a valid bucket name"),
                   (["s3://a..b/k"], "not a valid bucket name"), (["s3://bkt-1"], "names no object"),
                   (["s3://xn--bkt/k"], "prefix 'xn--'"), (["s3://res.mrap/k"], "suffix '.mrap'"),
                   (["s3://res--use1-az4--x-s3/k"], "directory buckets (S3 Express One Zone) are not supported"),
                   (["https://bkt-1.s3.amazonaws.com/k"], "not an S3 URI"), ([], "one s3://BUCKET/KEY"),
                   (["s3://bkt-1/a", "s3://bkt-1/b"], "one s3://BUCKET/KEY"),
                   (["s3://bkt-1/k", "--expires", "0"], "--expires"), (["s3://bkt-1/k", "--expires", "604801"], "--expires"),
                   (["s3://bkt-1/k", "--expires", "8d"], "--expires"), (["s3://bkt-1/k", "--expires", "1.5s"], "--expires"),
                   (["s3://bkt-1/k", "--expires", "6x"], "--expires"), (["s3://bkt-1/k", "--method", "DELETE"], "--method"),
                   (["s3://bkt-1/k", "--region", "us-nowhere-1"], "--region")):
    p = presign(env, *args)
    check(p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1 and not p.stdout,
          "presign %s: rc %d, want 2 naming %r: %r" % (args, p.returncode, word, p.stderr))
for ok in ("1", "604800", "7d", "168h", "90s"):
    p = presign(env, "s3://bkt-1/k", "--expires", ok)
    check(p.returncode == 0, "--expires %s refused: %s" % (ok, p.stderr))

# no region anywhere: one line that says where it looked and names the flag; the flag, given, works
noreg = {k: v for k, v in env.items() if k != "AWS_REGION"}
p = presign(noreg, "s3://bkt-1/k")
check(p.returncode == 1 and not p.stdout and p.stderr.count("\n") == 1 and
      p.stderr.startswith("instbench presign: no AWS region (tried AWS_REGION, AWS_DEFAULT_REGION") and
      "give the bucket's region with --region REGION" in p.stderr,
      "presign without a region: rc %d (want 1, as --help's exit status says) %r" % (p.returncode, p.stderr))
advice = re.search(r"(--region [a-z0-9-]+)", p.stderr)
p = presign(noreg, "s3://bkt-1/k", *(advice.group(1).split() if advice else []))
check(advice is not None and p.returncode == 0 and p.stdout.startswith("https://"),
      "presign with the --region the advice names: rc %d %s" % (p.returncode, p.stderr))

# a region shaped like one but unknown is refused whichever source names it, as --region's is: exit
# 2, one line naming the source (the variable, the config file) and the value, nothing printed
cfgdir = tempfile.mkdtemp(prefix="presign-cfg")
cfg = os.path.join(cfgdir, "config")
with open(cfg, "w") as f:
    f.write("[default]\nregion = ap-southeast-99\n")
for src, extra, value in (("AWS_REGION", {"AWS_REGION": "us-east-9"}, "us-east-9"),
                          ("AWS_DEFAULT_REGION", {"AWS_DEFAULT_REGION": "eu-wst-1"}, "eu-wst-1"),
                          (cfg, {"AWS_CONFIG_FILE": cfg}, "ap-southeast-99")):
    p = presign(dict(noreg, **extra), "s3://bkt-1/k")
    check(p.returncode == 2 and not p.stdout and p.stderr.count("\n") == 1 and src in p.stderr and
          "'%s'" % value in p.stderr and "--region" in p.stderr,
          "presign with %s=%s: rc %d, want 2 naming the source: %r" % (src, value, p.returncode, p.stderr))
p = presign(dict(noreg, AWS_CONFIG_FILE=cfg), "s3://bkt-1/k", "--region", "us-west-2")
check(p.returncode == 0 and "us-west-2" in p.stdout, "--region over a wrong configured one: %r" % p.stderr)
shutil.rmtree(cfgdir)

# --help's exit statuses name each of those
helptext = presign(env, "--help").stdout
flat = " ".join(helptext.split())
check("1 no credentials, or no region (no --region, and none from AWS_REGION" in flat and
      "2 bad input (" in flat and "a region instbench does not know (--region's or theirs)" in flat, "presign --help's exit statuses: %r" % flat[-600:])

# the examples of --help, as written: with credentials alone when the example gives --region;
# one without it says it needs the region from elsewhere (and exits 1 without one)
# (help wraps at 80 columns: a description goes on under '  # ', a long example after ' \\')
pairs = re.findall(r"^  # (.*(?:\n  # .*)*)\n  \$ (.*)$", re.sub(r" \\\n +", " ", helptext), re.M)
check(len(pairs) >= 2, "presign --help has examples")
for what, line in pairs:
    words = shlex.split(line)
    given = "--region" in words
    p = subprocess.run([BIN] + words[1:], env=noreg if given else env, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and p.stdout.startswith("https://"), "example `%s`: rc %d %s" % (line, p.returncode, p.stderr))
    if not given:
        p = subprocess.run([BIN] + words[1:], env=noreg, capture_output=True, text=True, timeout=60)
        check(p.returncode == 1 and "no AWS region" in p.stderr and "--region" in " ".join(what.split()),
              "example `%s` without a region: rc %d, and its description must say it needs one: %r" % (
                  line, p.returncode, what))

sys.exit(1 if failures else 0)
