#!/usr/bin/python3
"""`measure --output PRESIGNED-PUT-URL` in both of S3's presigned forms, with URLs made by botocore
(the reference), against the fake AWS's S3 (tests/fakes/fake_s3.py), which recomputes either form's
signature with botocore (issues 32 and 33):
  - S3's query-string form (AWSAccessKeyId, Signature, Expires: botocore's generate_presigned_url
    with signature_version "s3") is accepted, the result uploaded, and its expiry read from Expires
    (an hour away: accepted; 30 minutes away: the short-expiry warning; past: refused, exit 2);
  - a URL whose signature is only in the fragment ("...r.json#?X-Amz-Signature=...") is refused
    before anything is measured (exit 2), where it used to be measured and then refused by S3;
  - the signature, the access key id, the credential scope and the session token are never printed,
    whatever the form (query, fragment) and whether the URL is accepted or refused;
  - an upload answered with a redirect names its Location (masked) and is not sent there.
Usage: s3_presign_forms.py INSTBENCH"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import botocore.session
from botocore.config import Config

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")] + [HERE]
from testlib import FakeAws, absent_path, check, failures   # noqa: E402
ABSENT = absent_path()

BIN = os.path.abspath(sys.argv[1])
AK, SK, TOKEN = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None
TINY = ["--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "32",
        "--patch-size", "8", "--embed-dim", "64", "--heads", "2", "--classes", "10", "--batch-size", "4",
        "--steps", "3", "--warmup", "1", "--instance-type", "g5.xlarge", "--identity-mismatch", "ok",
        "--format", "json"]


def presign(fake, key, form, expires, method="put_object", token=None):
    """botocore's own presigned URL: form "s3" (query-string) or "s3v4"."""
    sess = botocore.session.get_session()
    c = sess.create_client("s3", region_name="us-east-1", endpoint_url=fake.url, aws_access_key_id=AK,
                           aws_secret_access_key=SK, aws_session_token=token,
                           config=Config(signature_version=form, s3={"addressing_style": "path"}))
    return c.generate_presigned_url(method, Params={"Bucket": "sweep-bkt", "Key": key}, ExpiresIn=expires)


def secrets_of(url):
    """The values that must never be printed: every authorising parameter's, in query or fragment."""
    parts = urllib.parse.urlsplit(url)
    out = []
    for text in (parts.query, parts.fragment.lstrip("?")):
        for k, v in urllib.parse.parse_qsl(text, keep_blank_values=True):
            if k in ("Signature", "AWSAccessKeyId", "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
                     "x-amz-security-token"):
                out += [v, urllib.parse.quote(v, safe="")]
    return [s for s in out if s]


def measure(cwd, url, *extra):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": cwd, "AWS_EC2_METADATA_DISABLED": "true",
           "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT}
    t0 = time.time()
    p = subprocess.run([BIN, "measure"] + TINY + ["--output", url] + list(extra), env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=300)
    return p, time.time() - t0


def no_secret(p, url, what):
    shown = p.stdout + p.stderr
    leaked = [s for s in secrets_of(url) if s in shown]
    check(not leaked, "%s: printed %s: %s" % (what, leaked, shown[-400:]))


fake = FakeAws("--s3-bucket", "sweep-bkt:us-east-1")
try:
    with tempfile.TemporaryDirectory() as cwd:
        # 1. the query-string form, accepted and uploaded
        url = presign(fake, "inst/v2.json", "s3", 7200)
        check("AWSAccessKeyId=" in url and "Signature=" in url and "Expires=" in url and "X-Amz-" not in url,
              "botocore made a query-string URL: %s" % url)
        before = fake.stats()["by_operation"].get("presigned", 0)
        p, _ = measure(cwd, url, "-v")
        after = fake.stats()["by_operation"].get("presigned", 0)
        check(p.returncode == 0 and after == before + 1,
              "the query-string form: uploaded through it: rc %d %s" % (p.returncode, p.stderr[-500:]))
        no_secret(p, url, "the query-string form, accepted")
        p, _ = measure(cwd, url, "--dry-run")
        check(p.returncode == 0, "--dry-run with the query-string form: %d %s" % (p.returncode, p.stderr[-300:]))
        no_secret(p, url, "the query-string form, --dry-run")

        # 2. its expiry, from Expires: 30 min away warns, past is refused before the run
        soon = presign(fake, "inst/soon.json", "s3", 1800)
        p, _ = measure(cwd, soon, "--dry-run")
        check(p.returncode == 0 and ("expires in 29 min" in p.stderr or "expires in 30 min" in p.stderr),
              "an URL expiring in 30 min: warned from Expires: %s" % p.stderr[-300:])
        past = presign(fake, "inst/past.json", "s3", 1)
        time.sleep(2.2)
        p, secs = measure(cwd, past, "--steps", "200")
        check(p.returncode == 2 and "expired" in p.stderr and secs < 30,
              "an expired query-string URL: refused before the run, exit 2: %d %s" % (p.returncode, p.stderr[-300:]))
        no_secret(p, past, "the query-string form, expired")

        # 3. the signature only in the fragment: refused before anything is measured
        v4 = presign(fake, "inst/frag.json", "s3v4", 7200)
        base, query = v4.split("?", 1)
        for frag in (base + "#?" + query, base + "#" + query):
            before = fake.stats()["by_operation"].get("presigned", 0)
            p, secs = measure(cwd, frag, "--steps", "200")
            check(p.returncode == 2 and "fragment" in p.stderr and secs < 30,
                  "signature in the fragment: refused before the run, exit 2: %d %.0fs %s" % (p.returncode, secs,
                                                                                              p.stderr[-300:]))
            check(fake.stats()["by_operation"].get("presigned", 0) == before, "... and nothing was sent")
            no_secret(p, frag, "the signature in the fragment")

        # 4. refused for its shape, in either form: the message masks what authorises
        v2 = presign(fake, "inst/half.json", "s3", 7200)
        half = "&".join(kv for kv in v2.split("?", 1)[1].split("&") if not kv.startswith("Expires="))
        for bad in (v2.split("?", 1)[0] + "?" + half,
                    v4.replace("X-Amz-Date=", "X-Amz-Dato=")):
            p, _ = measure(cwd, bad)
            check(p.returncode == 2 and "not a presigned S3 URL" in p.stderr,
                  "an incomplete presigned URL refused, exit 2: %d %s" % (p.returncode, p.stderr[-300:]))
            no_secret(p, bad, "an incomplete presigned URL")

        # 5. the upload answered with a redirect: where it points is said (its signature masked),
        # and the request is not sent there (the target listens but never accepts: a connection
        # would wait in its queue); the result is saved locally, exit 1
        target = socket.socket()
        target.bind(("127.0.0.1", 0))
        target.listen(16)
        target.setblocking(False)
        there = "http://127.0.0.1:%d/sweep-bkt/inst/moved.json" % target.getsockname()[1]
        moved = presign(fake, "inst/moved.json", "s3v4", 7200)
        fake.control(s3_moved={"sweep-bkt": {"status": 307, "location": there + "?" + moved.split("?", 1)[1]}})
        p, _ = measure(cwd, moved)
        fake.control(s3_moved={})
        check(p.returncode == 1 and "HTTP 307 TemporaryRedirect" in p.stderr and "redirected to %s?" % there in p.stderr
              and ", not followed" in p.stderr and "saved to" in p.stderr,
              "a redirected upload: rc %d %s" % (p.returncode, p.stderr[-600:]))
        no_secret(p, moved, "a redirected upload")
        try:
            target.accept()
            check(False, "the upload was sent to the redirect's target")
        except BlockingIOError:
            pass
        target.close()
finally:
    fake.stop()
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
