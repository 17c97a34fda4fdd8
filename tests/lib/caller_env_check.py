#!/usr/bin/env python3
"""No test depends on its caller's environment (tests/lib/caller_env.cmake).  ctest runs here, in a
scratch folder of its own (the build's Testing/ is the running ctest's), under the environment of a
developer with AWS set up and more: AWS_PROFILE, AWS_DEFAULT_PROFILE, AWS_REGION,
AWS_ENDPOINT_URL[_*], AWS_CONFIG_FILE and a CA bundle that do not exist, credentials,
INSTBENCH_CUDA_MODULE and INSTBENCH_PROBE_SECONDS, a Slurm allocation's variables, torchrun's RANK:

1. every test of the build has each of those unset but for the ones its ENVIRONMENT sets (which it
   still gets), and keeps the settings a caller gives the tests (INSTBENCH_MOTO_VENV,
   INSTBENCH_SKIP_CUDA12);
2. the tests named pass under it; each failed under it before caller_env.cmake (cli_version: the
   CUDA module; rank_placement and prices_markets_plans: botocore's profile, a reference they
   build requests with; s3_presign_botocore: botocore's region and endpoint).

usage: caller_env_check.py CTEST TESTS_BINARY_DIR NAME...
"""
import json
import os
import re
import subprocess
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__))]
from testlib import check, failures, refused_url, scratch_dir  # noqa: E402

CTEST, TESTS_DIR, NAMES = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3:]
DEAD = refused_url()
HOSTILE = {
    "AWS_ENDPOINT_URL": DEAD, "AWS_ENDPOINT_URL_EC2": DEAD, "AWS_ENDPOINT_URL_S3": DEAD,
    "AWS_ENDPOINT_URL_PRICING": DEAD,
    "AWS_REGION": "xx-nowhere-1", "AWS_DEFAULT_REGION": "xx-nowhere-2", "AWS_PROFILE": "nope",
    "AWS_DEFAULT_PROFILE": "nope2", "AWS_CONFIG_FILE": "/dev/null/config", "AWS_SHARED_CREDENTIALS_FILE":
    "/dev/null/credentials", "AWS_ACCESS_KEY_ID": "AKIACALLERCALLER0000", "AWS_SECRET_ACCESS_KEY": "caller",
    "AWS_SESSION_TOKEN": "caller", "AWS_CA_BUNDLE": "/dev/null/ca.pem", "AWS_MAX_ATTEMPTS": "1",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT": DEAD, "INSTBENCH_CUDA_MODULE": "/dev/null/module.so",
    "INSTBENCH_PROBE_SECONDS": "off", "INSTBENCH_AWS_BACKOFF_BASE": "0.001", "SLURM_PROCID": "3",
    "SLURM_NTASKS": "8", "SLURM_JOB_NODELIST": "gpu[1-2]", "RANK": "3", "WORLD_SIZE": "8",
}
# the tests' own settings, a caller's to give: kept (the values are never used here)
KNOBS = {"INSTBENCH_MOTO_VENV": os.environ.get("INSTBENCH_MOTO_VENV", ""), "INSTBENCH_SKIP_CUDA12": "0"}
work = scratch_dir("instbench-caller-env-")
with open(os.path.join(work, "CTestTestfile.cmake"), "w") as f:
    f.write('subdirs("%s")\n' % TESTS_DIR.replace("\\", "/"))
env = dict(os.environ, **HOSTILE)
env.update((k, v) for k, v in KNOBS.items() if v)

# 1. what ctest will do to each test's environment
p = subprocess.run([CTEST, "--show-only=json-v1"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "ctest --show-only: exit %d: %s" % (p.returncode, p.stderr[-800:]))
tests = json.loads(p.stdout)["tests"] if p.returncode == 0 else []
check(len(tests) > 100, "ctest lists %d tests" % len(tests))
for t in tests:
    props = {q["name"]: q["value"] for q in t.get("properties", [])}
    own = {v.split("=", 1)[0] for v in props.get("ENVIRONMENT", [])}
    unset = {m[:-len("=unset:")] for m in props.get("ENVIRONMENT_MODIFICATION", []) if m.endswith("=unset:")}
    other = [m for m in props.get("ENVIRONMENT_MODIFICATION", []) if not m.endswith("=unset:")]
    check(not other, "%s: modifications other than unset: %s" % (t["name"], other))
    missed = sorted(set(HOSTILE) - own - unset)
    check(not missed, "%s: the caller's %s reach it" % (t["name"], ", ".join(missed)))
    check(not (own & unset), "%s: what it sets itself is unset: %s" % (t["name"], sorted(own & unset)))
    kept = sorted(k for k in unset if k in KNOBS)
    check(not kept, "%s: the tests' own settings %s are taken away" % (t["name"], kept))

# 2. tests that failed under such an environment pass, their output shown if not
want = sorted(set(NAMES))
p = subprocess.run([CTEST, "--output-on-failure", "-R", "^(%s)$" % "|".join(map(re.escape, want))], cwd=work, env=env,
                   capture_output=True, text=True, timeout=600)
ran = re.findall(r"Test +#\d+: (\S+) \.", p.stdout)
check(sorted(ran) == want, "ctest ran %s, wanted %s" % (sorted(ran), want))
check(p.returncode == 0, "under the caller's environment: exit %d:\n%s" % (p.returncode, p.stdout[-6000:]))

print("caller_env_check: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
