#!/usr/bin/python3
"""`instbench sweep plan` against moto's EC2 (signatures and IAM checked) and the fake AWS's SSM
(moto 5.2.5 has none of the AMI parameters; the fake accepts moto's key, so one set of
credentials signs both), prices from the snapshot.  Every line of the plan is recomputed here
from configs/prices-snapshot.json: price per node-hour (on-demand; spot the highest
Availability Zone's price, capped at on-demand, or on-demand when no zone has one), worst case
nodes x price x minutes / 60, total, verdict; the AMI of each candidate is the SSM parameter of
its kind (NVIDIA GPU -> Deep Learning Base OSS AMI, none -> Canonical Ubuntu).
Every JSON plan is validated against schemas/sweep-plan-v1.json.
Also: the table shows the same numbers; DryRun refused by IAM (exit 1, naming the action); the
IAM policy of docs/usage.md is enough for a plan; --ami with its architecture checked; bad input
exits 2 before any AWS request, with nothing launched.
Usage: sweep_plan.py INSTBENCH"""
import decimal
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures, FakeAws, availability_zone, usd   # noqa: E402
from moto_server import MotoServer                                # noqa: E402

BIN = sys.argv[1]
DLAMI = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
UBUNTU = "/aws/service/canonical/ubuntu/server/22.04/stable/current/amd64/hvm/ebs-gp2/ami-id"
SNAP = json.load(open(os.path.join(ROOT, "configs", "prices-snapshot.json")))
RECORDS = {(r["instance_type"], r["region"]): r for r in SNAP["prices"]}


def expected(spec, region, minutes):
    """(type, nodes, spot, usd per node-hour, worst case, spot at on-demand, zones) from the snapshot."""
    m = re.fullmatch(r"(?:(\d+)\s*x\s*)?([a-z0-9.-]+)(?::(spot|on-demand))?", spec)
    nodes, typ, spot = int(m.group(1) or 1), m.group(2), m.group(3) == "spot"
    r = RECORDS[(typ, region)]
    od = (r.get("on_demand") or {}).get("usd_per_hour")
    zones = [z["usd_per_hour"] for z in (r.get("spot") or {}).get("zones", []) if availability_zone(z["availability_zone"])]
    at_od = False
    if not spot:
        price = od
    elif zones:
        price = min(max(zones), od) if od is not None else max(zones)
    else:
        price, at_od = od, True
    # every node billed for what its own timer allows: --max-minutes rounded up (shutdown -h takes whole
    # minutes) and the 5 minutes of boot and halt around it (SWEEP_BOOT_ALLOWANCE_MINUTES)
    return typ, nodes, spot, price, nodes * price * (math.ceil(minutes) + 5) / 60.0, at_od, len(zones)


def gpu(typ):
    return bool(RECORDS[next(k for k in RECORDS if k[0] == typ)]["instance"].get("accelerator"))


def run(env, *args):
    r = subprocess.run([BIN, "sweep", "plan"] + list(args), env=env, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def instances(m):
    return json.loads(m.boto("ec2", "print(json.dumps(sum(len(r['Instances']) for r in "
                                    "client.describe_instances()['Reservations'])))"))


def iam_user(m, policy):
    """A moto IAM user with POLICY; its (key, secret)."""
    return json.loads(m.boto("iam", """
import uuid
name = 'u' + uuid.uuid4().hex[:8]
client.create_user(UserName=name)
client.put_user_policy(UserName=name, PolicyName='p', PolicyDocument=args[0])
k = client.create_access_key(UserName=name)['AccessKey']
print(json.dumps([k['AccessKeyId'], k['SecretAccessKey']]))""", json.dumps(policy)))


def docs_policy():
    """The IAM policy docs/usage.md's "Sweep" section gives (its first JSON block there)."""
    text = open(os.path.join(ROOT, "docs", "usage.md"), encoding="utf-8").read()
    sweep = text[text.index("## Sweep"):]
    return json.loads(re.search(r"```json\n(.*?)```", sweep, re.S).group(1))


SCHEMA = json.load(open(os.path.join(ROOT, "schemas", "sweep-plan-v1.json")))


def check_plan(out, cands, region, minutes, max_cost, amis, what):
    import jsonschema
    try:
        p = json.loads(out)
        jsonschema.validate(p, SCHEMA)
        # the one JSON layout every command writes (docs/formats.md): two-space indents, no tabs
        check("\t" not in out and out.startswith('{\n  "schema": "instbench.sweep-plan/v1",\n'),
              "%s: not the project's JSON layout (two-space indents, no tabs): %r" % (what, out[:200]))
    except (ValueError, jsonschema.ValidationError) as e:
        check(False, "%s: not a valid instbench.sweep-plan/v1: %s %r" % (what, str(e)[:300], out[:300]))
        return None
    check(p["schema"] == "instbench.sweep-plan/v1" and p["region"] == region and p["max_minutes"] == minutes and
          p["timer_minutes"] == math.ceil(minutes) and p["billed_minutes_max"] == math.ceil(minutes) + 5,
          "%s: header %s" % (what, {k: p.get(k) for k in ("schema", "region", "max_minutes", "timer_minutes",
                                                          "billed_minutes_max")}))
    check(len(p["candidates"]) == len(cands), "%s: %d lines for %d candidates" % (what, len(p["candidates"]), len(cands)))
    total = 0.0
    for spec, line in zip(cands, p["candidates"]):
        typ, nodes, spot, price, worst, at_od, zones = expected(spec, region, minutes)
        canon = "%s%s:%s" % ("%dx" % nodes if nodes > 1 else "", typ, "spot" if spot else "on-demand")
        check(line["spec"] == canon and line["nodes"] == nodes and line["instance_type"] == typ and
              line["market"] == ("spot" if spot else "on-demand"), "%s: %s read as %s" % (what, spec, line))
        check(abs(line["usd_per_node_hour"] - price) < 1e-9, "%s: %s price %s, expected %s" %
              (what, spec, line["usd_per_node_hour"], price))
        check(abs(line["worst_case_usd"] - worst) < 1e-9, "%s: %s worst case %s, expected %s" %
              (what, spec, line["worst_case_usd"], worst))
        check(line["spot_at_on_demand"] == at_od, "%s: %s spot_at_on_demand %s" % (what, spec, line["spot_at_on_demand"]))
        # a spot row's MaxPrice is the price its worst case used, rounded down to 1e-6 as a decimal
        # ($1.041 stays $1.041, though floor(1.041 x 1e6) in doubles is 1040999); none otherwise
        want_max = float(decimal.Decimal(repr(price)).quantize(decimal.Decimal("0.000001"), decimal.ROUND_FLOOR)) \
            if spot else None
        check(line["spot_max_price_usd"] == want_max, "%s: %s MaxPrice %s, expected %s" % (
            what, spec, line["spot_max_price_usd"], want_max))
        src = line["price_source"]
        # each price carries the date its own input was read (the snapshot is dated by its newest)
        rec = RECORDS[(typ, region)]
        dated = ((rec.get("spot") if spot and not at_od else None) or rec.get("on_demand") or {}).get("as_of", "?")[:10]
        check(src.startswith("on-demand (no spot price known), snapshot " if at_od else "snapshot ") and
              dated in src and (not spot or at_od or "highest of %d zone" % zones in src),
              "%s: %s price source %r" % (what, spec, src))
        want_ami = amis.get("override") or amis[DLAMI if gpu(typ) else UBUNTU]
        want_src = "--ami" if "override" in amis else (DLAMI if gpu(typ) else UBUNTU)
        check(line["ami"] == want_ami and line["ami_source"] == want_src, "%s: %s AMI %s from %s" %
              (what, spec, line["ami"], line["ami_source"]))
        check(line["dry_run"] == "permitted", "%s: %s DryRun %s" % (what, spec, line["dry_run"]))
        total += worst
    check(abs(p["total_usd"] - total) < 1e-9, "%s: total %s, expected %s" % (what, p["total_usd"], total))
    verdict = "no ceiling" if max_cost is None else "within" if total <= max_cost else "over"
    check(p["verdict"] == verdict, "%s: verdict %s, expected %s" % (what, p["verdict"], verdict))
    check(p["instances"] == sum(expected(c, region, minutes)[1] for c in cands), "%s: instances %s" % (what, p["instances"]))
    return p


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    images = json.loads(m.boto("ec2", """
pick = {}
for i in client.describe_images(Owners=['amazon'])['Images']: pick.setdefault(i['Architecture'], []).append(i['ImageId'])
print(json.dumps(pick))"""))
    x86, arm = images["x86_64"][0], images["arm64"][0]
    gpu_ami, cpu_ami = images["x86_64"][1], images["x86_64"][2]   # two AMIs, so the lines tell them apart
    fake = FakeAws("--credentials", "%s:%s" % (m.access_key, m.secret_key), "--ssm-parameter", DLAMI + "=" + gpu_ami,
                   "--ssm-parameter", UBUNTU + "=" + cpu_ami, "--timeout", "600")
    try:
        env = m.env()
        env.update({"AWS_ENDPOINT_URL_SSM": fake.url, "XDG_CACHE_HOME": os.path.join(tmp, "cache"),
                    "HOME": tmp})
        amis = {DLAMI: gpu_ami, UBUNTU: cpu_ami}

        # the bar's three candidates, a CPU type, a spot type with no spot price in us-east-1
        # (p5.4xlarge) and one with Local Zones left out (c6i.12xlarge); "4 x g5.xlarge" as rank prints it
        cands = ["g5.xlarge:spot", "4 x g5.xlarge:spot", "g5.12xlarge:on-demand", "c7i.large",
                 "p5.4xlarge:spot", "c6i.12xlarge:spot"]
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", ",".join(cands[:3]), "--candidates",
                           ",".join(cands[3:]), "--source", "snapshot", "--max-minutes", "20", "--max-cost", "100",
                           "--format", "json", "--", "--model", "vit_base_patch16_224", "--duration", "60")
        check(rc == 0, "plan: rc %d %s" % (rc, err))
        p = check_plan(out, cands, "us-east-1", 20, 100, amis, "plan")
        check(instances(m) == 0, "a plan launched instances")

        # the table: the same numbers, line by line
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", ",".join(cands), "--source", "snapshot",
                           "--max-minutes", "20", "--max-cost", "100", "--format", "table")
        check(rc == 0, "table: rc %d %s" % (rc, err))
        lines = out.splitlines()
        for spec in cands:
            typ, nodes, spot, price, worst, at_od, zones = expected(spec, "us-east-1", 20)
            canon = "%s%s:%s" % ("%dx" % nodes if nodes > 1 else "", typ, "spot" if spot else "on-demand")
            row = [ln for ln in lines if ln.split() and ln.split()[0] == canon]
            check(len(row) == 1 and row[0].split()[1:5] == [str(nodes), "spot" if spot else "on-demand",
                                                              amis[DLAMI if gpu(typ) else UBUNTU], usd(price)]
                  and usd(worst) in row[0], "table row of %s: %r" % (spec, row))
        total = sum(expected(c, "us-east-1", 20)[4] for c in cands)
        check(any(ln.startswith("TOTAL") and usd(total) in ln for ln in lines), "table total: %s" % out)
        check("within --max-cost $100.00" in out and "p5.4xlarge:spot has no spot price" in out, "table notes: %s" % out)

        # over the ceiling: exit 1, said so; decimal minutes
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", "g5.12xlarge,8xg5.xlarge:spot",
                           "--source", "snapshot", "--max-minutes", "0.5", "--max-cost", "0.05", "--format", "json")
        check(rc == 1, "over: rc %d %s" % (rc, err))
        check_plan(out, ["g5.12xlarge", "8xg5.xlarge:spot"], "us-east-1", 0.5, 0.05, amis, "over")
        # a worst case of cents keeps its figures in the table (the one money format, not "$0.00")
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", "c6i.large", "--source", "snapshot",
                           "--max-minutes", "0.5", "--max-cost", "0.05", "--format", "table")
        worst = expected("c6i.large", "us-east-1", 0.5)[4]
        check(rc == 0 and worst < 0.01 and "$0.00 " not in out and usd(worst) in out and "--max-cost $0.05" in out,
              "cents in the table: rc %d %s %s" % (rc, out, err))

        # a T4 (g4dn, compute capability 7.5: NVIDIA's CUDA GPUs page) runs fp32 only: planned when
        # measure is told fp32 or the CPU backend, refused below (bad input) when it would run bf16
        for extra in (["--precision", "fp32"], ["--backend", "cpu"]):
            rc, out, err = run(env, "--region", "us-east-1", "--candidates", "g4dn.xlarge", "--source", "snapshot",
                               "--format", "json", "--", *extra)
            check(rc == 0, "g4dn.xlarge -- %s: rc %d %s" % (extra, rc, err))
            check_plan(out, ["g4dn.xlarge"], "us-east-1", 30, None, amis, "g4dn %s" % extra)

        # a region where a spot price is above on-demand: capped (moto serves every region)
        rc, out, err = run(env, "--region", "ap-northeast-1", "--candidates", "g5.12xlarge:spot", "--source",
                           "snapshot", "--format", "json")
        check(rc == 0, "capped: rc %d %s" % (rc, err))
        q = check_plan(out, ["g5.12xlarge:spot"], "ap-northeast-1", 30, None, amis, "capped")
        check(q and "capped at on-demand" in q["candidates"][0]["price_source"], "capped: %s" % (q and q["candidates"]))

        # --ami: every candidate boots it; an arm64 AMI for x86_64 types is refused (2); unknown: 1
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", "g5.xlarge,c7i.large", "--source", "snapshot",
                           "--ami", x86, "--format", "json")
        check(rc == 0, "--ami: rc %d %s" % (rc, err))
        check_plan(out, ["g5.xlarge", "c7i.large"], "us-east-1", 30, None, {"override": x86}, "--ami")
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", "g5.xlarge", "--source", "snapshot", "--ami", arm)
        check(rc == 2 and "is arm64, but g5.xlarge:on-demand needs x86_64" in err, "--ami arm64: rc %d %s" % (rc, err))
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", "g5.xlarge", "--source", "snapshot",
                           "--ami", "ami-0123456789abcdef0")
        check(rc == 1 and "does not exist" in err, "--ami unknown: rc %d %s" % (rc, err))

        # DryRun refused by IAM: exit 1 naming the action; the plan is still printed
        key = iam_user(m, {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "*", "Resource": "*"},
            {"Effect": "Deny", "Action": "ec2:RunInstances", "Resource": "*"}]})
        fake.control(reset_stats=True)
        denv = dict(env, AWS_ACCESS_KEY_ID=key[0], AWS_SECRET_ACCESS_KEY=key[1])
        fake2 = FakeAws("--credentials", "%s:%s" % tuple(key), "--ssm-parameter", DLAMI + "=" + gpu_ami, "--timeout", "120")
        try:
            denv["AWS_ENDPOINT_URL_SSM"] = fake2.url
            rc, out, err = run(denv, "--region", "us-east-1", "--candidates", "g5.xlarge:spot", "--source", "snapshot",
                               "--format", "table")
            check(rc == 1 and "DryRun for g5.xlarge:spot: not permitted" in err and "ec2:RunInstances" in err,
                  "denied: rc %d %s" % (rc, err))
            check("g5.xlarge:spot" in out, "denied: the plan is still shown: %s" % out)

            # the documented policy is enough for a plan (moto enforces IAM on EC2)
            if check("## Sweep" in open(os.path.join(ROOT, "docs", "usage.md")).read(), "docs/usage.md has no Sweep section"):
                key2 = iam_user(m, docs_policy())
                fake2.stop()
                fake2 = FakeAws("--credentials", "%s:%s" % tuple(key2), "--ssm-parameter", DLAMI + "=" + gpu_ami,
                                "--timeout", "120")
                penv = dict(env, AWS_ACCESS_KEY_ID=key2[0], AWS_SECRET_ACCESS_KEY=key2[1],
                            AWS_ENDPOINT_URL_SSM=fake2.url)
                rc, out, err = run(penv, "--region", "us-east-1", "--candidates", "g5.xlarge:spot", "--source",
                                   "snapshot", "--format", "json")
                check(rc == 0, "the documented policy: rc %d %s" % (rc, err))
        finally:
            fake2.stop()

        # a parameter SSM does not have: exit 1 naming it and --ami
        rc, out, err = run(env, "--region", "us-east-1", "--candidates", "c7i.large", "--source", "snapshot")
        check(rc == 0, "CPU type: rc %d %s" % (rc, err))
        fake3 = FakeAws("--credentials", "%s:%s" % (m.access_key, m.secret_key), "--timeout", "120")
        try:
            rc, out, err = run(dict(env, AWS_ENDPOINT_URL_SSM=fake3.url), "--region", "us-east-1", "--candidates",
                               "c7i.large", "--source", "snapshot")
            check(rc == 1 and UBUNTU in err and "--ami" in err, "missing parameter: rc %d %s" % (rc, err))
        finally:
            fake3.stop()

        # bad input: exit 2, one clear line, before any AWS request
        fake.control(reset_stats=True)
        bad = [
            (["--candidates", "g5.xlarg"], "did you mean g5.xlarge?"),
            (["--candidates", "g5.96xlarge"], "not one of the sizes the price snapshot lists for its family"),
            (["--candidates", "zz9.xlarge"], "not in the price catalogue"),
            (["--candidates", "0xg5.xlarge"], "0 nodes"),
            (["--candidates", "65xg5.xlarge"], "65 nodes"),
            (["--candidates", "g5.xlarge,g5.xlarge:on-demand"], "listed twice"),
            (["--candidates", "4xg5.xlarge:spot", "--candidates", "4 x g5.xlarge:spot"], "listed twice"),
            (["--candidates", "g5.xlarge:spto"], "did you mean spot?"),
            (["--candidates", "trn1.2xlarge"], "Trainium"),
            (["--candidates", "2xc6i.2xlarge"], "the CPU backend measures one node only"),
            # Turing and Volta have no bf16 tensor cores (NVIDIA's CUDA GPUs page: T4 7.5, V100 7.0)
            (["--candidates", "g4dn.xlarge"], "g4dn.xlarge:on-demand: its T4 GPUs (compute capability 7.5) have no "
             "bf16 matmuls, and measure would run bf16 there (its default, or --precision bf16 after --): give -- "
             "--precision fp32, or leave g4dn.xlarge out"),
            (["--candidates", "g5.xlarge,2xp3.8xlarge:spot", "--", "--precision", "bf16"],
             "2xp3.8xlarge:spot: its V100 GPUs (compute capability 7.0)"),
            (["--candidates", "g5g.xlarge", "--", "--backend", "cuda"], "its T4g GPUs (compute capability 7.5)"),
            (["--candidates", "g5.xlarge", "--region", "us-esat-1"], "did you mean us-east-1?"),
            (["--candidates", "g5.xlarge", "--max-cost", "abc"], "--max-cost"),
            (["--candidates", "g5.xlarge", "--max-minutes", "0"], "--max-minutes"),
            (["--candidates", "g5.xlarge", "--ami", "ami-xyz"], "is not an AMI ID"),
            (["--candidates", "g5.xlarge", "--s3", "s3://Bad_Bucket/x/"], "--s3"),
            (["--candidates", "g5.xlarge", "--", "--batch-size", "0"], "--batch-size"),
            (["--candidates", "g5.xlarge", "--", "--model", "vit_nosuch"], "vit_nosuch"),
            (["--candidates", "g5.xlarge", "--", "--nnodes", "2"], "the sweep sets it"),
            (["--candidates", "g5.xlarge", "--", "-o", "x.json"], "the sweep sets it"),
            (["--region", "us-east-1"], "--candidates"),
        ]
        for args, want in bad:
            full = (["--region", "us-east-1"] if "--region" not in args else []) + args
            rc, out, err = run(env, *full)
            check(rc == 2 and want in err and out == "", "%s: rc %d, %r" % (args, rc, err))
        # a region from AWS_REGION that AWS does not have: the message names the variable, not --region
        rc, out, err = run(dict(env, AWS_REGION="us-esat-1"), "--candidates", "g5.xlarge")
        check(rc == 2 and out == "" and err.startswith(
            "instbench sweep plan: AWS_REGION: 'us-esat-1' is not an AWS region instbench knows (fix it or give "
            "--region); did you mean us-east-1?"), "AWS_REGION=us-esat-1: rc %d, %r" % (rc, err))
        st = fake.stats()
        check(st["requests"] == 0, "bad input reached the fake AWS: %s" % st["by_operation"])
        check(instances(m) == 0, "bad input launched instances")
    finally:
        fake.stop()

sys.exit(1 if failures else 0)
