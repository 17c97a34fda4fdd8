#!/usr/bin/python3
"""A ListObjectsV2 that fails names the listing asked for, s3://BUCKET/PREFIX, not the bucket
alone: two prefixes of one bucket (rank s3://b/a/ s3://b/c/) would otherwise read alike.  Against
the fake AWS's S3 (signatures checked by botocore): S3's own errors (AccessDenied, NoSuchBucket, a
region it does not know) and a page that does not parse (cut short), through
s3_probe's listing; and through `rank`, a later page that fails while it is listed beside the GETs
of the page before, from a scripted endpoint that answers the second page 403 AccessDenied.
Usage: s3_list_messages.py S3_PROBE INSTBENCH"""
import os
import subprocess
import sys
import urllib.parse

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import (FakeAws, ScriptedHandler, absent_path, check, failures, offline_env,   # noqa: E402
                     scratch_dir, scripted_server)

PROBE, BIN = sys.argv[1], sys.argv[2]
KEYS = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "AWS_REGION": "us-east-1"}


def env_for(url):
    return offline_env(scratch_dir("instbench-s3-list-"), dict(KEYS, AWS_ENDPOINT_URL=url,
                                                                   INSTBENCH_AWS_BACKOFF_BASE="0.01"))


def probe(url, *args):
    r = subprocess.run([PROBE] + list(args), env=env_for(url), capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr


fake = FakeAws("--s3-bucket", "home-bkt:us-east-1")
try:
    fake.control(s3_objects={"home-bkt/runs/2026/a.json": "{}"}, s3_buckets={"far-bkt": "ap-future-9"})
    cases = (("denied", "home-bkt", "S3 ListObjectsV2 s3://home-bkt/runs/2026/: access denied (AccessDenied"),
             ("truncate", "home-bkt", "S3 ListObjectsV2 s3://home-bkt/runs/2026/: malformed XML"),
             (None, "no-such-bkt", "S3 ListObjectsV2 s3://no-such-bkt/runs/2026/: no such bucket"),
             (None, "far-bkt", "S3 ListObjectsV2 s3://far-bkt/runs/2026/: the bucket is in ap-future-9"))
    for fault, bucket, want in cases:
        fake.control(clear_faults=True, faults=[{"kind": fault, "count": 5, "service": "s3"}] if fault else [])
        rc, err = probe(fake.url, "list", bucket, "runs/2026/", "0", "10")
        check(rc == 1 and want in err, "%s %s: rc %d, wanted %r in %s" % (fault, bucket, rc, want, err))
finally:
    fake.stop()


class Scripted(ScriptedHandler):
    """Page one of s3://scr-bkt/runs/ (one object, truncated), the object, then AccessDenied for
    page two: rank asks for page two in the same round trip as the object's GET."""
    asked = []

    def do_GET(self):
        parts = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(parts.query)
        if parts.path.rstrip("/") == "/scr-bkt" and q.get("list-type") == ["2"]:
            page = 2 if "continuation-token" in q else 1
            self.asked.append("list%d" % page)
            if page == 1:
                return self.answer(200, "<ListBucketResult><EncodingType>url</EncodingType>"
                                   "<IsTruncated>true</IsTruncated><Contents><Key>runs/a.json</Key><Size>2</Size>"
                                   "</Contents><NextContinuationToken>t1</NextContinuationToken></ListBucketResult>")
            return self.answer(403, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>")
        self.asked.append(parts.path)
        return self.answer(200, "{}")


srv, url = scripted_server(Scripted)
try:
    p = subprocess.run([BIN, "rank", "s3://scr-bkt/runs/", "--source", "snapshot"], env=env_for(url),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 1 and "S3 ListObjectsV2 s3://scr-bkt/runs/: access denied" in p.stderr,
          "a later page fails: rc %d %s" % (p.returncode, p.stderr[-600:]))
    check(Scripted.asked[:1] == ["list1"] and sorted(Scripted.asked[1:3]) == ["/scr-bkt/runs/a.json", "list2"],
          "page two asked beside the GET: %r" % Scripted.asked)
finally:
    srv.shutdown()
sys.exit(1 if failures else 0)
