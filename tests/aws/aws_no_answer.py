#!/usr/bin/python3
"""An endpoint that accepts connections and never answers (a discard service, a stuck proxy): each
call waits out its attempts (3 x --timeout), and a command makes several calls one after another,
so `instbench prices` says why it is quiet at the first attempt that timed out, once, naming the
endpoint, before the calls' own warnings; then it still prices from the snapshot (exit 0).
usage: aws_no_answer.py INSTBENCH"""
import os
import re
import socket
import subprocess
import sys
import threading

BIN = os.path.abspath(sys.argv[1])
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures, offline_env, scratch_dir  # noqa: E402

TMP = scratch_dir("instbench-no-answer-")
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
held = []   # accepted and never read from nor answered


def accept_forever():
    while True:
        try:
            held.append(listener.accept()[0])
        except OSError:
            return


threading.Thread(target=accept_forever, daemon=True).start()
url = "http://127.0.0.1:%d" % listener.getsockname()[1]
env = offline_env(TMP, {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
                        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                        "AWS_REGION": "us-east-1", "INSTBENCH_AWS_BACKOFF_BASE": "0.05"})
p = subprocess.run([BIN, "prices", "--timeout", "1", "--instance-types", "g5.xlarge", "--region", "us-east-1",
                    "--format", "json"], env=env, capture_output=True, text=True, timeout=120, cwd=TMP)
lines = p.stderr.splitlines()
# the seconds it says are the attempt's own, measured: 1 s, or a little more on a loaded machine
said = [i for i, l in enumerate(lines) if re.search(r"has not answered in \d+ s;", l)]
first_warning = next((i for i, l in enumerate(lines) if l.startswith("warning:")), len(lines))
check(p.returncode == 0 and '"g5.xlarge"' in p.stdout, "prices from the snapshot: exit %d\n%s" % (p.returncode,
                                                                                                p.stderr[-800:]))
check(len(said) == 1, "the quiet wait said %d times (want once):\n%s" % (len(said), p.stderr[-1200:]))
if said:
    line = lines[said[0]]
    check(url in line and "trying again" in line and "3 attempts" in line and said[0] < first_warning,
          "the line names the endpoint, what comes next, and comes before the warnings: %r\n%s" % (line, p.stderr))
# the calls themselves still fail as they did, each naming the timeout
check(sum("timed out" in l for l in lines if l.startswith("warning:")) >= 2,
      "the calls' warnings: %s" % p.stderr[-1200:])
listener.close()
for c in held:
    c.close()
print("aws_no_answer: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
