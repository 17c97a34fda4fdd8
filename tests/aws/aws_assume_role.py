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
  missing source profile, an unknown credential_source, a source whose key STS refuses
  (SignatureDoesNotMatch named with the action and the role); and a duration_seconds that is no
  whole number, which botocore drops silently for STS's default hour;
- a profile's mfa_serial: the code asked for on the terminal (a pseudo-terminal here) with
  botocore's prompt, and AssumeRole sent, through a recording proxy in front of moto (which checks
  its signature but not the code), with exactly the form botocore's serializer makes of the same
  parameters (SerialNumber, TokenCode); a line that is no six-digit code, no answer within the
  wait (INSTBENCH_MFA_WAIT_S shortens its 120 s), and a process with no terminal (a new session),
  refused before any request, each saying why.
usage: aws_assume_role.py AWS_CLIENT_PROBE S3_PROBE"""
import http.server
import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures  # noqa: E402
from moto_server import MotoServer  # noqa: E402
from botocore_ref import botocore_request, venv_botocore_credentials  # noqa: E402
from http_relay import relay  # noqa: E402

CLIENT_PROBE, S3_PROBE = (os.path.abspath(a) for a in sys.argv[1:3])
ROLE = "arn:aws:iam::123456789012:role/instbench-role"

botocore_method = venv_botocore_credentials


def run(args, env, **kw):
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, **kw)
    return p.returncode, p.stdout, p.stderr


def run_on_terminal(args, env, answer):
    """ARGS on a pseudo-terminal of their own (their /dev/tty), ANSWER typed once a prompt ending in
    ': ' shows; (exit code, everything the terminal showed, \r\n made \n, whether it was typed)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(args[0], args, env)
        finally:
            os._exit(127)
    out, typed, deadline = b"", False, time.time() + 120
    while time.time() < deadline:
        if not select.select([fd], [], [], 1)[0]:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:   # EIO: the child has gone and the terminal with it
            break
        if not chunk:
            break
        out += chunk
        if answer is not None and not typed and out.endswith(b": ") and b"MFA code" in out:
            os.write(fd, answer + b"\n")
            typed = True
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace").replace("\r\n", "\n"), typed


class Recorder(http.server.ThreadingHTTPServer):
    """Relays every request to UPSTREAM as it came (http_relay) and keeps each (path, form body)
    in .seen."""
    def __init__(self, upstream):
        self.upstream, self.seen = urllib.parse.urlsplit(upstream), []
        super().__init__(("127.0.0.1", 0), RecorderHandler)


class RecorderHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.path, body.decode()))
        relay(self, self.server.upstream.port, "POST", body, host=self.server.upstream.hostname)

    def log_message(self, *a):
        pass


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

    # a profile's mfa_serial: asked for on the terminal, sent as botocore sends it
    rec = Recorder(m.url)
    threading.Thread(target=rec.serve_forever, daemon=True).start()
    serial = "arn:aws:iam::123456789012:mfa/trainer"
    mfa_env = env_with("[profile p]\nrole_arn = %s\nsource_profile = base\nmfa_serial = %s\n"
                       "role_session_name = mfa-test\n" % (ROLE, serial), "[base]\n" + keys, AWS_PROFILE="p",
                       AWS_ENDPOINT_URL_STS="http://127.0.0.1:%d" % rec.server_address[1])
    rc, shown, typed = run_on_terminal([CLIENT_PROBE, "credentials"], mfa_env, b"  123456 ")
    check(typed and "Enter MFA code for %s: " % serial in shown, f"mfa: no prompt on the terminal: {shown[-400:]!r}")
    got = {}
    if "{" in shown:
        try:
            got = json.JSONDecoder().raw_decode(shown[shown.index("{"):])[0]
        except ValueError:
            pass
    check(rc == 0 and got.get("source") == "role:p" and got.get("token"), f"mfa: rc {rc}, {shown[-500:]!r}")
    forms = [urllib.parse.parse_qs(b, keep_blank_values=True) for path, b in rec.seen]
    want = botocore_request("sts", "AssumeRole", {"RoleArn": ROLE, "RoleSessionName": "mfa-test",
                                                  "SerialNumber": serial, "TokenCode": "123456"})
    check(len(forms) == 1 and {k: v[0] for k, v in forms[0].items()} == want["body"],
          f"mfa: AssumeRole's form {forms} is not botocore's {want['body']}")
    for what, answer, said in (("letters in the code", b"12ab56", "an MFA code is 6 digits"),
                               ("seven digits", b"1234567", "an MFA code is 6 digits"),
                               ("an empty line", b"", "an MFA code is 6 digits")):
        rec.seen.clear()
        rc, shown, typed = run_on_terminal([CLIENT_PROBE, "credentials"], mfa_env, answer)
        check(rc == 1 and said in shown and not rec.seen, f"mfa, {what}: rc {rc}, {len(rec.seen)} requests, "
                                                            f"{shown[-300:]!r}")
    rec.seen.clear()
    rc, shown, _ = run_on_terminal([CLIENT_PROBE, "credentials"], dict(mfa_env, INSTBENCH_MFA_WAIT_S="2"), None)
    check(rc == 1 and "no MFA code was entered within 2 s" in shown and not rec.seen,
          f"mfa, no answer: rc {rc}, {len(rec.seen)} requests, {shown[-300:]!r}")
    rc, _, err = run([CLIENT_PROBE, "credentials"], mfa_env, start_new_session=True, stdin=subprocess.DEVNULL)
    check(rc == 1 and "no terminal to ask for it on" in err and "credential_process" in err and not rec.seen,
          f"mfa without a terminal: rc {rc}, {len(rec.seen)} requests, {err[-400:]!r}")
    rec.shutdown()

sys.exit(1 if failures else 0)
