#!/usr/bin/python3
"""AWS client tests against the local AWS test endpoint (tests/fakes/aws_fake_server.py).

The endpoint recomputes every request's SigV4 signature with botocore, so any request that
succeeds here was signed correctly.  The credential chain and region are compared with what
botocore itself resolves from the same environment and files.  Every line the client prints (in
-v mode) is checked for every secret the test knows, including those the endpoint minted.

usage: aws_endpoint_test.py PROBE [unittest args]
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import FakeAws, absent_path, refused_url  # noqa: E402
from imds_standin import Silent  # noqa: E402
from botocore_ref import botocore_credentials  # noqa: E402

PROBE = None
PY = sys.executable

AK = "AKIDEXAMPLE"
SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOK_AK = "ASIATOKENEXAMPLE0001"
TOK_SK = "tokSecretKey/EXAMPLE+0001/abcdefghijklmnop"
TOK = "FwoGZXIvYXdzEXAMPLE//sessiontoken+with/odd=chars0001"
PROFILE_AK = "AKIAPROFILEDEV00001"
PROFILE_SK = "profileDevSecret/EXAMPLE+KEY0001"
CONFIG_AK = "AKIACONFIGONLY00001"
CONFIG_SK = "configOnlySecret/EXAMPLE+KEY0001"
KNOWN_SECRETS = [SK, TOK_SK, TOK, PROFILE_SK, CONFIG_SK]

PRICES = [
    {"instance_type": "p4d.24xlarge", "region": "us-east-1", "on_demand": 32.7726,
     "spot": {"us-east-1a": 9.83, "us-east-1b": 10.1}},
    {"instance_type": "g5.xlarge", "region": "us-east-1", "on_demand": 1.006, "spot": {"us-east-1a": 0.35}},
    {"instance_type": "g5.xlarge", "region": "us-west-2", "on_demand": 1.006,
     "spot": {"us-west-2a": 0.31, "us-west-2b": 0.32, "us-west-2c": 0.33}},
    {"instance_type": "g6.xlarge", "region": "us-west-2", "on_demand": 0.805, "spot": {"us-west-2a": 0.29}},
]


def mask(key):
    return key[:4] + "****" + key[-4:]


class Endpoint(FakeAws):
    """The fake AWS serving PRICES and knowing the test's credentials."""
    def __init__(self, *extra, tls=None):
        self.dir = tempfile.mkdtemp(prefix="awsep")
        prices = os.path.join(self.dir, "prices.json")
        with open(prices, "w") as f:
            json.dump(PRICES, f)
        args = ["--timeout", "240", "--prices", prices,
                "--credentials", "%s:%s" % (AK, SK), "--credentials", "%s:%s:%s" % (TOK_AK, TOK_SK, TOK),
                "--credentials", "%s:%s" % (PROFILE_AK, PROFILE_SK),
                "--credentials", "%s:%s" % (CONFIG_AK, CONFIG_SK)] + list(extra)
        if tls:
            args += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        super().__init__(*args, tls_ca=tls[0] if tls else None)

    def stop(self):
        super().stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def clean_env(home, **kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["HOME"] = home
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env["INSTBENCH_AWS_BACKOFF_BASE"] = "0.05"  # keep retries quick; the formula is unchanged
    for k, v in kw.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


class AwsTestCase(unittest.TestCase):
    ep = None

    @classmethod
    def setUpClass(cls):
        cls.ep = Endpoint()
        cls.home = tempfile.mkdtemp(prefix="awshome")

    @classmethod
    def tearDownClass(cls):
        cls.ep.stop()
        shutil.rmtree(cls.home, ignore_errors=True)

    def env(self, **kw):
        base = {"AWS_ACCESS_KEY_ID": AK, "AWS_SECRET_ACCESS_KEY": SK, "AWS_ENDPOINT_URL": self.ep.url}
        base.update(kw)
        return clean_env(self.home, **base)

    def probe(self, args, env, expect_rc=0, timeout=60):
        t0 = time.monotonic()
        p = subprocess.run([PROBE, "-v"] + args, env=env, capture_output=True, text=True, timeout=timeout)
        dt = time.monotonic() - t0
        out = p.stdout + p.stderr
        secrets = KNOWN_SECRETS + self.ep.stats()["minted_secrets"]
        for s in secrets:
            self.assertNotIn(s, out, "a secret reached the output of %s" % args)
        self.assertNotIn("Signature=", out)
        self.assertNotIn("X-Amz-Security-Token", out)
        if expect_rc is not None:
            self.assertEqual(p.returncode, expect_rc, "probe %s: rc %d\n%s" % (args, p.returncode, out))
        first = p.stdout.strip().splitlines()
        res = json.loads(first[0]) if first else {}
        return res, p.stderr, dt


class SigningAndChain(AwsTestCase):
    def write_files(self, creds=None, config=None):
        d = tempfile.mkdtemp(prefix="awsfiles")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        paths = {}
        for name, text in (("credentials", creds), ("config", config)):
            if text is not None:
                paths[name] = os.path.join(d, name)
                with open(paths[name], "w") as f:
                    f.write(text)
        return paths

    def test_env_credentials_signed_requests_accepted(self):
        env = self.env()
        res, _, _ = self.probe(["credentials"], env)
        self.assertEqual(res["source"], "env")
        self.assertEqual(res["key"], mask(AK))
        self.assertEqual(botocore_credentials(env), ["env", AK])
        res, err, _ = self.probe(["pricing", "AmazonEC2", "p4d.24xlarge", "g5.xlarge"], env)
        # -v: one line per attempt with method, URL, status, attempt, elapsed and the masked key id
        import re
        self.assertRegex(err, r"aws: POST %s/ -> HTTP 200 \(attempt 1/3, [0-9.]+ s, [0-9]+ bytes, key %s\)"
                         % (re.escape(self.ep.url), re.escape(mask(AK))))
        self.assertNotIn(AK, err.replace(mask(AK), ""))
        # Linux/Shared/NA/Used only: one product per (type, region) among the distractors
        got = sorted((p["type"], p["region"]) for p in res["products"])
        want = sorted((r["instance_type"], r["region"]) for r in PRICES if r["instance_type"] in ("p4d.24xlarge", "g5.xlarge"))
        self.assertEqual(got, want)

    def test_session_token_from_env(self):
        env = self.env(AWS_ACCESS_KEY_ID=TOK_AK, AWS_SECRET_ACCESS_KEY=TOK_SK, AWS_SESSION_TOKEN=TOK)
        res, _, _ = self.probe(["credentials"], env)
        self.assertTrue(res["token"])
        self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env)
        # the same key without its token is refused by the endpoint, naming the code
        env.pop("AWS_SESSION_TOKEN")
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env, expect_rc=1)
        self.assertIn("UnrecognizedClientException", err)

    def test_wrong_secret_is_signature_mismatch_not_retried(self):
        before = self.ep.stats()["signature_failures"]
        env = self.env(AWS_SECRET_ACCESS_KEY="not/the/right/secret/EXAMPLEKEY0000000")
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env, expect_rc=1)
        self.assertIn("SignatureDoesNotMatch", err)
        self.assertIn("AWS pricing request failed", err)
        self.assertIn("1 attempt)", err)
        self.assertEqual(self.ep.stats()["signature_failures"], before + 1)

    def test_partial_env_credentials(self):
        env = self.env(AWS_SECRET_ACCESS_KEY=None)
        _, err, _ = self.probe(["credentials"], env, expect_rc=1)
        self.assertIn("AWS_SECRET_ACCESS_KEY", err)

    def test_profile_files(self):
        paths = self.write_files(
            creds="[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n"
                  "# a comment\n[dev]\naws_access_key_id=%s\naws_secret_access_key=%s\n" % (AK, SK, PROFILE_AK, PROFILE_SK),
            config="[default]\nregion = us-west-2\n[profile dev]\nregion = eu-west-1\n"
                   "aws_access_key_id = %s\naws_secret_access_key = %s\n"
                   "[profile cfgonly]\nregion = ap-south-1\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                   "s3 =\n  max_concurrent_requests = 10\n" % (CONFIG_AK, CONFIG_SK, CONFIG_AK, CONFIG_SK))
        base = dict(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None,
                    AWS_SHARED_CREDENTIALS_FILE=paths["credentials"], AWS_CONFIG_FILE=paths["config"])
        cases = [(None, AK, "us-west-2"), ("dev", PROFILE_AK, "eu-west-1"), ("cfgonly", CONFIG_AK, "ap-south-1")]
        for profile, key, region in cases:
            with self.subTest(profile=profile):
                env = self.env(AWS_PROFILE=profile, **base)
                res, _, _ = self.probe(["credentials"], env)
                self.assertEqual(res["key"], mask(key))
                self.assertEqual(res["source"], "profile:" + (profile or "default"))
                self.assertEqual(botocore_credentials(env)[1], key)  # credentials file beats config
                res, _, _ = self.probe(["region"], env)
                self.assertEqual(res["region"], region)
                self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env)
        # env beats the profile; AWS_REGION beats AWS_DEFAULT_REGION beats the profile
        env = self.env(AWS_PROFILE="dev", AWS_SHARED_CREDENTIALS_FILE=paths["credentials"],
                       AWS_CONFIG_FILE=paths["config"], AWS_DEFAULT_REGION="ca-central-1")
        res, _, _ = self.probe(["credentials"], env)
        self.assertEqual(res["source"], "env")
        self.assertEqual(botocore_credentials(env), ["env", AK])
        self.assertEqual(self.probe(["region"], env)[0]["region"], "ca-central-1")
        env["AWS_REGION"] = "sa-east-1"
        self.assertEqual(self.probe(["region"], env)[0]["region"], "sa-east-1")
        # a named profile that exists nowhere is an error, as in the AWS CLI
        env = self.env(AWS_PROFILE="nosuch", **base)
        _, err, _ = self.probe(["credentials"], env, expect_rc=1)
        self.assertIn("nosuch", err)

    def test_region_matches_botocore(self):
        paths = self.write_files(config="[profile x]\nregion = eu-north-1\n")
        for extra in ({"AWS_PROFILE": "x"}, {"AWS_PROFILE": "x", "AWS_DEFAULT_REGION": "me-south-1"}):
            env = self.env(AWS_CONFIG_FILE=paths["config"], **extra)
            code = "import botocore.session; print(botocore.session.Session().get_config_variable('region'))"
            want = subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True).stdout.strip()
            self.assertEqual(self.probe(["region"], env)[0]["region"], want)
        env = self.env(AWS_REGION="not a region!")
        self.probe(["region"], env, expect_rc=2)

    def test_no_credentials_names_what_was_tried(self):
        env = clean_env(self.home)
        _, err, _ = self.probe(["credentials"], env, expect_rc=1)
        for word in ("environment", "profile", "container", "instance role"):
            self.assertIn(word, err)

    def test_container_credentials(self):
        env = self.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None,
                       AWS_CONTAINER_CREDENTIALS_FULL_URI=self.ep.url + "/v2/credentials/abc")
        before = self.ep.stats()["container_credential_fetches"]
        res, _, _ = self.probe(["credentials"], env)
        self.assertEqual(res["source"], "container")
        self.assertTrue(res["token"])
        self.assertGreater(self.ep.stats()["container_credential_fetches"], before)
        self.assertEqual(botocore_credentials(env)[0], "container-role")
        self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env)  # minted key + token, verified
        # FULL_URI over plain http to a non-loopback host is refused without connecting: the words
        # come from the URL's check, before any connection (nothing answers at 10.9.8.7)
        env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = "http://10.9.8.7/creds"
        _, err, _ = self.probe(["credentials"], env, expect_rc=1)
        self.assertIn("not allowed", err)

    def test_container_url_rules(self):
        rel, full = "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"
        loop = refused_url("/x")
        cases = [({rel: "/v2/credentials/abc"}, "http://169.254.170.2/v2/credentials/abc"),
                 ({rel: "/v2/credentials/abc", full: loop}, "http://169.254.170.2/v2/credentials/abc"),
                 ({full: loop}, loop),
                 ({full: "http://localhost/x"}, "http://localhost/x"),
                 ({full: "http://169.254.170.23/v1/credentials"}, "http://169.254.170.23/v1/credentials"),
                 ({full: "https://creds.example.com/x"}, "https://creds.example.com/x"),
                 ({}, "")]
        for extra, want in cases:
            with self.subTest(env=extra):
                self.assertEqual(self.probe(["container-url"], clean_env(self.home, **extra))[0]["url"], want)
        for bad, why in (("http://10.1.2.3/x", "not allowed over http"), ("http://169.254.169.254/latest", "allowed"),
                         ("ftp://127.0.0.1/x", "'ftp' is no http:// or https:// URL")):  # not "not allowed over http"
            with self.subTest(bad=bad):
                self.assertIn(why, self.probe(["container-url"], clean_env(self.home, **{full: bad}), expect_rc=1)[1])

    def test_container_authorization_token(self):
        ep = Endpoint("--container-auth-token", "Bearer s3cr3t-container-token")
        try:
            env = clean_env(self.home, AWS_ENDPOINT_URL=ep.url,
                            AWS_CONTAINER_CREDENTIALS_FULL_URI=ep.url + "/v2/credentials/abc")
            _, err, _ = self.probe(["credentials"], env, expect_rc=1)
            self.assertIn("HTTP 403", err)
            env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "Bearer s3cr3t-container-token"
            res, err, _ = self.probe(["credentials"], env)
            self.assertEqual(res["source"], "container")
            self.assertNotIn("s3cr3t-container-token", err)
        finally:
            ep.stop()

    def test_imds_role_credentials_and_refresh(self):
        # credentials that expire in 200 s are inside the 5-minute refresh margin: each signed
        # attempt fetches fresh ones, as a long run would just before Expiration
        ep = Endpoint("--imds-cred-ttl", "200", "--page-size", "1")
        try:
            env = clean_env(self.home, AWS_ENDPOINT_URL=ep.url, AWS_EC2_METADATA_DISABLED=None,
                            AWS_EC2_METADATA_SERVICE_ENDPOINT=ep.url)
            res, _, _ = self.probe(["credentials"], env)
            self.assertEqual(res["source"], "imds")
            self.assertTrue(res["token"])
            self.assertGreater(res["expiration"], time.time() + 100)
            self.assertEqual(botocore_credentials(env)[0], "iam-role")
            n0 = ep.stats()["imds_credential_fetches"]
            res, _, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge", "p4d.24xlarge"], env)
            self.assertEqual(res["pages"], 3)
            st = ep.stats()
            self.assertGreaterEqual(st["imds_credential_fetches"] - n0, 1 + 3)
            self.assertGreaterEqual(st["imds_token_requests"], 2)  # IMDSv2 session token each time
            self.assertEqual(st["signature_failures"], 0)
            self.assertGreaterEqual(len(st["access_key_ids"]), 3)  # rotated keys were accepted
        finally:
            ep.stop()

    def test_imds_long_lived_credentials_not_refreshed(self):
        ep = Endpoint("--page-size", "1")
        try:
            env = clean_env(self.home, AWS_ENDPOINT_URL=ep.url, AWS_EC2_METADATA_DISABLED=None,
                            AWS_EC2_METADATA_SERVICE_ENDPOINT=ep.url)
            self.probe(["pricing", "AmazonEC2", "g5.xlarge", "p4d.24xlarge"], env)
            self.assertEqual(ep.stats()["imds_credential_fetches"], 1)
        finally:
            ep.stop()

    def test_expired_token(self):
        ep = Endpoint("--expired-token", TOK)
        try:
            env = clean_env(self.home, AWS_ENDPOINT_URL=ep.url, AWS_ACCESS_KEY_ID=TOK_AK,
                            AWS_SECRET_ACCESS_KEY=TOK_SK, AWS_SESSION_TOKEN=TOK)
            _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env, expect_rc=1)
            self.assertIn("ExpiredTokenException", err)
            self.assertIn("expired", err)
            _, err, _ = self.probe(["spot", "us-west-2", "g5.xlarge"], env, expect_rc=1)
            self.assertIn("ExpiredToken", err)
        finally:
            ep.stop()

    def test_expired_imds_credentials_refreshed_and_retried(self):
        ep = Endpoint()
        try:
            env = clean_env(self.home, AWS_ENDPOINT_URL=ep.url, AWS_EC2_METADATA_DISABLED=None,
                            AWS_EC2_METADATA_SERVICE_ENDPOINT=ep.url)
            ep.control(faults=[{"kind": "expired", "count": 1}])
            res, _, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], env)
            self.assertEqual(res["attempts"], 2)
            self.assertEqual(ep.stats()["imds_credential_fetches"], 2)
        finally:
            ep.stop()


class EndpointSelfCheck(AwsTestCase):
    """The verifier itself: botocore-signed requests pass, any tampering is refused."""

    def send(self, body, tamper=None, key=(AK, SK, None)):
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        req = AWSRequest(method="POST", url=self.ep.url + "/", data=body,
                         headers={"Content-Type": "application/x-amz-json-1.1",
                                  "X-Amz-Target": "AWSPriceListService.GetProducts"})
        SigV4Auth(Credentials(*key), "pricing", "us-east-1").add_auth(req)
        headers = dict(req.headers.items())
        if tamper == "body":
            body = body.replace(b"g5", b"g6")
        elif tamper == "target":
            headers["X-Amz-Target"] = "AWSPriceListService.GetProductz"
        elif tamper == "date":
            headers["X-Amz-Date"] = "20200101T000000Z"
        r = urllib.request.Request(self.ep.url + "/", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(r, timeout=10) as resp:
                return resp.status, json.load(resp)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    def test_botocore_signed_accepted_tampered_refused(self):
        body = json.dumps({"ServiceCode": "AmazonEC2", "Filters": [
            {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "g5.xlarge"}]}).encode()
        status, doc = self.send(body)
        self.assertEqual(status, 200)
        self.assertTrue(doc["PriceList"])
        for t in ("body", "target", "date"):
            with self.subTest(tamper=t):
                status, doc = self.send(body, tamper=t)
                self.assertEqual((status, doc["__type"]), (403, "SignatureDoesNotMatch"))
        status, doc = self.send(body, key=(AK, "wrong" + SK[5:], None))
        self.assertEqual((status, doc["__type"]), (403, "SignatureDoesNotMatch"))
        status, doc = self.send(body, key=("AKIDUNKNOWN", SK, None))
        self.assertEqual((status, doc["__type"]), (403, "UnrecognizedClientException"))


class Endpoints(AwsTestCase):
    def test_defaults_match_botocore(self):
        env = clean_env(self.home)
        code = ("import botocore.session\ns = botocore.session.Session()\n"
                "for svc, reg in (('pricing', 'us-east-1'), ('ec2', 'eu-west-1'), ('ec2', 'us-east-1'), ('ec2', 'cn-north-1')):\n"
                "    print(s.create_client(svc, region_name=reg, aws_access_key_id='x', aws_secret_access_key='y').meta.endpoint_url)\n")
        want = subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True).stdout.split()
        got = [self.probe(["endpoint", s, r], env)[0]["url"]
               for s, r in (("PRICING", "us-east-1"), ("EC2", "eu-west-1"), ("EC2", "us-east-1"), ("EC2", "cn-north-1"))]
        self.assertEqual(got, want)

    def test_overrides(self):
        env = clean_env(self.home, AWS_ENDPOINT_URL="http://127.0.0.1:1/", AWS_ENDPOINT_URL_EC2="http://127.0.0.2:2")
        self.assertEqual(self.probe(["endpoint", "PRICING", "us-east-1"], env)[0]["url"], "http://127.0.0.1:1")
        self.assertEqual(self.probe(["endpoint", "EC2", "us-west-2"], env)[0]["url"], "http://127.0.0.2:2")
        env["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true"
        self.assertEqual(self.probe(["endpoint", "EC2", "us-west-2"], env)[0]["url"], "https://ec2.us-west-2.amazonaws.com")

    def test_overridden_endpoint_still_signs_with_real_region(self):
        env = self.env(AWS_ENDPOINT_URL=None, AWS_ENDPOINT_URL_EC2=self.ep.url, AWS_ENDPOINT_URL_PRICING=self.ep.url)
        before = self.ep.stats()["regions"].get("us-west-2", 0)
        res, _, _ = self.probe(["spot", "us-west-2", "g5.xlarge"], env)
        self.assertGreaterEqual(res["pages"], 2)  # MaxResults 5 over 5 entries x 3 AZs, filtered to Linux/UNIX
        self.assertGreater(self.ep.stats()["regions"]["us-west-2"], before)


class Ec2Queries(AwsTestCase):
    def ec2(self, region, query, env=None, expect_rc=0):
        res, err, _ = self.probe(["ec2", region, query], env or self.env(), expect_rc=expect_rc)
        return res, err

    def test_many_instance_types_latest_spot_per_az(self):
        import datetime
        import xml.etree.ElementTree as ET
        types = ["g5.xlarge", "g6.xlarge"] + ["x%d.large" % i for i in range(1, 11)]
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%%3A%M%%3A%SZ")
        q = "Action=DescribeSpotPriceHistory&Version=2016-11-15&ProductDescription.1=Linux%2FUNIX&StartTime=" + now
        q += "".join("&InstanceType.%d=%s" % (i + 1, t) for i, t in enumerate(types))  # .10 sorts before .2
        res, _ = self.ec2("us-west-2", q)
        ns = {"e": "http://ec2.amazonaws.com/doc/2016-11-15/"}
        latest = {}
        for item in ET.fromstring(res["body"]).iter("{%s}item" % ns["e"]):
            key = (item.find("e:instanceType", ns).text, item.find("e:availabilityZone", ns).text)
            ts, price = item.find("e:timestamp", ns).text, float(item.find("e:spotPrice", ns).text)
            if key not in latest or ts > latest[key][0]:
                latest[key] = (ts, price)
        want = {(r["instance_type"], az): p for r in PRICES if r["region"] == "us-west-2"
                for az, p in r["spot"].items()}
        self.assertEqual({k: v[1] for k, v in latest.items()}, want)

    def test_placement_scores(self):
        import hashlib
        import xml.etree.ElementTree as ET
        # the wire names botocore's EC2 serializer writes (the members' locationName)
        q = ("Action=GetSpotPlacementScores&Version=2016-11-15&InstanceType.1=g5.xlarge&TargetCapacity=2"
             "&SingleAvailabilityZone=true&RegionName.1=us-west-2")
        res, _ = self.ec2("us-east-1", q)
        ns = "{http://ec2.amazonaws.com/doc/2016-11-15/}"
        got = {i.find(ns + "availabilityZoneId").text: int(i.find(ns + "score").text)
               for i in ET.fromstring(res["body"]).iter(ns + "item")}
        want = {az: 1 + int(hashlib.sha256(("g5.xlarge|us-west-2|" + az + "|cap=2").encode()).hexdigest(), 16) % 10
                for az in ("us-west-2a", "us-west-2b", "us-west-2c")}
        self.assertEqual(got, want)

    def test_placement_scores_unauthorized(self):
        ep = Endpoint("--placement-unauthorized")
        try:
            q = "Action=GetSpotPlacementScores&Version=2016-11-15&InstanceType.1=g5.xlarge&TargetCapacity=1"
            res, err = self.ec2("us-east-1", q, self.env(AWS_ENDPOINT_URL=ep.url), expect_rc=1)
            self.assertEqual(res["error_code"], "UnauthorizedOperation")
            self.assertEqual(res["attempts"], 1)
            self.assertIn("lack this permission", err)
        finally:
            ep.stop()


class Tls(AwsTestCase):
    @classmethod
    def setUpClass(cls):
        cls.certdir = tempfile.mkdtemp(prefix="awstls")
        cls.cert, cls.key = os.path.join(cls.certdir, "cert.pem"), os.path.join(cls.certdir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", cls.key, "-out", cls.cert,
                        "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        cls.ep = Endpoint(tls=(cls.cert, cls.key))
        cls.home = tempfile.mkdtemp(prefix="awshome")

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.certdir, ignore_errors=True)

    def test_ca_bundle_honoured(self):
        res, _, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(AWS_CA_BUNDLE=self.cert))
        self.assertEqual(res["entries"], 2)

    def test_verification_always_on(self):
        # the self-signed certificate is not in the system store: refused, and not retried
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(), expect_rc=1)
        self.assertIn("certificate", err.lower())
        self.assertIn("1 attempt)", err)
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(AWS_CA_BUNDLE=absent_path("ca.pem")),
                               expect_rc=1)
        self.assertIn("AWS_CA_BUNDLE", err)


    def test_scheme_mismatch_named(self):
        """An endpoint URL whose scheme the server does not speak is said so, naming the variable
        that set it and its origin, curl's own words after; not retried (it answers the same)."""
        plain = Endpoint()
        try:
            url = "https://127.0.0.1:%s" % plain.url.rsplit(":", 1)[1]
            _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(AWS_ENDPOINT_URL=url), expect_rc=1)
            self.assertRegex(err, re.escape("AWS_ENDPOINT_URL %s: the server did not speak TLS (is it http://?): " % url)
                             + r"\S")
            self.assertIn("1 attempt)", err)
        finally:
            plain.stop()
        url = self.ep.url.replace("https://", "http://")
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"],
                               self.env(AWS_ENDPOINT_URL_PRICING=url, AWS_CA_BUNDLE=self.cert), expect_rc=1)
        self.assertRegex(err, re.escape("AWS_ENDPOINT_URL_PRICING %s: the server speaks TLS (is it https://?): " % url)
                         + r"\S")
        self.assertIn("1 attempt)", err)
        # a plain server that closes without answering is not said to speak TLS: a dropped
        # connection, retried as before
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(16)
        stop = threading.Event()

        def drop():
            srv.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = srv.accept()
                    conn.recv(1)
                    conn.close()
                except OSError:
                    pass
        t = threading.Thread(target=drop, daemon=True)
        t.start()
        try:
            url = "http://127.0.0.1:%d" % srv.getsockname()[1]
            _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(AWS_ENDPOINT_URL=url), expect_rc=1)
            self.assertNotIn("TLS", err)
            self.assertIn("3 attempts)", err)
        finally:
            stop.set()
            t.join()
            srv.close()

    def test_credential_sources_scheme_mismatch_named(self):
        """IMDS and the container endpoint, set to a scheme their server does not speak, are said so
        as the signed client says it, naming the variable; IMDS's is no "not on EC2"."""
        plain = Endpoint()
        try:
            to_plain, to_tls = "https://127.0.0.1:%s" % plain.url.rsplit(":", 1)[1], self.ep.url.replace("https", "http")
            no_tls, tls = "did not speak TLS (is it http://?)", "speaks TLS (is it https://?)"
            for var, cmd, path in (("AWS_CONTAINER_CREDENTIALS_FULL_URI", "credentials", "/v2/credentials/abc"),
                                   ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "identity", ""),
                                   ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "credentials", "")):
                for origin, what in ((to_plain, no_tls), (to_tls, tls)):
                    with self.subTest(var=var, cmd=cmd, url=origin):
                        env = clean_env(self.home, AWS_EC2_METADATA_DISABLED=None, **{var: origin + path})
                        res, err, _ = self.probe([cmd], env, expect_rc=1)
                        self.assertRegex(err, re.escape("%s %s: the server %s: " % (var, origin, what)) + r"\S")
                        self.assertNotIn("not on EC2", err)
                        if cmd == "identity":
                            self.assertEqual(res["rc"], -2)  # a misnamed server, not "off EC2"
            # botocore takes an https:// IMDS endpoint too, and so does instbench
            env = clean_env(self.home, AWS_EC2_METADATA_DISABLED=None, AWS_CA_BUNDLE=self.cert,
                            AWS_EC2_METADATA_SERVICE_ENDPOINT=self.ep.url)
            self.assertEqual(self.probe(["identity"], env)[0]["lifecycle"], "on-demand")
        finally:
            plain.stop()


class Imds(AwsTestCase):
    def test_imdsv1_fallback(self):
        ep = Endpoint("--imds-v1-only", "--imds-lifecycle", "spot")
        try:
            env = clean_env(self.home, AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=ep.url)
            res, _, _ = self.probe(["identity"], env)
            self.assertEqual(res["lifecycle"], "spot")
            env["AWS_EC2_METADATA_V1_DISABLED"] = "true"
            _, err, _ = self.probe(["identity"], env, expect_rc=1)
            self.assertIn("HTTP 404", err)
        finally:
            ep.stop()

    def test_identity_spot(self):
        ep = Endpoint("--imds-instance-type", "g5.12xlarge", "--imds-region", "eu-west-1",
                      "--imds-az", "eu-west-1c", "--imds-lifecycle", "spot")
        try:
            env = clean_env(self.home, AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=ep.url + "/")
            res, _, _ = self.probe(["identity"], env)
            self.assertEqual((res["instance_type"], res["region"], res["availability_zone"], res["lifecycle"]),
                             ("g5.12xlarge", "eu-west-1", "eu-west-1c", "spot"))
            self.assertEqual(res["instance_id"], "i-0123456789abcdef0")
            # IMDS is the last region source
            self.assertEqual(self.probe(["region"], env)[0]["region"], "eu-west-1")
        finally:
            ep.stop()

    def test_identity_on_demand(self):
        env = clean_env(self.home, AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=self.ep.url)
        res, _, _ = self.probe(["identity"], env)
        self.assertEqual(res["lifecycle"], "on-demand")

    def test_disabled(self):
        n = self.ep.stats()["imds_token_requests"]
        env = clean_env(self.home, AWS_EC2_METADATA_DISABLED="true", AWS_EC2_METADATA_SERVICE_ENDPOINT=self.ep.url)
        _, err, _ = self.probe(["identity"], env, expect_rc=1)
        self.assertIn("AWS_EC2_METADATA_DISABLED", err)
        self.assertEqual(self.ep.stats()["imds_token_requests"], n)  # not asked at all

    # What a missing IMDS costs is judged without a clock bound (machines differ): against a
    # control run whose AWS_METADATA_SERVICE_TIMEOUT is CONTROL_S, in the same test.
    CONTROL_S = "3"

    def absent(self, endpoint, cmd="identity", timeout=None):
        env = clean_env(self.home, AWS_EC2_METADATA_DISABLED=None, AWS_EC2_METADATA_SERVICE_ENDPOINT=endpoint,
                        AWS_METADATA_SERVICE_TIMEOUT=timeout)
        return self.probe([cmd], env, expect_rc=1)[1:]   # stderr, seconds

    def test_absent_silent(self):
        # A server that accepts and never answers: one token request, however far the chain goes
        # (the credential chain too), not one more per metadata path or retry.
        silent = Silent()
        for cmd in ("identity", "credentials"):
            self.absent(silent.url, cmd)
            self.assertEqual((silent.connections, silent.request_lines), (1, ["PUT /latest/api/token HTTP/1.1"]))
            silent.reset()
        silent.close()

    def test_absent_blackholed(self):
        # A listener whose accept queue is full and never accepted: further SYNs are dropped, so
        # connecting hangs as it does toward 169.254.169.254 off EC2.  Only the short connect
        # timeout ends it: the default's (1 s) sooner than the control's; a closed port sooner still.
        lst = socket.socket()
        lst.bind(("127.0.0.1", 0))
        lst.listen(0)
        port = lst.getsockname()[1]
        fillers = []
        for _ in range(4):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fillers.append(c)
        try:
            url = "http://127.0.0.1:%d" % port
            err, default = self.absent(url)
            self.assertIn("not on EC2", err)
            self.assertIn("timed out", err)  # it really waited for the connect timeout
            err, control = self.absent(url, timeout=self.CONTROL_S)
            self.assertIn("timed out", err)
            self.assertLess(default, control)
            # and the whole credential chain too (test_absent_silent: with one attempt)
            self.assertLess(self.absent(url, "credentials")[1], control)
            err, closed = self.absent(refused_url(), timeout=self.CONTROL_S)   # refused: not waited out
            self.assertIn("not on EC2", err)
            self.assertLess(closed, control)
        finally:
            for c in fillers:
                c.close()
            lst.close()


class Transport(AwsTestCase):
    def fault(self, kind, count, service="any"):
        self.ep.control(clear_faults=True, faults=[{"kind": kind, "count": count, "service": service}])

    def tearDown(self):
        self.ep.control(clear_faults=True)

    def test_throttling_retried(self):
        self.fault("throttle", 2, "pricing")
        res, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env())
        self.assertEqual(res["attempts"], 3)
        self.assertIn("ThrottlingException", err)  # -v shows the retries
        self.fault("throttle", 2, "ec2")
        n = self.ep.stats()["faults_applied"].get("throttle", 0)
        self.probe(["spot", "us-west-2", "g5.xlarge"], self.env())
        self.assertEqual(self.ep.stats()["faults_applied"]["throttle"], n + 2)

    def test_429_5xx_and_cut_connections_retried(self):
        for kind in ("429", "500", "503", "cut"):
            with self.subTest(kind=kind):
                self.fault(kind, 1)
                res, _, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env())
                self.assertEqual(res["attempts"], 2)

    def test_gives_up_after_max_attempts(self):
        self.fault("throttle", 3, "pricing")
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(), expect_rc=1)
        self.assertIn("AWS pricing request failed: HTTP 400 ThrottlingException: Rate exceeded", err)
        self.assertIn("3 attempts", err)
        self.fault("throttle", 3, "ec2")
        _, err, _ = self.probe(["spot", "us-west-2", "g5.xlarge"], self.env(), expect_rc=1)
        self.assertIn("HTTP 503 RequestLimitExceeded", err)

    def test_max_attempts_env(self):
        self.fault("503", 4)
        res, _, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(AWS_MAX_ATTEMPTS="5"))
        self.assertEqual(res["attempts"], 5)
        self.fault("503", 1)
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(AWS_MAX_ATTEMPTS="1"), expect_rc=1)
        self.assertIn("1 attempt)", err)
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(AWS_MAX_ATTEMPTS="lots"), expect_rc=1)
        self.assertIn("AWS_MAX_ATTEMPTS", err)

    def test_backoff_full_jitter(self):
        # delay before retry i (1-based) is uniform in [0, base * 2^(i-1)]: bounded, and not constant
        import re
        delays = {1: [], 2: []}
        for _ in range(6):
            self.fault("throttle", 2, "pricing")
            _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(INSTBENCH_AWS_BACKOFF_BASE="0.2"))
            got = [float(x) for x in re.findall(r"retrying in ([0-9.]+) s", err)]
            self.assertEqual(len(got), 2)
            delays[1].append(got[0])
            delays[2].append(got[1])
        self.assertTrue(all(0 <= d <= 0.2 + 0.005 for d in delays[1]), delays)
        self.assertTrue(all(0 <= d <= 0.4 + 0.005 for d in delays[2]), delays)
        self.assertGreater(len(set(delays[1] + delays[2])), 3, delays)

    def test_retry_quota(self):
        # standard mode: a 500-token bucket, 5 per retry, refilled only by successes.  120 requests
        # that always fail may retry 100 times in all, not 240.
        ep = Endpoint()
        try:
            ep.control(faults=[{"kind": "503", "count": 10000}])
            res, err, _ = self.probe(["--concurrency", "16", "many", "120"], self.env(AWS_ENDPOINT_URL=ep.url),
                                     expect_rc=1)
            self.assertEqual(res["failed"], 120)
            self.assertEqual(res["attempts"], 220)
            self.assertEqual(ep.stats()["requests"], 220)
            self.assertIn("retry quota exhausted", err)
        finally:
            ep.stop()

    def test_stall_times_out_and_retries(self):
        ep = Endpoint("--stall-seconds", "30")
        try:
            ep.control(faults=[{"kind": "stall", "count": 1}])
            env = self.env(AWS_ENDPOINT_URL=ep.url)
            # the fake would say nothing for 30 s and then close: the client hanging up first (the
            # fake's count) and its own "timed out" say its 1 s timeout cut the attempt short
            res, err, _ = self.probe(["--timeout", "1", "pricing", "AmazonEC2", "g5.xlarge"], env)
            self.assertEqual(res["attempts"], 2)
            self.assertIn("timed out", err)
            self.assertEqual(ep.stats()["stalls_cut_by_client"], 1)
        finally:
            ep.stop()

    def test_client_errors_fail_clearly(self):
        self.fault("denied", 1, "pricing")
        _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(), expect_rc=1)
        self.assertIn("AWS pricing request failed: HTTP 403 AccessDeniedException", err)
        self.assertIn("lack this permission", err)
        self.fault("denied", 1, "ec2")
        _, err, _ = self.probe(["spot", "us-west-2", "g5.xlarge"], self.env(), expect_rc=1)
        self.assertIn("AWS ec2 request failed: HTTP 403 UnauthorizedOperation", err)

    def test_broken_bodies_do_not_crash(self):
        for kind in ("truncate", "malformed"):
            with self.subTest(kind=kind):
                self.fault(kind, 1, "pricing")
                _, err, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge"], self.env(), expect_rc=1)
                self.assertIn("not a GetProducts document", err)

    def test_gzip_and_keepalive(self):
        ep = Endpoint("--page-size", "1")
        try:
            res, _, _ = self.probe(["pricing", "AmazonEC2", "g5.xlarge", "p4d.24xlarge"], self.env(AWS_ENDPOINT_URL=ep.url))
            st = ep.stats()
            self.assertEqual(res["pages"], 3)
            self.assertEqual(st["gzip_responses"], 3)  # compressed, and decoded (the JSON parsed)
            self.assertEqual(st["connections"], 2)  # one for the 3 pages + this /__stats call
        finally:
            ep.stop()

    def test_concurrency(self):
        ep = Endpoint("--latency-ms", "200", "--stall-seconds", "20")
        try:
            env = self.env(AWS_ENDPOINT_URL=ep.url)
            res, _, _ = self.probe(["--concurrency", "16", "many", "16"], env)
            self.assertEqual(res["failed"], 0)
            self.assertGreaterEqual(ep.stats()["max_in_flight"], 8)  # in flight together, not one after another
            ep.control(reset_stats=True)
            import resource
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            res, _, wall = self.probe(["--concurrency", "2", "many", "12"], env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.assertLessEqual(ep.stats()["max_in_flight"], 2)  # bounded
            # waiting for responses sleeps in poll(): no busy loop while the slots are full (one
            # costs ~25% of a core here; the client needs ~2%)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            self.assertLess(cpu, 0.12 * wall, "client burnt %.2f s CPU in %.2f s" % (cpu, wall))
            # a freed slot is refilled at once, not when the other slot's request ends too: the fake
            # holds one request until it has answered the other 11 (20 s at most, a hang guard),
            # which only a client that keeps starting requests in the free slot gets done
            ep.control(reset_stats=True, latency_ms=0, hold_for=11, faults=[{"kind": "hold", "count": 1}])
            res, _, _ = self.probe(["--concurrency", "2", "many", "12"], env)
            self.assertEqual((res["failed"], res["attempts"]), (0, 12))
            self.assertEqual(ep.stats()["holds"], [11], "requests answered while one was held")
        finally:
            ep.stop()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    PROBE = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
