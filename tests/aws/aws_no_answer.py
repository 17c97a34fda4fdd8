#!/usr/bin/python3
"""An endpoint that accepts connections and never answers (a discard service, a stuck proxy): each
call waits out its attempts (3 x --timeout), and a command makes several calls one after another,
so `instbench prices` says why it is quiet at the first attempt that timed out, once, naming the
endpoint, before the calls' own warnings; then it still prices from the snapshot (exit 0).  The
limit is said as given, a sub-second one too (--timeout 0.3 was "0 s"), and the wait at least as
long (how much longer depends on the machine's load, so no upper bound is asked).
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
for timeout in ("1", "0.3"):
    p = subprocess.run([BIN, "prices", "--timeout", timeout, "--instance-types", "g5.xlarge", "--region", "us-east-1",
                        "--format", "json"], env=env, capture_output=True, text=True, timeout=120, cwd=TMP)
    lines = p.stderr.splitlines()
    said = [i for i, l in enumerate(lines) if "has not answered in" in l]
    first_warning = next((i for i, l in enumerate(lines) if l.startswith("warning:")), len(lines))
    check(p.returncode == 0 and '"g5.xlarge"' in p.stdout, "--timeout %s: prices from the snapshot: exit %d\n%s" %
          (timeout, p.returncode, p.stderr[-800:]))
    check(len(said) == 1, "--timeout %s: the quiet wait said %d times (want once):\n%s" %
          (timeout, len(said), p.stderr[-1200:]))
    if said:
        line = lines[said[0]]
        waited = re.search(r"has not answered in ([0-9.]+) s;", line)
        check(url in line and "trying again" in line and ("3 attempts of %s s)" % timeout) in line and
              waited is not None and float(waited.group(1)) >= float(timeout) and said[0] < first_warning,
              "--timeout %s: the line names the endpoint, the wait (at least the limit), what comes next with the "
              "limit as given, and comes before the warnings: %r\n%s" % (timeout, line, p.stderr))
    # the calls themselves still fail as they did, each naming the timeout
    check(sum("timed out" in l for l in lines if l.startswith("warning:")) >= 2,
          "--timeout %s: the calls' warnings: %s" % (timeout, p.stderr[-1200:]))
listener.close()
for c in held:
    c.close()
print("aws_no_answer: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
