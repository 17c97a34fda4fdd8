"""Instance metadata is checked before it is printed or stored: an instance type, zone, region or
lifecycle that is not one (control characters, markup, several lines, too long, a zone of another
region, an answer over the client's 1 MiB cap) makes `measure` exit 1 with a message naming the
metadata path, shown escaped, and writes no result, instead of a result that `rank` would later
reject (or, for the oversized answer, a result measured as if off EC2).  Well-formed answers still work,
local zones included (us-west-2-lax-1a, whose region is us-west-2 when IMDS lacks placement/region).
The IMDS stand-in is imds_standin.py."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from imds_standin import start  # noqa: E402
from imds_standin import Imds  # noqa: E402
from measure_common import BIN, TINY, check, env, finish, scratch, validate  # noqa: E402

srv, ENDPOINT = start()
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def meta(**over):
    m = {"instance-type": "g5.xlarge", "placement/availability-zone": "us-west-2b",
         "placement/region": "us-west-2", "instance-id": "i-0123456789abcdef0", "instance-life-cycle": "spot"}
    for k, v in over.items():
        key = {"type": "instance-type", "az": "placement/availability-zone", "region": "placement/region",
               "lifecycle": "instance-life-cycle", "az_id": "placement/availability-zone-id"}[k]
        if v is None:
            m.pop(key)
        else:
            m[key] = v
    return m


def measure(m):
    Imds.meta = m
    d = scratch()
    out = os.path.join(d, "r.json")
    p = subprocess.run([BIN, "measure"] + TINY + ["--steps", "1", "--warmup", "0", "--output", out],
                       capture_output=True, text=True, timeout=120,
                       env=env(AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=ENDPOINT))
    return p, out


BAD = [  # (override, the metadata path the message must name)
    ({"type": "\x1b]52;c;aGVsbG8=\x07"}, "meta-data/instance-type"),
    ({"type": "g5.x<script>"}, "meta-data/instance-type"),
    ({"type": "g5." + "x" * 200}, "meta-data/instance-type"),
    ({"az": "\x1b[2J"}, "meta-data/placement/availability-zone"),
    ({"az": "us-west-2b\n\x1b[2J"}, "meta-data/placement/availability-zone"),
    ({"az": "=cmd|' /C calc'!A0"}, "meta-data/placement/availability-zone"),
    ({"az": "eu-west-1a"}, "meta-data/placement/availability-zone"),       # not a zone of us-west-2
    ({"region": "us west 2"}, "meta-data/placement/region"),
    ({"region": "us-west-2\x1b[2J"}, "meta-data/placement/region"),
    ({"lifecycle": "spot\x1b[2J"}, "meta-data/instance-life-cycle"),
    ({"lifecycle": "Spot Instance"}, "meta-data/instance-life-cycle"),
    ({"az_id": "us-west-2b"}, "meta-data/placement/availability-zone-id"),   # a name, not an ID
    ({"az_id": "usw2-az2\x1b[2J"}, "meta-data/placement/availability-zone-id"),
    # answers over the client's 1 MiB cap: an answer came, so it is malformed, not "off EC2"
    # (a required field, and the optional ones whose malformed answers fail too)
    ({"type": "g5." + "x" * (2 << 20)}, "meta-data/instance-type"),
    ({"region": "u" * (2 << 20)}, "meta-data/placement/region"),
    ({"az_id": "a" * (2 << 20)}, "meta-data/placement/availability-zone-id"),
    ({"lifecycle": "s" * (2 << 20)}, "meta-data/instance-life-cycle"),
]
for over, path in BAD:
    p, out = measure(meta(**over))
    what = f"IMDS {over!r}"[:120]
    check(p.returncode == 1, f"{what}: exit {p.returncode} (want 1): {p.stderr[-300:]}")
    check(path in p.stderr, f"{what}: message does not name {path}: {p.stderr[-300:]}")
    check(len(p.stderr) < 4000, f"{what}: the answer echoed: {len(p.stderr)} bytes on stderr")
    check(not CONTROL.search(p.stderr + p.stdout), f"{what}: raw control characters on the terminal: {p.stderr!r}")
    check(not os.path.exists(out), f"{what}: a result was written")

GOOD = [  # (override, expected instance fields)
    ({"az": "us-west-2-lax-1a"}, {"availability_zone": "us-west-2-lax-1a", "region": "us-west-2", "market": "spot"}),
    ({"az": "us-west-2-lax-1a", "region": None}, {"availability_zone": "us-west-2-lax-1a", "region": "us-west-2"}),
    ({"region": None}, {"availability_zone": "us-west-2b", "region": "us-west-2"}),
    ({"lifecycle": "scheduled"}, {"market": None, "type": "g5.xlarge"}),
    ({"lifecycle": "on-demand\n"}, {"market": "on-demand"}),
    # the zone's ID beside its name (issue 13): recorded when IMDS says it, null when it does not
    ({"az_id": "usw2-az3"}, {"availability_zone": "us-west-2b", "availability_zone_id": "usw2-az3"}),
    ({"az": "us-west-2-lax-1a", "az_id": "usw2-lax1-az1"},
     {"availability_zone": "us-west-2-lax-1a", "availability_zone_id": "usw2-lax1-az1"}),
    ({}, {"availability_zone": "us-west-2b", "availability_zone_id": None}),
]
for over, want in GOOD:
    p, out = measure(meta(**over))
    what = f"IMDS {over!r}"
    if not check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-400:]}"):
        continue
    doc = json.load(open(out))
    validate(doc, what)
    got = {k: doc["instance"][k] for k in want}
    check(got == want and doc["instance"]["source"] == "imds", f"{what}: {doc['instance']} lacks {want}")

srv.shutdown()
finish("measure_cli_imds_hostile")
