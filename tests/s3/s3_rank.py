#!/usr/bin/python3
"""`rank s3://BUCKET/PREFIX/`: the results under a prefix, read into memory with a directory's rules
(*.json / *.jsonl, hidden parts left out, the 64 MiB cap, bad objects skipped with a reason, keys
escaped when shown and never used as local paths), each result counted once across S3 and local
inputs.  moto (signatures checked) holds the objects, uploaded by boto3; the reference is the same
files ranked from a local directory (the rows: configuration, samples/s, $/h) and the fixtures' own
count of results.  The fake AWS's S3 shows an object over the cap skipped from its listed size
without being fetched, and keys a misbehaving listing names outside the prefix ("other/x.json",
"/etc/passwd.json") dropped with a reason, never fetched; a listing that never ends stops at its
page bound and fails the command (exit 1, nothing ranked): part of a prefix is no ranking of it; a
bucket in a region instbench does not know is named with the variable to set.  `rank s3://` with no bucket or an invalid one exits 2.
Usage: s3_rank.py INSTBENCH"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes", "rank")] + [HERE]
import rank_fixtures as fx                      # noqa: E402
from testlib import FakeAws, absent_path, check, failures    # noqa: E402
ABSENT = absent_path()
from moto_server import MotoServer              # noqa: E402

BIN = sys.argv[1]
RANK = ["--source", "snapshot", "--format", "json"]


def rank(env, cwd, *args):
    return subprocess.run([BIN, "rank"] + list(args) + RANK, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def rows(p):
    return fx.row_keys(p.stdout)


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    local = os.path.join(tmp, "local")
    fx.write_seed_results(local)
    # a .jsonl of two more results
    extra = [fx.result("g5.2xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 230.0, host="n%d" % i) for i in range(2)]
    with open(os.path.join(local, "more.jsonl"), "w") as f:
        f.write("\n".join(json.dumps(d) for d in extra) + "\n")
    m.create_bucket("res-bkt")
    env = m.env()
    env["HOME"] = tmp
    work = os.path.join(tmp, "cwd")
    os.mkdir(work)
    m.put_folder("res-bkt", "sweep/", local)
    hostile = {"sweep/bad.json": "{not json", "sweep/.hidden/x.json": json.dumps(extra[0]),
               "sweep/notes.txt": "x", "sweep/ctl\x1b[31m.json": "[]",
               "sweep/sub/copy-of-g5.json": open(os.path.join(local, "g5.xlarge.json")).read()}
    m.s3("import json\nfor k, v in json.loads(args[0]).items():\n    s3.put_object(Bucket='res-bkt', Key=k, Body=v.encode())",
         json.dumps(hostile))

    ref = rank(env, work, local)
    got = rank(env, work, "s3://res-bkt/sweep/")
    check(ref.returncode == 0 and got.returncode == 0, "rank: local rc %d, s3 rc %d %s" % (ref.returncode, got.returncode,
                                                                                         got.stderr[-600:]))
    check(rows(got) == rows(ref) and rows(got), "rank s3:// rows differ from the same files ranked locally:\n%s\n%s"
          % (rows(got), rows(ref)))
    doc = json.loads(got.stdout) if got.returncode == 0 else {}
    err = got.stderr
    check("s3://res-bkt/sweep/bad.json" in err and "\x1b" not in err and ("\\x1b" in err or "\\u001b" in err),
          "bad objects are skipped with a reason, keys escaped: %r" % err[-800:])
    check("hidden" not in err and "notes.txt" not in err, "hidden and non-result objects are left out silently: %r" % err)
    check(os.listdir(work) == [], "rank wrote local files: %r" % os.listdir(work))
    # each result once across S3 and local inputs (the sub/ copy, the local directory again)
    both = rank(env, work, "s3://res-bkt/sweep/", local, "-v")
    check(both.returncode == 0 and rows(both) == rows(ref), "s3 + local: rows %r" % rows(both))
    check("duplicate" in both.stderr, "duplicates are reported: %s" % both.stderr[-400:])
    # an empty prefix, a missing bucket
    p = rank(env, work, "s3://res-bkt/nothing-here/")
    check(p.returncode == 1 and "no .json or .jsonl objects" in p.stderr, "empty prefix: %s" % p.stderr[-300:])
    p = rank(env, work, "s3://no-such-bkt/x/")
    check(p.returncode == 1 and "no such bucket" in p.stderr, "missing bucket: %s" % p.stderr[-300:])

for bad, word in (("s3://", "names no bucket"), ("s3://Bad_Bkt/x/", "not a valid bucket name")):
    p = subprocess.run([BIN, "rank", bad], capture_output=True, text=True)
    check(p.returncode == 2 and word in p.stderr, "rank %s: rc %d %s" % (bad, p.returncode, p.stderr))

# an object over the 64 MiB cap: skipped from the listing's size, never fetched
fake = FakeAws("--s3-bucket", "big-bkt:us-east-1")
try:
    with tempfile.TemporaryDirectory() as tmp:
        fx.write_json(os.path.join(tmp, "r.json"), fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 210.0))
        fake.control(s3_objects={"big-bkt/p/big.json": {"size": (64 << 20) + 1}, "big-bkt/p/r.json": open(os.path.join(tmp, "r.json")).read(),
                                 "big-bkt/p/../../escape.json": "{}", "big-bkt/p/b\x07.json": "{}"},
                     reset_stats=True)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
               "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_REGION": "us-east-1",
               "AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_DISABLED": "true",
               "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT}
        p = rank(env, tmp, "s3://big-bkt/p/")
        check(p.returncode == 0 and "big.json" in p.stderr and "64 MiB" in p.stderr, "over the cap: %s" % p.stderr[-300:])
        # "p/../../x": a ".." part is hidden, as in a directory walk; "p/b\a.json": read, skipped, shown escaped
        check("escape.json" not in p.stderr and "s3://big-bkt/p/b" in p.stderr and "\x07" not in p.stderr
              and sorted(os.listdir(tmp)) == ["r.json"],
              "'../' keys: %s %r" % (p.stderr[-300:], os.listdir(tmp)))
        check(fake.stats()["by_operation"].get("GetObject") == 2, "only the small objects fetched: %r" % fake.stats()["by_operation"])
        # a listing that names keys outside the prefix (a misbehaving endpoint): dropped with a
        # reason, never fetched nor ranked (issue 33)
        other = fx.result("g4dn.xlarge", "us-east-1", 1, 1, "Tesla T4", 99.0)
        fake.control(s3_objects={"big-bkt/other/x.json": json.dumps(other), "big-bkt//etc/passwd.json": json.dumps(other),
                                 "big-bkt/p/big.json": "{}"},
                     s3_list_any_prefix=True, reset_stats=True)
        p = rank(env, tmp, "s3://big-bkt/p/")
        ranked = rows(p) if p.returncode == 0 else None
        check(p.returncode == 0 and "s3://big-bkt/other/x.json" in p.stderr and "outside" in p.stderr and
              "s3://big-bkt//etc/passwd.json" in p.stderr,
              "keys outside the prefix dropped with a reason: %d %s" % (p.returncode, p.stderr[-600:]))
        check(ranked is not None and not any("g4dn" in r for r in ranked), "... and not ranked: %s" % ranked)
        check(fake.stats()["by_operation"].get("GetObject") == 3, "... nor fetched (only p/'s three): %r"
              % fake.stats()["by_operation"])
        # a listing that never ends: stopped at the page bound (10,000 pages, as the listing
        # itself, tests/s3/s3_faults.py, stops), and what it listed is not ranked as if it were all
        fake.control(s3_objects={"big-bkt/p/r.json": open(os.path.join(tmp, "r.json")).read()},
                     s3_list_any_prefix=False, s3_endless=True, reset_stats=True)
        p = rank(env, tmp, "s3://big-bkt/p/")
        lines = [ln for ln in p.stderr.splitlines() if ln.startswith("instbench rank:")]
        check(p.returncode == 1 and p.stdout == "" and len(lines) == 1 and "s3://big-bkt/p/" in lines[0]
              and "10000 pages" in lines[0] and "nothing is ranked" in lines[0],
              "endless listing: rc %d, stdout %r, %s" % (p.returncode, p.stdout[:200], p.stderr[-600:]))
        check(fake.stats()["by_operation"].get("ListObjectsV2") == 10000, "endless listing: %r"
              % fake.stats()["by_operation"])
        fake.control(s3_endless=False)
        # a bucket in a region instbench does not know: not followed, and the message says what
        # to set, naming the variable that gave the region
        fake.control(s3_buckets={"far-bkt": "ap-future-9"}, s3_objects={"far-bkt/p/r.json": "{}"})
        for var in ("AWS_REGION", "AWS_DEFAULT_REGION"):
            e = {k: v for k, v in env.items() if k != "AWS_REGION"}
            e[var] = "us-east-1"
            p = rank(e, tmp, "s3://far-bkt/p/")
            check(p.returncode == 1 and "the bucket is in ap-future-9, not us-east-1" in p.stderr and
                  "set %s=ap-future-9" % var in p.stderr, "%s, a bucket elsewhere: %s" % (var, p.stderr[-400:]))
finally:
    fake.stop()
sys.exit(1 if failures else 0)
