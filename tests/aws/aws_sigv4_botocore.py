#!/usr/bin/python3
"""Differential test: aws_sigv4_sign against botocore's SigV4Auth on random requests.

Random methods, paths (spaces, '%', '+', unicode, '.', '..', empty segments), strictly encoded
queries with repeated names and EC2-style numbered parameters (InstanceType.10 vs .2), headers
with mixed case, duplicates and runs of whitespace, bodies, session tokens, regions and times.
The canonical request, string to sign and signature must be identical.

usage: aws_sigv4_botocore.py PROBE [CASES] [SEED]
"""
import json
import random
import subprocess
import sys
from urllib.parse import quote

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

SEG_ALPHABET = list("abcXYZ019-._~ %+=&;:@!$'()*,") + ["é", "ሴ", "ü"]
BLACKLIST = {"x-amz-date", "authorization", "user-agent", "expect", "x-amzn-trace-id",
             "x-amz-security-token", "x-amz-content-sha256", "host"}


def rand_text(rng, alphabet, lo, hi):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def make_case(rng):
    segs = []
    for _ in range(rng.randint(0, 5)):
        r = rng.random()
        segs.append("." if r < 0.1 else ".." if r < 0.2 else "" if r < 0.3 else rand_text(rng, SEG_ALPHABET, 1, 8))
    path = "/" + "/".join(segs) + ("/" if rng.random() < 0.3 else "")
    pairs = []
    for _ in range(rng.randint(0, 14)):
        if rng.random() < 0.4:
            name = "InstanceType.%d" % rng.randint(1, 12)
        else:
            name = rand_text(rng, SEG_ALPHABET + ["/", "?"], 1, 6)
        value = "" if rng.random() < 0.15 else rand_text(rng, SEG_ALPHABET + ["/"], 1, 10)
        pairs.append("%s=%s" % (quote(name, safe="-_.~"), quote(value, safe="-_.~")))
    if pairs and rng.random() < 0.2:
        pairs.append(pairs[0])  # an exact repeat
    query = "&".join(pairs) if pairs else None
    headers = [["Host", rng.choice(["example.amazonaws.com", "127.0.0.1:8080", "ec2.us-west-2.amazonaws.com"])]]
    for _ in range(rng.randint(0, 5)):
        name = rand_text(rng, list("abcdefXYZ-0123"), 1, 10)
        if name.lower() in BLACKLIST:
            continue
        value = rand_text(rng, [chr(c) for c in range(33, 127)] + [" ", " ", "  ", "\t"], 0, 20)
        headers.append([name, value])
        if rng.random() < 0.2:
            headers.append([name.upper(), rand_text(rng, list("abc  d"), 1, 8)])  # a duplicate name
    method = rng.choice(["GET", "POST", "PUT", "DELETE"])
    body = rand_text(rng, list("{}\":abc ,=&"), 0, 60) if method in ("POST", "PUT") else ""
    token = rand_text(rng, list("ABCxyz0189+/="), 20, 80) if rng.random() < 0.4 else ""
    return {"method": method, "path": path, "query": query, "headers": headers, "body": body,
            "service": rng.choice(["ec2", "pricing", "service", "sts"]),
            "region": rng.choice(["us-east-1", "eu-central-1", "ap-south-1", "cn-north-1"]),
            "when": rng.randint(1262304000, 2000000000), "ak": "AKID" + rand_text(rng, list("ABC123"), 8, 16),
            "sk": rand_text(rng, list("abcXYZ019+/"), 20, 40), "token": token, "normalize": True}


def botocore_sign(c):
    import datetime
    amz_date = datetime.datetime.fromtimestamp(c["when"], datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    url = "http://%s%s" % (c["headers"][0][1], quote(c["path"], safe="/%+=&;:@!$'()*,~"))
    # botocore reads the path from the URL: give it the raw path by overriding after construction
    req = AWSRequest(method=c["method"], url="http://" + c["headers"][0][1] + "/", data=c["body"].encode())
    req.url = "http://%s%s%s" % (c["headers"][0][1], c["path"], ("?" + c["query"]) if c["query"] is not None else "")
    del url
    for name, value in c["headers"]:
        req.headers[name] = value  # HTTPHeaders appends: duplicates stay
    req.headers["X-Amz-Date"] = amz_date
    if c["token"]:
        req.headers["X-Amz-Security-Token"] = c["token"]
    req.context["timestamp"] = amz_date
    s = SigV4Auth(Credentials(c["ak"], c["sk"], c["token"] or None), c["service"], c["region"])
    cr = s.canonical_request(req)
    sts = s.string_to_sign(req, cr)
    return cr, sts, s.signature(sts, req)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    probe = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20261122
    rng = random.Random(seed)
    failures = 0
    cases = [make_case(rng) for _ in range(n)]
    # every case to one probe process, a request a line, a result a line
    p = subprocess.run([probe, "sign"], input="".join(json.dumps(c) + "\n" for c in cases), capture_output=True,
                       text=True, timeout=300)
    results = p.stdout.splitlines()
    if p.returncode not in (0, 1) or len(results) != n:
        print("probe: exit %d, %d results for %d requests: %s" % (p.returncode, len(results), n, p.stderr[-2000:]))
        sys.exit(1)
    for i, (c, line) in enumerate(zip(cases, results)):
        got = json.loads(line)
        if "error" in got:
            print("case %d: probe failed: %s" % (i, got["error"]))
            failures += 1
            continue
        cr, sts, sig = botocore_sign(c)
        if (got["canonical_request"], got["string_to_sign"], got["signature"]) != (cr, sts, sig):
            failures += 1
            print("case %d differs\nrequest: %s\n--- botocore canonical request\n%s\n--- ours\n%s\n"
                  % (i, json.dumps(c), cr, got["canonical_request"]))
        elif not got["authorization"].endswith("Signature=" + sig):
            failures += 1
            print("case %d: Authorization header does not carry the signature" % i)
    print("%d/%d random requests sign identically to botocore" % (n - failures, n))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
