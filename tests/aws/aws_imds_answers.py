#!/usr/bin/python3
"""IMDS answers that are not what IMDS gives, from a scripted server (tests/fakes' IMDS only
answers as IMDS does):
- the token request answered 200 with no token in it (empty; a proxy's HTML page at that address)
  says so, where it read "failed: HTTP 200", and is still taken for "not on EC2";
- the role listing failing with anything but 404 says what it was (HTTP 500), where every failure
  read "no instance role attached"; a 404 still reads so;
- role credentials whose token holds a line break are refused, not sent inside a header.
usage: aws_imds_answers.py PROBE"""
import json
import os
import subprocess
import sys

PROBE = sys.argv[1]
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import ScriptedHandler, check, failures, scratch_dir, scripted_server  # noqa: E402

TMP = scratch_dir("instbench-imds-answers-")
ANSWERS = {}   # (method, path) -> (status, body); anything else 404


class Handler(ScriptedHandler):
    def scripted(self):
        status, body = ANSWERS.get((self.command, self.path), (404, ""))
        self.answer(status, body, "text/plain")

    do_GET = do_PUT = scripted


server, URL = scripted_server(Handler)
ENV = {"PATH": os.environ.get("PATH", ""), "HOME": TMP, "AWS_CONFIG_FILE": os.devnull,
       "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "AWS_EC2_METADATA_SERVICE_ENDPOINT":
       URL}


def probe(cmd):
    p = subprocess.run([PROBE, cmd], env=ENV, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


TOKEN = ("PUT", "/latest/api/token")
ROLES = ("GET", "/latest/meta-data/iam/security-credentials/")
PAGE = "<html>\n<body>Please sign in to the network</body>\n</html>\n"
for body in ("", PAGE):
    ANSWERS.clear()
    ANSWERS[TOKEN] = (200, body)
    rc, out, err = probe("identity")
    check(rc == 1 and "HTTP 200 with no session token in it (%d bytes): not on EC2?" % len(body) in err
          and '"rc": -1' in out, "a token answer of %d bytes: %d %s %s" % (len(body), rc, out, err))

ANSWERS.clear()
ANSWERS[TOKEN] = (200, "AQAEAtoken")
for status, want, unwanted in ((500, "security-credentials/: HTTP 500", "no instance role"),
                               (404, "IMDS: no instance role attached", "HTTP 404")):
    ANSWERS[ROLES] = (status, "")
    rc, out, err = probe("credentials")
    check(rc == 1 and want in err and unwanted not in err, "the role listing answered %d: %d %s" % (status, rc, err))
# role credentials whose token holds a line break: refused, never sent inside a header
ANSWERS[ROLES] = (200, "r")
ANSWERS[("GET", ROLES[1] + "r")] = (200, json.dumps({"Code": "Success", "AccessKeyId": "ASIAEXAMPLE",
                                                     "SecretAccessKey": "s", "Token": "t\r\nX-Injected: 1"}))
rc, out, err = probe("credentials")
check(rc == 1 and "credentials from imds: the session token holds a control character" in err,
      "a token with a line break: %d %s" % (rc, err))
sys.exit(1 if failures else 0)
