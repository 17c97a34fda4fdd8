#!/usr/bin/python3
"""`rank s3://BUCKET/PREFIX/` over gzip-compressed objects (*.json.gz, *.jsonl.gz) in moto (signatures
checked), decompressed in memory by the loader that reads local .gz files: the rows equal those of
the same results decompressed by Python's gzip module into a local directory; a bomb (64 MiB + 1 of
text in 64 KB), a .jsonl.gz inflating past an object's 64 MiB, a truncated, a corrupt and a
non-gzip object are each skipped with a reason naming them; the S3 copies and the local plain ones
of the same results count once.  Usage: s3_rank_gzip.py INSTBENCH"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE, os.path.join(os.path.dirname(HERE), "rank")]
import rank_fixtures as fx                      # noqa: E402
from testlib import check, failures             # noqa: E402
from moto_server import MotoServer              # noqa: E402

BIN = sys.argv[1]
RANK = ["--prices", "snapshot", "--format", "json"]


def rank(env, cwd, *args):
    return subprocess.run([BIN, "rank"] + list(args) + RANK, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    gz, plain = os.path.join(tmp, "gz"), os.path.join(tmp, "plain")
    n_good, bad = fx.write_gzip_inputs(gz, plain)   # the lines bomb past an object's 64 MiB
    m.create_bucket("gz-bkt")
    env = m.env()
    env["HOME"] = tmp
    work = os.path.join(tmp, "cwd")
    os.mkdir(work)
    up = "import os\nfor n in args[1:]:\n    s3.put_object(Bucket='gz-bkt', Key='runs/' + n, Body=open(os.path.join(args[0], n), 'rb').read())"
    m.s3(up, gz, *sorted(os.listdir(gz)))

    ref = rank(env, work, plain)
    got = rank(env, work, "s3://gz-bkt/runs/")
    check(ref.returncode == 0 and got.returncode == 0, "rc: plain %d, s3 %d %s" % (ref.returncode, got.returncode,
                                                                               got.stderr[-600:]))
    check(fx.row_keys(got.stdout) == fx.row_keys(ref.stdout) and fx.row_keys(got.stdout),
          "rank s3:// of .gz objects: rows differ from the plain files':\n%s\n%s"
          % (fx.row_keys(got.stdout), fx.row_keys(ref.stdout)))
    inputs = json.loads(got.stdout)["inputs"] if got.returncode == 0 else {}
    check(inputs.get("results") == n_good and inputs.get("skipped") == len(bad),
          "inputs %r: want %d results, %d skipped" % (inputs, n_good, len(bad)))
    for name, word in bad.items():
        line = [ln for ln in got.stderr.splitlines() if "s3://gz-bkt/runs/" + name in ln]
        check(len(line) == 1 and word in line[0], "%s: want one skip line with %r: %r" % (name, word, line))
    check(os.listdir(work) == [], "rank wrote local files: %r" % os.listdir(work))
    # the same results compressed in S3 and plain here: each counted once
    both = rank(env, work, "s3://gz-bkt/runs/", plain)
    doc = json.loads(both.stdout) if both.returncode == 0 else {"inputs": {}}
    check(doc["inputs"].get("results") == n_good and doc["inputs"].get("duplicates") == n_good,
          "s3 .gz + local plain: inputs %r" % doc["inputs"])
    print("s3 gzip: %d results, %d skipped (%s)" % (n_good, len(bad), ", ".join(sorted(bad))))
sys.exit(1 if failures else 0)
