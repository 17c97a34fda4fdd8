#!/usr/bin/python3
"""What moto does not do, against the fake AWS's S3 (tests/fakes/fake_s3.py; botocore's S3SigV4Auth
checks every signature): region redirects (301 PermanentRedirect and 400
AuthorizationHeaderMalformed) followed once and remembered, or (a region instbench does not know)
not followed and named with what to set; a redirect's Location shown, never followed;
SlowDown/503 retried with backoff and named when they persist, connections cut mid-body retried, a truncated listing refused, a
continuation token that never ends stopped at the page bound, an object over the cap refused,
keys with control characters and "../" returned as the same bytes and escaped in messages,
AccessDenied / NoSuchBucket messages.
Usage: s3_faults.py S3_PROBE"""
import json
import os
import socket
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import FakeAws, absent_path, check, failures   # noqa: E402
ABSENT = absent_path()

PROBE = sys.argv[1]
HOSTILE = ["../../etc/passwd", "a\x1b[31mred\x1b[0m.json", "ctl\x01\x7f.json", "dir/../up.json", "nl\nin key.json"]


def run(fake, *args, region="us-east-1"):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": ABSENT, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
           "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_REGION": region,
           "AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_DISABLED": "true",
           "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT,
           "INSTBENCH_AWS_BACKOFF_BASE": "0.01"}
    r = subprocess.run([PROBE] + list(args), env=env, capture_output=True, timeout=120)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


def ops(fake):
    return fake.stats()["by_operation"]


fake = FakeAws("--s3-bucket", "home-bkt:us-east-1", "--s3-bucket", "eu-bkt:eu-west-1")
try:
    objs = {"home-bkt/obj.json": "{\"home\": 1}", "eu-bkt/obj.json": "{\"eu\": 1}",
            "home-bkt/big.bin": {"size": 3000}}
    objs.update({"home-bkt/h/" + k: "x" for k in HOSTILE})
    fake.control(s3_objects=objs)

    # region redirects: followed once, then the bucket's region is remembered for the command
    for style in ("301", "400"):
        fake.control(s3_redirect=style, reset_stats=True)
        rc, out, err = run(fake, "twice-get", "eu-bkt", "obj.json")
        check(rc == 0 and out == b"{\"eu\": 1}" * 2, "%s redirect: rc %d %r %s" % (style, rc, out, err))
        st = fake.stats()
        check(st["by_operation"].get("redirect") == 1 and st["regions"].get("eu-west-1") == 2,
              "%s redirect: one redirect then eu-west-1 twice: %r %r" % (style, st["by_operation"], st["regions"]))
    rc, out, err = run(fake, "region", "eu-bkt")
    check(rc == 0 and out.decode().strip() == "eu-west-1", "HeadBucket across regions: %r %s" % (out, err))

    # a bucket in a region instbench does not know: not followed; one request, and the message
    # names the bucket's region, the one asked and what to set, which then works
    fake.control(s3_buckets={"far-bkt": "ap-future-9"}, s3_objects={"far-bkt/obj.json": "{\"far\": 1}"})
    for style, cs in (("301", "PermanentRedirect, HTTP 301"), ("400", "AuthorizationHeaderMalformed, HTTP 400")):
        fake.control(s3_redirect=style)
        for cmd in (["get", "far-bkt", "obj.json", "100"], ["region", "far-bkt"], ["list", "far-bkt", "", "0", "10"]):
            fake.control(reset_stats=True)
            rc, out, err = run(fake, *cmd)
            want = cs if cmd[0] != "region" else "HTTP " + style   # a HEAD answer has no body, no code
            check(rc == 1 and not out and "the bucket is in ap-future-9, not us-east-1" in err and want in err
                  and "set AWS_REGION=ap-future-9" in err and ops(fake).get("redirect") == 1,
                  "%s, bucket in an unknown region: rc %d %s %r" % (cmd[0], rc, err, ops(fake)))
    rc, out, err = run(fake, "get", "far-bkt", "obj.json", "100", region="ap-future-9")
    check(rc == 0 and out == b"{\"far\": 1}", "with the region the message names: rc %d %s" % (rc, err))
    fake.control(s3_redirect="301")

    # a redirect to a Location: shown (a signature in it masked), never followed: nothing reaches
    # the target, whose socket listens but never accepts (a connection would wait in its queue)
    target = socket.socket()
    target.bind(("127.0.0.1", 0))
    target.listen(16)
    target.setblocking(False)
    there = "http://127.0.0.1:%d/moved-bkt/obj.json" % target.getsockname()[1]
    cases = ((307, {"location": there + "?X-Amz-Signature=feedface", "region": "us-east-1"},
              ["the bucket is in us-east-1, the region asked, yet S3 redirects",
               "redirected to %s?X-Amz-Signature=***, not followed (TemporaryRedirect, HTTP 307)" % there]),
             (301, {"location": there}, ["redirected to %s, not followed (PermanentRedirect, HTTP 301)" % there]),
             (302, {}, ["redirected (Found, HTTP 302) with neither a Location nor the bucket's region"]))
    for status, how, words in cases:
        fake.control(s3_moved={"moved-bkt": dict(how, status=status)}, reset_stats=True)
        for cmd in (["get", "moved-bkt", "obj.json", "100"], ["region", "moved-bkt"]):
            rc, out, err = run(fake, *cmd)
            if cmd[0] == "region":
                words = [w.replace("(TemporaryRedirect, ", "(").replace("(PermanentRedirect, ", "(")
                         .replace("(Found, ", "(") for w in words]
            check(rc == 1 and not out and all(w in err for w in words) and "feedface" not in err,
                  "%s, HTTP %d redirect: rc %d %s" % (cmd[0], status, rc, err))
        check(ops(fake).get("moved") == 2, "one request per call, nothing followed: %r" % ops(fake))
    try:
        target.accept()
        check(False, "a request was sent to the redirect's target")
    except BlockingIOError:
        pass
    target.close()
    fake.control(s3_moved={})

    # SlowDown and 503: retried with backoff; named when they outlast the attempts
    for kind in ("throttle", "503", "500"):
        fake.control(faults=[{"kind": kind, "count": 2, "service": "s3"}], reset_stats=True)
        rc, out, err = run(fake, "get", "home-bkt", "obj.json", "100")
        check(rc == 0 and out == b"{\"home\": 1}", "%s x2 then success: rc %d %s" % (kind, rc, err))
        check(fake.stats()["by_operation"].get("GetObject") == 3, "%s: 3 attempts: %r" % (kind, ops(fake)))
    fake.control(faults=[{"kind": "throttle", "count": 5, "service": "s3"}])
    rc, out, err = run(fake, "get", "home-bkt", "obj.json", "100")
    check(rc == 1 and "slow down" in err and "SlowDown" in err and "3 attempts" in err,
          "persistent SlowDown: rc %d %s" % (rc, err))
    fake.control(clear_faults=True)

    # a connection cut mid-body is retried; a listing cut short (valid HTTP, broken XML) is refused
    fake.control(faults=[{"kind": "cut", "count": 1, "service": "s3"}])
    rc, out, err = run(fake, "get", "home-bkt", "obj.json", "100")
    check(rc == 0 and out == b"{\"home\": 1}", "cut once: rc %d %r %s" % (rc, out, err))
    fake.control(faults=[{"kind": "truncate", "count": 1, "service": "s3"}])
    rc, out, err = run(fake, "list", "home-bkt", "", "0", "10")
    check(rc == 1 and "ListObjectsV2" in err and not out, "truncated listing: rc %d %r %s" % (rc, out, err))

    # a continuation token that never ends stops at the page bound
    fake.control(s3_endless=True, reset_stats=True)
    rc, out, err = run(fake, "list", "home-bkt", "", "2", "7")
    check(rc == 1 and "7 pages" in err and ops(fake).get("ListObjectsV2") == 7,
          "endless listing: rc %d %s %r" % (rc, err, ops(fake)))
    fake.control(s3_endless=False)

    # an object over the cap
    rc, out, err = run(fake, "get", "home-bkt", "big.bin", "1000")
    check(rc == 1 and "larger than 1000 bytes" in err and not out, "over the cap: rc %d %s" % (rc, err))
    rc, out, err = run(fake, "get", "home-bkt", "big.bin", "3000")
    check(rc == 0 and out == b"x" * 3000, "at the cap: rc %d" % rc)

    # hostile keys: listed as the same bytes, escaped whenever shown
    rc, out, err = run(fake, "list", "home-bkt", "h/", "2", "10")
    keys = json.loads(out)["keys"] if rc == 0 else []
    check(sorted(keys) == sorted("h/" + k for k in HOSTILE), "hostile keys listed: %r %s" % (keys, err))
    for k in HOSTILE:
        rc, out, err = run(fake, "get", "home-bkt", "h/" + k, "10")
        check(rc == 0 and out == b"x", "get hostile key %r: rc %d %s" % (k, rc, err))
    rc, out, err = run(fake, "get", "home-bkt", "../\x1b[2J\x07gone", "10")
    check(rc == 1 and "NoSuchKey" in err and "\x1b" not in err and "\x07" not in err and "\\x1b" in err.replace("\\u001b", "\\x1b"),
          "a missing hostile key is shown escaped: %r" % err)

    # access denied, a missing bucket
    fake.control(faults=[{"kind": "denied", "count": 1, "service": "s3"}])
    rc, out, err = run(fake, "get", "home-bkt", "obj.json", "100")
    check(rc == 1 and "access denied" in err, "AccessDenied: %s" % err)
    rc, out, err = run(fake, "list", "no-such-bkt", "", "0", "10")
    check(rc == 1 and "no such bucket" in err and "s3://no-such-bkt" in err, "NoSuchBucket: %s" % err)

    check(fake.stats()["signature_failures"] == 0, "signature failures: %r" % fake.stats())
finally:
    fake.stop()
sys.exit(1 if failures else 0)
