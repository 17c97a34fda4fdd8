#!/usr/bin/python3
"""Roles the AWS CLI assumes, assumed by instbench's chain (src/aws/credentials.c, src/aws/sts.c)
against moto's server with signature checking on, botocore (moto's venv) the reference:
- a profile's role_arn with a source_profile of keys: AssumeRole is signed with them (moto checks
  the signature), and the role's credentials (with their session token: moto takes an ASIA key
  without one for an unknown user's) sign an S3 PutObject that boto3 then reads back;
- two roles deep (source_profile whose own source_profile has the keys), and with a
  duration_seconds: the same;
- EKS's web identity in the environment (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN): the
  AssumeRoleWithWebIdentity call unsigned (moto lets exactly that one action through
  unauthenticated), its credentials signing the PutObject;
- botocore resolves each of these environments by the same method ("assume-role",
  "assume-role-with-web-identity");
- what botocore refuses, refused: role_arn without a source or with both, a source loop, a
  missing source profile, an unknown credential_source, mfa_serial (instbench asks for no code),
  a source whose key STS refuses (SignatureDoesNotMatch named with the action and the role); and
  a duration_seconds that is no whole number, which botocore drops silently for STS's default hour.
usage: aws_assume_role.py AWS_CLIENT_PROBE S3_PROBE"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures  # noqa: E402
from moto_server import MotoServer  # noqa: E402
from botocore_ref import venv_botocore_credentials  # noqa: E402

CLIENT_PROBE, S3_PROBE = (os.path.abspath(a) for a in sys.argv[1:3])
ROLE = "arn:aws:iam::123456789012:role/instbench-role"

botocore_method = venv_botocore_credentials


def run(args, env):
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


with MotoServer() as m, tempfile.TemporaryDirectory() as tmp:
    m.create_bucket("roles")
    # the role, with an allow-all policy: moto authorises an assumed role's requests by its policies
    m.boto("iam", """
client.create_role(RoleName="instbench-role", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}))
client.put_role_policy(RoleName="instbench-role", PolicyName="all", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
""")
    body = os.path.join(tmp, "body")
    with open(body, "w") as f:
        f.write("written with an assumed role\n")

    def env_with(config, creds="", **extra):
        paths = {}
        for name, text in (("config", config), ("credentials", creds)):
            paths[name] = os.path.join(tmp, name)
            with open(paths[name], "w") as f:
                f.write(text)
        e = m.env()
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            e.pop(k)
        e.update(AWS_CONFIG_FILE=paths["config"], AWS_SHARED_CREDENTIALS_FILE=paths["credentials"],
                 HOME=tmp, INSTBENCH_AWS_BACKOFF_BASE="0.05", AWS_DEFAULT_REGION="us-east-1", **extra)
        return e

    def put_as(what, env, key, source, method, web=False):
        if web:
            m.set_auth(1)   # AssumeRoleWithWebIdentity is unsigned: let exactly that action through
        rc, out, err = run([CLIENT_PROBE, "credentials"], env)
        got = json.loads(out) if rc == 0 and out.strip() else {}
        check(rc == 0 and got.get("source") == source and got.get("token") and got.get("expiration", 0) > 0,
              f"{what}: credentials {got} rc {rc} {err[-500:]}")
        if web:
            m.set_auth(1)
        rc, _, err = run([S3_PROBE, "put", "roles", key, body], env)
        check(rc == 0, f"{what}: PutObject with the role's credentials: rc {rc} {err[-500:]}")
        if rc == 0:
            back = m.s3("print(s3.get_object(Bucket='roles', Key=args[0])['Body'].read().decode(), end='')", key)
            check(back.strip() == open(body).read().strip(), f"{what}: boto3 reads back {back!r}")
        if web:
            m.set_auth(1)
        check(botocore_method(env)[0] == method, f"{what}: botocore resolves {botocore_method(env)} (want {method})")
        m.set_auth(0)

    keys = "aws_access_key_id = %s\naws_secret_access_key = %s\n" % (m.access_key, m.secret_key)
    # a role with a source profile of keys
    put_as("role_arn + source_profile",
           env_with("[profile base]\nregion = us-east-1\n[profile dev]\nrole_arn = %s\nsource_profile = base\n"
                    "role_session_name = instbench-test\n" % ROLE, "[base]\n" + keys, AWS_PROFILE="dev"),
           "one.txt", "role:dev", "assume-role")
    # two roles deep
    put_as("a chain of two roles",
           env_with("[profile top]\nrole_arn = %s\nsource_profile = mid\n[profile mid]\nrole_arn = %s\n"
                    "source_profile = base\n" % (ROLE, ROLE), "[base]\n" + keys, AWS_PROFILE="top"),
           "two.txt", "role:top", "assume-role")
    # (credential_source = Environment: with keys in the environment both chains stop at them
    # before any profile, AWS_PROFILE or not; only the AWS CLI's --profile flag passes them over)
    put_as("role_arn + duration_seconds",
           env_with("[profile short]\nrole_arn = %s\nsource_profile = base\nduration_seconds = 900\n" % ROLE,
                    "[base]\n" + keys, AWS_PROFILE="short"),
           "three.txt", "role:short", "assume-role")
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZGVmYXVsdDp0cmFpbiJ9.c2lnbmF0dXJl")
    put_as("web identity (EKS)", env_with("", AWS_WEB_IDENTITY_TOKEN_FILE=token, AWS_ROLE_ARN=ROLE,
                                          AWS_ROLE_SESSION_NAME="train-pod"),
           "four.txt", "web-identity", "assume-role-with-web-identity", web=True)

    # refusals, each naming what is wrong (botocore refuses them too)
    cases = [
        ("no source", "[profile p]\nrole_arn = %s\n" % ROLE, "", "neither source_profile nor credential_source"),
        ("both sources", "[profile p]\nrole_arn = %s\nsource_profile = base\ncredential_source = Environment\n" % ROLE,
         "[base]\n" + keys, "both source_profile and credential_source"),
        ("a loop", "[profile p]\nrole_arn = %s\nsource_profile = q\n[profile q]\nrole_arn = %s\nsource_profile = p\n"
         % (ROLE, ROLE), "", "leads back to a profile already on the way"),
        ("missing source", "[profile p]\nrole_arn = %s\nsource_profile = nosuch\n" % ROLE, "",
         "its source_profile 'nosuch' is in neither"),
        ("mfa", "[profile p]\nrole_arn = %s\nsource_profile = base\nmfa_serial = arn:aws:iam::123456789012:mfa/u\n"
         % ROLE, "[base]\n" + keys, "MFA code (mfa_serial)"),
        ("duration", "[profile p]\nrole_arn = %s\nsource_profile = base\nduration_seconds = 1h\n" % ROLE,
         "[base]\n" + keys, "duration_seconds '1h'"),
        ("unknown credential_source", "[profile p]\nrole_arn = %s\ncredential_source = Laptop\n" % ROLE, "",
         "credential_source 'Laptop' is none of"),
        ("wrong source secret", "[profile p]\nrole_arn = %s\nsource_profile = base\n" % ROLE,
         "[base]\naws_access_key_id = %s\naws_secret_access_key = not-the-secret\n" % m.access_key,
         "AssumeRole for %s: " % ROLE),
    ]
    for what, config, creds, said in cases:
        env = env_with(config, creds, AWS_PROFILE="p")
        rc, _, err = run([CLIENT_PROBE, "credentials"], env)
        check(rc == 1 and said in err, f"{what}: rc {rc}, {err[-400:]!r} (wants {said!r})")
        check(m.secret_key not in err, f"{what}: the source's secret in the message")
        b = botocore_method(env)
        if what == "duration":   # botocore drops a duration that is no integer (STS's default hour): refused here
            check(b[0] == "assume-role", f"{what}: botocore no longer ignores it: {b}")
        else:
            check(b[0] in ("error", "crashed") or b is None, f"{what}: botocore accepted it: {b}")
    rc, _, err = run([CLIENT_PROBE, "credentials"], env_with("[profile p]\nrole_arn = %s\nsource_profile = base\n"
                                                             % ROLE, "[base]\naws_access_key_id = %s\n"
                                                             "aws_secret_access_key = not-the-secret\n"
                                                             % m.access_key, AWS_PROFILE="p"))
    check("SignatureDoesNotMatch" in err, f"a refused source key: {err[-300:]!r}")

sys.exit(1 if failures else 0)
