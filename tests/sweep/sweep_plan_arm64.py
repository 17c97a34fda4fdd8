#!/usr/bin/python3
"""`instbench sweep plan` picks the arm64 AMI for arm64 types, against moto's EC2 and the fake
AWS's SSM (as sweep_plan.py).  The expectations come from AWS, not from instbench:
- p6e-gb200.36xlarge is a Grace (arm64) host (the EKS UltraServer guide recommends the ARM NVIDIA
  AMI for it); moto's DescribeInstanceTypes does not list it (it is sold only inside UltraServers),
  so one node of it is planned from the instance-type catalogue, and the plan says so;
- g5g.xlarge's architecture is what moto's DescribeInstanceTypes says (its copy of AWS's data:
  SupportedArchitectures ['arm64']): a multi-node candidate's type is described, and its answer
  picks the image (architecture_source DescribeInstanceTypes);
- an x86_64 type in the same plan still gets the x86_64 image.
The plan's measure runs fp32: g5g's T4g has no bf16 matmuls, and a sweep that would run bf16 on it
is refused (sweep_plan.py).
Each line's AMI must be the SSM parameter of the arm64 (or x86_64) Deep Learning Base OSS Nvidia
Driver GPU AMI.  p6e-gb200 has no public price: its line is unpriced, not invented.
Usage: sweep_plan_arm64.py INSTBENCH"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures, FakeAws   # noqa: E402
from moto_server import MotoServer             # noqa: E402

BIN = sys.argv[1]
DLAMI_X86 = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
DLAMI_ARM = "/aws/service/deeplearning/ami/arm64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
SCHEMA = json.load(open(os.path.join(ROOT, "schemas", "sweep-plan-v1.json")))


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    images = json.loads(m.boto("ec2", """
pick = {}
for i in client.describe_images(Owners=['amazon'])['Images']: pick.setdefault(i['Architecture'], []).append(i['ImageId'])
print(json.dumps(pick))"""))
    x86_ami, arm_ami = images["x86_64"][0], images["arm64"][0]
    fake = FakeAws("--credentials", "%s:%s" % (m.access_key, m.secret_key), "--ssm-parameter", DLAMI_X86 + "=" + x86_ami,
                   "--ssm-parameter", DLAMI_ARM + "=" + arm_ami, "--timeout", "600")
    try:
        env = m.env()
        env.update({"AWS_ENDPOINT_URL_SSM": fake.url, "XDG_CACHE_HOME": os.path.join(tmp, "cache"), "HOME": tmp})
        # what moto's DescribeInstanceTypes says, asked through botocore (None: not listed)
        said = json.loads(m.boto("ec2", """
out = {}
for t in ['g5g.xlarge', 'p6-b200.48xlarge', 'p6e-gb200.36xlarge']:
    try:
        out[t] = client.describe_instance_types(InstanceTypes=[t])['InstanceTypes'][0]['ProcessorInfo']['SupportedArchitectures']
    except Exception:
        out[t] = None
print(json.dumps(out))"""))
        check(said == {"g5g.xlarge": ["arm64"], "p6-b200.48xlarge": ["x86_64"], "p6e-gb200.36xlarge": None},
              "moto's answers changed: %s" % said)
        cands = ["p6e-gb200.36xlarge", "2xg5g.xlarge", "p6-b200.48xlarge"]
        r = subprocess.run([BIN, "sweep", "plan", "--region", "us-east-1", "--candidates", ",".join(cands),
                            "--source", "snapshot", "--format", "json", "--", "--precision", "fp32"], env=env,
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "plan: rc %d %s" % (r.returncode, r.stderr))
        try:
            import jsonschema
            p = json.loads(r.stdout)
            jsonschema.validate(p, SCHEMA)
        except Exception as e:   # noqa: BLE001 - any failure here is the test's
            check(False, "not a valid plan: %s %r" % (str(e)[:300], r.stdout[:300]))
            p = {"candidates": []}
        lines = {c["instance_type"]: c for c in p["candidates"]}
        want = {"p6e-gb200.36xlarge": ("arm64", arm_ami, DLAMI_ARM, "instance-type catalogue"),
                "g5g.xlarge": ("arm64", arm_ami, DLAMI_ARM, "DescribeInstanceTypes"),
                "p6-b200.48xlarge": ("x86_64", x86_ami, DLAMI_X86, "instance-type catalogue")}
        for typ, (arch, ami, param, src) in want.items():
            ln = lines.get(typ)
            check(ln is not None, "%s: no line in %s" % (typ, list(lines)))
            if ln:
                got = (ln["architecture"], ln["ami"], ln["ami_source"], ln.get("architecture_source"))
                check(got == (arch, ami, param, src), "%s: %s, want %s" % (typ, got, (arch, ami, param, src)))
        gb = lines.get("p6e-gb200.36xlarge")
        check(gb is not None and gb["usd_per_node_hour"] is None and gb["worst_case_usd"] is None,
              "p6e-gb200 has no public price; its line: %s" % gb)
        b200 = lines.get("p6-b200.48xlarge")
        check(b200 is not None and b200["usd_per_node_hour"] == 113.9328, "p6-b200's snapshot price: %s" % b200)
    finally:
        fake.stop()

sys.exit(1 if failures else 0)
