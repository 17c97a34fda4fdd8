"""workload.fingerprint: recomputed here from the result's own fields by the documented recipe
(SHA-256 over 'key=value' lines, floats as %.9g of their float32 value); equal when only the
instance, world size or cluster count change; different when any workload field changes."""
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import TINY, check, finish, run, scratch, validate  # noqa: E402


def f32(x):
    return "%.9g" % struct.unpack("f", struct.pack("f", x))[0]


def recompute(w):
    o = w["optimizer"]
    canon = ("instbench.workload/v1\n"
             f"img_size={w['img_size']}\npatch_size={w['patch_size']}\nin_chans={w['in_chans']}\n"
             f"embed_dim={w['embed_dim']}\ndepth={w['depth']}\nnum_heads={w['num_heads']}\n"
             f"mlp_ratio={'%.9g' % w['mlp_ratio']}\nnum_classes={w['num_classes']}\n"
             f"precision={w['precision']}\n"
             f"optimizer={o['name']}\nlr={f32(o['lr'])}\nbeta1={f32(o['beta1'])}\nbeta2={f32(o['beta2'])}\n"
             f"eps={f32(o['eps'])}\nweight_decay={f32(o['weight_decay'])}\n"
             f"batch_size_per_device={w['batch_size_per_device']}\ndata={w['data']}\n")
    return hashlib.sha256(canon.encode()).hexdigest()


def fingerprint(extra):
    out = os.path.join(scratch(), "r.json")
    p = run(TINY + ["--steps", "1", "--warmup", "0", "--output", out] + extra)
    if not check(p.returncode == 0, f"{extra}: exit {p.returncode}: {p.stderr[-300:]}"):
        return None
    doc = json.load(open(out))
    validate(doc, f"fingerprint {extra}")
    fp = doc["workload"]["fingerprint"]
    check(fp == recompute(doc["workload"]), f"{extra}: fingerprint is not SHA-256 of the documented canonical string")
    return fp


base = fingerprint([])
same = [["--instance-type", "g5.xlarge", "--region", "us-east-1", "--market", "spot", "--identity-mismatch", "ok"],
        ["--ranks", "2"], ["--count", "3"], ["--seed", "5"], ["--workers", "1"]]
for extra in same:
    fp = fingerprint(extra)
    check(fp == base, f"{extra} changed the fingerprint (not a workload field)")

changed = [["--precision", "fp32"], ["--optimizer", "adamw"], ["--lr", "0.002"], ["--batch-size", "8"],
           ["--data", "device"], ["--depth", "3"], ["--mlp-ratio", "2"], ["--classes", "12"],
           ["--image-size", "40"], ["--heads", "4"]]
seen = {base}
for extra in changed:
    fp = fingerprint(extra)
    check(fp is not None and fp not in seen, f"{extra} did not give a new fingerprint")
    seen.add(fp)
finish("measure_cli_fingerprint")
