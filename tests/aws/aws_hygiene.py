#!/usr/bin/python3
"""What the AWS client prints about endpoints, errors, regions and credential sources:
- a password in AWS_ENDPOINT_URL / the IMDS or container endpoint (https://user:pw@host) never
  reaches stdout, stderr or -v logs: the URL is shown as http://***@host;
- an endpoint URL too long for the client names the variable set (AWS_ENDPOINT_URL or
  AWS_ENDPOINT_URL_EC2), its length and the limit, never a variable that is not set;
- a server's error body is reduced to its code and the first line of its message, cut short;
  other fields and further lines never appear;
- an endpoint URL without http:// or https:// (localhost:4566) names its variable and value;
- an invalid AWS_REGION / AWS_DEFAULT_REGION is a usage error saying so, not "no region";
- a [default] profile whose credential_process fails, or whose SSO settings are incomplete, names
  that source instead of a generic "no credentials";
- credentials holding a line break (environment, a continued line of the credentials file, IMDS)
  are refused naming where they came from, never sent inside a header;
- the shared config and credentials files (and the container token file) are read bounded: one
  that is no regular file (/dev/zero, a FIFO, a directory) or is over its cap (16 MiB; the token
  64 KiB) is exit 1 naming the variable, the file and the cap, at once (the old reader read
  /dev/zero until the memory ran out, and took a FIFO as empty only after a writer came); a
  missing file or /dev/null configures nothing, as before.
usage: aws_hygiene.py INSTBENCH"""
import json
import os
import subprocess
import sys

BIN = sys.argv[1]
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import ScriptedHandler, check, failures, refused_url, scratch_dir, scripted_server  # noqa: E402

TMP = scratch_dir("instbench-aws-hygiene-")


LONG = "first line of the message " + "A" * 1000
JSON_ERROR = {"__type": "com.amazonaws.pricing#ValidationException",
              "message": LONG + "\nSECOND-LINE-SECRET at Handler.java:42\n\x1b[31mred",
              "debugDetail": "INTERNAL-FIELD-XYZ"}
XML_ERROR = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>InvalidParameterValue</Code>"
             "<Message>ec2 first line\nEC2-SECOND-LINE</Message><Detail>EC2-DETAIL-FIELD</Detail></Error></Errors>"
             "<RequestID>EC2-REQUEST-ID-FIELD</RequestID></Response>")


class Handler(ScriptedHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("X-Amz-Target"):
            self.answer(400, json.dumps(JSON_ERROR), "application/x-amz-json-1.1")
        else:
            self.answer(400, XML_ERROR, "text/xml")


server, _ = scripted_server(Handler)
PORT = server.server_address[1]


def env(**kw):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(HOME=TMP, XDG_CACHE_HOME=os.path.join(TMP, "cache"), AWS_EC2_METADATA_DISABLED="true",
             AWS_CONFIG_FILE=os.path.join(TMP, "no-config"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(TMP, "no-creds"),
             AWS_MAX_ATTEMPTS="1", NO_COLOR="1")
    for k, v in kw.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


def prices(args, e, want):
    p = subprocess.run([BIN, "-v", "prices"] + args, capture_output=True, text=True, env=e, timeout=60, cwd=TMP)
    out = p.stdout + p.stderr
    what = " ".join(args)
    check(p.returncode == want, f"{what}: exit {p.returncode}, want {want}: {p.stderr[-600:]}")
    check("Sanitizer" not in out and "runtime error:" not in out, f"{what}: sanitizer report: {out[-2000:]}")
    return p, out


CREDS = dict(AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
ARGS = ["--instance-types", "g5.xlarge", "--region", "us-east-1", "--no-placement-scores"]

# ---- a password in AWS_ENDPOINT_URL; error bodies reduced to code + first line ----
for source, want in (("live", 1), ("auto", 0)):
    e = env(AWS_ENDPOINT_URL=f"http://svcuser:hunter2endpointpw@127.0.0.1:{PORT}", **CREDS)
    p, out = prices(ARGS + ["--source", source], e, want)
    check("hunter2endpointpw" not in out and "svcuser" not in out, f"--source {source}: the endpoint password was printed")
    check(f"***@127.0.0.1:{PORT}" in out, f"--source {source}: the endpoint is not shown redacted: {out[-600:]}")
    check("ValidationException" in out and "first line of the message" in out,
          f"--source {source}: the error code and message are missing: {out[-600:]}")
    if source == "auto":   # live stops at the first failing service
        check("InvalidParameterValue" in out and "ec2 first line" in out, "auto: the EC2 error is missing")
    for leak in ("SECOND-LINE-SECRET", "INTERNAL-FIELD-XYZ", "EC2-SECOND-LINE", "EC2-DETAIL-FIELD",
                 "EC2-REQUEST-ID-FIELD", "\x1b", "A" * 250):
        check(leak not in out, f"--source {source}: the server's body was echoed ({leak[:20]!r} printed)")

# ---- an endpoint URL over the client's limit: the variable set is named, and why ----
LONG_URL = f"http://127.0.0.1:{PORT}/" + "a" * 70000
# (Pricing stays on this test's server when only EC2's URL is too long: its error comes first with
# --source live, so that case is asked with auto)
for kw, var, services, sources in (
        ({"AWS_ENDPOINT_URL": LONG_URL}, "AWS_ENDPOINT_URL", ("Pricing", "EC2"), (("live", 1), ("auto", 0))),
        ({"AWS_ENDPOINT_URL": f"http://127.0.0.1:{PORT}", "AWS_ENDPOINT_URL_EC2": LONG_URL}, "AWS_ENDPOINT_URL_EC2",
         ("EC2",), (("auto", 0),))):
    for source, want in sources:
        p, out = prices(["--instance-types", "g5.xlarge", "--region", "us-east-1", "--source", source],
                        env(**kw, **CREDS), want)
        said = [line for line in p.stderr.splitlines() if "no endpoint" in line]
        check(said and all(f"{var} is too long: {len(LONG_URL)} bytes, over the limit of" in line for line in said),
              f"{var} of {len(LONG_URL)} bytes, --source {source}: not named as too long: {p.stderr[-800:]}")
        check("AWS_ENDPOINT_URL_PRICING" not in out and "a" * 200 not in out,
              f"{var}, --source {source}: names a variable not set, or echoes the URL: {out[-800:]}")
        if source == "auto":
            check(all(any(line.startswith("warning: ") and svc in line for line in said) for svc in services),
                  f"{var}, --source auto: a warning for each of {services}: {said}")

# ---- an endpoint URL with no http:// or https:// before its host (LocalStack's "localhost:4566"):
# the variable and its value named, where it was "invalid endpoint URL 'localhost:4566/'" ----
for var, value in (("AWS_ENDPOINT_URL", "localhost:4566"), ("AWS_ENDPOINT_URL_S3", "ftp://u:ftppw@localhost:4566")):
    cmd = ["prices"] + ARGS + ["--source", "live"] if var == "AWS_ENDPOINT_URL" else ["rank", "s3://bkt/x/"]
    p = subprocess.run([BIN] + cmd, capture_output=True, text=True, env=env(**{var: value}, **CREDS), timeout=60, cwd=TMP)
    check(p.returncode == 1 and "%s '%s' is not an endpoint URL: it wants http:// or https://" %
          (var, value.replace("u:ftppw@", "***@")) in p.stderr and "ftppw" not in p.stderr,
          f"{var}={value}: {p.returncode} {p.stderr[-600:]}")

# ---- the IMDS and container endpoints: same rule ----
e = env(AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=refused_url("", "imdsuser:imdspw123"),
        AWS_METADATA_SERVICE_TIMEOUT="1")
p, out = prices(ARGS + ["--source", "live"], e, 1)
check("imdspw123" not in out and "imdsuser" not in out, "the IMDS endpoint password was printed")
check(refused_url("", "***") in out, f"the IMDS endpoint is not shown redacted: {out[-600:]}")
e = env(AWS_CONTAINER_CREDENTIALS_FULL_URI=refused_url("/creds", "ctruser:ctrpw456"))
p, out = prices(ARGS + ["--source", "live"], e, 1)
check("ctrpw456" not in out and "ctruser" not in out, "the container endpoint password was printed")
check(refused_url("/creds", "***") in out, f"the container endpoint is not shown redacted: {out[-600:]}")

# ---- an invalid region in the environment is said to be invalid ----
for var, value in (("AWS_REGION", "not a region!"), ("AWS_REGION", "useast1"), ("AWS_DEFAULT_REGION", "US-EAST-1")):
    e = env(**{var: value})
    p, out = prices(["--source", "snapshot", "--instance-types", "g5.xlarge"], e, 2)
    check(value in p.stderr and var in p.stderr and ("not a region" in p.stderr),
          f"{var}={value!r}: no message saying it is invalid: {p.stderr[-400:]}")
    check("no AWS region configured" not in p.stderr, f"{var}={value!r}: reported as not configured")

# ---- a region of the right shape that AWS does not have, from the environment or a profile: the
# message names where the value came from (no --region was given), never --region ----
profile = os.path.join(TMP, "region-config")
with open(profile, "w") as f:
    f.write("[default]\nregion = us-esat-1\n")
for kw, source in (({"AWS_REGION": "us-esat-1"}, "AWS_REGION"), ({"AWS_DEFAULT_REGION": "us-esat-1"}, "AWS_DEFAULT_REGION"),
                   ({"AWS_CONFIG_FILE": profile}, "the region of profile 'default' in " + profile)):
    p, out = prices(["--source", "snapshot", "--instance-types", "g5.xlarge"], env(**kw), 2)
    check(p.stderr.startswith("instbench prices: %s: 'us-esat-1' is not an AWS region (and no source has a price "
                              "there; fix it or name regions with --region); did you mean us-east-1?" % source)
          and "--region:" not in p.stderr and p.stderr.count("\n") == 1, f"{source}=us-esat-1: {p.stderr[-400:]}")
# given with --region, the flag is what is named
p, out = prices(["--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-esat-1"],
                env(AWS_REGION="us-east-1"), 2)
check(p.stderr.startswith("instbench prices: --region: 'us-esat-1' is not an AWS region"), f"--region: {p.stderr[-400:]}")

# ---- a [default] profile whose credentials come from a source that fails, or one instbench lacks ----
for fname, text, word in (("config", "[default]\ncredential_process = /bin/echo {}\nregion = us-east-1\n",
                           "credential_process"),
                          ("config", "[default]\nsso_session = s\nsso_account_id = 123456789012\n"
                                     "sso_role_name = Admin\n", "sso_session 's'")):
    path = os.path.join(TMP, fname)
    with open(path, "w") as f:
        f.write(text)
    e = env(AWS_CONFIG_FILE=path)
    p, out = prices(ARGS + ["--source", "live"], e, 1)
    check(word in p.stderr and "default" in p.stderr, f"[default] with {word}: not named: {p.stderr[-400:]}")

# ---- credentials with a line break (a session token pasted with its newline; a value continued on
# an indented line of the credentials file): refused naming the source and the part, where the line
# break went out inside a header and the rest as a header of its own ----
creds = os.path.join(TMP, "creds-continued")
with open(creds, "w") as f:
    f.write("[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI\n  K7MDENG\n")
for kw, said in (({"AWS_SESSION_TOKEN": "tok\nInjected: yes", **CREDS}, "credentials from env: the session token"),
                 ({"AWS_SHARED_CREDENTIALS_FILE": creds}, "credentials from profile:default: the secret access key")):
    p, out = prices(ARGS + ["--source", "live"], env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{PORT}", **kw), 1)
    check(said + " holds a control character" in p.stderr and "ValidationException" not in out,
          f"{said}: {p.stderr[-400:]}")

# ---- the shared files, bounded: what is no file of settings, or too large, is named ----
fifo, big, bigtok = os.path.join(TMP, "fifo"), os.path.join(TMP, "big-config"), os.path.join(TMP, "big-token")
os.mkfifo(fifo)
with open(big, "wb") as f:
    f.truncate((16 << 20) + 1)   # sparse: one byte over the cap
with open(bigtok, "wb") as f:
    f.write(b"x" * ((64 << 10) + 1))
PRESIGN = ["presign", "s3://bucket/key"]
for var, path, word, extra in (
        ("AWS_CONFIG_FILE", "/dev/zero", "not a regular file", {}),
        ("AWS_SHARED_CREDENTIALS_FILE", "/dev/zero", "not a regular file", {}),
        ("AWS_CONFIG_FILE", fifo, "not a regular file", {}),
        ("AWS_SHARED_CREDENTIALS_FILE", TMP, "is a directory", {}),
        ("AWS_CONFIG_FILE", big, "over 16 MiB", {}),
        # with credentials and a region in the environment, the config file is still read (S3's
        # addressing style), and refused as well
        ("AWS_CONFIG_FILE", "/dev/zero", "not a regular file", dict(CREDS, AWS_REGION="us-east-1")),
        ("AWS_CONFIG_FILE", big, "over 16 MiB", dict(CREDS, AWS_REGION="us-east-1")),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/dev/zero", "not a regular file",
         dict(AWS_CONTAINER_CREDENTIALS_FULL_URI=refused_url("/creds"))),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", bigtok, "over 64 KiB",
         dict(AWS_CONTAINER_CREDENTIALS_FULL_URI=refused_url("/creds")))):
    try:
        p = subprocess.run([BIN] + PRESIGN, capture_output=True, text=True, env=env(**{var: path}, **extra),
                           timeout=30, cwd=TMP)
    except subprocess.TimeoutExpired:
        check(False, f"{var}={path}: still running after 30 s")
        continue
    check(p.returncode == 1 and path in p.stderr and word in p.stderr and not p.stdout and
          (var in p.stderr or "container credentials" in p.stderr),
          f"{var}={path}: exit 1 naming it and {word!r}: {p.returncode} {p.stderr[-400:]!r}")
# prices, whose region may come from the config file: refused too, not "no region configured"
p = subprocess.run([BIN, "prices", "--source", "snapshot", "--instance-types", "g5.xlarge"], capture_output=True,
                   text=True, env=env(AWS_CONFIG_FILE="/dev/zero"), timeout=30, cwd=TMP)
check(p.returncode == 1 and "AWS_CONFIG_FILE" in p.stderr and "/dev/zero" in p.stderr and
      "no AWS region" not in p.stderr, f"prices with AWS_CONFIG_FILE=/dev/zero: {p.returncode} {p.stderr[-400:]!r}")
# /dev/null and a missing file configure nothing: presign signs with the environment's credentials
for path in ("/dev/null", os.path.join(TMP, "missing")):
    p = subprocess.run([BIN] + PRESIGN + ["--region", "us-east-1"], capture_output=True, text=True,
                       env=env(AWS_CONFIG_FILE=path, AWS_SHARED_CREDENTIALS_FILE=path, **CREDS), timeout=30, cwd=TMP)
    check(p.returncode == 0 and p.stdout.startswith("https://"), f"AWS_CONFIG_FILE={path}: {p.returncode} "
          f"{p.stderr[-400:]!r}")

server.shutdown()
subprocess.run(["rm", "-rf", TMP])
print(f"aws_hygiene: {len(failures)} failure(s)" if failures else "aws_hygiene: ok")
sys.exit(1 if failures else 0)
