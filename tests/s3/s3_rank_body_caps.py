#!/usr/bin/python3
"""`rank s3://` keeps its memory bound against an endpoint that sends more than it lists.  Its
batches are bounded by the listed sizes (128 MiB) with up to 128 GETs in flight, so a GET may bring
at most its listed size and 1 MiB more (an object rewritten since the listing may have grown a
little), and an error answer at most 1 MiB (AWS's are a few hundred bytes); before, each could be
64 MiB, 8 GiB in all.  A scripted endpoint lists three objects: a real result file, served as
listed, is ranked; one listed as 100 bytes and sent as 3 MiB is skipped, the reason naming its
listed size; one answered HTTP 500 with a 3 MiB error document is skipped, the reason naming the
status, and not asked again (the same answer would come).
Usage: s3_rank_body_caps.py INSTBENCH"""
import os
import subprocess
import sys
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "tests", "lib")]
from testlib import ScriptedHandler, check, failures, offline_env, scratch_dir, scripted_server   # noqa: E402

BIN = sys.argv[1]
# a result `instbench measure` wrote, shipped with the repository
with open(os.path.join(ROOT, "docs", "gpu-runs", "2026-11-27-h100-cudnn", "measure.json"), "rb") as f:
    RESULT = f.read()
BIG = 3 << 20


class Scripted(ScriptedHandler):
    asked = []

    def do_GET(self):
        parts = urllib.parse.urlsplit(self.path)
        if urllib.parse.parse_qs(parts.query).get("list-type") == ["2"]:
            return self.answer(200, ("<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false"
                                     "</IsTruncated><Contents><Key>runs/a.json</Key><Size>%d</Size></Contents>"
                                     "<Contents><Key>runs/b.json</Key><Size>100</Size></Contents>"
                                     "<Contents><Key>runs/c.json</Key><Size>100</Size></Contents>"
                                     "</ListBucketResult>" % len(RESULT)).encode())
        self.asked.append(parts.path)
        if parts.path.endswith("/a.json"):
            return self.answer(200, RESULT)
        if parts.path.endswith("/b.json"):
            return self.answer(200, b" " * BIG)
        return self.answer(500, b"<Error><Code>InternalError</Code><Message>" + b"x" * BIG + b"</Message></Error>")


srv, url = scripted_server(Scripted)
try:
    env = offline_env(scratch_dir("instbench-s3-caps-"), {
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": url,
        "INSTBENCH_AWS_BACKOFF_BASE": "0.01"})
    p = subprocess.run([BIN, "rank", "s3://scr-bkt/runs/", "--source", "snapshot", "--price", "vm=1"], env=env,
                       capture_output=True, text=True, timeout=120)
    err = p.stderr
    check(p.returncode == 0 and "read 1 input: 1 result, 2 skipped" in err,
          "the result served as listed is ranked, the other two skipped: rc %d %s" % (p.returncode, err[-1500:]))
    b = [ln for ln in err.splitlines() if "skipped s3://scr-bkt/runs/b.json" in ln]
    check(len(b) == 1 and "response larger than %d bytes" % (100 + (1 << 20)) in b[0] and
          "listed as 100 bytes" in b[0], "an object sent larger than listed: %r" % b)
    c = [ln for ln in err.splitlines() if "skipped s3://scr-bkt/runs/c.json" in ln]
    check(len(c) == 1 and "HTTP 500 answer larger than %d bytes" % (1 << 20) in c[0],
          "a 3 MiB error document: %r" % c)
    check(Scripted.asked.count("/scr-bkt/runs/c.json") == 1,
          "a too long error answer is not asked again: %r" % Scripted.asked)
finally:
    srv.shutdown()
sys.exit(1 if failures else 0)
