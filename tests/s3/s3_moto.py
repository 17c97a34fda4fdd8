#!/usr/bin/python3
"""S3 round trips through instbench's client (tests/s3/s3_probe) against moto's server with
signature checking on; boto3 (moto's venv) is the independent side: it lists and reads what we
wrote and writes what we read.
  - PutObject/GetObject with keys holding spaces, unicode, '/', '+', '=', '&', '?', '#', '%'
    and a control character, bodies compared byte for byte both ways
  - ListObjectsV2 over 1,500 objects: 100-key pages (15 pages) and S3's default 1000 (2 pages);
    a page bound below what the listing needs is an error, not a partial answer
  - HeadBucket names a bucket's region (eu-west-1)
  - a wrong secret key: SignatureDoesNotMatch, exit 1; a missing bucket/object: NoSuchBucket/NoSuchKey
Usage: s3_moto.py S3_PROBE"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
sys.path.insert(0, HERE)
from testlib import check, failures   # noqa: E402
from moto_server import MotoServer    # noqa: E402

PROBE = sys.argv[1]
N = 1500
KEYS = ["plain.json", "with space/and more.json", "unicode/ü-日本-🙂.json", "r/a+b=c&d?e#f%g.json",
        "ctl/a\x01b\x1fc.json", "deep/a/b/c/d/e.json", "trailing space .json"]


def probe(m, *args, env=None):
    r = subprocess.run([PROBE] + list(args), env=env or m.env(), capture_output=True, timeout=300)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    m.create_bucket("bkt")
    # ours -> boto3
    for i, key in enumerate(KEYS):
        body = ("{\"k\": %d, \"s\": \"\\u00fc\"}" % i).encode() + bytes(range(256))
        path = os.path.join(tmp, "body")
        open(path, "wb").write(body)
        rc, _, err = probe(m, "put", "bkt", key, path)
        check(rc == 0, "put %r: rc %d %s" % (key, rc, err))
        got = m.s3("print(s3.get_object(Bucket='bkt', Key=args[0])['Body'].read().hex())", key)
        check(got == body.hex(), "boto3 reads %r back differently" % key)
        rc, out, err = probe(m, "get", "bkt", key, "100000")
        check(rc == 0 and out == body, "get %r: rc %d, %d bytes %s" % (key, rc, len(out), err))
    listed = json.loads(m.s3("print(json.dumps([o['Key'] for o in s3.list_objects_v2(Bucket='bkt')['Contents']]))"))
    check(sorted(listed) == sorted(KEYS), "boto3 lists %r" % listed)
    rc, out, err = probe(m, "list", "bkt", "", "3", "10")
    check(rc == 0 and sorted(json.loads(out)["keys"]) == sorted(KEYS), "our listing: %s %s" % (out, err))
    # boto3 -> ours
    m.s3("s3.put_object(Bucket='bkt', Key=args[0], Body=bytes.fromhex(args[1]))", "from boto3/é x.bin", "00ff10")
    rc, out, err = probe(m, "get", "bkt", "from boto3/é x.bin", "10")
    check(rc == 0 and out == b"\x00\xff\x10", "get of boto3's object: %r %s" % (out, err))
    # the body cap: a 3-byte object with a 2-byte cap is refused
    rc, out, err = probe(m, "get", "bkt", "from boto3/é x.bin", "2")
    check(rc == 1 and "larger than 2 bytes" in err, "cap: rc %d %s" % (rc, err))

    # 1,500 objects across pages
    m.s3("""
import concurrent.futures as cf
with cf.ThreadPoolExecutor(16) as ex:
    list(ex.map(lambda i: s3.put_object(Bucket='bkt', Key='many/%05d.json' % i, Body=b'{}'), range(int(args[0]))))
""", str(N))
    want = json.loads(m.s3("""
p = s3.get_paginator('list_objects_v2')
print(json.dumps([o['Key'] for page in p.paginate(Bucket='bkt', Prefix='many/') for o in page['Contents']]))"""))
    check(len(want) == N, "boto3 lists %d objects" % len(want))
    for page_size, pages in ((100, 15), (0, 2)):
        rc, out, err = probe(m, "list", "bkt", "many/", str(page_size), "100")
        got = json.loads(out) if rc == 0 else {}
        check(rc == 0 and got["keys"] == want and got["pages"] == pages,
              "list many/ by %d: rc %d, %d keys, %s pages %s" % (page_size, rc, len(got.get("keys", [])),
                                                                got.get("pages"), err[-300:]))
    rc, out, err = probe(m, "list", "bkt", "many/", "100", "14")
    check(rc == 1 and "14 pages" in err and not out, "a listing over its page bound: rc %d %s" % (rc, err))

    # the bucket's region
    m.create_bucket("bkt-eu", region="eu-west-1")
    rc, out, err = probe(m, "region", "bkt-eu")
    check(rc == 0 and out.decode().strip() == "eu-west-1", "HeadBucket bkt-eu: %r %s" % (out, err))
    rc, out, err = probe(m, "region", "no-such-bucket")
    check(rc == 1 and "no such bucket" in err, "HeadBucket of a missing bucket: %s" % err)
    rc, out, err = probe(m, "get", "bkt", "no/such key", "10")
    check(rc == 1 and "NoSuchKey" in err and "s3://bkt/no/such key" in err, "a missing key: %s" % err)

    # a wrong signature fails
    env = m.env()
    env["AWS_SECRET_ACCESS_KEY"] = m.secret_key[:-1] + ("A" if m.secret_key[-1] != "A" else "B")
    rc, out, err = probe(m, "get", "bkt", "plain.json", "1000", env=env)
    check(rc == 1 and "SignatureDoesNotMatch" in err, "a wrong secret: rc %d %s" % (rc, err))

sys.exit(1 if failures else 0)
