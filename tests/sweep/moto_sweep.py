"""moto's server for the sweep's tests, with what it lacks: moto 5.2.5 has no placement groups
(CreatePlacementGroup and the rest answer 500, "not implemented"), and answers a presigned S3
request with a 500 while it checks signatures.  A router on its own port sends the three
placement-group actions to the fake AWS (tests/fakes/aws_fake_server.py, which serves them and checks
their signatures with botocore, given moto's test user's key) and every other request, bytes
unchanged (Host header included, so signatures still verify), to moto, which checks its signatures
itself.  With s3_buckets, S3 goes to the fake AWS too (its S3 checks header and presigned
signatures alike), so instances can use the sweep's presigned URLs.

Use:  with MotoSweep() as m:  m.url (AWS_ENDPOINT_URL for instbench), m.moto (tests/fakes/moto_server.MotoServer),
      m.env(), m.groups() (the placement groups as the fake holds them), m.launches / m.dry_runs (the
      RunInstances forms as sent), m.calls (every EC2 request's form, in order); start_sweep() and
      sweep_ids() run a sweep against it."""
import glob
import json
import os
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from http_relay import relay   # noqa: E402
from moto_server import VENV, MotoServer   # noqa: E402
from testlib import FakeAws   # noqa: E402

# A persistent boto3 in moto's venv: each request is one line of JSON (Python code that sets `out`),
# each answer one line of JSON.  Starting a venv python with boto3 per question costs seconds.
_LOOP = r"""
import json, sys, boto3
ec2 = boto3.client('ec2', endpoint_url=sys.argv[1], region_name=sys.argv[2], aws_access_key_id=sys.argv[3],
                   aws_secret_access_key=sys.argv[4])
for line in sys.stdin:
    env = {'client': ec2, 'json': json}
    exec(json.loads(line), env)
    print(json.dumps(env.get('out')), flush=True)
"""

GROUP_ACTIONS = {"CreatePlacementGroup", "DeletePlacementGroup", "DescribePlacementGroups"}


class Router(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _route(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        if "x-www-form-urlencoded" in (self.headers.get("Content-Type") or ""):
            params.update(urllib.parse.parse_qsl(body.decode("utf-8", "replace")))
        s3 = "/s3/aws4_request" in (self.headers.get("Authorization") or "") or \
            "/s3/aws4_request" in params.get("X-Amz-Credential", "")
        to_fake = params.get("Action") in GROUP_ACTIONS or (s3 and self.server.s3_to_fake)
        port = self.server.fake_port if to_fake else self.server.moto_port
        if params.get("Action") and "/ec2/aws4_request" in (self.headers.get("Authorization") or ""):
            self.server.calls.append(params)   # every EC2 request as sent: the tests read what was asked
        if params.get("Action") == "RunInstances":
            # moto keeps no Placement.GroupName: the request is the record.  DryRuns (the permission
            # check `run` makes before launching) are kept apart: they launch nothing.
            (self.server.dry_runs if params.get("DryRun") == "true" else self.server.launches).append(params)
        relay(self, port, method, body)

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PUT(self):
        self._route("PUT")

    def do_HEAD(self):
        self._route("HEAD")

    def do_DELETE(self):
        self._route("DELETE")


class MotoSweep:
    def __init__(self, s3_buckets=None):
        self.s3_buckets = s3_buckets or []
        self.moto = MotoServer()
        self.fake = None
        self.server = None
        self.boto = None

    def start(self):
        self.moto.start()
        try:
            buckets = [a for b in self.s3_buckets for a in ("--s3-bucket", b + ":us-east-1")]
            self.fake = FakeAws("--credentials", "%s:%s" % (self.moto.access_key, self.moto.secret_key),
                                "--timeout", "3600", *buckets)
            self.server = ThreadingHTTPServer(("127.0.0.1", 0), Router)
            self.server.daemon_threads = True
            self.server.handle_error = lambda *a: None   # a client killed mid-request (SIGKILL tests) is expected
            self.server.moto_port, self.server.fake_port = self.moto.port, self.fake.port
            self.server.s3_to_fake = bool(self.s3_buckets)
            self.server.launches = self.launches = []
            self.server.dry_runs = self.dry_runs = []
            self.server.calls = self.calls = []
            threading.Thread(target=self.server.serve_forever, daemon=True).start()
            self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        except BaseException:
            self.stop()
            raise
        return self

    def ec2(self, code):
        """Runs CODE (which sets `out`) with `client`, a boto3 EC2 client of moto's test user
        talking to the router; returns `out`."""
        if not self.boto:
            self.boto = subprocess.Popen([os.path.join(VENV, "bin", "python"), "-u", "-c", _LOOP, self.url, "us-east-1",
                                          self.moto.access_key, self.moto.secret_key],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.boto.stdin.write(json.dumps(code) + "\n")
        self.boto.stdin.flush()
        line = self.boto.stdout.readline()
        if not line:
            raise RuntimeError("the boto3 helper died")
        return json.loads(line)

    def env(self, base=None, region="us-east-1"):
        e = self.moto.env(base, region)
        e["AWS_ENDPOINT_URL"] = self.url
        return e

    def groups(self):
        """The placement groups the fake holds: {name: tags}, through a signed DescribePlacementGroups."""
        return self.ec2("g = client.describe_placement_groups()['PlacementGroups']\n"
                        "out = {x['GroupName']: {t['Key']: t['Value'] for t in x.get('Tags', [])} for x in g}")

    def stop(self):
        if self.boto:
            self.boto.stdin.close()
            self.boto.wait(timeout=10)
            self.boto = None
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        if self.fake:
            self.fake.stop()
            self.fake = None
        self.moto.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def start_sweep(m, home, args):
    """Runs instbench ARGS in HOME against M (its own state and cache there, polls every 0.3 s):
    (the environment, the process)."""
    env = m.env({"PATH": os.environ.get("PATH", ""), "HOME": home})
    env.update({"XDG_STATE_HOME": os.path.join(home, "state"), "XDG_CACHE_HOME": os.path.join(home, "cache"),
                "INSTBENCH_SWEEP_POLL_S": "0.3", "INSTBENCH_AWS_BACKOFF_BASE": "0.01",
                "INSTBENCH_SWEEP_TERMINATE_WAIT_S": "60", "NO_COLOR": "1"})
    return env, subprocess.Popen(args, cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def sweep_ids(home):
    """The ids of the state files under HOME (start_sweep's layout)."""
    return [os.path.basename(p)[:-5] for p in glob.glob(os.path.join(home, "state", "instbench", "sweeps", "*.json"))]
