#!/usr/bin/python3
"""`rank` over gzip-compressed results (*.json.gz, *.jsonl.gz) in a directory, named, and by a glob:
the rows equal those of the same results decompressed by Python's gzip module into plain files;
bad archives (a bomb, lines past the 1 GiB a local .jsonl may hold, truncated, corrupt, not gzip)
are each skipped with a reason naming them, a bomb within bounded memory (peak RSS); a .jsonl.gz
cut short keeps the results of the lines before the cut, as many as zlib recovers from it.
Usage: rank_gzip.py INSTBENCH [--no-rss-bounds]   (the latter for sanitizer builds)"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx                 # noqa: E402
from testlib import check, failures        # noqa: E402

BIN = sys.argv[1]
# --no-rss-bounds: a sanitizer build, whose peaks are its quarantine and shadow memory
RSS_BOUNDS = "--no-rss-bounds" not in sys.argv[2:]
RANK = ["--source", "snapshot", "--format", "json"]


def rank(*args):
    """(rc, stdout, stderr) of `rank ARGS` ranking against the snapshot, as JSON."""
    return fx.run(BIN, list(args) + RANK)


def peak_rss(*args):
    """instbench's peak RSS in bytes (ru_maxrss of a Python child whose only child it is)."""
    code = ("import resource, subprocess, sys\nsubprocess.run(sys.argv[1:], capture_output=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    p = subprocess.run([sys.executable, "-c", code, BIN, "rank"] + list(args) + RANK, capture_output=True,
                       text=True, timeout=300)
    return int(p.stdout.split()[-1]) * 1024


with tempfile.TemporaryDirectory() as tmp:
    gz, plain = os.path.join(tmp, "gz"), os.path.join(tmp, "plain")
    n_good, bad = fx.write_gzip_inputs(gz, plain, jsonl_cap=1 << 30)
    for problem in fx.gzip_problems(rank(plain), rank(gz), n_good, bad, gz + os.sep):
        check(False, problem)

    # named, and by a pattern the shell left alone
    rc, out, err = rank(os.path.join(gz, "one.json.gz"), os.path.join(gz, "two.jsonl.gz"))
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 3, "named .gz files: rc %d %s" % (rc, err[-300:]))
    rc, out, err = rank(os.path.join(gz, "*.jsonl.gz"))
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 2, "a .jsonl.gz glob: rc %d %s" % (rc, err[-300:]))

    # the bomb alone: refused within bounded memory (64 MiB of text at most, as a plain file)
    rss = peak_rss(os.path.join(gz, "bomb.json.gz"), os.path.join(gz, "lines-bomb.jsonl.gz"))
    check(not RSS_BOUNDS or rss < 200e6, "a 64 MiB bomb and a 1 GiB one: peak RSS %.0f MB >= 200 MB" % (rss / 1e6))

    # a .jsonl.gz cut short: the results of every whole line zlib recovers before the cut
    cut_dir = os.path.join(tmp, "cut")
    os.mkdir(cut_dir)
    docs = [fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 200.0 + i, host="c%d" % i) for i in range(40)]
    whole = gzip.compress("".join(json.dumps(d) + "\n" for d in docs).encode())
    cut = whole[:len(whole) * 3 // 5]
    recovered = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut)
    want = recovered.count(b"\n")
    with open(os.path.join(cut_dir, "cut.jsonl.gz"), "wb") as f:
        f.write(cut)
    rc, out, err = rank(cut_dir)
    got = json.loads(out)["inputs"]["results"] if rc == 0 else None
    check(0 < want < 40 and got == want and "truncated gzip data" in err,
          "a cut .jsonl.gz: %r results, want %d: %s" % (got, want, err[-300:]))
    print("gzip inputs: %d results, %d skipped; bombs' peak RSS %.0f MB; cut .jsonl.gz: %d of 40 results"
          % (n_good, len(bad), rss / 1e6, want))
sys.exit(1 if failures else 0)
