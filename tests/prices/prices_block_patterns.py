#!/usr/bin/env python3
"""Issue 39: an --instance-types pattern with --market capacity-block means the types that market
sells.  'p*' matches p3.2xlarge too, for which AWS sells no Capacity Block (EC2 User Guide,
"Capacity Blocks for ML": p4d, p4de, p5, p5e, p5en, p6, trn1, trn2): the query must leave it out
and answer for the block families, against the fake AWS; p3.2xlarge named outright is still refused
(exit 2), and a pattern matching no block family is refused with that reason.
Usage: prices_block_patterns.py INSTBENCH"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import FakeAws, check, failures  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="instbench-block-patterns-")


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


start = datetime.datetime.now(datetime.timezone.utc).replace(hour=11, minute=30, second=0, microsecond=0) + \
    datetime.timedelta(days=3)
offer = {"id": "cb-%017x" % 1, "region": "us-east-1", "instance_type": "p5.48xlarge", "availability_zone": "us-east-1a",
         "instance_count": 1, "start": iso(start), "end": iso(start + datetime.timedelta(days=3)), "duration_hours": 72,
         "duration_minutes": 0, "upfront_fee": "7000.5", "currency": "USD"}
path = os.path.join(TMP, "blocks.json")
with open(path, "w") as f:
    json.dump([offer], f)
fake = FakeAws("--capacity-blocks", path, "--timeout", "120")
env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
env.update(HOME=os.path.join(TMP, "home"), XDG_CACHE_HOME=os.path.join(TMP, "cache"), AWS_EC2_METADATA_DISABLED="true",
           AWS_CONFIG_FILE=os.path.join(TMP, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(TMP, "none"),
           NO_COLOR="1", AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
           AWS_ENDPOINT_URL=fake.url)


def run(*args):
    p = subprocess.run([BIN, "prices", "--market", "capacity-block", "--duration", "3d", "--regions", "us-east-1",
                        "--format", "json", *args], env=env, capture_output=True, text=True, timeout=300, cwd=TMP)
    return p.returncode, p.stdout, p.stderr


try:
    rc, out, err = run("--instance-types", "p*")
    if check(rc == 0, "'p*' with capacity-block: exit 0, wanted (p3.2xlarge left out): %d %s" % (rc, err[-400:])):
        doc = json.loads(out)
        check([o["offering_id"] for o in doc["offerings"]] == [offer["id"]],
              "the p5.48xlarge block is found: %s" % out[:400])
        check("p3.2xlarge" not in out, "p3.2xlarge is never asked for: %s" % out[:400])
    rc, out, err = run("--instance-types", "p3.2xlarge")
    check(rc == 2 and "no Capacity Block is sold for p3.2xlarge" in err, "p3.2xlarge named outright: %d %s" % (rc, err))
    rc, out, err = run("--instance-types", "g5.*")
    check(rc == 2 and "Capacity Block" in err, "'g5.*' matches no block family: %d %s" % (rc, err))
finally:
    fake.stop()
    shutil.rmtree(TMP, ignore_errors=True)
sys.exit(1 if failures else 0)
