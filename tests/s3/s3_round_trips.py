#!/usr/bin/python3
"""`rank s3://` pays few round trips (issue 22): counted by the fake AWS's S3 (tests/fakes/fake_s3.py)
at 500 ms per answer, so a loaded machine's slow accepts still overlap: "sequential_rounds" is the
longest chain of requests each sent after the answer to the one before (tests/fakes/aws_fake_server.py),
i.e. the round trips rank made one after another.

600 results on pages of 200 keys: the first page is listed alone (it also confirms the bucket's
region, so no GET has to go alone), then each page's 200 objects go out 128 at a time (2 round
trips) with the next page listed in the first of them: 1 + 3 x 2 = 7 round trips.  Listing
everything first, then batches of 64 (before this change) took 3 + 10 = 13; listing first with
128 in flight, 3 + 6 = 9.  The rows are checked against the same results ranked from local files.
usage: s3_round_trips.py INSTBENCH"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes", "rank")] + [HERE]
import rank_fixtures as fx                      # noqa: E402
from testlib import FakeAws, absent_path, check, failures    # noqa: E402
ABSENT = absent_path()

BIN = sys.argv[1]
N, PAGE, IN_FLIGHT, LATENCY = 600, 200, 128, 0.5
PAGES = math.ceil(N / PAGE)
WANT = 1 + PAGES * math.ceil(PAGE / IN_FLIGHT)

fake = FakeAws("--s3-bucket", "rt-bkt:us-east-1", "--latency-ms", str(int(LATENCY * 1000)), "--timeout", "120")
try:
    with tempfile.TemporaryDirectory() as tmp:
        local = os.path.join(tmp, "local")
        os.mkdir(local)
        objs, rnd = {}, random.Random(22)
        for i in range(N):
            doc = fx.sweep_result(i, rnd, host="node%d" % i)
            fx.write_json(os.path.join(local, "r%04d.json" % i), doc)
            objs["rt-bkt/runs/r%04d.json" % i] = json.dumps(doc)
        fake.control(s3_objects=objs, s3_max_keys=PAGE)
        fake.control(reset_stats=True)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
               "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_REGION": "us-east-1",
               "AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_DISABLED": "true",
               "AWS_CONFIG_FILE": ABSENT, "AWS_SHARED_CREDENTIALS_FILE": ABSENT}
        args = ["--source", "snapshot", "--format", "json"]
        t0 = time.monotonic()
        p = subprocess.run([BIN, "rank", "s3://rt-bkt/runs/"] + args, env=env, capture_output=True, text=True,
                           timeout=300)
        wall = time.monotonic() - t0
        st = fake.stats()
        ref = subprocess.run([BIN, "rank", local] + args, capture_output=True, text=True, timeout=300)
        check(p.returncode == 0 and fx.row_keys(p.stdout) == fx.row_keys(ref.stdout) and fx.row_keys(p.stdout),
              "rank s3:// rc %d, rows differ from the local files': %s" % (p.returncode, p.stderr[-500:]))
        check(json.loads(p.stdout)["inputs"]["results"] == N if p.returncode == 0 else False, "not %d results" % N)
        ops = st["by_operation"]
        check(ops.get("ListObjectsV2") == PAGES and ops.get("GetObject") == N and st["requests"] == N + PAGES,
              "%d requests %r: want %d pages and %d GETs" % (st["requests"], ops, PAGES, N))
        check(st["sequential_rounds"] <= WANT, "%d round trips one after another (at most %d in flight): want %d"
              % (st["sequential_rounds"], st["max_in_flight"], WANT))
        check(st["max_in_flight"] > 64, "at most %d requests in flight: want up to %d" % (st["max_in_flight"], IN_FLIGHT))
        print("rank s3:// of %d objects on %d pages: %d requests, %d sequential round trips (want %d), "
              "%d in flight at most, %.2f s at %.0f ms per answer"
              % (N, PAGES, st["requests"], st["sequential_rounds"], WANT, st["max_in_flight"], wall, LATENCY * 1000))
finally:
    fake.stop()
sys.exit(1 if failures else 0)
