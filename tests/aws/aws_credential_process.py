#!/usr/bin/python3
"""A profile's credential_process (src/aws/credential_process.c) against botocore's ProcessProvider
and Python's shlex, the references the AWS CLI itself uses:
- the command line splits into the words shlex.split gives, on random strings of quotes,
  backslashes and blanks (and fails where shlex raises);
- the helper receives the same argv from instbench as from botocore, and the credentials it prints
  (with and without a session token) sign requests the local endpoint accepts (it checks every
  signature with botocore);
- the order within a profile is botocore's: the credentials file's keys, then credential_process
  (the credentials file's over the config file's), then the config file's keys;
- what botocore refuses (a failing helper, the last line of 20 KiB of stderr quoted; Version 2 or none; a missing key;
  no JSON; a program that is not there) instbench refuses too, naming the profile and never a
  secret, as it does for output over 64 KiB and credentials already expired;
- credentials with an Expiration within 5 minutes are fetched again before a request is signed,
  others are not;
- a profile that assumes a role, uses a web identity (or one in the environment, EKS's) or SSO is
  never passed over for its static keys.

usage: aws_credential_process.py PROBE [unittest args]
"""
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import aws_endpoint_test as base  # noqa: E402
from aws_endpoint_test import AK, CONFIG_AK, CONFIG_SK, PROFILE_AK, PROFILE_SK, SK, TOK, TOK_AK, TOK_SK, mask  # noqa: E402
from botocore_ref import botocore_credentials  # noqa: E402

PY = sys.executable

# The helper: prints what its first argument asks for and appends its argv to $HELPER_LOG.
HELPER = r'''
import datetime, json, os, sys
with open(os.environ["HELPER_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
mode = sys.argv[1]
now = datetime.datetime.now(datetime.timezone.utc)
def out(**kw):
    print(json.dumps(kw))
if mode == "plain":
    out(Version=1, AccessKeyId=%(ak)r, SecretAccessKey=%(sk)r)
elif mode == "token":   # as `aws configure export-credentials --format process` (AWS CLI v2) prints it
    out(Version=1, AccessKeyId=%(tak)r, SecretAccessKey=%(tsk)r, SessionToken=%(tok)r,
        Expiration=(now + datetime.timedelta(hours=1)).replace(microsecond=0).isoformat())
elif mode == "soon":
    out(Version=1, AccessKeyId=%(tak)r, SecretAccessKey=%(tsk)r, SessionToken=%(tok)r,
        Expiration=(now + datetime.timedelta(minutes=2)).strftime("%%Y-%%m-%%dT%%H:%%M:%%SZ"))
elif mode == "expired":
    out(Version=1, AccessKeyId=%(tak)r, SecretAccessKey=%(tsk)r, SessionToken=%(tok)r,
        Expiration=(now - datetime.timedelta(hours=1)).strftime("%%Y-%%m-%%dT%%H:%%M:%%SZ"))
elif mode == "v2":
    out(Version=2, AccessKeyId=%(ak)r, SecretAccessKey=%(sk)r)
elif mode == "noversion":
    out(AccessKeyId=%(ak)r, SecretAccessKey=%(sk)r)
elif mode == "nosecret":
    out(Version=1, AccessKeyId=%(ak)r)
elif mode == "notjson":
    print("AccessKeyId=%(ak)s")
elif mode == "fail":
    for i in range(400):   # 20 KiB of a helper's debug lines before the one that says why
        print("debug: step %%03d of the login helper, nothing wrong yet" %% i, file=sys.stderr)
    print("the SSO session has expired: run aws sso login", file=sys.stderr)
    sys.exit(3)
elif mode == "flood":
    sys.stdout.write(" " * (1 << 20))
    out(Version=1, AccessKeyId=%(ak)r, SecretAccessKey=%(sk)r)
''' % dict(ak=AK, sk=SK, tak=TOK_AK, tsk=TOK_SK, tok=TOK)


class CredentialProcess(base.AwsTestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="credproc")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.helper = os.path.join(self.dir, "helper dir", "helper.py")   # a blank in its path: quoted
        os.makedirs(os.path.dirname(self.helper))
        with open(self.helper, "w") as f:
            f.write(HELPER)
        self.log = os.path.join(self.dir, "argv.log")

    def files(self, config="", creds=""):
        paths = {}
        for name, text in (("config", config), ("credentials", creds)):
            paths[name] = os.path.join(self.dir, name)
            with open(paths[name], "w") as f:
                f.write(text)
        return paths

    def command(self, mode, *extra):
        return "%s '%s' %s %s" % (PY, self.helper, mode, " ".join(extra))

    def penv(self, paths, **kw):
        return self.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None, AWS_CONFIG_FILE=paths["config"],
                        AWS_SHARED_CREDENTIALS_FILE=paths["credentials"], HELPER_LOG=self.log, **kw)

    def runs(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            runs = [json.loads(line) for line in f]
        os.remove(self.log)
        return runs

    def test_split_matches_shlex(self):
        rng = random.Random(20261130)
        alphabet = ["a", "b", "c", " ", " ", "\t", "\n", "'", "'", '"', '"', "\\", "\\", "#", "$", "*", "=", "é"]
        cases = ["", "   ", "a", "a b", "'a b' c", '"a \\" b"', "a\\ b", "'' x", 'x ""', "a'b'\"c\"d", "\\'x",
                 '"\\x"', '"\\\\"', "a\\\nb", "'unclosed", '"unclosed', "trailing\\"]
        cases += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(3000)]
        p = subprocess.run([base.PROBE, "shell-split"], input="\0".join(cases).encode() + b"\0",
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = [json.loads(line) for line in p.stdout.decode().splitlines()]
        self.assertEqual(len(got), len(cases))
        wrong = []
        for s, g in zip(cases, got):
            try:
                want = {"argv": shlex.split(s)}
            except ValueError:
                want = None
            if (want is None) != ("error" in g) or (want is not None and g != want):
                wrong.append((s, g, want))
        self.assertEqual(wrong[:5], [], "%d of %d strings split unlike shlex.split" % (len(wrong), len(cases)))

    def test_credentials_sign_as_botocore_reads_them(self):
        tricky = ["'two words'", '"a \\"quoted\\" word"', "back\\ slash", "''", "'$HOME'", "'*'"]
        for mode, key, token in (("plain", AK, False), ("token", TOK_AK, True)):
            with self.subTest(mode=mode):
                paths = self.files(config="[default]\nregion = us-east-1\ncredential_process = %s\n"
                                   % self.command(mode, *tricky))
                env = self.penv(paths)
                self.runs()
                res, _, _ = self.probe(["credentials"], env)
                self.assertEqual((res["source"], res["key"], res["token"]), ("process:default", mask(key), token))
                ours = self.runs()
                self.assertEqual(botocore_credentials(env), ["custom-process", key])
                theirs = self.runs()
                self.assertEqual(ours, theirs[:1], "the helper's argv from instbench and from botocore")
                self.assertEqual(ours[0], [mode, "two words", 'a "quoted" word', "back slash", "", "$HOME", "*"])
                # the local endpoint recomputes the signature with the secret it knows for the key
                self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env)

    def test_order_within_a_profile(self):
        proc = "credential_process = %s\n" % self.command("plain")
        other = "credential_process = %s\n" % self.command("token")
        keys = "aws_access_key_id = %s\naws_secret_access_key = %s\n"
        cases = [
            # the credentials file's keys beat credential_process
            ("creds keys + config process", "[profile dev]\n" + proc, "[dev]\n" + keys % (PROFILE_AK, PROFILE_SK),
             "profile:dev", PROFILE_AK, "shared-credentials-file"),
            # credential_process beats the config file's keys
            ("config keys + config process", "[profile dev]\n" + proc + keys % (CONFIG_AK, CONFIG_SK), "",
             "process:dev", AK, "custom-process"),
            # the credentials file's credential_process beats the config file's
            ("process in both files", "[profile dev]\n" + other, "[dev]\n" + proc, "process:dev", AK,
             "custom-process"),
        ]
        for what, config, creds, source, key, method in cases:
            with self.subTest(what):
                env = self.penv(self.files(config, creds), AWS_PROFILE="dev")
                res, _, _ = self.probe(["credentials"], env)
                self.assertEqual((res["source"], res["key"]), (source, mask(key)))
                self.assertEqual(botocore_credentials(env), [method, key])
                self.runs()

    def test_refusals(self):
        cases = [("fail", "exited with 3: the SSO session has expired: run aws sso login"),
                 ("v2", '"Version": 2; the format has version 1 only'),
                 ("noversion", 'no "Version"'),
                 ("nosecret", 'no "SecretAccessKey"'),
                 ("notjson", "no JSON object"),
                 ("expired", "expired at"),
                 ("flood", "over 64 KiB to stdout"),
                 (None, "cannot run '/nonexistent/helper'")]
        for mode, said in cases:
            with self.subTest(mode=mode):
                command = self.command(mode) if mode else "/nonexistent/helper --profile x"
                paths = self.files(config="[profile p]\ncredential_process = %s\n" % command)
                env = self.penv(paths, AWS_PROFILE="p")
                t0 = time.monotonic()
                _, err, _ = self.probe(["credentials"], env, expect_rc=1)
                self.assertLess(time.monotonic() - t0, 20)
                self.assertIn("profile 'p' in %s: credential_process: " % paths["config"], err)
                self.assertIn(said, err)
                self.assertNotIn("--profile x", err, "the command's arguments were shown")
                if mode not in ("expired", "flood"):   # botocore refreshes or reads those on
                    with self.assertRaises(RuntimeError, msg="botocore accepted %s" % mode):
                        botocore_credentials(env)
                self.runs()

    def test_refreshed_before_expiry(self):
        for mode, runs_at_least, runs_at_most in (("soon", 2, 20), ("token", 1, 1)):
            with self.subTest(mode=mode):
                env = self.penv(self.files(config="[default]\ncredential_process = %s\n" % self.command(mode)))
                self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env)
                n = len(self.runs())
                self.assertTrue(runs_at_least <= n <= runs_at_most, "%s: the helper ran %d times" % (mode, n))

    def test_roles_and_sso_never_passed_over(self):
        # a profile's keys are not what the AWS CLI signs with when the profile also assumes a role,
        # uses a web identity or SSO: each of those is tried (tests/aws/aws_assume_role.py assumes
        # them against moto) or refused, and its failure is the answer, never the keys
        keys = "aws_access_key_id = %s\naws_secret_access_key = %s\n" % (PROFILE_AK, PROFILE_SK)
        for setting, said in (
                ("role_arn = arn:aws:iam::123456789012:role/r\nsource_profile = base\n",
                 "its source_profile 'base' is in neither"),
                ("sso_account_id = 123456789012\nsso_role_name = Admin\nsso_session = s\n",
                 "its sso_session 's' has no [sso-session s] section"),
                ("web_identity_token_file = /nonexistent/token\nrole_arn = arn:aws:iam::123456789012:role/r\n",
                 "the web identity token (web_identity_token_file): cannot open /nonexistent/token")):
            with self.subTest(setting=setting.split(" ")[0]):
                paths = self.files(config="[profile dev]\n" + setting + keys)
                _, err, _ = self.probe(["credentials"], self.penv(paths, AWS_PROFILE="dev"), expect_rc=1)
                self.assertIn(said, err)
        # EKS's web identity in the environment comes before any profile's keys, as in botocore's chain
        paths = self.files(creds="[default]\n" + keys)
        env = self.penv(paths, AWS_WEB_IDENTITY_TOKEN_FILE="/nonexistent/token",
                        AWS_ROLE_ARN="arn:aws:iam::123456789012:role/r")
        _, err, _ = self.probe(["credentials"], env, expect_rc=1)
        self.assertIn("the web identity token (AWS_WEB_IDENTITY_TOKEN_FILE): cannot open", err)
        res, _, _ = self.probe(["credentials"], self.penv(paths))
        self.assertEqual(res["source"], "profile:default")

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    base.PROBE = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
