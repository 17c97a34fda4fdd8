"""moto's server (PyPI moto[server], pinned and installed by scripts/ci/moto_env.sh into
build-venv/moto) as the S3 the tests talk to, on a free port of 127.0.0.1, with signature
checking on.

moto checks SigV4 signatures (with its own botocore) only once its count of unauthenticated
actions is spent: the server starts open, an IAM user with an access key and an allow-all policy is
created through moto's IAM (signed by the venv's boto3), then /moto-api/reset-auth sets
INITIAL_NO_AUTH_ACTION_COUNT to 0: from then on every request must be signed by that user's key,
and a wrong signature is 403 SignatureDoesNotMatch.  `MotoServer.start()` proves it by sending one
badly signed request before handing the server out.

Use:  with MotoServer() as m:  m.url, m.access_key, m.secret_key, m.env() (for instbench)
A test whose moto is missing fails, naming scripts/ci/moto_env.sh (no silent skip)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.environ.get("INSTBENCH_MOTO_VENV", os.path.join(ROOT, "build-venv", "moto"))

# Run in the venv's python (boto3 is a dependency of moto): creates the user and its key.
_SETUP = r"""
import json, sys, boto3
url = sys.argv[1]
iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1",
                   aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="instbench-test")
iam.put_user_policy(UserName="instbench-test", PolicyName="all", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
k = iam.create_access_key(UserName="instbench-test")["AccessKey"]
print(json.dumps({"id": k["AccessKeyId"], "secret": k["SecretAccessKey"]}))
"""

# Run in the venv's python: one S3 request signed by ARGS' key; prints the HTTP status.
_PROBE = r"""
import sys, boto3, botocore.exceptions
url, key, secret = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                  aws_access_key_id=key, aws_secret_access_key=secret)
try:
    s3.list_buckets(); print(200)
except botocore.exceptions.ClientError as e:
    print(e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"])
"""


class MotoServer:
    def __init__(self, extra_env=None):
        self.extra_env = extra_env or {}
        self.proc = None

    def venv_python(self, code, *args):
        r = subprocess.run([os.path.join(VENV, "bin", "python"), "-c", code] + list(args),
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("moto helper failed: %s" % r.stderr[-2000:])
        return r.stdout.strip()

    def start(self):
        exe = os.path.join(VENV, "bin", "moto_server")
        if not os.access(exe, os.X_OK):
            raise RuntimeError("%s is missing: run scripts/ci/moto_env.sh (scripts/bootstrap.sh --test-deps does)" % exe)
        env = dict(os.environ)
        env.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)
        env.update(self.extra_env)
        self.log = tempfile.TemporaryFile(mode="w+")
        # port 0: moto holds the kernel's pick from the start and names it on its log; a port picked
        # here and released could be taken before moto bound it, and another test's moto found there
        self.proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", "0"],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        try:
            return self._set_up()
        except BaseException:
            self.stop()   # a server that failed its setup must not outlive the test
            raise

    def _log_text(self):
        return os.pread(self.log.fileno(), 1 << 20, 0).decode("utf-8", "replace")   # moto's offset untouched

    def _set_up(self):
        deadline = time.time() + 30
        while True:
            m = re.search(r"Running on http://127\.0\.0\.1:(\d+)", self._log_text())
            if m:
                self.port = int(m.group(1))
                self.url = "http://127.0.0.1:%d" % self.port
                break
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("moto_server named no port: " + self._log_text()[-2000:])
            time.sleep(0.1)
        while True:
            try:
                urllib.request.urlopen(self.url + "/moto-api/data.json", timeout=2).read()
                break
            except (OSError, urllib.error.URLError):
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("moto_server did not start: " + self._log_text()[-2000:])
                time.sleep(0.1)
        keys = json.loads(self.venv_python(_SETUP, self.url))
        self.access_key, self.secret_key = keys["id"], keys["secret"]
        self.set_auth(0)
        # signature checking must be on: a wrong secret is refused, the right one accepted
        bad = self.venv_python(_PROBE, self.url, self.access_key, self.secret_key + "x")
        good = self.venv_python(_PROBE, self.url, self.access_key, self.secret_key)
        if not bad.startswith("403") or good != "200":
            raise RuntimeError("moto does not check signatures (wrong key: %r, right key: %r)" % (bad, good))
        return self

    def set_auth(self, n):
        """INITIAL_NO_AUTH_ACTION_COUNT = n from now on (0: every request must be signed)."""
        req = urllib.request.Request(self.url + "/moto-api/reset-auth", data=str(n).encode(), method="POST",
                                     headers={"Content-Type": "text/plain"})   # a form type would hide the body
        urllib.request.urlopen(req, timeout=10).read()

    def boto(self, service, code, *args, region="us-east-1"):
        """Runs CODE in the venv's python with `client`, a boto3 client of SERVICE signed by this
        server's user, and `args`; returns what it prints.  boto3 is the independent side of the
        round trips."""
        prelude = ("import sys, json, boto3\nargs = sys.argv[5:]\n"
                   "client = boto3.client(sys.argv[4], endpoint_url=sys.argv[1], region_name=sys.argv[2], "
                   "aws_access_key_id=sys.argv[3].split(':')[0], aws_secret_access_key=sys.argv[3].split(':')[1])\n")
        return self.venv_python(prelude + code, self.url, region,
                                "%s:%s" % (self.access_key, self.secret_key), service, *args)

    def s3(self, code, *args, region="us-east-1"):
        """boto() for S3, the client named `s3`."""
        return self.boto("s3", "s3 = client\n" + code, *args, region=region)

    def put_folder(self, bucket, prefix, folder):
        """Uploads every file of FOLDER (not below) to s3://BUCKET/PREFIX<name>, through boto3."""
        code = ("import os\nfor n in args[3:]:\n    s3.put_object(Bucket=args[0], Key=args[1] + n, "
                "Body=open(os.path.join(args[2], n), 'rb').read())")
        self.s3(code, bucket, prefix, folder, *sorted(os.listdir(folder)))

    def create_bucket(self, name, region="us-east-1"):
        cfg = "" if region == "us-east-1" else ", CreateBucketConfiguration={'LocationConstraint': sys.argv[2]}"
        self.s3("s3.create_bucket(Bucket=args[0]%s)" % cfg, name, region=region)

    def env(self, base=None, region="us-east-1"):
        """Environment for instbench/boto3 against this server: its key, its endpoint, no profile."""
        e = dict(base if base is not None else os.environ)
        for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_EC2",
                  "AWS_ENDPOINT_URL_SSM", "AWS_CONFIG_FILE",
                  "AWS_SHARED_CREDENTIALS_FILE"):
            e.pop(k, None)
        e.update({"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                  "AWS_ENDPOINT_URL": self.url, "AWS_REGION": region,
                  "AWS_EC2_METADATA_DISABLED": "true"})
        return e

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.log.close()
            self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":
    # self-check: starts, proves a wrong signature fails, stops
    with MotoServer() as m:
        print("moto on", m.url, "checks signatures")
