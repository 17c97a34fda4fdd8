#!/usr/bin/python3
"""The container credentials token (AWS_CONTAINER_AUTHORIZATION_TOKEN, or the file
AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE names, which wins as in botocore) goes into an
Authorization header as it is: one with any control character (a tab, ESC, DEL, NUL, a line break
inside it) is refused before the endpoint is asked, naming the variable (and the file) but never
the token.  A file's trailing line end (`echo TOKEN > file`) is no part of the token.  The fake
AWS serves the container endpoint and checks the header against --container-auth-token.
Usage: aws_container_token.py AWS_CLIENT_PROBE"""
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import FakeAws, check, failures, offline_env, scratch_dir   # noqa: E402

PROBE = sys.argv[1]
SECRET = "s3cr3t-ctr-9q"
TOKEN = "Bearer " + SECRET
tmp = scratch_dir("instbench-ctr-token-")
fake = FakeAws("--container-auth-token", TOKEN)


def run(extra):
    env = offline_env(tmp, dict(extra, AWS_CONTAINER_CREDENTIALS_FULL_URI=fake.url + "/v2/credentials/abc"))
    fake.control(reset_stats=True)
    p = subprocess.run([PROBE, "-v", "credentials"], env=env, capture_output=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace"), fake.stats()["container_credential_fetches"]


def token_file(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


try:
    # taken: the token as it is, and a file's trailing line end
    for what, extra in (("the variable", {"AWS_CONTAINER_AUTHORIZATION_TOKEN": TOKEN}),
                        ("a file", {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": token_file("ok", TOKEN.encode())}),
                        ("a file ending in \\n", {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE":
                                                  token_file("nl", TOKEN.encode() + b"\n")}),
                        ("a file ending in \\r\\n", {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE":
                                                     token_file("crlf", TOKEN.encode() + b"\r\n")})):
        rc, out, fetches = run(extra)
        check(rc == 0 and '"source": "container"' in out and fetches == 1 and SECRET not in out,
              "%s: taken: rc %d, %d fetches, %s" % (what, rc, fetches, out[-400:]))

    # refused: every control character, before anything is sent
    for i, c in enumerate(("\t", "\x1b", "\x7f", "\x01", "\n", "\r", "\x0b", "\x00")):
        bad = "Bearer " + SECRET[:4] + c + SECRET[4:]
        cases = [("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_file("bad%d" % i, bad.encode() + b"\n"))]
        if c != "\x00":   # no environment variable holds a NUL
            cases.append(("AWS_CONTAINER_AUTHORIZATION_TOKEN", bad))
        for var, value in cases:
            rc, out, fetches = run({var: value})
            named = var if var.endswith("TOKEN") else "%s (%s)" % (var, value)
            check(rc == 1 and named in out and "holds a control character" in out and fetches == 0,
                  "%s with %r: refused naming it, nothing fetched: rc %d, %d fetches, %s"
                  % (var, c, rc, fetches, out[-400:]))
            check(SECRET[:4] not in out and SECRET[4:] not in out,
                  "%s with %r: the token shown: %s" % (var, c, out[-400:]))
finally:
    fake.stop()
sys.exit(1 if failures else 0)
