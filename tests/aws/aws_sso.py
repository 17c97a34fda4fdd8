#!/usr/bin/python3
"""A profile's IAM Identity Center (SSO) role (src/aws/sso.c) against botocore's SSOProvider (moto's
venv; Debian's botocore predates AWS_ENDPOINT_URL), both asking the local fake's portal
(tests/fakes/aws_fake_metadata.py, GetRoleCredentials):
- an sso-session profile and a legacy one (sso_start_url in the profile): the token `aws sso
  login` cached under ~/.aws/sso/cache/SHA1(session name | start URL).json is sent, the portal is
  asked for the same account and role as botocore asks, and the role's credentials sign a request
  the endpoint checks (the fake mints them and knows their secret);
- the older CLI's "...UTC" expiresAt is read as botocore reads it;
- an expired token, a missing cache file, a token the portal refuses (401), an sso_session without
  its section: refused by both, instbench naming the profile and `aws sso login`, never the token.
usage: aws_sso.py PROBE"""
import datetime
import hashlib
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import aws_endpoint_test as base  # noqa: E402
from botocore_ref import venv_botocore_credentials  # noqa: E402

TOKEN = "aoaAAAAAGdSSOaccessTOKEN-from-aws-sso-login-EXAMPLE0001"
START = "https://corp-example.awsapps.com/start"

def when(hours):
    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=hours)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


class Sso(base.AwsTestCase):
    @classmethod
    def setUpClass(cls):
        cls.ep = base.Endpoint("--sso-access-token", TOKEN)
        cls.home = tempfile.mkdtemp(prefix="ssohome")

    def setUp(self):
        shutil.rmtree(os.path.join(self.home, ".aws"), ignore_errors=True)
        os.makedirs(os.path.join(self.home, ".aws", "sso", "cache"))
        self.config = os.path.join(self.home, ".aws", "config")
        with open(self.config, "w") as f:
            f.write("[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Training\n"
                    "region = us-west-2\n\n[sso-session corp]\nsso_start_url = %s\nsso_region = eu-west-1\n"
                    "sso_registration_scopes = sso:account:access\n\n"
                    "[profile legacy]\nsso_start_url = %s\nsso_region = us-east-1\nsso_account_id = 210987654321\n"
                    "sso_role_name = ReadOnly\n\n"
                    "[profile orphan]\nsso_session = gone\nsso_account_id = 123456789012\nsso_role_name = X\n"
                    % (START, START))

    def cache(self, key, token=TOKEN, expires=None):
        path = os.path.join(self.home, ".aws", "sso", "cache", hashlib.sha1(key.encode()).hexdigest() + ".json")
        with open(path, "w") as f:
            json.dump({"startUrl": START, "region": "eu-west-1", "accessToken": token,
                       "expiresAt": expires or when(8)}, f)

    def penv(self, profile):
        return self.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None, AWS_PROFILE=profile,
                        AWS_CONFIG_FILE=self.config, AWS_SHARED_CREDENTIALS_FILE=os.path.join(self.home, "none"))

    def botocore(self, env):
        return venv_botocore_credentials(env)

    def asked(self):
        return self.ep.stats().get("sso_requests", [])

    def test_roles_as_botocore_gets_them(self):
        for profile, key, account, role in (("dev", "corp", "123456789012", "Training"),
                                            ("legacy", START, "210987654321", "ReadOnly")):
            for expires in (when(8), when(8).replace("Z", "UTC")):
                with self.subTest(profile=profile, expires=expires):
                    self.cache(key, expires=expires)
                    env = self.penv(profile)
                    n = len(self.asked())
                    res, err, _ = self.probe(["credentials"], env)
                    self.assertEqual((res["source"], res["token"]), ("sso:" + profile, True))
                    self.assertGreater(res["expiration"], 0)
                    self.assertNotIn(TOKEN, err)
                    ours = self.asked()[n:]
                    got = self.botocore(env)
                    self.assertEqual(got[0], "sso", got)
                    theirs = self.asked()[n + len(ours):]
                    self.assertEqual(ours, [{"account_id": account, "role_name": role, "token_ok": True,
                                             "method": "GET"}])
                    self.assertEqual(ours, theirs)
                    # the fake minted these credentials and checks the signature made with them
                    self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env)

    def test_refusals(self):
        cases = [("expired", "legacy", lambda: self.cache(START, expires=when(-1)), "its token expired at"),
                 ("no cache file", "legacy", lambda: None, "its token is not in the cache"),
                 ("refused token", "dev", lambda: self.cache("corp", token="not-the-token"), "UnauthorizedException"),
                 ("no sso-session section", "orphan", lambda: None, "its sso_session 'gone' has no [sso-session gone]")]
        for what, profile, prepare, said in cases:
            with self.subTest(what):
                cache = os.path.join(self.home, ".aws", "sso", "cache")
                for name in os.listdir(cache):
                    os.remove(os.path.join(cache, name))
                prepare()
                env = self.penv(profile)
                _, err, _ = self.probe(["credentials"], env, expect_rc=1)
                self.assertIn("profile '%s'" % profile, err)
                self.assertIn(said, err)
                if what != "no sso-session section":
                    self.assertIn("aws sso login --profile %s" % profile, err)
                self.assertNotIn(TOKEN, err)
                self.assertNotIn("not-the-token", err)
                self.assertIn(self.botocore(env)[0], ("error", "crashed"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    base.PROBE = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
