#!/usr/bin/python3
"""`rank s3://BUCKET/PREFIX/` over gzip-compressed objects (*.json.gz, *.jsonl.gz) in moto (signatures
checked), decompressed in memory by the loader that reads local .gz files: the rows equal those of
the same results decompressed by Python's gzip module into a local directory; a bomb (64 MiB + 1 of
text in 64 KB), a .jsonl.gz inflating past an object's 64 MiB, a truncated, a corrupt and a
non-gzip object are each skipped with a reason naming them; the S3 copies and the local plain ones
of the same results count once.  Usage: s3_rank_gzip.py INSTBENCH"""
import json
import os
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes", "rank")]
import rank_fixtures as fx                      # noqa: E402
from testlib import check, failures             # noqa: E402
from moto_server import MotoServer              # noqa: E402

BIN = sys.argv[1]


def rank(env, cwd, *args):
    """(rc, stdout, stderr) of `rank ARGS` ranking against the snapshot, as JSON."""
    return fx.run(BIN, list(args) + ["--source", "snapshot", "--format", "json"], env=env, cwd=cwd)


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    gz, plain = os.path.join(tmp, "gz"), os.path.join(tmp, "plain")
    n_good, bad = fx.write_gzip_inputs(gz, plain)   # the lines bomb past an object's 64 MiB
    m.create_bucket("gz-bkt")
    m.put_folder("gz-bkt", "runs/", gz)
    env = dict(m.env(), HOME=tmp)
    work = os.path.join(tmp, "cwd")
    os.mkdir(work)
    for problem in fx.gzip_problems(rank(env, work, plain), rank(env, work, "s3://gz-bkt/runs/"), n_good, bad,
                                    "s3://gz-bkt/runs/"):
        check(False, problem)
    check(os.listdir(work) == [], "rank wrote local files: %r" % os.listdir(work))
    # the same results compressed in S3 and plain here: each counted once
    rc, out, err = rank(env, work, "s3://gz-bkt/runs/", plain)
    doc = json.loads(out) if rc == 0 else {"inputs": {}}
    check(doc["inputs"].get("results") == n_good and doc["inputs"].get("duplicates") == n_good,
          "s3 .gz + local plain: inputs %r" % doc["inputs"])
    print("s3 gzip: %d results, %d skipped (%s)" % (n_good, len(bad), ", ".join(sorted(bad))))
sys.exit(1 if failures else 0)
