#!/usr/bin/python3
"""Presigned S3 URLs against botocore's generate_presigned_url, byte for byte: the same
credentials (with and without a session token), time (frozen for both: the probe takes it as an
argument, botocore's clock is patched), region, bucket, key (spaces, unicode, '/', reserved
characters) and expiry, for GET and PUT, path style (a custom endpoint) and virtual-hosted style
(`s3 = addressing_style = virtual` in the config file, read as botocore reads it), bucket names
at the edges of S3's naming rules (near a reserved prefix or suffix); the reserved names and
directory buckets refused with exit 2 naming the rule.  Expiries outside 1..604800 are refused
with exit 2.  Nothing is sent anywhere: both only make URLs.
Usage: s3_presign_botocore.py S3_PROBE"""
import calendar
import datetime as real_datetime
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import absent_path, check, failures, refused_url, scratch_dir   # noqa: E402

import botocore.auth                   # noqa: E402
import botocore.session                # noqa: E402
from botocore.config import Config     # noqa: E402

PROBE = sys.argv[1]
WHEN = real_datetime.datetime(2026, 11, 25, 18, 30, 7)


class FrozenDatetime(real_datetime.datetime):
    @classmethod
    def utcnow(cls):
        return WHEN

    @classmethod
    def now(cls, tz=None):
        return WHEN.replace(tzinfo=tz) if tz else WHEN


class FrozenModule:
    """botocore.auth's `datetime` module with the clock stopped at WHEN."""
    datetime = FrozenDatetime
    timezone = real_datetime.timezone
    timedelta = real_datetime.timedelta


botocore.auth.datetime = FrozenModule
# botocore signs with AWS's CRT when awscrt is installed (Debian's awscli brings it), with its own
# Python signer otherwise: both are references.  The Python signer's URL must equal ours byte for
# byte; the CRT's puts X-Amz-SignedHeaders before X-Amz-Expires, so with it the same parameters
# and the same signature are required, in any order.
PY_QUERY_AUTH = botocore.auth.S3SigV4QueryAuth
try:
    import botocore.crt.auth
    botocore.crt.auth.datetime = FrozenModule
    CRT_QUERY_AUTH = botocore.crt.auth.CrtS3SigV4QueryAuth
except ImportError:
    CRT_QUERY_AUTH = None

AK, SK = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+/=abc"
KEYS = ["result.json", "a b/c d.json", "dir/sub/ü-ñ-日本.json", "x+y=z&q?#frag.json",
        "~t/(p)*!'@:$,;.json", "trailing/", "sp  two//double.json"]

cfgdir = scratch_dir("instbench-presign-")
virtual_cfg = os.path.join(cfgdir, "config")
with open(virtual_cfg, "w") as f:
    f.write("[default]\ns3 =\n    addressing_style = virtual\n")
empty_cfg = os.path.join(cfgdir, "empty")
open(empty_cfg, "w").close()
# presigning sends nothing; were it ever to connect, this endpoint refuses at once
LOOP = refused_url()


SESSION = botocore.session.Session()
SESSION.set_config_variable("config_file", absent_path())
CLIENTS = {}   # one client per (region, endpoint, style, token): making one takes ~0.2 s, 200+ cases


def botocore_url(method, bucket, key, expires, region, endpoint, style, token, signer):
    # the signer class is looked up in AUTH_TYPE_MAPS each time a request is signed, so a client
    # made before the switch signs with the class set here
    botocore.auth.AUTH_TYPE_MAPS["s3v4-query"] = signer
    c = CLIENTS.get((region, endpoint, style, token))
    if c is None:
        c = CLIENTS[(region, endpoint, style, token)] = SESSION.create_client(
            "s3", region_name=region, endpoint_url=endpoint, aws_access_key_id=AK, aws_secret_access_key=SK,
            aws_session_token=token, config=Config(signature_version="s3v4", s3={"addressing_style": style}))
    op = "get_object" if method == "GET" else "put_object"
    return c.generate_presigned_url(op, Params={"Bucket": bucket, "Key": key}, ExpiresIn=expires)


def probe(method, bucket, key, expires, region, endpoint, cfg, token):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": cfgdir, "AWS_ACCESS_KEY_ID": AK,
           "AWS_SECRET_ACCESS_KEY": SK, "AWS_REGION": region, "AWS_ENDPOINT_URL": endpoint,
           "AWS_CONFIG_FILE": cfg, "AWS_SHARED_CREDENTIALS_FILE": empty_cfg,
           "AWS_EC2_METADATA_DISABLED": "true"}
    if token:
        env["AWS_SESSION_TOKEN"] = token
    r = subprocess.run([PROBE, "presign", method, bucket, key, str(expires),
                        str(calendar.timegm(WHEN.timetuple()))], env=env, capture_output=True, timeout=30)
    return r.returncode, r.stdout.decode("utf-8", "replace").strip(), r.stderr.decode("utf-8", "replace")


def split_url(u):
    base, _, q = u.partition("?")
    return base, sorted(q.split("&"))


cases = crt_ran = 0
for style, endpoint, cfg in (("path", LOOP, empty_cfg),
                             ("virtual", "http://s3.example.test:9000", virtual_cfg)):
    for region in ("us-west-2", "eu-central-1"):
        for token in (None, TOKEN):
            for method in ("GET", "PUT"):
                for i, key in enumerate(KEYS):
                    expires = (1, 3600, 21600, 604800)[i % 4]
                    want = botocore_url(method, "bkt-1", key, expires, region, endpoint, style, token,
                                        PY_QUERY_AUTH)
                    rc, got, err = probe(method, "bkt-1", key, expires, region, endpoint, cfg, token)
                    cases += 1
                    what = "%s %s %s token=%s key=%r" % (style, region, method, bool(token), key)
                    check(rc == 0 and got == want, "%s: rc %d\n  ours:     %s\n  botocore: %s\n  %s"
                          % (what, rc, got, want, err.strip()))
                    if CRT_QUERY_AUTH:
                        crt = botocore_url(method, "bkt-1", key, expires, region, endpoint, style, token,
                                           CRT_QUERY_AUTH)
                        check(split_url(got) == split_url(crt), "%s (CRT signer):\n  ours: %s\n  crt:  %s"
                              % (what, got, crt))
                        crt_ran += crt != want   # its parameter order: the CRT signer, not the cached Python one

check(not CRT_QUERY_AUTH or crt_ran == cases, "the CRT signer signed %d of %d cases" % (crt_ran, cases))

# bucket names at the edges of S3's naming rules (docs.aws.amazon.com/AmazonS3/latest/userguide/
# bucketnamingrules.html): near a reserved prefix or suffix but clear of it, taken and signed as
# botocore signs them, access point aliases too; the reserved ones and a directory bucket refused
# (exit 2) naming the rule
EDGE_OK = ["xn-a1", "x-xn--b", "sthree", "asthree-b", "amzn-s3-demo", "my-s3alias-x", "s3alias", "a-ol-s3",
           "b--ol-s3x", "mrap", "a-x-s3", "dir--x-s3a", "table-s3", "bucket-111122223333-us-west-2-an",
           # access point aliases stand in for a bucket name in object requests, signed alike
           "my-ap-abcdef1234-s3alias", "my-olap-abcdef1234--ol-s3"]
for style, endpoint, cfg in (("path", LOOP, empty_cfg),
                             ("virtual", "http://s3.example.test:9000", virtual_cfg)):
    for bucket in EDGE_OK + (["a.mrapx", "x.s3alias.y"] if style == "path" else []):
        want = botocore_url("PUT", bucket, "r.json", 3600, "us-west-2", endpoint, style, None, PY_QUERY_AUTH)
        rc, got, err = probe("PUT", bucket, "r.json", 3600, "us-west-2", endpoint, cfg, None)
        cases += 1
        check(rc == 0 and got == want, "bucket %r (%s): rc %d\n  ours:     %s\n  botocore: %s\n  %s"
              % (bucket, style, rc, got, want, err.strip()))
EDGE_BAD = [("xn--bucket", "prefix 'xn--'"), ("sthree-bucket", "prefix 'sthree-'"),
            ("sthree-configurator-x", "prefix 'sthree-'"), ("amzn-s3-demo-bucket", "prefix 'amzn-s3-demo-'"),
            ("mfzwi23gnjvgw.mrap", "suffix '.mrap'"), ("my-tables--table-s3", "suffix '--table-s3'"),
            ("b--usw2-az1--x-s3", "directory buckets (S3 Express One Zone) are not supported")]
for bucket, rule in EDGE_BAD:
    rc, got, err = probe("GET", bucket, "k", 60, "us-west-2", LOOP, empty_cfg, None)
    check(rc == 2 and not got and rule in err and bucket in err, "bucket %r: rc %d out %r err %r" % (bucket, rc, got, err))

# expiry bounds: S3's 1..604800, usage errors
for bad in (0, -5, 604801):
    rc, got, err = probe("GET", "bkt-1", "k", bad, "us-west-2", LOOP, empty_cfg, None)
    check(rc == 2 and not got and "604800" in err, "expires %d: rc %d out %r err %r" % (bad, rc, got, err))

print("%d presigned URLs compared with botocore %s (%s)" % (cases, botocore.__version__,
      "Python and CRT signers" if CRT_QUERY_AUTH else "Python signer"))
sys.exit(1 if failures else 0)
