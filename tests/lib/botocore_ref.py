"""botocore's own serializer as the reference for a request instbench sent: what botocore would put
on the wire for OPERATION with PARAMS (method, path, body), for tests to compare field by field.

Debian's python3-botocore (1.29) predates some operations (DescribeCapacityBlockOfferings), so
the first Python whose botocore knows the operation is used: this one, else the moto venv's
(scripts/ci/moto_env.sh installs a current botocore there with moto)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_PY = os.path.join(os.environ.get("INSTBENCH_MOTO_VENV", os.path.join(ROOT, "build-venv", "moto")), "bin", "python")
SERIALIZE = r"""
import datetime, json, sys
import botocore.session
from botocore.serialize import create_serializer
service, op, params = json.loads(sys.stdin.read())
s = botocore.session.get_session()
model = s.get_service_model(service)
if op not in model.operation_names:
    sys.exit(3)
for k in ("StartDateRange", "EndDateRange"):
    if k in params:
        params[k] = datetime.datetime.fromisoformat(params[k].replace("Z", "+00:00"))
r = create_serializer(model.metadata["protocol"]).serialize_to_request(params, model.operation_model(op))
body = r["body"]
if isinstance(body, bytes):
    body = body.decode()
print(json.dumps({"method": r["method"], "url_path": r["url_path"], "body": body,
                  "content_type": r["headers"].get("Content-Type"), "botocore": botocore.__version__}))
"""


def botocore_request(service, op, params):
    """{"method", "url_path", "body" (a dict for the query protocols, text otherwise), "content_type"}."""
    for py in (sys.executable, VENV_PY):
        if not os.path.exists(py):
            continue
        p = subprocess.run([py, "-c", SERIALIZE], input=json.dumps([service, op, params]), capture_output=True,
                           text=True, timeout=60)
        if p.returncode == 0:
            return json.loads(p.stdout)
    print("FAIL: no botocore here knows %s %s (Debian's python3-botocore, nor %s: run scripts/ci/moto_env.sh)"
          % (service, op, VENV_PY), file=sys.stderr)
    sys.exit(1)


def botocore_form(op, params):
    """The form botocore's EC2 serializer sends for OP with PARAMS, values as strings."""
    return {k: str(v) for k, v in botocore_request("ec2", op, params)["body"].items()}


CREDENTIALS = """
import botocore.session, json
c = botocore.session.Session().get_credentials()
print(json.dumps(None if c is None else [c.method, c.get_frozen_credentials().access_key]))
"""


def botocore_credentials(env):
    """What botocore's credential chain resolves from the environment ENV (its files and
    endpoints included): [method, access key id], or None."""
    p = subprocess.run([sys.executable, "-c", CREDENTIALS], env=env, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError("botocore's credential chain failed: " + p.stderr[-800:])
    return json.loads(p.stdout)


CHAIN_IN_VENV = r"""
import json, botocore.session
try:
    c = botocore.session.Session().get_credentials()
    print(json.dumps(None if c is None else [c.method, c.get_frozen_credentials().access_key]))
except Exception as e:
    print(json.dumps(["error", type(e).__name__]))
"""


def venv_botocore_credentials(env):
    """botocore's chain in moto's venv (a current botocore: Debian's 1.29 predates AWS_ENDPOINT_URL,
    so it would ask AWS itself): [method, access key id], None, ["error", exception name], or
    ["crashed", stderr].  stdin is empty: a chain that prompts (mfa_serial) reads no code."""
    p = subprocess.run([VENV_PY, "-c", CHAIN_IN_VENV], env=env, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    return json.loads(p.stdout) if p.returncode == 0 else ["crashed", p.stderr[-300:]]
